"""A judged run's summary as tests read it back: its results.json's `judged.summary` (issue #33; an
arena.json, aragen.json or rubric.json before)."""

from __future__ import annotations

import json
from pathlib import Path


def summary(run_dir) -> dict:
    record = json.loads((Path(run_dir) / "results.json").read_text(encoding="utf-8"))
    return record["judged"]["summary"]
