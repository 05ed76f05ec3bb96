"""python: models for the item-analysis tests: four models of known strength on the LaoBench sample.
Item 0 has what looks like a wrong key: the three strong models all give the same other letter."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _items() -> dict[str, tuple[int, str]]:
    from glotbench.benchmarks.laobench import LaoBenchMCQ

    bench = LaoBenchMCQ()
    return {bench.render(it.to_public()).messages[-1]["content"]: (k, it.gold["answer"])
            for k, it in enumerate(bench.load())}


def _reply(messages, wrong: set[int]) -> str:
    k, gold = _items()[messages[-1]["content"]]
    letters = "ABCD"
    letter = letters[(letters.index(gold) + 1) % 4] if k in wrong else gold
    return f"The answer is {letter}"


def strong_a(messages):
    return _reply(messages, {0})


def strong_b(messages):
    return _reply(messages, {0, 5})


def strong_c(messages):
    return _reply(messages, {0, 5, 6, 7})


def weak(messages):
    return _reply(messages, set(range(25)) - {1, 2, 5, 9})
