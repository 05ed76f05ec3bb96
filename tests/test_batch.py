"""`--batch` against the test server's Batch API (/v1/files, /v1/batches, glotbench/testing/
batch_server.py): a full batch, a process killed while polling that resumes without uploading
again, partial failures (error lines, an expired batch, a failed validation) retried as normal
requests, and the call cache filled so that a re-run makes no call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import cli


def batch_stats(srv) -> dict:
    with urllib.request.urlopen(srv.base + "/_batch_stats", timeout=10) as r:
        return json.loads(r.read())


def control(srv, **cfg) -> None:
    """Change the server's behaviour without the reset `configure` makes (batches survive)."""
    srv._post("/_control", cfg)


def args(srv, tmp_path, out: str = "run", limit: int = 8) -> list[str]:
    return ["run", "vi-diacritics", "--model", srv.spec(), "--limit", str(limit), "--batch", "--batch-poll", "0.05",
            "--out", str(tmp_path / out), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress",
            "--price-in", "1", "--price-out", "2"]


def test_full_batch_fills_the_cache_and_a_rerun_calls_nothing(tmp_path, srv):
    r = cli(*args(srv, tmp_path))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    b = res["batch"]
    assert b["filled"] == 8 and b["sent_as_requests"] == 0 and b["failures"] == {} and not b["resumed"]
    assert b["batches"][0]["status"] == "completed" and b["requests"] == 8
    assert res["counts"]["model_calls"] == 0 and res["counts"]["cache_hits"] == 8 and res["counts"]["failed"] == 0
    assert batch_stats(srv) == {"uploads": 1, "batches": 1, "polls": batch_stats(srv)["polls"], "lines": 8}
    # The batch lines are exactly the runner's chat bodies.
    bodies = srv.requests()
    assert len(bodies) == 8 and all(x["model"] == "test" and x["messages"] for x in bodies)
    # Cost: the batch's own usage at half price.
    t = b["tokens"]
    assert t["prompt"] > 0 and res["cost"]["billed_now"] == pytest.approx((t["prompt"] * 1 + t["completion"] * 2) / 1e6 * 0.5)
    # The same requests without --batch: all cached, nothing sent, the same replies.
    r = cli(*[a for a in args(srv, tmp_path, out="again") if a != "--batch"])
    assert r.returncode == 0, r.stderr
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["counts"]["model_calls"] == 0 and again["counts"]["cache_hits"] == 8
    assert again["scores"] == res["scores"] and len(srv.requests()) == 8


