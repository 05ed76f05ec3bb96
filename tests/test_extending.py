"""docs/extending.md runs as written: its metric, benchmark and backend files, registered from
outside the package, the Python run script, and the command line with `MODULE:CLASS`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def _blocks(lang: str) -> list[str]:
    fences = re.findall(r"^```(\w*)\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    return [body for kind, body in fences if kind == lang]


def _write_files(tmp_path: Path) -> list[str]:
    (data,) = _blocks("jsonl")
    (tmp_path / "capitals.jsonl").write_text(data, encoding="utf-8")
    for block in _blocks("yaml"):
        (tmp_path / block.splitlines()[0][2:]).write_text(block, encoding="utf-8")
    names = []
    for block in _blocks("python"):
        first = block.splitlines()[0]
        assert re.fullmatch(r"# \w+\.py", first), f"every Python block names its file: {first!r}"
        (tmp_path / first[2:]).write_text(block, encoding="utf-8")
        names.append(first[2:])
    return names


def test_extending_doc_files_run(tmp_path):
    names = _write_files(tmp_path)
    assert names == ["capitals_task.py", "my_metric.py", "my_bench.py", "my_backend.py", "lao_plugin.py",
                     "run_capitals.py"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "run_capitals.py"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "accuracy=0.3333 f_score=0.3333" in out.stdout  # the figure the page states
    assert re.search(r"glotbench:capitals\|v:1.0\|prompt:[0-9a-f]{12}\|data:[0-9a-f]{12}", out.stdout)
    assert "c1 Paris None" in out.stdout
    res = json.loads((tmp_path / "runs" / "capitals-paris" / "results.json").read_text(encoding="utf-8"))
    assert res["model"]["spec"] == "constant:Paris" and res["counts"]["items"] == 3


def test_extending_doc_command_line(tmp_path, srv):
    _write_files(tmp_path)
    (cmd,) = [b for b in _blocks("") if b.startswith("glotbench run")]
    args = cmd.split()[1:]
    args[args.index("--model") + 1] = srv.spec()
    srv.configure(answers={"France": "Paris.", "Laos": "I don't know", "Vietnam": "Hanoi"})
    proc = cli(*args, "--out", str(tmp_path / "r"), "--no-progress", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    overall = res["scores"]["overall"]
    assert overall["accuracy"]["value"] == 2 / 3 and res["counts"]["failures"] == {"abstained": 1}
    assert abs(overall["f_score"]["value"] - 2 * (2 / 3) * 1.0 / (2 / 3 + 1.0)) < 1e-12


def test_entry_points_register_benchmarks_and_backends(tmp_path):
    """The pyproject snippet of the page, as an installed distribution declares it (a .dist-info
    folder on the path is what `pip install` leaves)."""
    _write_files(tmp_path)
    (toml,) = _blocks("toml")
    dist = tmp_path / "capitals_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: capitals-plugin\nVersion: 0.1\n", encoding="utf-8")
    ini = re.sub(r'= "(.*)"', r"= \1", toml.replace('[project.entry-points."', "[").replace('"]', "]"))
    (dist / "entry_points.txt").write_text(ini, encoding="utf-8")  # what a build writes from the TOML
    code = ("from glotbench import RunOptions, evaluate\n"
            "from glotbench.registry import benchmarks, models\n"
            "assert 'capitals' in benchmarks() and 'constant' in models()\n"
            "r = evaluate('capitals', 'constant:Hanoi', RunOptions(out='r', progress=False, use_cache=False))\n"
            "print(r.results['scores']['overall']['accuracy']['value'])\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(1 / 3)


def test_a_plugin_entry_point_named_like_a_built_in_is_said_not_silently_ignored(tmp_path):
    """An entry point never replaces a registered name (the built-ins are found without scanning
    entry points); `glotbench list` says which plugin is not used, and the built-in runs."""
    dist = tmp_path / "shadow_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow-plugin\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[glotbench.benchmarks]\nlaobench-mcq = shadow_mod:Mine\n"
                                           "[glotbench.models]\nreplay = shadow_mod:model\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "glotbench", "list"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    warned = [x for x in out.stderr.splitlines() if x.startswith("warning: the plugin entry point")]
    assert warned == ["warning: the plugin entry point benchmark laobench-mcq (shadow_mod:Mine) is not used: a "
                      "built-in or registered benchmark has that name; give it another",
                      "warning: the plugin entry point model replay (shadow_mod:model) is not used: a "
                      "built-in or registered model has that name; give it another"], out.stderr
    assert "laobench-mcq" in out.stdout and "Traceback" not in out.stderr


def test_the_task_file_and_the_task_function_are_one_benchmark(tmp_path, srv):
    """The page's three ways: the task file and the @task function give the same prompts, metrics and
    scores; the class (with its abstention rule) scores the same replies its own way."""
    _write_files(tmp_path)
    srv.configure(answers={"France": "Paris.", "Laos": "vientiane", "Vietnam": "I don't know"})
    scores = {}
    for i, target in enumerate(("capitals.yaml", "capitals_task:capitals", "my_bench:Capitals")):
        proc = cli("run", target, "--model", srv.spec(), "--out", str(tmp_path / f"run{i}"), "--no-progress",
                   "--no-cache", cwd=str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        scores[target] = json.loads((tmp_path / f"run{i}" / "results.json").read_text(encoding="utf-8"))
    yaml_run, fn_run, class_run = scores.values()
    assert yaml_run["scores"]["overall"]["exact_match"]["value"] == 2 / 3
    assert fn_run["scores"]["overall"] == yaml_run["scores"]["overall"]
    assert fn_run["benchmark"]["prompt_hash"] == yaml_run["benchmark"]["prompt_hash"]
    # the class reads "I don't know" as an abstention (a counted failure, F-score aside); the parts as a wrong answer
    assert class_run["scores"]["overall"]["accuracy"]["value"] == 2 / 3
    assert class_run["counts"]["failures"] == {"abstained": 1} and yaml_run["counts"]["failures"] == {}
