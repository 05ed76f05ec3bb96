"""SQuAD-style token F1, with a language-aware normalisation (default) or SQuAD's own, by name.

Normalisations (`norm=`; the name is part of the signature):
- `unicode` (default; DeepSEA XQuAD): lower-case; **delete** every punctuation character — all
  Unicode `P*` categories and SQuAD's ASCII `string.punctuation` (which includes $ + < = > ^ | ~ and the backtick)
  — so "U.S." = "US" and "$100" = "100", as in SQuAD; for English only, remove the articles
  a/an/the; then split into tokens: whitespace, or the language's segmenter for scripts without
  spaces (Lao, Thai, Khmer, Burmese; characters for Chinese and Japanese; glotbench.text.segment).
- `squad`: the official SQuAD v1.1 `normalize_answer`, byte for byte: lower-case, delete ASCII
  `string.punctuation` only, remove a/an/the whatever the language, whitespace split; no
  segmentation (`lang` is ignored).
F1 is the harmonic mean of precision and recall over the multiset of shared tokens. With several
references: the maximum over them (SQuAD), or the first one only (`refs="first"`, as DeepSEA's XQuAD
scorer does). Two empty token lists score 1, one empty list 0.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from typing import Literal, Sequence

from glotbench.text.segment import segment, segmenter_signature

Norm = Literal["unicode", "squad"]
NORMS: tuple[str, ...] = ("unicode", "squad")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def _squad_normalize(text: str) -> str:
    """SQuAD v1.1 evaluate script: lower, remove_punc (ASCII), remove_articles, white_space_fix."""
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def check_norm(norm: str) -> str:
    if norm not in NORMS:
        raise ValueError(f"unknown token F1 normalisation {norm!r}; choose one of {', '.join(NORMS)}")
    return norm


def normalize_answer(text: str, lang: str | None = None, norm: str = "unicode") -> list[str]:
    if check_norm(norm) == "squad":
        return _squad_normalize(text).split()
    text = "".join(ch for ch in text.lower() if not _is_punct(ch))
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
             refs: Literal["max", "first"] = "max", norm: str = "unicode") -> float:
    if not references:
        raise ValueError("token_f1 needs at least one reference")
    pred = normalize_answer(prediction, lang, norm)
    chosen = references[:1] if refs == "first" else references
    return max(f1_tokens(pred, normalize_answer(r, lang, norm)) for r in chosen)


def token_f1_signature(lang: str | None, refs: str = "max", norm: str = "unicode") -> str:
    if check_norm(norm) == "squad":
        return f"token_f1|norm:squad_v1.1|seg:none|refs:{refs}"
    articles = "+articles_en" if lang == "en" else ""
    return (f"token_f1|norm:lower+del_punct_P*+ascii{articles}|seg:{segmenter_signature(lang) if lang else 'none'}"
            f"|refs:{refs}")
