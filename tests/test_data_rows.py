"""glotbench.data: one reader for every file of rows, errors as FILE:LINE: field: problem, and
through the CLI one `error:` line with exit code 2."""

from __future__ import annotations

import json
import re

import pytest

from conftest import cli
from glotbench import data
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.data import ItemId, NonEmptyStr, Row, read_rows
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import DataError


class Pair(Row):
    id: ItemId
    text: NonEmptyStr
    score: float = 0.0


def test_jsonl_json_and_parquet_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": 1, "text": "ສະບາຍດີ", "extra": [1]}, {"id": "b", "text": "مرحبا", "score": 2}]
    j = tmp_path / "a.jsonl"
    j.write_text("\n\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    got = read_rows(j, Pair)
    assert [(n, r.id, r.text, r.score) for n, r in got] == [("1", "1", "ສະບາຍດີ", 0.0), ("3", "b", "مرحبا", 2.0)]
    js = tmp_path / "a.json"
    js.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    assert [n for n, _ in read_rows(js, Pair)] == ["2", "9"]
    pq.write_table(pa.Table.from_pylist([{"id": "x", "text": "t"}]), tmp_path / "a.parquet")
    assert [(n, r.id) for n, r in read_rows(tmp_path / "a.parquet", Pair)] == [("row 1", "x")]


@pytest.mark.parametrize("content, message", [
    ('{"id": 1, "text": "a"}\n{"id": 2}\n', ":2: text: missing$"),
    ('{"id": false, "text": "a"}\n', ":1: id: must be a string or a whole number, got bool$"),
    ('{"id": 1, "text": "\u3000 "}\n', ":1: text: must not be empty$"),  # ideographic space only
    ('{"id": 1, "text": "a", "score": "high"}\n', ":1: score: must be a number, got a string$"),
    ('{"id": 1, "text": 7, "score": true}\n', ":1: text: must be a string, got a number; score: must be a number, got true/false$"),
    ('{"id": 1, "text": "a"}\n"just a string"\n', ":2: row: expected a JSON object, got str$"),
    ('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"\n', ":2: not valid JSON"),
    ('{"id": 1}\n{"id": 2}\n{"id": 3}\n', ":1: text: missing \\(and 2 more bad rows\\)$"),
])
def test_bad_rows(tmp_path, content, message):
    p = tmp_path / "rows.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match="^" + re.escape(str(p)) + message):
        read_rows(p, Pair)


def test_bad_files(tmp_path, monkeypatch):
    p = tmp_path / "rows.json"
    p.write_text('{"id": 1, "text": "a"}', encoding="utf-8")
    with pytest.raises(DataError, match="expected a JSON list of rows"):
        read_rows(p, Pair)
    p.write_text('[{"id": 1, "text": "a"},\n {"id": 2, "text": ', encoding="utf-8")
    with pytest.raises(DataError, match=r"rows\.json:2: not valid JSON"):
        read_rows(p, Pair)
    p.write_bytes(b'[{"id": 1, "text": "\xff"}]')
    with pytest.raises(DataError, match="not UTF-8 text"):
        read_rows(p, Pair)
    with pytest.raises(DataError, match="data file not found"):
        read_rows(tmp_path / "missing.jsonl", Pair)
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match="not a readable parquet file"):
        read_rows(tmp_path / "bad.parquet", Pair)
    big = tmp_path / "big.jsonl"
    big.write_text('{"id": 1, "text": "a"}\n' * 10, encoding="utf-8")
    monkeypatch.setattr(data, "MAX_FILE_BYTES", 100)
    with pytest.raises(DataError, match="larger than"):
        read_rows(big, Pair)


def _run_dir(tmp_path, name="run"):
    items = VietnameseDiacritics().load()[:3]
    f = tmp_path / f"{name}.jsonl"
    f.write_text("\n".join(json.dumps({"id": it.id, "output": json.dumps({"restored_text": it.gold["references"][0]})})
                           for it in items) + "\n")
    out = tmp_path / name
    evaluate("vi-diacritics", f"replay:{f}", RunOptions(limit=3, use_cache=False, progress=False, out=str(out)))
    return out


def _assert_one_error(proc, pattern):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(pattern, lines[0]) and lines[0].startswith("error: "), proc.stderr


def test_cli_bad_replay_results_and_samples(tmp_path):
    bad = tmp_path / "preds.jsonl"
    bad.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": null, "repeat": -1}\n', encoding="utf-8")
    proc = cli("run", "vi-diacritics", "--model", f"replay:{bad}", "--no-cache", "--no-progress",
               "--out", str(tmp_path / "x"))
    _assert_one_error(proc, re.escape(f"{bad}:2: output: must be a string, got null; repeat: ") + "must be greater than or equal to 0$")

    a, b = _run_dir(tmp_path, "a"), _run_dir(tmp_path, "b")
    res = json.loads((a / "results.json").read_text())
    res["counts"]["failed"] = "none"
    text = json.dumps(res, indent=2)
    (a / "results.json").write_text(text)
    line = next(n for n, s in enumerate(text.splitlines(), 1) if '"failed": "none"' in s)
    _assert_one_error(cli("report", str(a)), re.escape(f"{a / 'results.json'}:{line}: counts.failed: must be a whole number, got a string") + "$")

    lines = (b / "samples.jsonl").read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "repeat": "0"})
    (b / "samples.jsonl").write_text("\n".join(lines) + "\n")
    res["counts"]["failed"] = 0
    (a / "results.json").write_text(json.dumps(res))
    _assert_one_error(cli("compare", str(a), str(b)),
                      re.escape(f"{b / 'samples.jsonl'}:2: repeat: must be a whole number, got a string") + "$")
