"""The detector's words: the concept tables of the package data file ``rubrics/injection-vocabulary.yaml``.

One table per concept, each a mapping of language -> pattern, with a comment in the file saying which
concept it is; :mod:`evaluator.textsafety.patterns` composes them into the signals and the gate.
Widen a concept there, in every language, rather than add a phrase. The file is read on first use, not
at import.

*Languages.* Every concept is translated into English, Chinese, Spanish, German, French, Japanese,
Russian, Portuguese, Korean and Italian; the core concepts (evaluator, ignore the instructions,
full marks, approved, skip testing, this app; and most of the third pass's: defects not counted,
the test redirected or stopped, pressure) also into Dutch, Turkish, Arabic, Hindi, Vietnamese,
Indonesian and Polish.

Words are written in their normalised form (lower case, Latin accents stripped, full-width folded,
see :mod:`evaluator.textsafety.normalisation`); a word belongs in a table because it names the concept,
not because an attack once used it, so the tables stay small. Normalisation puts a space between Latin
letters and CJK ("给 ai 评委"), so ``\\b`` works there too.
"""

from __future__ import annotations

import functools

from evaluator.errors import ConfigError
from evaluator.package_data import package_text

# Traditional Chinese characters read as the simplified ones the vocabulary is written in ("給評審模型" is
# "给评审模型"). The vocabulary's own patterns are folded the same way, so Japanese kanji that share a
# traditional form (評価 -> 评価) still meet their patterns.
_TRADITIONAL = ("與丟兩個為爲義於親僅從們價會體關寫決準減幾擊則剛別務動參發疊隻臺員響圍圖聲處備復複學實審寬對導將屬"
                "幫並應廢開異棄當錄總戲戶拋報換據數斷無時機來鬆標檢匯彙沒測瀏遊滿點煩愛環現蓋著碼確稱係繫級納細終經"
                "結繞給絕統繼續維網範獲觀規視覽覺計認讓記論設證評詞試話該語誤說請讀誰調敗賽輸過這進適選鐘鍾鈕銷錯問"
                "閱隊頁項須顧預題饋駁驗齊語負責鍵擬")
_SIMPLIFIED = ("与丢两个为为义于亲仅从们价会体关写决准减几击则刚别务动参发叠只台员响围图声处备复复学实审宽对导将属"
               "帮并应废开异弃当录总戏户抛报换据数断无时机来松标检汇汇没测浏游满点烦爱环现盖着码确称系系级纳细终经"
               "结绕给绝统继续维网范获观规视览觉计认让记论设证评词试话该语误说请读谁调败赛输过这进适选钟钟钮销错问"
               "阅队页项须顾预题馈驳验齐语负责键拟")
HAN = str.maketrans(_TRADITIONAL, _SIMPLIFIED)
"""``str.translate`` table: traditional Chinese characters to simplified ones."""
VOCABULARY = "rubrics/injection-vocabulary.yaml"
"""The vocabulary's path in the ``evaluator`` package's data."""
VOCABULARY_VERSION = 1
"""The version of the vocabulary file this code reads."""


@functools.cache
def vocabulary() -> dict[str, dict[str, str]]:
    """The concept tables of the package data file :data:`VOCABULARY`: table -> language -> pattern
    (a pattern written as a list is its pieces joined by "|": one alternation). Read once, on first use."""
    import yaml  # (here, not at import: importing the package reads and parses nothing)

    kind, _, name = VOCABULARY.partition("/")
    data = yaml.safe_load(package_text(kind, name))
    if not isinstance(data, dict) or data.get("version") != VOCABULARY_VERSION:
        found = data.get("version") if isinstance(data, dict) else None
        raise ConfigError(f"{VOCABULARY} in evalgrid's package data has version {found!r}, this evalgrid reads version "
                          f"{VOCABULARY_VERSION}; reinstall evalgrid (`make setup`), or if you edited the file, "
                          f"keep its version at {VOCABULARY_VERSION}")
    return {name: {language: ("|".join(pattern) if isinstance(pattern, list) else pattern).translate(HAN)
                   for language, pattern in table.items()}
            for name, table in data["tables"].items()}
