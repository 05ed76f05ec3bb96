"""A run whose Burmese replies are in Zawgyi says so on the terminal beside its number (the check's
`zawgyi` verdict is not "wrong", so the wrong-language line alone read "0 of 3"; review of #36)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli

pytest.importorskip("myanmartools")
FX = Path(__file__).resolve().parent / "fixtures"


def test_zawgyi_replies_are_named_on_the_run_line(tmp_path: Path) -> None:
    zawgyi = [json.loads(x)["text"] for x in (FX / "zawgyi" / "burmese.jsonl").read_text(encoding="utf-8").splitlines()
              if json.loads(x)["encoding"] == "zawgyi" and len(json.loads(x)["text"]) > 40][:2]
    data = FX / "tasks" / "flores_plus_devtest.jsonl"
    mine = [r for r in map(json.loads, data.read_text(encoding="utf-8").splitlines()) if r["iso_639_3"] == "mya"]
    replay = tmp_path / "replay.jsonl"
    outputs = [*zawgyi, mine[2]["text"]]  # two Zawgyi replies, one in Unicode
    replay.write_text("".join(json.dumps({"id": str(i), "output": t}, ensure_ascii=False) + "\n"
                              for i, t in enumerate(outputs)), encoding="utf-8")
    r = cli("run", "flores-plus", "--data", str(data), "--bench-opt", "target=mya_Mymr", "--model", f"replay:{replay}",
            "--out", str(tmp_path / "run"), "--cache-path", str(tmp_path / "c.sqlite"))
    assert r.returncode == 0, r.stderr
    lines = [x for x in (r.stdout + r.stderr).splitlines() if "Zawgyi" in x]
    assert lines and lines[0].startswith("checks: 2 of 3 answers in Zawgyi"), r.stdout + r.stderr
