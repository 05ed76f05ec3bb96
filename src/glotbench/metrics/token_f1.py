"""SQuAD-style token F1 and exact match, with a language-aware normalisation (default) or SQuAD's own, by name.

Normalisations (`norm=`; the name is part of the signature):
- `unicode` (default; DeepSEA XQuAD): delete the format characters (languages.FORMAT_CHARS: ZWSP,
  ZWNJ, ZWJ, WJ, BOM, soft hyphen, bidirectional marks: `Hà Nội\u200b` is `Hà Nội`); lower-case;
  **delete** every punctuation character — all
  Unicode `P*` categories and SQuAD's ASCII `string.punctuation` (which includes $ + < = > ^ | ~ and the backtick)
  — so "U.S." = "US" and "$100" = "100", as in SQuAD; for English only, remove the articles
  a/an/the; then split into tokens: whitespace, or the language's segmenter for scripts without
  spaces (Lao, Thai, Khmer, Burmese; characters for Chinese and Japanese; glotbench.text.segment).
- `squad`: the official SQuAD v1.1 `normalize_answer`, byte for byte: lower-case, delete ASCII
  `string.punctuation` only, remove a/an/the whatever the language, whitespace split; no
  segmentation (`lang` is ignored).
- `mkqa`: MKQA's official `normalize_answer_by_language` (apple/ml-mkqa `mkqa_eval_util.py`): lower,
  delete ASCII punctuation, the language's articles (14 languages, Vietnamese among them), whitespace
  split; Thai, Khmer, Chinese and Japanese split into single characters. With `empty="mkqa"`: an empty
  answer and an empty reference score 1 (MKQA's No Answer).
F1 is the harmonic mean of precision and recall over the multiset of shared tokens; exact match is 1
when the two token lists are equal. With several references: the maximum over them (SQuAD), or the
first one only (`refs="first"`, as DeepSEA's XQuAD scorer does).

Empty answers (`empty=`; named in the signature), as the two official scripts differ:
- `v1.1` (default; SQuAD's `evaluate-v1.1.py`, which XQuAD and DeepSEA's XQuAD use): F1 is 0 whenever
  no token is shared, so two answers that both normalise to nothing score F1 0 (and exact match 1).
- `v2.0` (`evaluate-v2.0.py`): references that normalise to nothing are dropped unless all do (then the
  one reference is ""); an empty side scores F1 1 if the other is empty too, else 0.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from typing import Callable, Literal, Sequence

from glotbench.languages import remove_zero_width
from glotbench.signature import Signature
from glotbench.text.segment import segment, segmenter_signature

Norm = Literal["unicode", "squad", "mkqa"]
NORMS: tuple[str, ...] = ("unicode", "squad", "mkqa")
# SQuAD's evaluate-v1.1.py / evaluate-v2.0.py; MKQA's mkqa_eval_util.calculate_f1 (an empty side: 1
# when both are empty, and no reference dropped: an empty prediction matches MKQA's "" No Answer)
EMPTY_RULES: tuple[str, ...] = ("v1.1", "v2.0", "mkqa")
# MKQA's mkqa_eval_util (apple/ml-mkqa at 94ed242c): the articles removed per language, and the
# languages whose answers are split into single characters (its `mixed_segmentation`)
MKQA_ARTICLES = {
    "en": r"\b(a|an|the)\b",
    "es": r"\b(un|una|unos|unas|el|la|los|las)\b",
    "vi": r"\b(của|là|cái|chiếc|những)\b",
    "de": r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b",
    "ar": "\\sال^|ال",
    "nl": r"\b(de|het|een|des|der|den)\b",
    "sv": r"\b(en|ett)\b",
    "da": r"\b(en|et)\b",
    "no": r"\b(en|et|ei)\b",
    "fr": r"\b(le|la|l'|les|du|de|d'|des|un|une|des)",
    "pt": r"\b(o|a|os|as|um|uma|uns|umas)\b",
    "it": r"\b(il|lo|la|l'|i|gli|le|del|dello|della|dell'|dei|degli|degl'|delle|un'|uno|una|un)",
    "fi": r"\b(se|yks|yksi)\b",
    "hu": r"\b(a|az|egy)\b",
}
MKQA_CHARACTERS = ("zh", "zh_cn", "zh_hk", "zh_tw", "ja", "th", "km")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def _squad_normalize(text: str) -> str:
    """SQuAD v1.1 evaluate script: lower, remove_punc (ASCII), remove_articles, white_space_fix."""
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _mkqa_normalize(text: str, lang: str | None) -> list[str]:
    """MKQA's normalize_answer_by_language, then split: lower, delete ASCII punctuation, the
    language's articles, whitespace; Thai, Khmer, Chinese and Japanese one token per character."""
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCT)
    articles = MKQA_ARTICLES.get(lang or "")
    if articles:
        text = re.sub(articles, " ", text)
    if lang in MKQA_CHARACTERS:
        return [c for c in text if c.strip() != ""]
    return text.split()


