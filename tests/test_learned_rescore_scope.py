"""`rescore RUN --metric-checkpoint DIR` of a run that is not a translation benchmark says so (the
rule `run --metric-checkpoint` applies: a declared source field and a corpus metric), not "no
settings to vary"; with no checkpoint the old message stands; a mix of runs keeps the translation
run and names the others left out."""

from __future__ import annotations

import json

import pytest

from conftest import cli, importorskip_lazily
from glotbench.engine.evaluate import RunOptions, evaluate

importorskip_lazily("torch")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.testing.learned_checkpoint import TinyXComet, build_xcomet

    tmp = tmp_path_factory.mktemp("rescore_scope")
    cache = str(tmp / "calls.sqlite")
    evaluate("laobench-mcq", "python:checks_models:always_a", RunOptions(limit=2, out=str(tmp / "mcq"), cache_path=cache,
                                                                          progress=False))
    evaluate("deepsea-xquad", "python:checks_models:passage_words",
             RunOptions(limit=2, out=str(tmp / "xquad"), cache_path=cache, progress=False))
    evaluate("laobench-translation", "python:checks_models:always_a",
             RunOptions(limit=2, out=str(tmp / "mt"), cache_path=cache, progress=False))
    text = " ".join(it.public["source"] + " " + it.gold["reference"] for it in LaoBenchTranslation().load())
    return {"tmp": tmp, "ckpt": build_xcomet(tmp / "x", TinyXComet(), text + " A")}


@pytest.mark.parametrize("run", ["mcq", "xquad"])
def test_not_a_translation_benchmark(setup, run) -> None:
    r = cli("rescore", str(setup["tmp"] / run), "--metric-checkpoint", str(setup["ckpt"]), timeout=300)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error: "), r.stderr
    assert "is not a translation benchmark" in err[0] and "no settings to vary" not in err[0], err[0]


def test_without_a_checkpoint_the_old_message_stands(setup) -> None:
    r = cli("rescore", str(setup["tmp"] / "mcq"), "--variant", "norm=nfc", timeout=300)
    assert r.returncode == 2 and "rescore has no settings to vary for laobench-mcq" in r.stderr


def test_a_mix_keeps_the_translation_run(setup) -> None:
    r = cli("rescore", str(setup["tmp"] / "mcq"), str(setup["tmp"] / "mt"), "--metric-checkpoint", str(setup["ckpt"]),
            "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [x["benchmark"] for x in got["runs"]] == ["laobench-translation"]
    assert "xcomet" in got["runs"][0]["scores"]["as_run"] and got["learned"]["xcomet"].startswith("glotbench:xcomet|")
    assert any("is not a translation benchmark" in x["reason"] for x in got["left_out"])
