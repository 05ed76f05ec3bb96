"""A reply is user data: whatever text an endpoint sends (a lone surrogate through a JSON `\\ud800`
escape, NUL, megabytes), a plain `glotbench run` against it completes over real HTTP, records every
sample in valid UTF-8, flags the repaired ones, and re-reads them from the cache; the same holds for
a data file that carries such escapes."""

from __future__ import annotations

import json

import pytest

from conftest import cli
from service_helpers import start_hostile


@pytest.fixture(scope="module")
def hostile():
    h = start_hostile("127.0.0.1")
    yield h
    h.stop()


def _samples(out) -> list[dict]:
    raw = (out / "samples.jsonl").read_bytes()
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # strict UTF-8: no lone surrogate


@pytest.mark.parametrize("reply, repaired", [
    ("\ud800 Answer: A", True),  # the reply: a lone high surrogate
    ("Answer: A \udc00", True),  # a lone low surrogate
    ("Answer: A \udc00\ud800", True),  # a pair in the wrong order is two lone halves
    ("Answer: A \x00\x1b[2J", False),  # NUL and an escape sequence are valid text: kept as they are
    ("Answer: A " + "ຂ" * 600_000, False),  # 1.8 MB of Lao
], ids=["high-surrogate", "low-surrogate", "reversed-pair", "nul-and-escape", "huge"])
def test_a_run_against_an_endpoint_sending_odd_text_completes(hostile, tmp_path, reply, repaired):
    hostile.control(reply=reply)
    r = cli("run", "laobench-mcq", "--model", f"openai:m@{hostile.url}", "--out", str(tmp_path / "o"),
            "--cache-path", str(tmp_path / "calls.sqlite"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    rows = _samples(tmp_path / "o")
    assert len(rows) == 25 and all(x["failure"] is None and x["answer"] == "A" for x in rows)
    for x in rows:
        if repaired:
            assert "\ufffd" in x["output"] and "invalid_unicode" in x["flags"]
        else:
            assert x["output"] == reply and "invalid_unicode" not in x["flags"]
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert results["counts"]["flags"].get("invalid_unicode", 0) == (25 if repaired else 0), results["counts"]
    if repaired:
        assert "invalid_unicode 25" in r.stdout
        # Read back from the call cache: same text, same flag, no call made.
        r2 = cli("run", "laobench-mcq", "--model", f"openai:m@{hostile.url}", "--out", str(tmp_path / "o2"),
                 "--cache-path", str(tmp_path / "calls.sqlite"))
        assert r2.returncode == 0 and "cache hits 25" in r2.stdout, r2.stdout + r2.stderr
        assert [(x["output"], x["flags"]) for x in _samples(tmp_path / "o2")] == [(x["output"], x["flags"]) for x in rows]
        r3 = cli("report", str(tmp_path / "o"), "--html")
        assert r3.returncode == 0 and (tmp_path / "o" / "report.html").exists(), r3.stderr[-2000:]


def test_a_data_file_with_lone_surrogates_is_refused_before_any_call(hostile, tmp_path, repo_root):
    """A question carrying a `\\ud800` escape (valid JSON, no UTF-8 text can carry it) is bad input:
    one `FILE:LINE` error line, exit 2, no model call, nothing written (a lone surrogate in an id
    stopped a run with a bare "'utf-8' codec can't encode" naming nothing). A reply holding one is
    the model's: repaired and flagged (test above)."""
    src = repo_root / "src/glotbench/benchmarks/data/laobench_sample.jsonl"
    with open(tmp_path / "data.jsonl", "w", encoding="utf-8") as f:
        for line in src.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            row["question"] = str(row.get("question", "")) + " \ud800"
            f.write(json.dumps(row) + "\n")  # ASCII JSON: the lone surrogate is written as its escape
    hostile.control(reply="Answer: B")
    r = cli("run", "laobench-mcq", "--data", str(tmp_path / "data.jsonl"), "--model", f"openai:m@{hostile.url}",
            "--out", str(tmp_path / "o"), "--cache-path", str(tmp_path / "calls.sqlite"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert f"{tmp_path / 'data.jsonl'}:1: a lone surrogate (\\ud800) is not a character: invalid Unicode" in r.stderr
    assert not [x for x in hostile.seen() if x["path"].endswith("/chat/completions")]
    assert not (tmp_path / "o" / "samples.jsonl").exists()


_OK = '{"choices": [{"message": {"content": "Answer: A"}, "finish_reason": "stop"}]'


@pytest.mark.parametrize("body, usage", [
    (_OK + ', "usage": {"prompt_tokens": 1e999, "completion_tokens": 3}}', None),  # infinity: no int holds it
    (_OK + ', "usage": {"prompt_tokens": Infinity, "completion_tokens": NaN}}', None),
    (_OK + ', "usage": {"prompt_tokens": -5000000, "completion_tokens": -1}}', (0, 0)),  # no negative counts
    (_OK + ', "usage": {"prompt_tokens": 7, "completion_tokens": 2}}', (7, 2)),
    ('{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}", None),  # nested past any parser's recursion
], ids=["overflowing-usage", "infinity-and-nan", "negative-usage", "plain", "nested-100k"])
def test_a_reply_of_the_wrong_shape_is_a_bad_response(hostile, tmp_path, body, usage):
    """A reply whose numbers or nesting no parser holds is the endpoint's bad response (retried,
    then recorded as `bad_response`), never an `exception` (which names a bug of ours); token counts
    are never negative."""
    hostile.control(body=body)
    r = cli("run", "laobench-mcq", "--model", f"openai:m@{hostile.url}", "--out", str(tmp_path / "o"), "--no-cache",
            "--max-retries", "1")
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    rows = _samples(tmp_path / "o")
    assert len(rows) == 25
    if usage is None:
        assert r.returncode != 0 and {x["failure"] for x in rows} == {"bad_response"}, {x["error"] for x in rows}
    else:
        assert r.returncode == 0 and all(x["failure"] is None and x["answer"] == "A" for x in rows), r.stderr[-2000:]
        assert {(x["tokens"]["prompt"], x["tokens"]["completion"]) for x in rows} == {usage}
