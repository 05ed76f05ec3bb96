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
from typing import Sequence


# The five tone marks: grave (huyền), acute (sắc), tilde (ngã), hook above (hỏi), dot below (nặng).
TONE_MARKS = {"\u0300": "`", "\u0301": "'", "\u0303": "~", "\u0309": "?", "\u0323": "."}
_WORD = re.compile(r"\w+")
_WORD_SPLIT = re.compile(r"(\w+)")
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")


# `strip` and `words` remember the last texts they read: scoring one answer reads the answer, its
# source and its reference several times over (same_letters, comparison_key, letter_keys, the
# alignment), and the language check (a batch of 256 answers later), the error table (at the end)
# and the input floor read them again. 4,096 texts (5.4 MB at most, tracemalloc): a 2,000-item run's answers
# and references; with 256, a run's later readers found none (14 ms of CPU a 2,000-item run;
# docs/performance.md).
@functools.lru_cache(maxsize=4096)
def strip(text: str) -> str:
    """Remove every Vietnamese diacritic; everything else stays as it is. An ASCII text has none (and
    is its own NFD and NFC). đ and Đ by two `str.replace` calls, not `str.translate` with a table:
    0.08 against 1.8 µs a sentence, measured (docs/performance.md); the same text."""
    if text.isascii():
        return text
    kept = _MARKS.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", kept.replace("đ", "d").replace("Đ", "D"))


def normalize_space(text: str) -> str:
    """Runs of whitespace as one space, none at either end: `" ".join(text.split())`, which splits
    where `\\s+` matches (both read Unicode whitespace as `str.isspace`), 0.4 against 1.5 µs a
    sentence for the regex substitution, measured (docs/performance.md)."""
    return " ".join(text.split())


def _syllable_key(word: str) -> str:
    """The word with its tone marks taken out and appended as symbols: position-free tone identity.
    An ASCII word (a number, an unmarked syllable, an English word) is its own key: it has no mark
    and is NFC already; it is not kept in the cache (a run's numbers filled it: 1.7 MB at 10,000
    items of the runner bench)."""
    return word if word.isascii() else _marked_syllable_key(word)


@functools.lru_cache(maxsize=65536)  # syllables are a closed set: most words are seen many times
def _marked_syllable_key(word: str) -> str:
    decomposed = unicodedata.normalize("NFD", word)
    if not any(ch in TONE_MARKS for ch in decomposed):
        return unicodedata.normalize("NFC", word)
    base = "".join(ch for ch in decomposed if ch not in TONE_MARKS)
    tones = "".join(TONE_MARKS[ch] for ch in decomposed if ch in TONE_MARKS)
    return unicodedata.normalize("NFC", base) + "\x00" + tones


@functools.lru_cache(maxsize=1024)  # whole texts: reused within an item (its answer key, its repeats), not
def comparison_key(text: str) -> str:  # across a run; 65,536 of them held 7 MB at 10,000 items, 4,096 2 MB
    """A string equal for two texts iff they are the same restoration under the rules above."""
    text = normalize_space(unicodedata.normalize("NFC", text))
    if text.isascii():  # no marks anywhere: every word is its own key
        return text
    # words at the odd places of the split, each replaced by its key (a list, not a function per
    # match: 5.4 µs a sentence of the runner bench against 7.2; docs/performance.md)
    parts = _WORD_SPLIT.split(text)
    parts[1::2] = [w if w.isascii() else _marked_syllable_key(w) for w in parts[1::2]]
    return "".join(parts)


def words(text: str) -> list[str]:
    """Word tokens (runs of letters/digits), NFC; punctuation and spacing are not words."""
    return list(_words(text))  # a list of its own: a caller may change it


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(unicodedata.normalize("NFC", text)))


def same_letters(prediction: str, source: str) -> bool:
    """True when the prediction, stripped, has the same words as the stripped source (case-folded):
    the model only added marks and did not rewrite, add or drop words."""
    stripped = strip(prediction)
    if stripped == source:  # the usual case: the same text, so the same words (nothing split or folded)
        return True
    return [w.casefold() for w in words(stripped)] == [w.casefold() for w in words(source)]


