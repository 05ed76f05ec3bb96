"""Sweeps: validation (one error line), expansion, the local executor's shared endpoint budget,
skipping finished runs, resuming a killed sweep from the call cache, and the results store."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import cli
from glotbench.engine.sweep import endpoint_budgets, expand, load_sweep, parse_sweep
from glotbench.errors import GlotbenchError
from glotbench.store import ResultsStore


def write_sweep(path: Path, **spec) -> Path:
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def base_spec(tmp_path: Path, url: str, **kw) -> dict:
    spec = {
        "out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"),
        "store": f"sqlite:///{tmp_path / 'store.sqlite'}",
        "models": [{"spec": f"openai:a@{url}", "concurrency": 4}, {"spec": f"openai:b@{url}", "concurrency": 4}],
        "benchmarks": [{"name": "vi-diacritics", "limit": 6}, {"name": "laobench-mcq", "limit": 4}],
    }
    spec.update(kw)
    return spec


def stats(srv) -> dict:
    with urllib.request.urlopen(srv.base + "/_stats", timeout=10) as r:
        return json.loads(r.read())


def test_expansion_counts_and_directories(tmp_path):
    spec = parse_sweep(base_spec(tmp_path, "http://127.0.0.1:9/v1", seeds=[1, 2], repeats=3,
                                 benchmarks=[{"name": "vi-diacritics", "limit": 5},
                                             {"name": "laobench-mcq", "options": {"method": "loglik"}, "repeats": 1}]))
    runs = expand(spec)
    assert len(runs) == 2 * 2 * 2
    assert len({r.out_dir for r in runs}) == 8
    vi = [r for r in runs if r.benchmark.name == "vi-diacritics"]
    assert {r.calls for r in vi} == {15}  # 5 items x 3 repeats
    mcq = [r for r in runs if r.benchmark.name == "laobench-mcq"]
    assert mcq[0].options.bench_options == (("method", "loglik"),)
    assert mcq[0].repeats == 1 and mcq[0].items > 5
    assert {r.seed for r in runs} == {1, 2} and all(r.options.seed == r.seed for r in runs)
    assert runs[0].run_id == "vi-diacritics/openai_a/seed-1-limit5"  # a subset: its own directory
    # Two models on one server share one budget: the smaller one.
    spec2 = parse_sweep(base_spec(tmp_path, "http://127.0.0.1:9/v1", models=[
        {"spec": "openai:a@http://127.0.0.1:9/v1", "concurrency": 8},
        {"spec": "openai:b@http://127.0.0.1:9/v1/", "concurrency": 3},
        {"spec": "openai:c@http://127.0.0.1:10/v1", "concurrency": 5}]))
    assert endpoint_budgets(spec2) == {"http://127.0.0.1:9/v1": 3, "http://127.0.0.1:10/v1": 5}


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s.pop("models"), "models: Field required"),
    (lambda s: s.update(models=[]), "models: List should have at least 1 item"),
    (lambda s: s["models"][0].update(spec="gpt4"), "unknown model spec 'gpt4'"),
    (lambda s: s["models"][1].update(concurrency=0), "models[1].concurrency: Input should be greater than or equal to 1"),
    (lambda s: s["models"][0].update(temprature=0.5), "models[0].temprature: Extra inputs are not permitted"),
    (lambda s: s["benchmarks"][0].update(name="mmlu"), "unknown benchmark 'mmlu'"),
    (lambda s: s.update(seeds=[1, 1]), "seeds repeat a value"),
    (lambda s: s.update(seeds="1,2"), "seeds: Input should be a valid list"),
    (lambda s: s["models"].append(dict(s["models"][0])), "duplicate model name 'openai_a'"),
    (lambda s: s["benchmarks"][0].update(options={"method": ["a"]}), "benchmarks[0].options.method"),
])
def test_bad_sweep_files_give_one_error_line(tmp_path, mutate, message):
    spec = base_spec(tmp_path, "http://127.0.0.1:9/v1")
    mutate(spec)
    path = write_sweep(tmp_path / "s.yaml", **spec)
    with pytest.raises(GlotbenchError) as e:
        load_sweep(path)
    assert message in str(e.value) and str(path) in str(e.value)
    proc = cli("sweep", str(path), "--dry-run")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("content, message", [
    ("models: [spec: 1\n", "not valid YAML"),
    ("- just\n- a list\n", "a sweep file is a mapping"),
    ("", "a sweep file is a mapping"),
])
def test_unparseable_sweep_files(tmp_path, content, message):
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    proc = cli("sweep", str(path))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and message in proc.stderr
    assert proc.stderr.count("\n") == 1
    proc = cli("sweep", str(tmp_path / "missing.yaml"))
    assert proc.returncode == 2 and "cannot read the sweep file" in proc.stderr


def test_bad_data_file_and_bench_option_fail_before_running(tmp_path, srv):
    path = write_sweep(tmp_path / "s.yaml", **base_spec(tmp_path, srv.url, benchmarks=[
        {"name": "vi-diacritics", "data": "nope.jsonl"}]))
    proc = cli("sweep", str(path))
    assert proc.returncode == 2 and "nope.jsonl does not exist" in proc.stderr
    path = write_sweep(tmp_path / "s2.yaml", **base_spec(tmp_path, srv.url, benchmarks=[
        {"name": "laobench-mcq", "options": {"method": "guess"}}]))
    proc = cli("sweep", str(path))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "guess" in proc.stderr
    assert srv.requests() == []


def test_dry_run_prints_runs_and_calls(tmp_path, srv):
    path = write_sweep(tmp_path / "s.yaml", **base_spec(tmp_path, srv.url, seeds=[7, 8]))
    proc = cli("sweep", str(path), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert sum(ln.endswith("  to run") for ln in lines) == 8
    assert "8 runs (8 to run), at most 40 model calls" in proc.stdout  # (6 + 4) items x 2 models x 2 seeds
    assert f"endpoint {srv.url}: 4 requests in flight" in proc.stdout
    assert srv.requests() == [] and not (tmp_path / "out").exists()


def test_local_sweep_shares_the_endpoint_budget_and_indexes_runs(tmp_path, srv):
    srv.configure(latency=0.05)
    path = write_sweep(tmp_path / "s.yaml", **base_spec(tmp_path, srv.url))
    proc = cli("sweep", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "4 runs finished, 0 failed" in proc.stdout
    # Four runs (two benchmarks x two models) against one server with a budget of 4 in flight.
    assert 1 <= stats(srv)["max_in_flight"] <= 4  # 4 runs x 4 workers each: up to 16 without the shared limit
    windows = [(r["started"], r["finished"]) for r in
               (json.loads(p.read_text()) for p in (tmp_path / "out").rglob("results.json"))]
    assert max(w[0] for w in windows) < min(w[1] for w in windows)  # ...and the four runs did run at once
    assert len(srv.requests()) == 2 * (6 + 4)
    store = ResultsStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    rows = store.list()
    assert len(rows) == 4
    assert {(r.benchmark, r.model.split("@")[0]) for r in rows} == {
        (b, m) for b in ("vi-diacritics", "laobench-mcq") for m in ("openai:a", "openai:b")}
    vi = next(r for r in rows if r.benchmark == "vi-diacritics")
    assert vi.headline == "sentence_exact" and vi.items == 6 and vi.signature.startswith("glotbench:vi-diacritics")
    assert vi.scores["overall"]["sentence_exact"]["n"] == 6 and vi.prompt_tokens > 0
    assert Path(vi.run_dir, "results.json").is_file()
    # A second sweep skips every finished run: no call, no duplicate row.
    srv.configure()
    proc = cli("sweep", str(path), "--no-progress")
    assert proc.returncode == 0 and proc.stdout.count("skipped") == 4
    assert srv.requests() == [] and store.count() == 4
    proc = cli("runs", "ls", "--db", store.url)
    assert proc.returncode == 0 and "4 runs" in proc.stdout and "sentence_exact" in proc.stdout
    proc = cli("runs", "show", str(vi.id), "--db", store.url, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["run_dir"] == vi.run_dir
    assert json.loads(proc.stdout)["scale"] == "fraction"
    proc = cli("runs", "board", "--db", store.url)
    assert proc.returncode == 0, proc.stderr
    header, *body = proc.stdout.splitlines()
    assert header.split() == ["model", "laobench-mcq", "vi-diacritics"]
    # the echo server scores 0, printed in percent; the CI is Wilson's, which does not collapse to (0–0)
    assert sum(ln.startswith("openai:") for ln in body) == 2
    assert re.search(r"\b0\.0 \(0\.0–[1-9]\d*\.\d\)", proc.stdout) and "sentence_exact (%)" in proc.stdout, proc.stdout
    proc = cli("runs", "show", "999", "--db", store.url)
    assert proc.returncode == 2 and proc.stderr.startswith("error: no run '999'")


def test_a_failing_run_does_not_stop_the_matrix(tmp_path, srv):
    spec = base_spec(tmp_path, srv.url, models=[{"spec": f"openai:a@{srv.url}"},
                                                {"spec": "openai:b@http://127.0.0.1:9/v1", "timeout": 2}],
                     benchmarks=[{"name": "vi-diacritics", "limit": 3}])
    path = write_sweep(tmp_path / "s.yaml", **spec)
    proc = cli("sweep", str(path))  # progress on: plain status lines on a pipe
    assert proc.returncode == 1
    assert "1 runs finished, 1 failed" in proc.stdout and "cannot reach the endpoint" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("sweep: 1/2 runs done, 0 running, 1 failed · 3 calls"), proc.stderr
    assert (tmp_path / "out/vi-diacritics/openai_a/default-seed-limit3/results.json").is_file()


def test_killed_sweep_resumes_without_repeating_finished_calls(tmp_path, srv):
    """SIGKILL the whole sweep process mid-run; the re-run sends only the calls that had not finished."""
    srv.configure(latency=0.1)
    spec = base_spec(tmp_path, srv.url, models=[{"spec": f"openai:a@{srv.url}", "concurrency": 2}],
                     benchmarks=[{"name": "vi-diacritics", "limit": 40}])
    path = write_sweep(tmp_path / "s.yaml", **spec)
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "sweep", str(path), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(srv.requests()) < 12 and time.time() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    first = [r["messages"][-1]["content"] for r in srv.requests()]
    assert 12 <= len(first) < 40
    import sqlite3

    db = sqlite3.connect(str(tmp_path / "calls.sqlite"))
    cached = {json.loads(r[0])["text"] for r in db.execute("SELECT response FROM calls")}  # the server echoes
    db.close()
    assert 8 <= len(cached) <= len(first)
    srv.configure()
    done = cli("sweep", str(path), "--no-progress")
    assert done.returncode == 0, done.stderr
    second = [r["messages"][-1]["content"] for r in srv.requests()]
    assert not set(second) & cached  # no finished call repeated
    assert len(second) == 40 - len(cached)
    res = json.loads((tmp_path / "out/vi-diacritics/openai_a/default-seed-limit40/results.json").read_text())
    assert res["counts"]["samples"] == 40 and res["counts"]["cache_hits"] == len(cached)
