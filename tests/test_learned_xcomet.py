"""xCOMET-style estimators (metrics/xcomet.py): segment scores equal unbabel-comet 2.2.7's XCOMETMetric
(unbabel-comet's layout, XLM-R and XLM-R XL encoders) and xCOMET-lite's own XCOMETLite (its
PyTorchModelHubMixin folder, an mDeBERTa-v3 encoder) on random-weight checkpoints built offline;
tests/learned_oracle.py wrote the reference scores with that code. The MQM rule, the signature, and
malformed folders as one error line."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from conftest import importorskip_lazily
from glotbench.metrics import learned
from glotbench.metrics.xcomet import mqm_points
from glotbench.testing.learned_checkpoint import TinyXComet, build_xcomet

sys.path.insert(0, str(Path(__file__).parent))
from learned_oracle import BATCH, refused_in_one_line, SEGMENTS, TEXT, XCOMET_CASES, XCOMET_LITE_CASES  # noqa: E402

importorskip_lazily("transformers")
FIXTURES = Path(__file__).parent / "fixtures" / "learned"
TOL = 1e-5
ORACLES = {**{n: ("xcomet_oracle.json", s) for n, s in XCOMET_CASES.items()},
           **{n: ("xcomet_lite_oracle.json", s) for n, s in XCOMET_LITE_CASES.items()}}


def _score(d: Path, batch: int = BATCH) -> list[float]:
    m = learned.load(d, batch_size=batch)
    return m.score([s["src"] for s in SEGMENTS], [s["mt"] for s in SEGMENTS], [s["ref"] for s in SEGMENTS])


@pytest.mark.parametrize("name", list(ORACLES))
def test_scores_equal_the_reference_code(tmp_path: Path, name: str) -> None:
    fixture, spec = ORACLES[name]
    ref = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    case = ref["cases"][name]
    assert ref["segments"] == SEGMENTS and case["spec"]["seed"] == spec.seed and case["spec"]["encoder"] == spec.encoder
    got, want = _score(build_xcomet(tmp_path / name, spec, TEXT)), case["scores"]
    assert len(got) == len(want) == len(SEGMENTS)
    assert max(abs(a - b) for a, b in zip(got, want)) <= TOL, (got, want)
    assert len({round(x, 4) for x in got}) > len(got) // 2  # the segments are told apart


@pytest.mark.parametrize("env, flag, fixture", [
    ("GLOTBENCH_COMET_ORACLE", "--xcomet", "xcomet_oracle.json"),
    ("GLOTBENCH_XCOMET_LITE_ORACLE", "--xcomet-lite", "xcomet_lite_oracle.json")])
def test_reference_recomputed_live(tmp_path: Path, env: str, flag: str, fixture: str) -> None:
    """With GLOTBENCH_COMET_ORACLE (unbabel-comet 2.2.7's folder) or GLOTBENCH_XCOMET_LITE_ORACLE (a
    PATH-style list whose first folder holds xCOMET-lite's deberta_encoder.py, then transformers
    4.46.3 and unbabel-comet 2.2.2: tests/learned_oracle.py says how), the stored reference is
    recomputed by the reference code and must equal the fixture."""
    import os
    import subprocess

    if not os.environ.get(env):
        pytest.skip(f"set {env} to recompute the reference (tests/learned_oracle.py says how)")
    out = tmp_path / "live.json"
    src = Path(__file__).parents[1] / "src"
    paths = os.environ[env].split(os.pathsep)
    cmd = [sys.executable, str(Path(__file__).parent / "learned_oracle.py"), str(out), flag, *paths[:1 if flag != "--xcomet" else 0]]
    subprocess.run(cmd, env={**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(src)])}, check=True,
                   capture_output=True, timeout=600)
    live, stored = json.loads(out.read_text()), json.loads((FIXTURES / fixture).read_text())
    for name, case in stored["cases"].items():
        assert max(abs(a - b) for a, b in zip(live["cases"][name]["scores"], case["scores"])) <= TOL


def test_the_cases_exercise_the_span_rule_and_the_cap() -> None:
    """The fixtures are not vacuous: error spans were found (MQM below 1) on some segments and not on
    others, and a regression score above 1 was capped (a final score near the 0.78 + 0.22 ceiling)."""
    mqm = [x for f in ("xcomet_oracle.json", "xcomet_lite_oracle.json")
           for c in json.loads((FIXTURES / f).read_text())["cases"].values() for x in c["mqm_scores"]]
    assert min(mqm) < 1.0 and max(mqm) == 1.0 and len(set(mqm)) >= 5
    capped = json.loads((FIXTURES / "xcomet_oracle.json").read_text())["cases"]["xcomet_layer1_capped"]["scores"]
    assert max(capped) > 0.95


def test_batch_size_does_not_change_scores(tmp_path: Path) -> None:
    d = build_xcomet(tmp_path / "x", XCOMET_LITE_CASES["xcomet_lite"], TEXT)
    one, all_ = _score(d, 1), _score(d, 64)
    assert max(abs(a - b) for a, b in zip(one, all_)) <= TOL


@pytest.mark.parametrize("labels, points", [
    ([0, 0, 0], 0),
    ([0, 1, 1, 0], 1),  # one minor span of two tokens
    ([2, 1, 0], 5),  # a span takes its first tag's severity
    ([0, 3, 0, 1, 0, 2, 0], 16),  # critical + minor + major
    ([0, 1, 0, 2], 1),  # a span still open at the last token is not counted (UnifiedMetric.decode)
    ([3, 0] * 4, 25),  # 40 points capped at 25
])
def test_mqm_points_follow_unbabel_comets_decode(labels: list[int], points: int) -> None:
    assert mqm_points(labels) == points


def test_signature_and_kind(tmp_path: Path) -> None:
    d = build_xcomet(tmp_path / "x", XCOMET_CASES["xcomet"], TEXT)
    c = learned.open_checkpoint(d)
    sha = hashlib.sha256((d / "checkpoints" / "model.ckpt").read_bytes()).hexdigest()
    assert c.kind == "xcomet" and c.higher_is_better and c.worst == 0.0
    assert c.signature().startswith(f"glotbench:xcomet|ckpt:sha256:{sha}|files:sha256:")
    lite = build_xcomet(tmp_path / "lite", XCOMET_LITE_CASES["xcomet_lite"], TEXT)
    cl = learned.open_checkpoint(lite)
    assert cl.kind == "xcomet" and cl.ckpt.name == "model.safetensors"
    assert cl.sha256 == hashlib.sha256((lite / "model.safetensors").read_bytes()).hexdigest()
    # xCOMET-lite's code (unbabel-comet 2.2.2) mixes layers with a softmax whatever config.json says
    assert json.loads((lite / "config.json").read_text())["layer_transformation"] == "sparsemax"
    assert cl.layer_transformation == "softmax"
    other = build_xcomet(tmp_path / "other", replace(XCOMET_CASES["xcomet"], seed=9), TEXT)
    assert learned.open_checkpoint(other).sha256 != c.sha256


def test_hostile_replies_are_scored(tmp_path: Path) -> None:
    m = learned.load(build_xcomet(tmp_path / "x", XCOMET_LITE_CASES["xcomet_lite"], TEXT))
    hostile = ["\ud800 lone surrogate", "\x00\x1b[31m", "ສ" * 5000, "", "🙂" * 10]
    got = m.score(["hello"] * len(hostile), hostile, ["ສະບາຍດີ"] * len(hostile))
    assert len(got) == len(hostile) and all(isinstance(x, float) and x == x for x in got)


def _broken(tmp_path: Path, how: str) -> Path:
    lite = how.startswith("lite_")
    d = build_xcomet(tmp_path / how, XCOMET_LITE_CASES["xcomet_lite"] if lite else TinyXComet(), "hello world")
    hp = d / ("config.json" if lite else "hparams.yaml")
    read = (lambda: json.loads(hp.read_text())) if lite else (lambda: yaml.safe_load(hp.read_text()))
    write = (lambda x: hp.write_text(json.dumps(x))) if lite else (lambda x: hp.write_text(yaml.safe_dump(x)))
    if how == "word_layer_past":
        write({**read(), "word_layer": 7})
    elif how == "word_layer_text":
        write({**read(), "word_layer": "mix"})
    elif how == "labels":
        write({**read(), "error_labels": ["minor", "major"]})
    elif how == "deberta_in_comet_layout":
        write({**read(), "encoder_model": "DeBERTa"})
    elif how == "no_tagger":
        import torch

        ck = torch.load(d / "checkpoints" / "model.ckpt", weights_only=False)
        del ck["state_dict"]["hidden2tag.weight"]
        torch.save(ck, d / "checkpoints" / "model.ckpt")
    elif how == "lite_no_weights":
        (d / "model.safetensors").unlink()
    elif how == "lite_truncated":
        w = d / "model.safetensors"
        w.write_bytes(w.read_bytes()[:1000])
    elif how == "lite_unknown_encoder":
        write({**read(), "encoder_model": "BERT"})
    elif how == "lite_no_encoder":
        for f in (d / "encoder").iterdir():
            f.unlink()
    return d


@pytest.mark.parametrize("how", ["word_layer_past", "word_layer_text", "labels", "deberta_in_comet_layout",
                                 "no_tagger", "lite_no_weights", "lite_truncated", "lite_unknown_encoder",
                                 "lite_no_encoder"])
def test_malformed_xcomet_is_one_error(tmp_path: Path, how: str) -> None:
    refused_in_one_line(_broken(tmp_path, how))
