"""`rescore --agreement` on fewer runs than the system level needs says how many runs there are, not
"n = 0 runs" (review of #36)."""

from __future__ import annotations

from pathlib import Path

from conftest import cli

FX = Path(__file__).resolve().parent / "fixtures"


def test_one_run_says_one_run_at_system_level(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = cli("run", "flores-plus", "--data", str(FX / "tasks" / "flores_plus_devtest.jsonl"), "--bench-opt", "target=khm_Khmr",
            "--model", f"replay:{FX / 'agreement' / 'khm_Khmr' / 'sys-a.jsonl'}", "--out", str(out),
            "--cache-path", str(tmp_path / "c.sqlite"))
    assert r.returncode == 0, r.stderr
    r = cli("rescore", str(out), "--agreement")
    assert r.returncode == 0, r.stderr
    head = next(x for x in r.stdout.splitlines() if "system level" in x)
    assert "(1 run;" in head and "n = 0" not in head, head
    assert "fewer than 3 runs: not computed" in r.stdout
