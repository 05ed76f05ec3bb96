"""Sweeps on Slurm through submitit, run with submitit's local executor (`slurm: {cluster: local}`):
real job processes on this machine. A 2 × 2 matrix against the test server, a job killed mid-run
that is submitted again and resumes from the call cache, and the sbatch options a sweep file maps to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import cli
from glotbench.engine.sweep import expand, parse_sweep
from glotbench.errors import GlotbenchError
from glotbench.store import ResultsStore

pytest.importorskip("submitit", reason="submitit is not installed (pip install 'glotbench[slurm]'; CI installs it)")

from glotbench.engine.sweep_slurm import run_slurm, slurm_parameters  # noqa: E402


@pytest.fixture(autouse=True)
def _no_nfs_grace(monkeypatch):
    """submitit waits up to 15 s for a finished job's result file to appear (a slow shared filesystem);
    the local executor's files are on this disk, so a lost job (the tests below kill three) is known lost
    after 1 s instead: the same outcomes, 45 s less of the suite."""
    from submitit.core.core import Job

    monkeypatch.setattr(Job, "_results_timeout_s", 1)


def spec_for(tmp_path: Path, models: list[dict], benchmarks: list[dict], **kw) -> dict:
    return {"out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"),
            "store": f"sqlite:///{tmp_path / 'store.sqlite'}", "slurm": {"cluster": "local", "poll_s": 0.2},
            "models": models, "benchmarks": benchmarks, **kw}


def test_two_by_two_sweep_as_local_jobs(tmp_path, srv, capsys):
    srv.configure(latency=0.02)
    spec = parse_sweep(spec_for(tmp_path, [{"spec": f"openai:a@{srv.url}", "concurrency": 4},
                                           {"spec": f"openai:b@{srv.url}", "concurrency": 4}],
                                [{"name": "vi-diacritics", "limit": 5}, {"name": "laobench-mcq", "limit": 3}],
                                runs_per_endpoint=2))
    runs = expand(spec)
    outcomes = run_slurm(spec, runs, progress=True)
    assert [o.status for o in outcomes] == ["done"] * 4, [o.error for o in outcomes]
    last = capsys.readouterr().err.strip().splitlines()[-1]  # the same matrix view as local and Ray
    assert last.startswith("sweep: 4/4 runs done, 0 running, 0 failed · 16 calls"), last
    assert sum(o.calls for o in outcomes) == len(srv.requests()) == 2 * (5 + 3)
    for r in runs:
        res = json.loads(Path(r.out_dir, "results.json").read_text())
        assert res["counts"]["samples"] == r.items and res["config"]["concurrency"] == 2  # 4 split over 2 runs
    logs = list((tmp_path / "out" / ".slurm").glob("*/*_log.out"))
    assert len(logs) == 4  # one job each, its own log
    assert ResultsStore(spec.store).count() == 4  # indexed by the jobs
    srv.configure()
    again = run_slurm(spec, expand(spec), progress=False)
    assert [o.status for o in again] == ["skipped"] * 4 and srv.requests() == []


def test_killed_job_is_resubmitted_and_resumes_from_the_cache(tmp_path, monkeypatch):
    """The model kills its job's process after 5 finished calls; the driver submits the run again,
    and the new job resumes from the call cache: every call is made exactly once."""
    faulty = tmp_path / "faulty"
    faulty.mkdir()
    monkeypatch.setenv("GLOTBENCH_FAULTY_DIR", str(faulty))  # jobs inherit the driver's environment
    spec = parse_sweep(spec_for(tmp_path, [{"spec": "python:glotbench.testing.faulty:crash_once", "concurrency": 1}],
                                [{"name": "vi-diacritics", "limit": 12}], store=False, retries=2))
    runs = expand(spec)
    outcomes = run_slurm(spec, runs, progress=False)
    assert outcomes[0].status == "done", outcomes[0].error
    assert outcomes[0].phases == {"attempts": 2}
    assert (faulty / "crashed").exists()  # the job did die mid-run
    calls = (faulty / "calls.log").read_text(encoding="utf-8").splitlines()
    assert len(calls) == len(set(calls)) == 12
    res = json.loads(Path(runs[0].out_dir, "results.json").read_text())
    assert res["counts"]["cache_hits"] == 5 and res["counts"]["model_calls"] == 7


def test_a_run_out_of_retries_is_failed_and_the_others_finish(tmp_path, srv, monkeypatch):
    import os

    tests_dir = str(Path(__file__).resolve().parent)  # `python:helpers:...` in the job processes
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tests_dir, os.environ.get("PYTHONPATH", "")]))
    spec = parse_sweep(spec_for(tmp_path, [{"spec": "python:helpers:die_model", "concurrency": 1},
                                           {"spec": f"openai:a@{srv.url}", "concurrency": 2}],
                                [{"name": "vi-diacritics", "limit": 2}], store=False, retries=1))
    outcomes = run_slurm(spec, expand(spec), progress=False)
    by_model = {o.run.model.spec: o for o in outcomes}
    dead = by_model["python:helpers:die_model"]
    assert dead.status == "failed" and "failed after 1 retries" in dead.error and dead.phases == {"attempts": 2}
    assert by_model[f"openai:a@{srv.url}"].status == "done"


def test_sbatch_options_by_model_kind(tmp_path):
    spec = parse_sweep(spec_for(tmp_path, [
        {"spec": "openai:m@http://127.0.0.1:9/v1"},
        {"spec": "hf:/models/small"},
        {"spec": "vllm:/models/big", "options": {"tensor_parallel_size": 2}},
        {"spec": "local", "resources": {"num_gpus": 0, "num_cpus": 4}},
    ], [{"name": "vi-diacritics", "limit": 1}], slurm={
        "partition": "gpu", "account": "lab", "qos": "normal", "time": "1-02:00:00", "mem_gb": 32,
        "additional": {"exclude": "node3"}, "setup": ["module load cuda"]}))
    params = {r.model.spec: slurm_parameters(r, spec) for r in expand(spec, count_items=False)}
    endpoint = params["openai:m@http://127.0.0.1:9/v1"]
    assert "gpus_per_node" not in endpoint and endpoint["cpus_per_task"] == 1
    assert endpoint["timeout_min"] == 26 * 60 and endpoint["mem_gb"] == 32
    assert endpoint["slurm_partition"] == "gpu" and endpoint["slurm_account"] == "lab" and endpoint["slurm_qos"] == "normal"
    assert endpoint["slurm_additional_parameters"] == {"exclude": "node3"} and endpoint["slurm_setup"] == ["module load cuda"]
    assert params["hf:/models/small"]["gpus_per_node"] == 1
    assert params["vllm:/models/big"]["gpus_per_node"] == 2
    assert "gpus_per_node" not in params["local"] and params["local"]["cpus_per_task"] == 4
    # the parameters are ones submitit accepts for a Slurm cluster (its own validation)
    import submitit

    ex = submitit.AutoExecutor(folder=str(tmp_path / "j"), cluster="local")
    ex.update_parameters(**params["vllm:/models/big"])


@pytest.mark.parametrize("slurm, message", [
    ({"time": "soon"}, "slurm.time: time 'soon' is not minutes"),
    ({"time": "1-25:00:00"}, "slurm.time: time '1-25:00:00': hours after a day are 0-23"),
    ({"time": "99:99"}, "slurm.time: time '99:99': hours after a day are 0-23, minutes and seconds 0-59"),
    ({"time": "2:61:00"}, "minutes and seconds 0-59"),
    ({"cluster": "pbs"}, "slurm.cluster: String should match pattern"),
    ({"partitions": "gpu"}, "slurm.partitions: Extra inputs are not permitted"),
])
def test_bad_slurm_sections_are_one_error_line(tmp_path, slurm, message):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec_for(tmp_path, [{"spec": "openai:m@http://127.0.0.1:9/v1"}],
                                            [{"name": "vi-diacritics"}], slurm=slurm)), encoding="utf-8")
    r = cli("sweep", str(path), "--slurm")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_slurm_times_read_as_slurm_reads_them():
    from glotbench.engine.sweep import minutes

    assert [minutes(t) for t in (90, "90", "30:00:00", "1-02:00:00", "2-3", "1-0:30", "10:30", "0:0:1")] == \
        [90, 90, 1800, 1560, 3060, 1470, 11, 1]


def test_sweep_slurm_command_end_to_end(tmp_path, srv):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec_for(tmp_path, [{"spec": f"openai:a@{srv.url}", "concurrency": 2}],
                                            [{"name": "vi-diacritics", "limit": 3}])), encoding="utf-8")
    r = cli("sweep", str(path), "--slurm", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "1 runs finished, 0 failed" in r.stdout and len(srv.requests()) == 3
    r = cli("sweep", str(path), "--slurm", "--ray")
    assert r.returncode == 2 and "choose one executor" in r.stderr


def test_slurm_cluster_without_sbatch_is_one_line(tmp_path):
    spec = parse_sweep(spec_for(tmp_path, [{"spec": "openai:m@http://127.0.0.1:9/v1"}],
                                [{"name": "vi-diacritics", "limit": 1}], slurm={"cluster": "slurm"}))
    with pytest.raises(GlotbenchError, match="cannot use Slurm here"):
        run_slurm(spec, expand(spec), progress=False)
