"""`--dry-run`'s safetensors header check (metrics.learned.check) refuses what safetensors' own loader
refuses (rev36c): tensors whose byte ranges overlap or leave a gap (the check passed them, the run's
load then failed), and a header over safetensors' 100,000,000-byte limit. Each case is checked against
the real loader too, so the rule is the library's, not a guess."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily
from glotbench.errors import GlotbenchError

importorskip_lazily("torch")

MODEL = "openai:test@http://127.0.0.1:9/v1"  # a dry run contacts no endpoint


def _rewrite(w: Path, edit) -> None:
    b = w.read_bytes()
    n = struct.unpack("<Q", b[:8])[0]
    header, data = json.loads(b[8:8 + n]), b[8 + n:]
    edit(header)
    hb = json.dumps(header).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    w.write_bytes(struct.pack("<Q", len(hb)) + hb + data)


def _tensors(header: dict) -> list[tuple[str, dict]]:
    return sorted(((k, v) for k, v in header.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"])


def _overlap(header: dict) -> None:
    """A tensor moved onto an earlier one of the same byte size (the last one kept: the file's size
    still matches what the header describes)."""
    seen: dict[int, str] = {}
    for k, v in _tensors(header)[:-1]:
        size = v["data_offsets"][1] - v["data_offsets"][0]
        if size in seen:
            header[k]["data_offsets"] = list(header[seen[size]]["data_offsets"])
            return
        seen[size] = k
    raise AssertionError("no two tensors of one size")


def _swap(header: dict) -> None:
    """Two tensors of one size trade byte ranges: still contiguous, a valid file."""
    seen: dict[int, str] = {}
    for k, v in _tensors(header):
        size = v["data_offsets"][1] - v["data_offsets"][0]
        if size in seen:
            a, b = header[seen[size]], header[k]
            a["data_offsets"], b["data_offsets"] = b["data_offsets"], a["data_offsets"]
            return
        seen[size] = k
    raise AssertionError("no two tensors of one size")


@pytest.fixture()
def mx(tmp_path: Path) -> Path:
    from glotbench.testing.learned_checkpoint import TinyMetricX, build_metricx

    return build_metricx(tmp_path / "mx", TinyMetricX(), "hello world ສະບາຍດີ ជំរាបសួរ")


def test_overlapping_tensors_are_refused_like_safetensors(mx: Path, tmp_path: Path) -> None:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from glotbench.metrics import learned

    _rewrite(mx / "model.safetensors", _overlap)
    with pytest.raises(SafetensorError, match="invalid offset"):
        load_file(mx / "model.safetensors")
    with pytest.raises(GlotbenchError, match="overlap or leave a gap"):
        learned.check(mx)
    r = cli("run", "laobench-translation", "--model", MODEL, "--dry-run", "--metric-checkpoint", str(mx),
            "--cache-path", str(tmp_path / "calls.sqlite"), timeout=300)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error: --metric-checkpoint"), r.stderr
    assert "overlap or leave a gap" in err[0]


def test_reordered_but_contiguous_tensors_pass_like_safetensors(mx: Path) -> None:
    from safetensors.torch import load_file

    from glotbench.metrics import learned

    _rewrite(mx / "model.safetensors", _swap)
    assert load_file(mx / "model.safetensors")
    learned.check(mx)


@pytest.mark.parametrize("n, refused", [(100_000_000, False), (100_000_001, True)])
def test_header_size_limit_is_safetensors(mx: Path, n: int, refused: bool) -> None:
    """A header (`{}` padded with spaces) of length at or just over the limit: safetensors refuses
    the longer one as `header too large`, and so does the check, before reading it."""
    from safetensors import SafetensorError, safe_open

    from glotbench.metrics import learned

    w = mx / "model.safetensors"
    with open(w, "wb") as f:
        f.write(struct.pack("<Q", n) + b"{}" + b" " * (n - 2))
    if refused:
        with pytest.raises(SafetensorError, match="header too large"):
            safe_open(str(w), "pt")
        with pytest.raises(GlotbenchError, match="safetensors refuses over 100000000"):
            learned.check(mx)
    else:
        safe_open(str(w), "pt")  # an empty header of that size is a valid (tensor-less) file
        with pytest.raises(GlotbenchError) as e:  # no tensors: the model's weights are missing
            learned.check(mx)
        assert "refuses over" not in str(e.value)
