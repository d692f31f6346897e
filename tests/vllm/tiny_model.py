"""Build a tiny, randomly initialised Llama with a byte-level BPE tokenizer, for a real vLLM server.

No model can be downloaded here (no model hub is reachable), and a real judge model would not run
on these CPUs anyway. This model answers nonsense, but vLLM serves it exactly as it serves a real
one: the same OpenAI-compatible API, streaming, and JSON-schema-guided decoding, which is what the
integration test exercises. Run with the vLLM environment's Python (it has torch and
transformers): ``python tests/vllm/tiny_model.py OUT_DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Words of the kind a judge writes, so the tokenizer's merges make a few characters per token.
_CORPUS = """The application renders a clean layout with a header, a list and a form. The add button works,
the delete button does nothing. Functional baseline seven; aesthetic baseline five. The console shows an
uncaught TypeError when the form is submitted. Contrast is low on the footer text. The mobile view
overflows horizontally. {"functional_base": 7.0, "aesthetic_base": 5.0, "problems": [], "category":
"broken_control", "dimension": "functional", "severity": "major", "description": "step", "file": null}
""" * 50


def build(out: Path) -> None:
    """Write config, weights and tokenizer to ``out``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1024, special_tokens=["<s>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([_CORPUS], trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")
    fast.chat_template = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] if m['content'] is string "
                          "else m['content'] | map(attribute='text') | join(' ') }}</s>{% endfor %}"
                          "{% if add_generation_prompt %}<s>assistant: {% endif %}")
    fast.save_pretrained(out)
    torch.manual_seed(0)
    # head_dim 64 (128 / 2): vLLM's CPU attention kernels reject 16.
    config = LlamaConfig(vocab_size=len(fast), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32768,
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, tie_word_embeddings=True,
                         torch_dtype="float32")
    model = LlamaForCausalLM(config)
    model.save_pretrained(out, safe_serialization=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