def test_killed_while_polling_resumes_the_same_batch(tmp_path, srv):
    control(srv, batch={"hold": True})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", *args(srv, tmp_path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    state = tmp_path / "run" / "batch.json"
    deadline = time.time() + 60
    while time.time() < deadline and not (state.exists() and batch_stats(srv)["polls"] >= 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    saved = json.loads(state.read_text())
    assert saved["batches"][0]["id"] == "batch_000001" and saved["batches"][0]["status"] == "in_progress"
    assert not (tmp_path / "run" / "results.json").exists()
    control(srv, batch={})  # the provider finishes the batch meanwhile
    r = cli(*args(srv, tmp_path))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["batch"]["resumed"] and res["batch"]["filled"] == 8
    assert res["counts"]["model_calls"] == 0
    s = batch_stats(srv)
    assert s["uploads"] == 1 and s["batches"] == 1 and s["lines"] == 8  # polled again, not uploaded again


def test_partial_failures_are_retried_as_normal_requests(tmp_path, srv):
    """Inside the batch one prompt gets a 400 and one a 500 (error-file lines), and the batch expires
    after five of its eight requests (three `batch_expired` lines). The three good replies come from
    the batch; the five others are sent as normal requests, which succeed."""
    srv.configure(faults=[{"match": "Chi oi", "status": 400, "times": 1},
                          {"match": "Troi mua", "status": 500, "times": 1}])
    control(srv, batch={"expire_after": 5})
    r = cli(*args(srv, tmp_path))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    b = res["batch"]
    assert b["batches"][0]["status"] == "expired"
    assert b["failures"] == {"http_400": 1, "http_500": 1, "batch_expired": 3} and b["filled"] == 3
    assert b["sent_as_requests"] == 5 == res["counts"]["model_calls"] and res["counts"]["cache_hits"] == 3
    assert res["counts"]["failed"] == 0 and res["counts"]["samples"] == 8


def test_a_batch_that_fails_validation_runs_as_normal_requests(tmp_path, srv):
    control(srv, batch={"fail_validation": True})
    r = cli(*args(srv, tmp_path, limit=4))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["batch"]["batches"][0]["status"] == "failed" and res["batch"]["failures"] == {"batch_failed": 4}
    assert res["counts"]["model_calls"] == 4 and res["counts"]["failed"] == 0


def test_batch_needs_an_endpoint_and_the_cache(tmp_path, srv):
    r = cli(*args(srv, tmp_path), "--no-cache")
    assert r.returncode == 2 and "--batch needs the call cache" in r.stderr
    r = cli("run", "vi-diacritics", "--model", "python:helpers:good_answer", "--limit", "2", "--batch",
            "--out", str(tmp_path / "p"), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress")
    assert r.returncode == 2 and "--batch needs an openai: endpoint model" in r.stderr


def test_an_endpoint_without_a_batch_api_is_one_line(tmp_path):
    """A server that answers 404 on /v1/files (most self-hosted servers)."""
    from aiohttp import web  # noqa: F401 - the test server is aiohttp

    code = ("import asyncio,sys\nfrom aiohttp import web\n"
            "async def models(r): return web.json_response({'data': []})\n"
            "app = web.Application(); app.router.add_get('/v1/models', models)\n"
            "web.run_app(app, host='127.0.0.1', port=int(sys.argv[1]), print=None)\n")
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([sys.executable, "-c", code, str(port)])
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        r = cli("run", "vi-diacritics", "--model", f"openai:m@http://127.0.0.1:{port}/v1", "--limit", "2", "--batch",
                "--out", str(tmp_path / "run"), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress")
        assert r.returncode == 2 and "the endpoint refused the batch (HTTP 404" in r.stderr, r.stderr
    finally:
        proc.terminate()
        proc.wait(10)


def test_malformed_and_missing_output_lines_are_counted_and_sent_as_requests(tmp_path, srv):
    """An output file with lines that are not JSON, not objects, or whose custom_id is a list or an
    object (one such line stopped the run: 'unexpected input (TypeError: unhashable type: list)',
    every re-run again), and 2 answered lines missing from both files (partial results): each bad
    line is counted as malformed_line, every request the batch did not answer is sent as a normal
    request, and all 8 items are scored."""
    control(srv, batch={"drop_output": 2, "output_extra": [
        "not json", '{"custom_id": ["k"], "response": {"status_code": 200}}', "[1, 2]",
        '{"custom_id": {"a": 1}}', '{"custom_id": "not-this-run", "response": {"status_code": 200, "body": {}}}']})
    r = cli(*args(srv, tmp_path))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    b = res["batch"]
    assert b["failures"] == {"malformed_line": 4}  # another run's line is skipped, not a failure of this one
    assert b["filled"] == 6 and b["sent_as_requests"] == 2
    assert res["counts"]["samples"] == 8 and res["counts"]["model_calls"] == 2 and res["counts"]["cache_hits"] == 6
    assert res["counts"]["failed"] == 0


def test_a_batch_object_without_a_documented_status_ends_in_one_line_not_a_wait_for_ever(tmp_path, srv):
    """A provider whose batch object has no status (or one not documented) was polled for ever;
    now each such poll is a failed poll, and after MAX_POLL_FAILURES the run stops with one line
    naming batch.json; once the provider answers properly, the same command finishes the batch."""
    control(srv, batch={"report_status": None})
    r = cli(*args(srv, tmp_path), timeout=60)
    assert r.returncode == 2 and "status None is none of validating" in r.stderr and "batch.json" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "run" / "results.json").exists()
    control(srv, batch={"report_status": "queued_somewhere"})
    r = cli(*args(srv, tmp_path), timeout=60)
    assert r.returncode == 2 and "'queued_somewhere' is none of" in r.stderr
    control(srv, batch={})
    r = cli(*args(srv, tmp_path))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["batch"]["resumed"] and res["batch"]["filled"] == 8 and res["counts"]["model_calls"] == 0
    assert batch_stats(srv)["uploads"] == 1