def check_norm(norm: str) -> str:
    if norm not in NORMS:
        raise ValueError(f"unknown token F1 normalisation {norm!r}; choose one of {', '.join(NORMS)}")
    return norm


def check_empty(empty: str) -> str:
    if empty not in EMPTY_RULES:
        raise ValueError(f"unknown empty-answer rule {empty!r}; choose one of {', '.join(EMPTY_RULES)} "
                         "(SQuAD's evaluate-v1.1.py or evaluate-v2.0.py)")
    return empty


def normalize_answer(text: str, lang: str | None = None, norm: str = "unicode") -> list[str]:
    if check_norm(norm) == "squad":
        return _squad_normalize(text).split()
    if norm == "mkqa":
        return _mkqa_normalize(text, lang)
    text = "".join(ch for ch in remove_zero_width(text).lower() if not _is_punct(ch))
    if lang == "en":
        text = _ARTICLES.sub(" ", text)
    return segment(text, lang) if lang else text.split()


def f1_tokens(pred: list[str], gold: list[str], empty: str = "v1.1") -> float:
    """F1 of two token lists. An empty side: 0 under `v1.1` (no shared token); under `v2.0` 1 when
    both are empty, else 0."""
    if not pred or not gold:
        return float(check_empty(empty) in ("v2.0", "mkqa") and pred == gold)
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def _best(fn: Callable[[list[str], list[str]], float], prediction: str, references: Sequence[str],
          lang: str | None, refs: str, norm: str, empty: str) -> float:
    if not references:
        raise ValueError("token F1 and exact match need at least one reference")
    check_empty(empty)
    pred = normalize_answer(prediction, lang, norm)
    chosen = references[:1] if refs == "first" else references
    golds = [normalize_answer(r, lang, norm) for r in chosen]
    if empty == "v2.0":  # evaluate-v2.0.py's get_raw_scores: empty references dropped, [""] if none is left
        golds = [g for g in golds if g] or [[]]
    return max(fn(pred, g) for g in golds)


def token_f1(prediction: str, references: Sequence[str], lang: str | None = None,
             refs: Literal["max", "first"] = "max", norm: str = "unicode", empty: str = "v1.1") -> float:
    return _best(lambda p, g: f1_tokens(p, g, empty), prediction, references, lang, refs, norm, empty)


def exact_match(prediction: str, references: Sequence[str], lang: str | None = None,
                refs: Literal["max", "first"] = "max", norm: str = "unicode", empty: str = "v1.1") -> float:
    """SQuAD exact match: 1 when the normalised token lists are equal (two empty answers match)."""
    return _best(lambda p, g: float(p == g), prediction, references, lang, refs, norm, empty)


def token_f1_signature(lang: str | None, refs: str = "max", norm: str = "unicode", empty: str = "v1.1",
                       metric: str = "token_f1") -> str:
    check_empty(empty)
    if check_norm(norm) == "squad":
        parts = ("squad_v1.1", "none")
    elif norm == "mkqa":
        parts = (f"mkqa({lang or 'none'})", "char" if lang in MKQA_CHARACTERS else "none")
    else:
        articles = "+articles_en" if lang == "en" else ""
        parts = (f"del_format+lower+del_punct_P*+ascii{articles}", segmenter_signature(lang) if lang else "none")
    return Signature.build(metric, norm=parts[0], seg=parts[1], refs=refs, empty=empty).format()
