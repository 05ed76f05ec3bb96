"""`run --dry-run --metric-checkpoint DIR` checks the weights, not only the layout: the weights'
header (safetensors: names, dtypes, shapes, byte ranges against the file's size; a torch archive:
opened with mmap) and the model built from them on the meta device. A truncated file or a weight of
the wrong shape is the one `error:` line the run would give, before any estimate; no weight is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily
from glotbench.errors import GlotbenchError

importorskip_lazily("torch")

MODEL = "openai:test@http://127.0.0.1:9/v1"  # a dry run contacts no endpoint


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.testing.learned_checkpoint import TinyComet, TinyMetricX, TinyXComet, build, build_metricx, build_xcomet

    tmp = tmp_path_factory.mktemp("dry_weights")
    text = " ".join(it.public["source"] + " " + it.gold["reference"] for it in LaoBenchTranslation().load())
    return {"comet": build(tmp / "comet", TinyComet(), text), "metricx": build_metricx(tmp / "mx", TinyMetricX(), text),
            "xcomet": build_xcomet(tmp / "xcomet", TinyXComet(), text),
            "lite": build_xcomet(tmp / "lite", TinyXComet(encoder="DeBERTa", layout="lite"), text)}


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    if (dst / "hparams.yaml").is_file():  # the encoder folder it names: the copy's own
        (dst / "hparams.yaml").write_text((dst / "hparams.yaml").read_text().replace(str(src.resolve()), str(dst.resolve())))
    if (dst / "config.json").is_file() and "pretrained_model" in (dst / "config.json").read_text():
        (dst / "config.json").write_text((dst / "config.json").read_text().replace(str(src.resolve()), str(dst.resolve())))
    return dst


def _truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])


def _set(path: Path, **changes: object) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


BROKEN = {
    "metricx truncated": ("metricx", lambda d: _truncate(d / "model.safetensors"), "is truncated: its header describes"),
    "metricx tail cut": ("metricx", lambda d: _truncate(d / "model.safetensors", 0.9999), "is truncated"),
    "metricx wrong shape": ("metricx", lambda d: _set(d / "config.json", d_ff=64), "in the weights, (64, 16) in config.json"),
    "lite truncated": ("lite", lambda d: _truncate(d / "model.safetensors", 0.98), "is truncated"),
    "lite header cut": ("lite", lambda d: _truncate(d / "model.safetensors", 0.001), "truncated or not safetensors"),
    "lite wrong shape": ("lite", lambda d: _set(d / "encoder" / "config.json", intermediate_size=48), "size mismatch"),
    "comet truncated": ("comet", lambda d: _truncate(d / "checkpoints" / "model.ckpt"), "does not load as weights"),
    "comet wrong shape": ("comet", lambda d: _set(d / "encoder" / "config.json", intermediate_size=48), "size mismatch"),
    "xcomet wrong tagger": ("xcomet", lambda d: _set(d / "encoder" / "config.json", num_hidden_layers=1),
                            "weights have no place in the config"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_weights_are_refused_by_the_dry_run(ckpts, tmp_path, case) -> None:
    which, breaking, words = BROKEN[case]
    d = _copy(ckpts[which], tmp_path / "ckpt")
    breaking(d)
    r = cli("run", "laobench-translation", "--model", MODEL, "--dry-run", "--metric-checkpoint", str(d),
            "--cache-path", str(tmp_path / "calls.sqlite"), timeout=300)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error: --metric-checkpoint"), r.stderr
    assert words in err[0] and "requests" not in r.stdout, err[0]


@pytest.mark.parametrize("which", ["comet", "metricx", "xcomet", "lite"])
def test_good_weights_pass_the_check_and_the_load_agrees(ckpts, which) -> None:
    """The check builds what the load builds (the same constructor, on the meta device): a good
    folder passes both; the check reads no weight (meta tensors only)."""
    import torch

    from glotbench.metrics import learned

    c = learned.check(ckpts[which])
    assert c.kind == learned.open_checkpoint(ckpts[which]).kind
    state = learned.load_weights(c, header_only=True)
    assert state and all(v.device.type == "meta" for v in state.values() if isinstance(v, torch.Tensor))
    learned.load(ckpts[which])


def test_the_check_reads_the_header_only(tmp_path) -> None:
    """The header kept and the data region made a hole (a sparse file of the exact size: zeros): the
    check passes, as it reads nothing past the header; one byte more or less than the header
    describes is refused, as safetensors' own loader refuses it."""
    from glotbench.metrics import learned
    from glotbench.testing.learned_checkpoint import TinyMetricX, build_metricx

    d = build_metricx(tmp_path / "mx", TinyMetricX(), "hello world")
    w = d / "model.safetensors"
    size = w.stat().st_size
    head = w.read_bytes()[:8 + int.from_bytes(w.read_bytes()[:8], "little")]
    with open(w, "wb") as f:
        f.write(head)
        f.truncate(size)
    learned.check(d)
    for wrong in (size + 1, size - 1):
        with open(w, "r+b") as f:
            f.truncate(wrong)
        with pytest.raises(GlotbenchError, match="its header describes"):
            learned.check(d)