def align(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (i, j) with a[i] == b[j] along a longest common subsequence of the two word lists
    (rapidfuzz's Indel alignment: insertions and deletions only), in order."""
    if list(a) == list(b):
        return [(i, i) for i in range(len(a))]
    pairs: list[tuple[int, int]] = []
    from rapidfuzz.distance import Indel  # imported when first scoring: a cached re-run never aligns

    for op in Indel.opcodes(list(a), list(b)):
        if op.tag == "equal":
            pairs.extend(zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end)))
    return pairs


def letter_keys(text: str) -> list[str]:
    """Each word stripped of its marks and case-folded: what alignment compares. strip() keeps word
    boundaries, so the keys line up one-to-one with words(text)."""
    ws = words(text)
    keys = words(strip(text).casefold())
    return keys if len(keys) == len(ws) else [strip(w).casefold() for w in ws]  # casefold can split a word


def same_word(a: str, b: str) -> bool:
    """The same word with the same marks, tone position ignored (hòa == hoà)."""
    return _syllable_key(a) == _syllable_key(b)


def aligned_word_matches(prediction: str, reference: str) -> tuple[int, int]:
    """(correct words, reference words) after aligning prediction and reference word by word.

    Words are aligned by edit distance on their stripped, case-folded letters (a longest common
    subsequence, `align`), so one dropped or added word does not shift every later word out of place.
    An aligned pair is correct when its full diacritic form matches (tone position ignored).
    """
    r = words(reference)
    if prediction == reference:  # the same text: every word aligned to itself and right (no alignment)
        return len(r), len(r)
    p = words(prediction)
    correct = 0
    # same_word on each aligned pair, with no key made where the words alone decide: two equal words
    # match; two unequal ASCII words do not; an ASCII word never matches a marked one (a marked word
    # of `words` is NFC, so its key is itself, not ASCII, or holds a NUL, which no word does). The
    # input floor aligns each stripped source (all ASCII) with its reference: 26 -> 12 ms for the
    # 2,000 items of bench/runner_overhead.py, where every word's key was made (docs/performance.md)
    for i, j in align(letter_keys(prediction), letter_keys(reference)):
        a, b = p[i], r[j]
        if a == b or not (a.isascii() or b.isascii()) and _marked_syllable_key(a) == _marked_syllable_key(b):
            correct += 1
    return correct, len(r)

@functools.lru_cache(maxsize=65536)
def _tone_free(word: str) -> str:
    """The word without its tone marks (vowel marks, đ and case kept)."""
    return unicodedata.normalize("NFC", "".join(
        ch for ch in unicodedata.normalize("NFD", word) if ch not in TONE_MARKS))


def word_diff(prediction: str, reference: str) -> list[tuple[str, str]]:
    """A word-level diff for display, aligned exactly as `aligned_word_matches` aligns (`align` over
    `letter_keys`): (word, kind) in reading order. Kinds: `ok` (same word, tone position ignored),
    `tone` (same letters and vowel marks, wrong or missing tone: the reference word is appended after a
    `→`), `mark` (another diacritic or letter case differs), `missing` (a reference word the prediction
    lacks) and `extra` (a predicted word the reference lacks)."""
    if prediction == reference:  # the same text: every word aligned to itself, `ok` (no alignment)
        return [(w, "ok") for w in words(prediction)]
    p, r = words(prediction), words(reference)
    out: list[tuple[str, str]] = []
    i = j = 0
    for pi, rj in align(letter_keys(prediction), letter_keys(reference)) + [(len(p), len(r))]:
        out.extend((w, "extra") for w in p[i:pi])
        out.extend((w, "missing") for w in r[j:rj])
        if pi < len(p) and rj < len(r):
            out.append(_diff_kind(p[pi], r[rj]))
        i, j = pi + 1, rj + 1
    return out


def _diff_kind(a: str, b: str) -> tuple[str, str]:
    if same_word(a, b):
        return (a, "ok")
    return (f"{a}→{b}", "tone" if _tone_free(a) == _tone_free(b) else "mark")
