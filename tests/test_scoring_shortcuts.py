"""Shortcuts on a run's path give what the rule they stand for gives: the extraction check's figures
when every reply was read, a reply without a think tag, the script shares of a Latin text
(docs/performance.md, issue 32's eighth pass)."""

from __future__ import annotations

import unicodedata

import pytest

from checks_models import write_vi
from glotbench.checks.extraction import _value
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.registry import get_benchmark
from glotbench.text.vietnamese import strip

# Texts hard to count or read: Unicode spaces, a NUL, full-width letters, a lone combining mark, tone
# marks in either place, đ, µ (a Common letter), case.
EDGES = ["abc\u00a0def", "abc\tdef ", "a\x00b", "x\u0301", "\u0301", "Ｓａｙａ", "cafe\u0301", "café", "hoà", "hòa",
         "HOÀ", "đi", "Đi", "", " ", "ﬁ đi", "x\u0323y", "5 µm", "ªº", "Chị ơi, cho em một ly cà phê."]


def _texts() -> list[str]:
    """The edge cases and the bundled vi-diacritics references, each also stripped, decomposed (NFD)
    and upper-cased."""
    refs = [r for it in get_benchmark("vi-diacritics").load() for r in it.gold["references"]]
    out = [*EDGES, *refs]
    return out + [strip(t) for t in out] + [unicodedata.normalize("NFD", t) for t in out] + [t.upper() for t in out]


@pytest.mark.parametrize("data", ["bundled", "own"])
def test_extraction_figures_when_every_reply_is_read(tmp_path, cache_path, data):
    """No reply unread: the upper bound and the lenient figure are the strict one, overall and in
    every group, as computing them from the samples gives (the bundled set: 7 categories; VI_ROWS:
    two)."""
    path = None if data == "bundled" else write_vi(tmp_path / "vi.jsonl")
    res = evaluate("vi-diacritics", "python:checks_models:vi_replies",
                   RunOptions(data=path, out=str(tmp_path / "run"), cache_path=cache_path, progress=False))
    x = res.results["checks"]["extraction"]
    assert x["unread"] == 0
    bench = get_benchmark("vi-diacritics")
    head, samples = bench.metrics[0], list(res.samples)
    strict = _value(head, samples, ())[0]
    assert x["strict"] == x["lower"] == x["upper"] == x["lenient"] == strict
    groups = x["groups"]["category"]
    assert len(groups) == len({s.meta["category"] for s in samples}) >= 2
    for value, cell in groups.items():
        subset = [s for s in samples if s.meta["category"] == value]
        assert cell == {"strict": _value(head, subset, ())[0], "upper": _value(head, subset, ())[0]}


@pytest.mark.parametrize("permute", [None, "circular"])
def test_extraction_figures_when_every_mcq_reply_is_read(tmp_path, cache_path, permute):
    """The same on an option task (laobench-mcq, grouped by dimension), plain and with CircularEval's
    rotations (the headline counts an item right in every rotation: `combined`)."""
    import json

    rows = [{"id": f"q{i}", "data_type": ("Knowledge Application", "K12 Foundational Education")[i % 2],
             "question": f"Question {i}?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "ABCD"[i % 4],
             "lang": "en"} for i in range(12)]
    data = tmp_path / "m.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    opts = (("permute", permute),) if permute else ()
    res = evaluate("laobench-mcq", "python:helpers:counted_letter",
                   RunOptions(data=str(data), out=str(tmp_path / "run"), cache_path=cache_path, progress=False,
                              bench_options=opts))
    x = res.results["checks"]["extraction"]
    assert x["unread"] == 0
    bench = get_benchmark("laobench-mcq", **dict(opts))
    items = list(res.dataset)
    head = next(m for m in bench.run_metrics(res.dataset) if m.name == x["metric"])  # the headline
    combined = bench.combined(list(res.samples), items)
    strict, groups = _value(head, combined, tuple(bench.group_by))
    assert x["strict"] == x["lower"] == x["upper"] == x["lenient"] == strict
    assert len(x["groups"]["dimension"]) == 2
    for value, cell in x["groups"]["dimension"].items():
        subset = [s for s in combined if str(s.meta.get("dimension", "unknown")) == value]
        assert cell == {"strict": groups["dimension"][value], "upper": _value(head, subset, ())[0]}


def _strip_think_rule(text: str) -> tuple[str, bool]:
    """strip_think as its rule reads, with no shortcut: blocks removed, an open tag left is no
    answer, a closing tag alone keeps what follows it."""
    from glotbench.extract import _THINK_BLOCK, _THINK_OPEN

    stripped = _THINK_BLOCK.sub("", text)
    if _THINK_OPEN.search(stripped):
        return "", False
    close = stripped.lower().rfind("</think>")
    if close != -1:
        stripped = stripped[close + len("</think>"):]
    return stripped.strip(), True


def test_strip_think_without_a_tag_is_the_text():
    from glotbench.extract import strip_think

    texts = ["", "  ", '{"restored_text": "Sáng nay."}', " plain answer \n", "<think>x</think> B", "<THINK>a</THINK>b",
             "<think>never closed", "a</think> b", "1 < 2 and 3 > 2", "<thinking>t</thinking>C", "\u3000x\u3000",
             "＜think＞ full-width, not a tag", "x <think>y</think> z <think>w"]
    for t in texts + [t.upper() for t in texts]:
        assert strip_think(t) == _strip_think_rule(t), t


def _shares_rule(text: str) -> tuple[int, dict[str, float]]:
    """script_shares as its docstring reads, character by character: letters and marks counted
    by script, a mark of the Inherited script counted for the letter before it."""
    from collections import Counter

    from glotbench.checks.language import _char_script, _script_names

    names = tuple(_script_names())
    counts: Counter = Counter()
    last = None
    for c in text:
        script = _char_script(c, names)
        if script is None:
            last = None
            continue
        if script == "Inherited":
            if last is None:
                continue
            script = last
        counts[script] += 1
        last = script
    n = sum(counts.values())
    return n, ({k: round(v / n, 3) for k, v in counts.most_common()} if n else {})


def test_script_shares_of_latin_text_follow_the_rule():
    """Every character of the Latin blocks alone and after a letter, the bundled references, their
    decomposed forms (marks: the character-by-character path), and texts that mix in µ (a Common
    letter), Thai, Lao, Khmer, Cyrillic, Han and an emoji."""
    import random

    from glotbench.checks.language import _LATIN_BLOCKS, script_shares

    block = [chr(i) for lo, hi in _LATIN_BLOCKS for i in range(lo, hi + 1)]
    for c in block:
        assert script_shares(c) == _shares_rule(c) and script_shares("a" + c) == _shares_rule("a" + c), hex(ord(c))
    texts = _texts()
    rng = random.Random(7)
    others = ["\u0301", "µ", "ก", "ລ", "ខ", "а", "中", "\U0001F600", "\u00a0"]
    texts += ["".join(rng.choice(block + others if i % 2 else block) for _ in range(rng.randint(0, 30)))
              for i in range(3000)]
    for t in texts:
        assert script_shares(t) == _shares_rule(t), repr(t)
