"""A learned-metric checkpoint whose encoder config or tokenizer files are malformed (not JSON, a field
of the wrong type, a corrupt SentencePiece model, fewer layers than the weights, which were dropped in
silence) is one `error:` line naming the checkpoint, never
"a bug in glotbench" (review of #36)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily
from glotbench.errors import GlotbenchError

importorskip_lazily("torch")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from glotbench.testing.learned_checkpoint import build, build_metricx

    tmp = tmp_path_factory.mktemp("ck")
    return {"comet": build(tmp / "comet"), "metricx": build_metricx(tmp / "mx"), "tmp": tmp}


def _bad_json(p: Path) -> None:
    p.write_text("{", encoding="utf-8")


def _wrong_type(p: Path) -> None:
    c = json.loads(p.read_text(encoding="utf-8"))
    c["hidden_size" if "hidden_size" in c else "d_model"] = "x"
    p.write_text(json.dumps(c), encoding="utf-8")


def _fewer_layers(p: Path) -> None:
    """A config with one layer fewer than the weights: the last layer's weights would be dropped in silence."""
    c = json.loads(p.read_text(encoding="utf-8"))
    key = "num_hidden_layers" if "num_hidden_layers" in c else "num_layers"
    c[key] -= 1
    p.write_text(json.dumps(c), encoding="utf-8")


def _spm_junk(p: Path) -> None:
    p.unlink()
    (p.parent / "sentencepiece.bpe.model").write_bytes(b"junk\n")


CASES = {  # name: (checkpoint, file inside it, how it is broken)
    "comet tokenizer.json not JSON": ("comet", "encoder/tokenizer.json", _bad_json),
    "comet encoder config.json not JSON": ("comet", "encoder/config.json", _bad_json),
    "comet encoder config.json field of the wrong type": ("comet", "encoder/config.json", _wrong_type),
    "comet corrupt sentencepiece.bpe.model": ("comet", "encoder/tokenizer.json", _spm_junk),
    "metricx tokenizer.json not JSON": ("metricx", "tokenizer/tokenizer.json", _bad_json),
    "metricx config.json field of the wrong type": ("metricx", "config.json", _wrong_type),
    "comet encoder config.json with fewer layers than the weights": ("comet", "encoder/config.json", _fewer_layers),
    "metricx config.json with fewer layers than the weights": ("metricx", "config.json", _fewer_layers),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_checkpoint_file_is_a_glotbench_error(tiny, case: str) -> None:
    from glotbench.metrics.learned import load

    which, rel, breaker = CASES[case]
    d = tiny["tmp"] / case.replace(" ", "_")
    shutil.copytree(tiny[which], d)
    breaker(d / rel)
    with pytest.raises(GlotbenchError, match=r"--metric-checkpoint .*(does not load|config\.json)"):
        load(d)


def test_the_command_says_one_error_line(tiny, tmp_path: Path) -> None:
    d = tmp_path / "ck"
    shutil.copytree(tiny["comet"], d)
    _bad_json(d / "encoder" / "tokenizer.json")
    r = cli("rescore", str(tmp_path), "--metric-checkpoint", str(d), timeout=300)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: --metric-checkpoint") and "bug" not in lines[0], r.stderr
