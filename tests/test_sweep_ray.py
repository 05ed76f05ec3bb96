"""Sweeps on a local Ray instance (one per module: Ray starts slowly on 2 cores): a 2 × 2 matrix
against the test server, and a worker killed mid-run that resumes from the call cache."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.sweep import expand, parse_sweep
from glotbench.store import ResultsStore

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'glotbench[ray]'; CI installs it)")


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    faulty = tmp_path_factory.mktemp("faulty")
    os.environ["GLOTBENCH_FAULTY_DIR"] = str(faulty)  # workers inherit the driver's environment
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield faulty
    ray.shutdown()


def test_two_by_two_sweep_on_ray(local_ray, tmp_path, srv, capsys):
    from glotbench.engine.sweep_ray import run_ray

    srv.configure(latency=0.02)
    spec = parse_sweep({
        "out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"),
        "store": f"sqlite:///{tmp_path / 'store.sqlite'}", "runs_per_endpoint": 2,
        "models": [{"spec": f"openai:a@{srv.url}", "concurrency": 4}, {"spec": f"openai:b@{srv.url}", "concurrency": 4}],
        "benchmarks": [{"name": "vi-diacritics", "limit": 5}, {"name": "laobench-mcq", "limit": 3}],
    })
    runs = expand(spec)
    outcomes = run_ray(spec, runs, progress=True)
    assert [o.status for o in outcomes] == ["done"] * 4, [o.error for o in outcomes]
    last = capsys.readouterr().err.strip().splitlines()[-1]  # the matrix view, calls reported by the workers
    assert last.startswith("sweep: 4/4 runs done, 0 running, 0 failed · 16 calls"), last
    assert all(o.phases and o.phases["queued_s"] >= 0 and o.phases["in_task_s"] > 0 for o in outcomes)
    assert sum(o.calls for o in outcomes) == len(srv.requests()) == 2 * (5 + 3)
    for r in runs:
        res = json.loads(Path(r.out_dir, "results.json").read_text())
        assert res["counts"]["samples"] == r.items and res["config"]["concurrency"] == 2  # 4 split over 2 runs
    store = ResultsStore(spec.store)
    assert store.count() == 4  # indexed by the workers themselves
    # Again: every run is skipped, nothing is called, nothing is indexed twice.
    srv.configure()
    again = run_ray(spec, expand(spec), progress=False)
    assert [o.status for o in again] == ["skipped"] * 4 and srv.requests() == [] and store.count() == 4


def test_killed_worker_resumes_from_the_cache(local_ray, tmp_path):
    """The model kills its worker process after 5 finished calls; Ray retries the task, which
    resumes from the call cache: every finished call is made exactly once."""
    from glotbench.engine.sweep_ray import run_ray

    spec = parse_sweep({
        "out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"), "store": False, "retries": 2,
        "models": [{"spec": "python:glotbench.testing.faulty:crash_once", "concurrency": 1}],
        "benchmarks": [{"name": "vi-diacritics", "limit": 12}],
    })
    runs = expand(spec)
    outcomes = run_ray(spec, runs, progress=False)
    assert outcomes[0].status == "done", outcomes[0].error
    assert (local_ray / "crashed").exists()  # the worker did die mid-run
    calls = (local_ray / "calls.log").read_text(encoding="utf-8").splitlines()
    assert len(calls) == len(set(calls)) == 12  # 5 before the kill, 7 after, none repeated
    res = json.loads(Path(runs[0].out_dir, "results.json").read_text())
    assert res["counts"]["samples"] == 12 and res["counts"]["cache_hits"] == 5
    assert res["counts"]["model_calls"] == 7


def test_ray_option_without_ray_installed(tmp_path, srv):
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"out": str(tmp_path / "out"), "models": [{"spec": srv.spec()}],
                                "benchmarks": [{"name": "vi-diacritics", "limit": 2}]}))
    env = {"PYTHONPATH": os.pathsep.join([str(fake.parent), *sys.path])}
    proc = cli("sweep", str(path), "--ray", env=env)
    assert proc.returncode == 2
    assert proc.stderr == "error: --ray needs Ray: pip install 'glotbench[ray]'\n"
    assert srv.requests() == []


def test_gpu_runs_need_a_gpu_in_the_cluster(local_ray, tmp_path):
    from glotbench.engine.sweep_ray import resources_for, run_ray
    from glotbench.errors import GlotbenchError

    spec = parse_sweep({"out": str(tmp_path / "o"), "store": False,
                        "models": [{"spec": "vllm:/models/m", "options": {"tensor_parallel_size": 2}},
                                   {"spec": "openai:x@http://127.0.0.1:9/v1", "resources": {"num_cpus": 0.5}}],
                        "benchmarks": [{"name": "vi-diacritics", "limit": 1}]})
    runs = expand(spec)
    assert resources_for(runs[0]) == {"num_cpus": 1, "num_gpus": 2}
    assert resources_for(runs[1]) == {"num_cpus": 0.5}
    with pytest.raises(GlotbenchError, match=r"vllm:/models/m needs 2 GPU\(s\) per run; the Ray cluster has 0"):
        run_ray(spec, runs, progress=False)
