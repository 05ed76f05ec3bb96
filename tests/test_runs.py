"""End-to-end runs against the real OpenAI-compatible test server on loopback."""

from __future__ import annotations

import json
import unicodedata

import pytest

from conftest import cli
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from helpers import gold_answers


def run(srv_or_spec, cache_path, tmp_path, **kw):
    spec = srv_or_spec if isinstance(srv_or_spec, str) else srv_or_spec.spec()
    kw.setdefault("progress", False)
    kw.setdefault("out", str(tmp_path / f"run{len(list(tmp_path.iterdir()))}"))
    return evaluate("vi-diacritics", spec, RunOptions(cache_path=cache_path, **kw))


def overall(res, metric="sentence_exact"):
    return res.results["scores"]["overall"][metric]["value"]


def test_no_gold_reaches_the_model(srv, cache_path, tmp_path):
    res = run(srv, cache_path, tmp_path)
    bodies = json.dumps(srv.requests(), ensure_ascii=False)
    bodies_nfd = unicodedata.normalize("NFD", bodies)
    items = VietnameseDiacritics().load()
    assert len(srv.requests()) == len(items) == res.results["counts"]["model_calls"]
    checked = 0
    for it in items:
        for ref in it.gold["references"]:
            if ref == it.public["text"]:
                continue  # a reference with no marks is its own input
            checked += 1
            assert ref not in bodies and unicodedata.normalize("NFD", ref) not in bodies_nfd
    assert checked >= 150


