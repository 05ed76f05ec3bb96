"""Files a run read by path (a `bleu_tokenize=spm:PATH` SentencePiece model, a `fewshot_data=FILE`
few-shot file) are recorded resolved with their SHA-256 (`benchmark.files`); a run read after they moved
finds them with `--moved FILE` (rescore, report, compare), checked by that SHA-256: another file is
refused with one line, and without `--moved` the line names the missing file and the option."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli
from test_spbleu import TEXT, train

pytest.importorskip("sentencepiece")

FX = Path(__file__).parent / "fixtures"
DATA = FX / "tasks" / "flores_plus_devtest.jsonl"
SYSTEM = FX / "agreement" / "khm_Khmr" / "sys-a.jsonl"


@pytest.fixture
def run(tmp_path: Path) -> dict[str, Path]:
    """A flores-plus run made in `work/` with the model and the few-shot file given by relative paths."""
    work = tmp_path / "work"
    (work / "models").mkdir(parents=True)
    model = Path(train(work / "models" / "m.model"))
    shots = work / "dev.jsonl"
    shutil.copyfile(DATA, shots)
    out = tmp_path / "run"
    r = cli("run", "flores-plus", "--data", str(DATA), "--bench-opt", "target=khm_Khmr", "--model", f"replay:{SYSTEM}",
            "--bench-opt", "bleu_tokenize=spm:models/m.model", "--bench-opt", "fewshot_data=dev.jsonl",
            "--bench-opt", "shots=1", "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"), cwd=str(work))
    assert r.returncode == 0, r.stderr
    return {"run": out, "model": model, "shots": shots, "tmp": tmp_path, "work": work}


def _rescore(run: Path, *extra: str, cwd: Path) -> object:
    return cli("rescore", str(run), "--format", "json", *extra, cwd=str(cwd))


def test_the_files_are_recorded_resolved_with_their_sha256(run) -> None:
    import hashlib

    res = json.loads((run["run"] / "results.json").read_text(encoding="utf-8"))
    files = {f["option"]: f for f in res["benchmark"]["files"]}
    assert files["bleu_tokenize"]["path"] == str(run["model"].resolve())
    assert files["bleu_tokenize"]["value"] == f"spm:{run['model'].resolve()}"
    assert files["fewshot_data"]["path"] == files["fewshot_data"]["value"] == str(run["shots"].resolve())
    for f, p in ((files["bleu_tokenize"], run["model"]), (files["fewshot_data"], run["shots"])):
        assert f["sha256"] == hashlib.sha256(p.read_bytes()).hexdigest()
    assert res["config"]["bench_options"]["fewshot_data"] == str(run["shots"].resolve())  # read from any folder
    r = _rescore(run["run"], cwd=run["tmp"])
    assert r.returncode == 0, r.stderr


def test_moved_files_are_found_by_their_sha256(run) -> None:
    tmp = run["tmp"]
    stored = json.loads((run["run"] / "results.json").read_text(encoding="utf-8"))
    moved = tmp / "elsewhere"
    moved.mkdir()
    shutil.move(str(run["work"]), str(moved / "work"))  # the model and the few-shot file both moved
    model, shots = moved / "work" / "models" / "m.model", moved / "work" / "dev.jsonl"
    r = _rescore(run["run"], cwd=moved)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "is gone" in lines[0] and "--moved FILE" in lines[0], r.stderr
    assert str(run["model"].resolve()) in lines[0] or str(run["shots"].resolve()) in lines[0]
    r = _rescore(run["run"], "--moved", str(model), "--moved", str(shots), cwd=moved)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["runs"][0]
    assert got["scores"]["as_run"]["bleu"]["overall"] == pytest.approx(stored["scores"]["overall"]["bleu"]["value"], abs=1e-9)
    for args in (("report", str(run["run"])), ("report", str(run["run"]), "--html", str(tmp / "r.html")),
                 ("compare", str(run["run"]), str(run["run"]))):
        r = cli(*args, "--moved", str(model), "--moved", str(shots))
        assert r.returncode == 0, (args, r.stderr)


def test_a_different_file_is_refused(run) -> None:
    tmp = run["tmp"]
    run["model"].unlink()
    other = Path(train(tmp / "other.model", TEXT[:9], extra=5))
    for args in (("rescore", str(run["run"])), ("compare", str(run["run"]), str(run["run"]))):
        r = cli(*args, "--moved", str(other))
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), r.stderr
        assert "the run's bleu_tokenize file" in lines[0], lines
        assert "not that file" in lines[0] and str(other.resolve()) in lines[0], lines
    r = cli("rescore", str(run["run"]), "--moved", str(tmp / "nothere.model"))
    assert r.returncode == 2 and r.stderr.strip() == f"error: --moved {tmp / 'nothere.model'}: no such file", r.stderr


def test_a_changed_few_shot_file_is_refused_not_used(run) -> None:
    """The few-shot file rewritten at its path: the examples differ, so the run cannot be rebuilt as it ran."""
    run["shots"].write_text(run["shots"].read_text(encoding="utf-8").replace("river", "lake"), encoding="utf-8")
    r = cli("rescore", str(run["run"]))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "fewshot_data file" in lines[0] and "has changed since the run" in lines[0], r.stderr


def test_a_run_from_before_the_record_finds_its_files_by_the_signature(run) -> None:
    """A run written before `benchmark.files` (its few-shot file as given, relative): its SentencePiece
    model and few-shot file known by the 12 hex digits its signature keeps (`spm-<12>`, `=file:<12>`);
    --moved finds them, another file is refused."""
    res_path = run["run"] / "results.json"
    res = json.loads(res_path.read_text(encoding="utf-8"))
    assert "=file:" in res["signature"] and "spm-" in res["signature"]
    del res["benchmark"]["files"]
    res["config"]["bench_options"]["fewshot_data"] = "dev.jsonl"
    res_path.write_text(json.dumps(res), encoding="utf-8")
    new, shots = run["tmp"] / "m2.model", run["tmp"] / "shots.jsonl"
    shutil.move(str(run["model"]), str(new))
    shutil.move(str(run["shots"]), str(shots))
    r = cli("rescore", str(run["run"]), "--format", "json", cwd=str(run["tmp"]))
    assert r.returncode == 2 and "is gone" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = cli("rescore", str(run["run"]), "--moved", str(new), "--moved", str(shots), "--format", "json", cwd=str(run["tmp"]))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["runs"][0]
    assert got["scores"]["as_run"]["bleu"]["overall"] == pytest.approx(got["stored"]["bleu"]["overall"], abs=1e-9)
    other = Path(train(run["tmp"] / "other.model", TEXT[:9], extra=5))
    r = cli("rescore", str(run["run"]), "--moved", str(other), "--moved", str(shots), cwd=str(run["tmp"]))
    assert r.returncode == 2 and "not that file" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
