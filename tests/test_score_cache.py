"""Scores kept with cached replies: a re-run of unchanged code reads them; a new benchmark version,
signature or gold scores afresh; the numbers are the same either way."""

from __future__ import annotations

import json

import pytest

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.engine.cache import CallCache
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.text.vietnamese import strip

N = 12
# The extraction check (glotbench.checks.extraction) reads item 5's reply ("no JSON here") leniently
# and scores that reading once per computed checks block: a fully cached re-run reads the block.
LENIENT = 1


class Counting(VietnameseDiacritics):
    """vi-diacritics that counts its extractions and scorings (per class, as runs make new instances)."""

    calls = {"extract": 0, "score": 0}

    def __init__(self, rule: str = "a") -> None:
        self.rule = rule

    def extract(self, text, item):
        type(self).calls["extract"] += 1
        return super().extract(text, item)

    def score(self, answer, item):
        type(self).calls["score"] += 1
        return super().score(answer, item)

    def signature_parts(self):
        return {**super().signature_parts(), "rule": self.rule}

    def input_floor_score(self, item):
        """The input-unchanged floor scores the inputs (no reply, nothing cached): not counted here."""
        counted = dict(type(self).calls)
        try:
            return super().input_floor_score(item)
        finally:
            type(self).calls.update(counted)


class CountingV2(Counting):
    version = "2.0"
    calls = {"extract": 0, "score": 0}


@pytest.fixture
def replay(tmp_path):
    items = VietnameseDiacritics().load()[:N]
    f = tmp_path / "preds.jsonl"
    lines = []
    for i, it in enumerate(items):
        ref = it.gold["references"][0]
        out = json.dumps({"restored_text": ref if i % 3 else it.public["text"]}, ensure_ascii=False)
        if i == 5:
            out = "no JSON here"  # a format failure is cached as well
        lines.append(json.dumps({"id": it.id, "output": out}, ensure_ascii=False))
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"replay:{f}"


def _run(bench, replay, cache_path, tmp_path, **kw):
    out = tmp_path / f"r{len(list(tmp_path.glob('r*')))}"
    return evaluate(bench, replay, RunOptions(cache_path=cache_path, progress=False, limit=N, out=str(out), **kw))


def _records(res):
    return [{k: v for k, v in s.to_record().items() if k not in ("cached", "latency_s")} for s in res.samples]


def test_unchanged_code_reads_scores_from_the_cache(replay, cache_path, tmp_path):
    Counting.calls.update(extract=0, score=0)
    first = _run(Counting(), replay, cache_path, tmp_path)
    assert Counting.calls == {"extract": N, "score": N - 1 + LENIENT}  # item 5 has no JSON: extracted, not scored
    second = _run(Counting(), replay, cache_path, tmp_path)
    assert Counting.calls == {"extract": N, "score": N - 1 + LENIENT}  # nothing re-extracted or re-scored
    assert second.results["counts"]["cache_hits"] == N
    assert second.results["scores"] == first.results["scores"]
    assert _records(second) == _records(first)
    assert all(s.cached for s in second.samples)
    assert len(CallCache(cache_path)._db.execute("SELECT key FROM scores").fetchall()) == N


def test_a_new_version_or_signature_scores_afresh(replay, cache_path, tmp_path):
    Counting.calls.update(extract=0, score=0)
    CountingV2.calls.update(extract=0, score=0)
    first = _run(Counting(), replay, cache_path, tmp_path)
    v2 = _run(CountingV2(), replay, cache_path, tmp_path)  # same prompts: the replies come from the cache
    assert v2.results["counts"]["cache_hits"] == N
    assert CountingV2.calls == {"extract": N, "score": N - 1 + LENIENT}
    assert Counting.calls == {"extract": N, "score": N - 1 + LENIENT}
    other = _run(Counting(rule="b"), replay, cache_path, tmp_path)  # another signature
    assert Counting.calls == {"extract": 2 * N, "score": 2 * (N - 1 + LENIENT)}
    assert other.results["signature"] != first.results["signature"]
    assert _records(other) == _records(first) == _records(v2)
    _run(Counting(rule="b"), replay, cache_path, tmp_path)  # and that one is now kept too
    assert Counting.calls == {"extract": 2 * N, "score": 2 * (N - 1 + LENIENT)}


def test_changed_gold_scores_afresh(replay, cache_path, tmp_path):
    """Same prompts, other references (a corrected data file): the scores are not reused."""
    items = VietnameseDiacritics().load()[:N]
    data = tmp_path / "data.jsonl"
    rows = [{"id": it.id, "references": list(it.gold["references"])} for it in items]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    Counting.calls.update(extract=0, score=0)
    first = _run(Counting(), replay, cache_path, tmp_path, data=str(data))
    rows[1]["references"] = [strip(rows[1]["references"][0])]  # other marks, the same prompt
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    second = _run(Counting(), replay, cache_path, tmp_path, data=str(data))
    assert second.results["counts"]["cache_hits"] == N
    assert Counting.calls["score"] == 2 * (N - 1 + LENIENT)
    assert second.results["signature"] != first.results["signature"]


def test_no_cache_scores_every_time(replay, cache_path, tmp_path):
    Counting.calls.update(extract=0, score=0)
    _run(Counting(), replay, cache_path, tmp_path, use_cache=False)
    _run(Counting(), replay, cache_path, tmp_path, use_cache=False)
    assert Counting.calls == {"extract": 2 * N, "score": 2 * (N - 1 + LENIENT)}


@pytest.mark.parametrize("make", ["garbage", "directory"])
def test_a_cache_path_that_is_no_database_is_one_error_line(tmp_path, make):
    from conftest import cli

    bad = tmp_path / "calls.sqlite"
    if make == "garbage":
        bad.write_text("not a database at all\n", encoding="utf-8")
    else:
        bad.mkdir()
    out = cli("run", "vi-diacritics", "--model", "python:helpers:flaky_model", "--limit", "1", "--no-progress",
              "--cache-path", str(bad), "--out", str(tmp_path / "r"))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot open the call cache {bad}"), out.stderr


def test_a_failed_write_to_the_cache_keeps_the_replies_queued(cache_path):
    from glotbench.errors import GlotbenchError
    from glotbench.models.base import Response

    cache = CallCache(cache_path)
    cache.put("k", "m", Response(text="x"))
    cache._db.close()  # as a vanished disk or a lock held past the busy timeout would
    with pytest.raises(GlotbenchError, match="cannot write to the call cache"):
        cache.flush()
    assert "k" in cache._pending


def test_damaged_rows_are_asked_and_scored_again_and_replaced(replay, cache_path, tmp_path):
    """A cache row that no longer decodes (a damaged file, a hand edit) is no stored reply or score:
    the run goes on, asks for that reply again, scores it and replaces the row."""
    import sqlite3

    first = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    db = sqlite3.connect(cache_path)
    db.execute("UPDATE calls SET response = '{broken' WHERE rowid = 1")
    db.execute("UPDATE scores SET record = '[1, 2]' WHERE rowid = 2")
    db.execute("UPDATE scores SET record = '{\"stats\": 1}' WHERE rowid = 3")
    db.commit()
    again = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    assert again.results["counts"]["model_calls"] == 1 and again.results["counts"]["cache_hits"] == N - 1
    assert again.results["scores"] == first.results["scores"]
    third = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)  # the damaged rows were replaced
    assert third.results["counts"]["model_calls"] == 0 and third.results["scores"] == first.results["scores"]
    rows = db.execute("SELECT response FROM calls").fetchall() + db.execute("SELECT record FROM scores").fetchall()
    assert all(json.loads(r[0]) for r in rows)