def test_perfect_model_scores_100_and_files_are_complete(srv, cache_path, tmp_path):
    srv.configure(answers=gold_answers())
    res = run(srv, cache_path, tmp_path)
    assert overall(res) == 1.0 and overall(res, "word_accuracy") == 1.0
    assert set(res.results["scores"]["groups"]["category"]) >= {"ambiguous", "paragraph", "teen_slang"}
    lines = (res.out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 164
    first = json.loads(lines[0])
    assert first["id"] == "everyday-001" and first["score"]["exact"] == 1.0 and first["tokens"]["completion"] > 0
    for key in ("signature", "versions", "config", "tokens", "counts", "finished"):
        assert key in res.results
    assert res.results["benchmark"]["prompt_hash"] in res.results["signature"]
    assert json.loads((res.out_dir / "run.json").read_text())["status"] == "complete"


def test_tone_style_variants_from_a_model_are_exact(srv, cache_path, tmp_path):
    new_style = {"òa": "oà", "óa": "oá", "ỏa": "oả", "õa": "oã", "ọa": "oạ", "ủy": "uỷ", "úy": "uý",
                 "ùy": "uỳ", "ũy": "uỹ", "ụy": "uỵ", "òe": "oè", "óe": "oé", "ỏe": "oẻ"}

    def to_new(ref):
        for a, b in new_style.items():
            ref = ref.replace(a, b)
        return ref

    answers = gold_answers(transform=to_new)
    changed = sum(v != old for v, old in zip(answers.values(), gold_answers().values()))
    assert changed >= 3  # the bundled data has old-style placements (họa, khỏe, ...) to move
    srv.configure(answers=answers)
    assert overall(run(srv, cache_path, tmp_path)) == 1.0


def test_retries_429_500_timeouts_and_malformed_bodies(srv, cache_path, tmp_path):
    srv.configure(answers=gold_answers(), faults=[
        {"match": "Troi mua", "status": 429, "retry_after": "0.05", "times": 2},
        {"match": "Sang nay", "status": 503, "times": 1},
        {"match": "Chi oi", "malformed": True, "times": 1},
        {"match": "Cuoi tuan", "delay": 3, "times": 1},
    ])
    res = run(srv, cache_path, tmp_path, limit=6, timeout_s=1.0)
    c = res.results["counts"]
    assert overall(res) == 1.0
    assert c["retries"] == 5 and c["failed"] == 0
    assert c["model_calls"] == 6 + 5


def test_permanent_errors_are_recorded_and_the_run_goes_on(srv, cache_path, tmp_path):
    srv.configure(answers=gold_answers(), faults=[{"match": "Sang nay", "status": 500, "times": 99},
                                                  {"match": "Chi oi", "status": 400, "times": 99}])
    res = run(srv, cache_path, tmp_path, limit=4, max_retries=2)
    c = res.results["counts"]
    assert c["failures"] == {"server_error": 1, "client_error": 1}
    assert overall(res) == 0.5
    samples = [json.loads(line) for line in (res.out_dir / "samples.jsonl").read_text().splitlines()]
    failed = {s["id"]: s for s in samples if s["failure"]}
    assert failed["everyday-001"]["error"].startswith("server_error: HTTP 500")
    assert failed["everyday-001"]["retries"] == 2 and failed["everyday-002"]["retries"] == 0
    # A failed call is not cached: the next run asks again.
    srv.configure(answers=gold_answers())
    assert overall(run(srv, cache_path, tmp_path, limit=4)) == 1.0


def test_all_fail_run_still_reports_zero(srv, cache_path, tmp_path):
    srv.configure(answers={"Text": "I cannot help with that."})
    res = run(srv, cache_path, tmp_path, limit=10)
    assert overall(res) == 0.0
    assert res.results["counts"]["failures"] == {"format": 10}
    assert res.results["scores"]["overall"]["format_failure_rate"]["value"] == 1.0
    assert (res.out_dir / "results.json").exists()


def test_truncated_reply_is_flagged(srv, cache_path, tmp_path):
    srv.configure(answers=gold_answers())
    res = run(srv, cache_path, tmp_path, limit=3, max_tokens=2)
    assert res.results["counts"]["flags"]["truncated"] == 3
    assert res.results["counts"]["failures"] == {"truncated": 3}


def test_cache_makes_a_rerun_free(srv, cache_path, tmp_path):
    srv.configure(answers=gold_answers())
    first = run(srv, cache_path, tmp_path, limit=20)
    n = len(srv.requests())
    assert n == 20
    again = run(srv, cache_path, tmp_path, limit=20)
    assert len(srv.requests()) == n and again.results["counts"]["model_calls"] == 0
    assert again.results["counts"]["cache_hits"] == 20
    assert again.results["scores"] == first.results["scores"]
    run(srv, cache_path, tmp_path, limit=20, use_cache=False)
    assert len(srv.requests()) == 40
    # A different generation config is a different cache key.
    run(srv, cache_path, tmp_path, limit=20, temperature=0.5)
    assert len(srv.requests()) == 60


def test_repeats_use_distinct_cache_keys_and_report_stability(cache_path, tmp_path):
    import helpers

    helpers._calls.clear()  # flaky_model is right on its first call per prompt only
    res = run("python:helpers:flaky_model", cache_path, tmp_path, limit=10, repeats=3)
    st = res.results["scores"]["stability"]
    assert st["repeats"] == 3 and res.results["counts"]["samples"] == 30
    assert st["per_repeat"][0] == 1.0 and st["per_repeat"][1] == 0.0
    assert st["flip_rate"] == 1.0
    assert st["mean_item_agreement"] == pytest.approx(2 / 3)
    assert overall(res) == pytest.approx(1 / 3)


def test_structured_output_and_fallback(srv, cache_path, tmp_path):
    srv.configure(answers=gold_answers())
    res = run(srv, cache_path, tmp_path, limit=3, structured_output=True)
    assert all(r["response_format"]["type"] == "json_schema" for r in srv.requests())
    assert res.results["counts"]["structured_output"] == {"json_schema": 3}
    srv.configure(answers=gold_answers(), reject_response_format=True)
    res = run(srv, cache_path, tmp_path, limit=3, structured_output=True, use_cache=False)
    assert res.results["counts"]["structured_output"] == {"prompt": 3}
    assert overall(res) == 1.0


def test_generation_settings_are_passed_through(srv, cache_path, tmp_path):
    res = run(srv, cache_path, tmp_path, limit=1, temperature=0.7, max_tokens=99, seed=5, stop=("###",))
    body = srv.requests()[0]
    assert (body["temperature"], body["max_tokens"], body["seed"], body["stop"]) == (0.7, 99, 5, ["###"])
    cfg = res.results["config"]
    assert (cfg["temperature"], cfg["max_tokens"], cfg["seed"], cfg["stop"]) == (0.7, 99, 5, ["###"])


def test_api_key_from_environment(srv, cache_path, tmp_path, monkeypatch):
    srv.configure(answers=gold_answers(), require_key="sk-test")
    monkeypatch.setenv("MY_KEY", "sk-test")
    assert overall(run(srv, cache_path, tmp_path, limit=2, api_key_env="MY_KEY")) == 1.0
    monkeypatch.setenv("MY_KEY", "wrong")
    with pytest.raises(GlotbenchError, match="rejected the API key"):
        run(srv, cache_path, tmp_path, limit=2, api_key_env="MY_KEY", use_cache=False)
    monkeypatch.delenv("MY_KEY")
    with pytest.raises(GlotbenchError, match="set the environment variable MY_KEY"):
        run(srv, cache_path, tmp_path, limit=2, api_key_env="MY_KEY", use_cache=False)
    # A fully cached run needs neither the key nor the endpoint.
    assert overall(run(srv, cache_path, tmp_path, limit=2, api_key_env="MY_KEY")) == 1.0


def test_replay_reports_missing_ids(tmp_path, cache_path):
    items = VietnameseDiacritics().load()[:5]
    f = tmp_path / "preds.jsonl"
    f.write_text("\n".join(json.dumps({"id": it.id, "output": json.dumps({"restored_text": it.gold["references"][0]})})
                           for it in items[:3]) + "\n")
    res = run(f"replay:{f}", cache_path, tmp_path, limit=5)
    assert res.results["counts"]["failures"] == {"missing": 2}
    assert overall(res) == pytest.approx(3 / 5)


def test_python_backend_async_and_broken(tmp_path, cache_path):
    res = run("python:helpers:async_echo", cache_path, tmp_path, limit=3)
    assert res.results["counts"]["samples"] == 3 and res.results["counts"]["failed"] == 0
    res = run("python:helpers:broken_model", cache_path, tmp_path, limit=3)
    assert res.results["counts"]["failures"] == {"exception": 3}


def test_python_backend_raising_stop_iteration_fails_the_item_not_the_run(tmp_path, cache_path):
    """A StopIteration out of a sync callable cannot be set on an asyncio future: the run printed
    asyncio's TypeError and hung for ever. Now each item is an `exception` failure and the run ends
    invalid (exit 3), the error naming StopIteration."""
    r = cli("run", "vi-diacritics", "--model", "python:helpers:exhausted_iterator", "--limit", "3",
            "--out", str(tmp_path / "run"), "--cache-path", cache_path, "--no-progress", timeout=60)
    assert r.returncode == 3, r.stderr
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all("StopIteration" in r["error"] for r in rows)
    assert json.loads((tmp_path / "run" / "results.json").read_text())["counts"]["failures"] == {"exception": 3}


def test_retry_after_is_waited_through_the_retries(srv, cache_path, tmp_path):
    """The first retry and tenacity's later ones both wait the server's Retry-After (0.6 s each)."""
    import time

    srv.configure(answers=gold_answers(), faults=[{"match": "*", "status": 429, "retry_after": "0.6", "times": 2}])
    t0 = time.perf_counter()
    res = run(srv, cache_path, tmp_path, limit=1, max_retries=3)
    assert time.perf_counter() - t0 >= 1.2
    c = res.results["counts"]
    assert c["retries"] == 2 and c["model_calls"] == 3 and c["failed"] == 0 and overall(res) == 1.0
