"""Learned metrics (metrics/learned.py): segment scores equal unbabel-comet's on random-weight
checkpoints built offline (tests/learned_oracle.py wrote the reference scores; with
GLOTBENCH_COMET_ORACLE=DIR naming a folder where unbabel-comet imports, they are recomputed live),
the signature, and every malformed directory is one readable error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from conftest import importorskip_lazily
from glotbench.errors import GlotbenchError
from glotbench.metrics import learned
from glotbench.testing.learned_checkpoint import TinyComet, build

sys.path.insert(0, str(Path(__file__).parent))
from learned_oracle import BATCH, refused_in_one_line, CASES, METRICX_CASES, SEGMENTS, TEXT  # noqa: E402

importorskip_lazily("transformers")
ORACLE = Path(__file__).parent / "fixtures" / "learned" / "comet22_oracle.json"
METRICX_ORACLE = Path(__file__).parent / "fixtures" / "learned" / "metricx24_oracle.json"
TOL = 1e-5


def _score(d: Path, batch: int = BATCH) -> list[float]:
    m = learned.load(d, batch_size=batch)
    return m.score([s["src"] for s in SEGMENTS], [s["mt"] for s in SEGMENTS], [s["ref"] for s in SEGMENTS])


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ckpt")
    return {name: build(root / name, spec, TEXT) for name, spec in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_scores_equal_unbabel_comet(ckpts: dict[str, Path], name: str) -> None:
    ref = json.loads(ORACLE.read_text(encoding="utf-8"))
    assert ref["segments"] == SEGMENTS and ref["cases"][name]["spec"]["seed"] == CASES[name].seed
    got, want = _score(ckpts[name]), ref["cases"][name]["scores"]
    assert len(got) == len(want) == len(SEGMENTS)
    assert max(abs(a - b) for a, b in zip(got, want)) <= TOL, (got, want)
    assert len({round(x, 4) for x in got}) > len(got) // 2  # the segments are told apart


@pytest.mark.parametrize("name", list(METRICX_CASES))
def test_metricx_scores_equal_the_reference_code(tmp_path: Path, name: str) -> None:
    """MetricX-24: google-research/metricx's MT5ForRegression (metricx24/models.py, run by
    tests/learned_oracle.py one segment at a time) against glotbench's batched scores."""
    from glotbench.testing.learned_checkpoint import build_metricx

    ref = json.loads(METRICX_ORACLE.read_text(encoding="utf-8"))
    assert ref["segments"] == SEGMENTS and ref["cases"][name]["spec"]["seed"] == METRICX_CASES[name].seed
    got, want = _score(build_metricx(tmp_path / name, METRICX_CASES[name], TEXT)), ref["cases"][name]["scores"]
    assert len(got) == len(want) == len(SEGMENTS)
    assert max(abs(a - b) for a, b in zip(got, want)) <= TOL, (got, want)
    assert all(0.0 < x < 25.0 for x in want)  # off MetricX's clamp: the head's logit itself is compared
    c = learned.open_checkpoint(tmp_path / name)
    assert c.kind == "metricx24" and not c.higher_is_better and c.signature().endswith("|maxlen:1536")


def test_batch_size_does_not_change_scores(ckpts: dict[str, Path]) -> None:
    one, all_ = _score(ckpts["comet22"], 1), _score(ckpts["comet22"], 64)
    assert max(abs(a - b) for a, b in zip(one, all_)) <= TOL


@pytest.mark.skipif(not os.environ.get("GLOTBENCH_COMET_ORACLE"), reason="set GLOTBENCH_COMET_ORACLE to a folder "
                    "where unbabel-comet 2.2.7 imports (tests/learned_oracle.py says how) to recompute the reference")
def test_reference_recomputed_live(tmp_path: Path) -> None:
    out = tmp_path / "live.json"
    src = Path(__file__).parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.environ["GLOTBENCH_COMET_ORACLE"], str(src)])}
    subprocess.run([sys.executable, str(Path(__file__).parent / "learned_oracle.py"), str(out)], env=env,
                   check=True, capture_output=True, timeout=600)
    live, stored = json.loads(out.read_text()), json.loads(ORACLE.read_text())
    for name in CASES:
        assert max(abs(a - b) for a, b in zip(live["cases"][name]["scores"], stored["cases"][name]["scores"])) <= TOL


def test_sparsemax_matches_its_definition() -> None:
    import torch

    z = torch.tensor([1.5, 0.2, 1.1, -3.0])
    p = learned.sparsemax(z)
    assert abs(float(p.sum()) - 1.0) < 1e-6 and float(p[3]) == 0.0 and float(p[1]) == 0.0
    assert torch.allclose(p, torch.tensor([0.7, 0.0, 0.3, 0.0]))  # tau = (1.5 + 1.1 - 1) / 2 = 0.8
    assert torch.allclose(learned.sparsemax(torch.zeros(3)), torch.full((3,), 1 / 3))


def test_any_reply_is_scored(ckpts: dict[str, Path]) -> None:
    m = learned.load(ckpts["comet22"])
    hostile = ["\ud800 lone surrogate", "\x00\x1b[31m", "ສ" * 5000, "", "🙂" * 10]
    got = m.score(["hello"] * len(hostile), hostile, ["ສະບາຍດີ"] * len(hostile))
    assert len(got) == len(hostile) and all(isinstance(x, float) and x == x for x in got)


