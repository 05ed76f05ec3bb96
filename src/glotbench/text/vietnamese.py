"""Vietnamese text: stripping diacritics, tone-placement-insensitive comparison, word alignment.

Rules (documented in docs/benchmarks/vi-diacritics.md):
- `strip`: Unicode NFD, drop every combining diacritical mark (the blocks U+0300-U+036F,
  U+1AB0-U+1AFF, U+1DC0-U+1DFF, U+20D0-U+20FF, U+FE20-U+FE2F: tones, circumflex, breve, horn), map
  đ->d and Đ->D, back to NFC. Latin letters, digits, punctuation and spacing are unchanged.
- Comparison ignores *where* a tone mark sits inside a syllable (hòa == hoà, thủy == thuỷ): the
  position never distinguishes two Vietnamese words. Which tone, and every other letter and mark,
  still count. Case counts. Runs of whitespace count as one space; leading/trailing space is ignored.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# The five tone marks: grave (huyền), acute (sắc), tilde (ngã), hook above (hỏi), dot below (nặng).
TONE_MARKS = {"\u0300": "`", "\u0301": "'", "\u0303": "~", "\u0309": "?", "\u0323": "."}
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_D = str.maketrans({"đ": "d", "Đ": "D"})


def strip(text: str) -> str:
    """Remove every Vietnamese diacritic; everything else stays as it is."""
    kept = _MARKS.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", kept.translate(_D))


def normalize_space(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@functools.lru_cache(maxsize=65536)  # syllables are a closed set: most words are seen many times
def _syllable_key(word: str) -> str:
    """The word with its tone marks taken out and appended as symbols: position-free tone identity."""
    decomposed = unicodedata.normalize("NFD", word)
    if not any(ch in TONE_MARKS for ch in decomposed):
        return unicodedata.normalize("NFC", word)
    base = "".join(ch for ch in decomposed if ch not in TONE_MARKS)
    tones = "".join(TONE_MARKS[ch] for ch in decomposed if ch in TONE_MARKS)
    return unicodedata.normalize("NFC", base) + "\x00" + tones


@functools.lru_cache(maxsize=65536)
def comparison_key(text: str) -> str:
    """A string equal for two texts iff they are the same restoration under the rules above."""
    text = normalize_space(unicodedata.normalize("NFC", text))
    return _WORD.sub(lambda m: _syllable_key(m.group(0)), text)


def words(text: str) -> list[str]:
    """Word tokens (runs of letters/digits), NFC; punctuation and spacing are not words."""
    return _WORD.findall(unicodedata.normalize("NFC", text))


def same_letters(prediction: str, source: str) -> bool:
    """True when the prediction, stripped, has the same words as the stripped source (case-folded):
    the model only added marks and did not rewrite, add or drop words."""
    return [w.casefold() for w in words(strip(prediction))] == [w.casefold() for w in words(source)]


def aligned_word_matches(prediction: str, reference: str) -> tuple[int, int]:
    """(correct words, reference words) after aligning prediction and reference word by word.

    Words are aligned by edit distance on their stripped, case-folded letters (a longest common
    subsequence), so one dropped or added word does not shift every later word out of place. An
    aligned pair is correct when its full diacritic form matches (tone position ignored).
    """
    p, r = words(prediction), words(reference)
    # strip() keeps word boundaries, so the stripped words line up one-to-one with p and r.
    ps = words(strip(prediction).casefold())
    rs = words(strip(reference).casefold())
    if len(ps) != len(p) or len(rs) != len(r):  # casefold can split a word (rare ligatures)
        ps = [strip(w).casefold() for w in p]
        rs = [strip(w).casefold() for w in r]
    if ps == rs:  # the common case: a one-to-one alignment
        pairs = zip(p, r)
    else:
        pairs = _lcs_pairs(p, r, ps, rs)
    correct = sum(1 for a, b in pairs if _syllable_key(a) == _syllable_key(b))
    return correct, len(r)


def _lcs_pairs(p: list[str], r: list[str], ps: list[str], rs: list[str]) -> list[tuple[str, str]]:
    n, m = len(ps), len(rs)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, nxt = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = nxt[j + 1] + 1 if ps[i] == rs[j] else max(nxt[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if ps[i] == rs[j]:
            pairs.append((p[i], r[j]))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs
