"""Contamination check: which benchmark items share a long n-gram with a reference corpus.

Item text is the item's public fields (question, options, source text...) joined with newlines.
Both sides are NFC-normalised, lower-cased and whitespace-collapsed. Items mostly in scripts written
without spaces (at least half their letters; every language profile with `spaces=False` in
glotbench.languages, including one registered at run time: Lao, Thai, Khmer, Burmese, Chinese,
Japanese) use character n-grams (default 50 characters, spaces removed); others use word n-grams
(default 13 words, as in GPT-3's study). The same rule (`written_without_spaces`) picks character
or word shingles in the near-duplicate search (build/dedupe.py). An
item is flagged when one of its n-grams occurs in the corpus; an item shorter than n counts as one
n-gram of its own length. The corpus is streamed in one pass, and n-grams may span line breaks.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from glotbench.errors import GlotbenchError
from glotbench.items import Item
from glotbench.languages import written_without_spaces

_SPACE = re.compile(r"\s+")


def _units(text: str, chars: bool) -> list[str]:
    t = _SPACE.sub(" ", unicodedata.normalize("NFC", text).lower()).strip()
    return list(t.replace(" ", "")) if chars else t.split()


NOT_TEXT = {"lang", "direction", "language", "subject"}  # labels in public fields, not item text


def item_text(item: Item) -> str:
    """The item's public text: every string in its public fields except labels (NOT_TEXT)."""
    parts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif hasattr(v, "items"):
            for k, x in v.items():
                if k not in NOT_TEXT:
                    walk(x)
    walk(item.public)
    return "\n".join(parts)


def check(items: Sequence[Item], corpus_files: Iterable[str], *, char_n: int = 50, word_n: int = 13) -> dict[str, Any]:
    """The share of items that share an n-gram with the corpus, and their ids (for the data owner)."""
    for flag, n in (("--char-n", char_n), ("--word-n", word_n)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise GlotbenchError(f"{flag} must be a positive whole number, got {n!r}")
    # index[(chars, size)][gram] -> item ids
    index: dict[tuple[bool, int], dict[tuple[str, ...], set[str]]] = defaultdict(lambda: defaultdict(set))
    for it in items:
        text = item_text(it)
        chars = written_without_spaces(text)
        units = _units(text, chars)
        n = char_n if chars else word_n
        if not units:
            continue
        size = min(n, len(units))
        for i in range(len(units) - size + 1):
            index[(chars, size)][tuple(units[i:i + size])].add(it.id)
    hits: set[str] = set()
    for path in corpus_files:
        p = Path(path)
        if not p.is_file():
            raise GlotbenchError(f"corpus file not found: {p}")
        for chars in {c for c, _ in index}:
            sizes = sorted(s for c, s in index if c == chars)
            keep = max(sizes) - 1
            window: list[str] = []
            with p.open(encoding="utf-8", errors="replace") as f:
                for line in f:
                    start = len(window)
                    window.extend(_units(line, chars))
                    for size in sizes:
                        grams = index[(chars, size)]
                        # only windows that end in the new units: earlier ones were checked already
                        for i in range(max(0, start - size + 1), len(window) - size + 1):
                            ids = grams.get(tuple(window[i:i + size]))
                            if ids:
                                hits |= ids
                    window = window[-keep:] if keep > 0 else []
    return {"items": len(items), "overlapping": len(hits), "share": len(hits) / len(items) if items else 0.0,
            "overlapping_ids": sorted(hits), "ngram": {"chars": char_n, "words": word_n}}