def test_signature_names_the_checkpoint_sha256(ckpts: dict[str, Path], tmp_path: Path) -> None:
    import hashlib

    c = learned.open_checkpoint(ckpts["comet22"])
    sha = hashlib.sha256((ckpts["comet22"] / "checkpoints" / "model.ckpt").read_bytes()).hexdigest()
    assert c.signature().startswith(f"glotbench:comet22|ckpt:sha256:{sha}|files:sha256:")
    other = build(tmp_path / "other", replace(CASES["comet22"], seed=9), TEXT)
    assert learned.open_checkpoint(other).sha256 != sha
    # the same weights with another tokenizer: the files' hash changes
    tok = build(tmp_path / "tok", CASES["comet22"], TEXT + " more words here")
    assert learned.open_checkpoint(tok).files_sha256 != c.files_sha256


def _broken(tmp_path: Path, how: str) -> Path:
    d = build(tmp_path / how, TinyComet(), "hello world")
    hp = d / "hparams.yaml"
    if how == "no_ckpt":
        (d / "checkpoints" / "model.ckpt").unlink()
    elif how == "no_hparams":
        hp.unlink()
    elif how == "bad_yaml":
        hp.write_text("a: [unclosed\n")
    elif how == "not_mapping":
        hp.write_text("- 1\n- 2\n")
    elif how == "unknown_class":
        hp.write_text(yaml.safe_dump({**yaml.safe_load(hp.read_text()), "class_identifier": "ranking_metric"}))
    elif how == "hub_name_only":
        for f in (d / "encoder").iterdir():
            f.unlink()
        (d / "encoder").rmdir()
        hp.write_text(yaml.safe_dump({**yaml.safe_load(hp.read_text()), "pretrained_model": "xlm-roberta-large"}))
    elif how == "truncated":
        p = d / "checkpoints" / "model.ckpt"
        p.write_bytes(p.read_bytes()[:200])
    elif how == "lfs_pointer":  # unbabel-comet issue #188: "invalid load key, 'v'"
        (d / "checkpoints" / "model.ckpt").write_text("version https://git-lfs.github.com/spec/v1\n"
                                                      "oid sha256:" + "0" * 64 + "\nsize 2277438277\n")
    elif how == "garbage":
        (d / "checkpoints" / "model.ckpt").write_bytes(b"\x00not a checkpoint" * 10)
    elif how == "wrong_sizes":
        hp.write_text(yaml.safe_dump({**yaml.safe_load(hp.read_text()), "hidden_sizes": [7]}))
    elif how == "bad_pool":
        hp.write_text(yaml.safe_dump({**yaml.safe_load(hp.read_text()), "pool": "mean"}))
    elif how == "bigger_config":
        cfg = json.loads((d / "encoder" / "config.json").read_text())
        (d / "encoder" / "config.json").write_text(json.dumps({**cfg, "num_hidden_layers": 3}))
    elif how == "narrower_config":
        cfg = json.loads((d / "encoder" / "config.json").read_text())
        (d / "encoder" / "config.json").write_text(json.dumps({**cfg, "hidden_size": 8, "intermediate_size": 16}))
    return d


@pytest.mark.parametrize("how", ["no_ckpt", "no_hparams", "bad_yaml", "not_mapping", "unknown_class", "hub_name_only",
                                 "truncated", "lfs_pointer", "garbage", "wrong_sizes", "bad_pool", "bigger_config",
                                 "narrower_config"])
def test_malformed_checkpoint_is_one_error(tmp_path: Path, how: str) -> None:
    refused_in_one_line(_broken(tmp_path, how))


@pytest.mark.parametrize("how", ["no_weights", "no_tokenizer", "not_mt5", "small_vocab", "bad_json", "wrong_shape"])
def test_malformed_metricx_folder_is_one_error(tmp_path: Path, how: str) -> None:
    from glotbench.testing.learned_checkpoint import TinyMetricX, build_metricx

    d = build_metricx(tmp_path / how, TinyMetricX(), "hello world")
    cfg = json.loads((d / "config.json").read_text())
    if how == "no_weights":
        (d / "model.safetensors").unlink()
    elif how == "no_tokenizer":
        for f in (d / "tokenizer").iterdir():
            f.unlink()
    elif how == "not_mt5":
        (d / "config.json").write_text(json.dumps({**cfg, "model_type": "t5"}))
    elif how == "small_vocab":
        (d / "config.json").write_text(json.dumps({**cfg, "vocab_size": 32000}))
    elif how == "bad_json":
        (d / "config.json").write_text("{not json")
    elif how == "wrong_shape":
        (d / "config.json").write_text(json.dumps({**cfg, "d_ff": 64}))
    with pytest.raises(GlotbenchError) as e:
        learned.load(d)
    assert "--metric-checkpoint" in str(e.value) and "\n" not in str(e.value)


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(GlotbenchError, match="not a directory"):
        learned.open_checkpoint(tmp_path / "absent")
