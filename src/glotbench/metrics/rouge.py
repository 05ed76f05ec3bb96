"""ROUGE-L through Google's `rouge_score` with a language's word segmenter, and SEA-HELM's rule.

`rouge_score` splits on non-alphanumeric ASCII and drops every other script, so Thai, Lao, Khmer or
Burmese text scores 0 unless a tokenizer is given. Two tokenizers, named in the signature:

| tokenize | tokens | signature |
|---|---|---|
| `segmenter` | lower case, punctuation dropped as SEA-HELM drops it (BERT's basic tokenizer), then the language's glotbench segmenter (text/segment.py: LaoNLP, PyThaiNLP newmm without spaces, character clusters for Khmer and Burmese, whitespace) | `rougeL\\|tok:segmenter\\|seg:<segmenter>` |
| `seahelm` | SEA-HELM's vendored multilingual rouge (src/rouge_score, 6844e6c5): lower case, BERT's basic tokenizer (punctuation dropped, whitespace split), then for th PyThaiNLP newmm over the space-joined words (its space tokens kept, as SEA-HELM keeps them), for my its Burmese syllable rule; other languages pyonmttok's `aggressive` split of the basic tokens (letters, digits and other characters apart), re-implemented | `rougeL\\|tok:seahelm-<lang>` |

Per item: ROUGE-L precision, recall and F1 (rouge_score's `_score_lcs`); the corpus figure is the mean
of item F1s, as SEA-HELM's BootstrapAggregator `mid` estimates it.
"""

from __future__ import annotations

import unicodedata
from typing import Callable

TOKENIZERS = ("segmenter", "seahelm")


def _is_punct(ch: str) -> bool:
    """BERT's _is_punctuation, as SEA-HELM's tokenizers.py has it."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def basic_tokens(text: str) -> list[str]:
    """SEA-HELM's BasicTokenizer: control characters and U+FFFD removed, whitespace made spaces, each
    word split at punctuation, the punctuation dropped."""
    clean = "".join(" " if (c in " \t\n\r" or unicodedata.category(c) == "Zs") else c for c in text
                    if not (ord(c) in (0, 0xFFFD) or _is_control(c)))
    out: list[str] = []
    for word in clean.split():
        piece = ""
        for c in word:
            if _is_punct(c):
                if piece:
                    out.append(piece)
                piece = ""
            else:
                piece += c
        if piece:
            out.append(piece)
    return out


def burmese_syllables(text: str) -> list[str]:
    """SEA-HELM's BurmeseTokenizer (after https://dl.acm.org/doi/fullHtml/10.1145/3325885)."""
    x, t, stack = "\u103a", "\u1037", "\u1039"
    dep = {chr(0x102B + i) for i in range(8)} | {chr(0x1036 + i) for i in range(3)} | {chr(0x103B + i) for i in range(4)}
    dep.add(x)
    text = text.replace("\u200c", " ").replace(t + x, x + t)
    chars = list("".join(text.lower().strip().split()))
    chars.reverse()
    for i in range(len(chars) - 1):
        if chars[i][0] in dep:
            chars[i + 1] += chars[i]
            chars[i] = ""
    chars.reverse()
    units = " ".join(chars).split()
    for i in range(1, len(units)):
        if x in units[i] and len(units[i]) < 4:
            units[i - 1] += units[i]
            units[i] = ""
    return " ".join(" ".join(units).split()).replace(" " + stack + " ", stack).split()


def _seahelm(lang: str | None) -> Callable[[str], list[str]]:
    def tokenize(text: str) -> list[str]:
        words = " ".join(basic_tokens(text.lower().strip()))
        tokens: list[str] = []
        if lang == "th":
            from pythainlp.tokenize import word_tokenize
            tokens = word_tokenize(words, engine="newmm")
        elif lang == "my":
            tokens = burmese_syllables(words)
        if not tokens and words:
            tokens = aggressive(words)
        return [tok for tok in tokens if tok]
    return tokenize


_AGGRESSIVE = None


def aggressive(text: str) -> list[str]:
    """pyonmttok's `aggressive` mode as SEA-HELM calls it (Tokenizer("aggressive"), no other option):
    runs of letters (with their marks), runs of digits, and each other character, split at spaces
    ("covid19" -> covid, 19; "3°C" -> 3, °, C). Re-implemented: checked against pyonmttok 1.38.1 on
    the inputs of tests/test_library_seahelm.py, which is not a dependency."""
    global _AGGRESSIVE
    if _AGGRESSIVE is None:
        import regex

        _AGGRESSIVE = regex.compile(r"\p{N}+|[\p{L}\p{M}]+|\S")
    return _AGGRESSIVE.findall(text)


def _segmenter(lang: str | None) -> Callable[[str], list[str]]:
    from glotbench.text.segment import segment

    def tokenize(text: str) -> list[str]:
        words = " ".join(basic_tokens(text.lower()))
        return [w for w in segment(words, lang) if w.strip()]
    return tokenize


class RougeL:
    """ROUGE-L of one reply against one reference, tokenised as `tokenize` names."""

    def __init__(self, lang: str | None, tokenize: str = "segmenter"):
        from rouge_score import rouge_scorer

        if tokenize not in TOKENIZERS:
            raise ValueError(f"tokenize must be one of {', '.join(TOKENIZERS)}")
        self.lang, self.tokenize = lang, tokenize
        fn = _seahelm(lang) if tokenize == "seahelm" else _segmenter(lang)

        class _Tok:
            def tokenize(self, text: str) -> list[str]:
                return fn(text)

        self._scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tok())

    def score(self, reply: str, reference: str) -> tuple[float, float, float]:
        """(precision, recall, F1)."""
        s = self._scorer.score(reference, reply)["rougeL"]
        return s.precision, s.recall, s.fmeasure

    def signature(self) -> str:
        from importlib import metadata

        from glotbench.text.segment import segmenter_signature

        from glotbench.signature import Signature

        tok = ({"tok": f"seahelm-{self.lang or 'none'}"} if self.tokenize == "seahelm"
               else {"tok": "segmenter", "seg": segmenter_signature(self.lang)})
        return Signature.build("rougeL", tok, rouge_score=metadata.version("rouge-score")).format()
