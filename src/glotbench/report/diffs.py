"""Word-level diffs for the sample browser, by benchmark name. A benchmark with a diff registers one
function (answer, gold) -> [(word, kind), ...]; benchmarks without one show no diff."""

from __future__ import annotations

from typing import Any, Callable

Diff = Callable[[str, dict[str, Any]], list[tuple[str, str]]]
DIFFS: dict[str, Diff] = {}


def register_diff(*benchmarks: str) -> Callable[[Diff], Diff]:
    def deco(fn: Diff) -> Diff:
        for b in benchmarks:
            DIFFS[b] = fn
        return fn
    return deco


@register_diff("vi-diacritics")
def vietnamese(answer: str, gold: dict[str, Any]) -> list[tuple[str, str]]:
    """Against the reference the scorer matched best (most aligned words right); wrong tones marked."""
    from glotbench.text.vietnamese import aligned_word_matches, word_diff

    refs = gold.get("references") or []
    if not refs:
        return []
    best = refs[0] if len(refs) == 1 else max(refs, key=lambda r: aligned_word_matches(answer, r)[0])
    return word_diff(answer, best)
