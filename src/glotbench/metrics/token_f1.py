"""SQuAD-style token F1 with language-aware normalisation.

Normalisation (in this order): lower-case; remove every Unicode punctuation character (categories
P*, not only ASCII); for English only, remove the articles a/an/the; split into tokens — whitespace,
or the language's segmenter for scripts without spaces (Lao, Thai, Khmer, Burmese; characters for
Chinese and Japanese, see glotbench.text.segment). F1 is the harmonic mean of precision and recall
over the multiset of shared tokens. With several references: the maximum over them (SQuAD), or the
first one only (`refs="first"`, as DeepSEA's XQuAD scorer does). Two empty token lists score 1.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Literal, Sequence

from glotbench.text.segment import segment, segmenter_signature

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def normalize_answer(text: str, lang: str | None = None) -> list[str]:
    text = text.lower()
    text = "".join(" " if _is_punct(ch) else ch for ch in text)
    if lang == "en":
        text = _ARTICLES.sub(" ", text)
    return segment(text, lang) if lang else text.split()


def f1_tokens(pred: list[str], gold: list[str]) -> float:
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, references: Sequence[str], lang: str | None = None,
             refs: Literal["max", "first"] = "max") -> float:
    if not references:
        raise ValueError("token_f1 needs at least one reference")
    pred = normalize_answer(prediction, lang)
    chosen = references[:1] if refs == "first" else references
    return max(f1_tokens(pred, normalize_answer(r, lang)) for r in chosen)


def token_f1_signature(lang: str | None, refs: str = "max") -> str:
    return f"token_f1|norm:lower+punct_P*{'+articles_en' if lang == 'en' else ''}|seg:{segmenter_signature(lang) if lang else 'none'}|refs:{refs}"
