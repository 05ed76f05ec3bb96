"""python: models and small data files for the checks tests (tests/test_checks_*.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

# Four LaoBench-format multiple-choice rows (gold B, A, D, C) and the texts of their options.
MCQ_ROWS = [
    {"id": "q1", "data_type": "Knowledge Application", "question": "Capital of Laos?", "A": "Luang Prabang",
     "B": "Vientiane", "C": "Pakse", "D": "Savannakhet", "answer": "B", "lang": "en"},
    {"id": "q2", "data_type": "Knowledge Application", "question": "River through Vientiane?", "A": "Mekong",
     "B": "Ou", "C": "Ngum", "D": "Xe Bang Fai", "answer": "A", "lang": "en"},
    {"id": "q3", "data_type": "K12 Foundational Education", "question": "7 + 8 = ?", "A": "13", "B": "14",
     "C": "16", "D": "15", "answer": "D", "lang": "en"},
    {"id": "q4", "data_type": "K12 Foundational Education", "question": "Days in a week?", "A": "5", "B": "6",
     "C": "7", "D": "8", "answer": "C", "lang": "en"},
]
RIGHT = {"Capital of Laos?": "Vientiane", "River through Vientiane?": "Mekong", "7 + 8 = ?": "15",
         "Days in a week?": "7"}


def write_mcq(path: Path) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in MCQ_ROWS), encoding="utf-8")
    return str(path)


def _options(content: str) -> dict[str, str]:
    return dict(re.findall(r"^([A-D])\. (.*)$", content, re.M))


def always_a(messages):
    return "Answer: A"


def knows_content(messages):
    """Picks the right option by its text, wherever it stands."""
    content = messages[-1]["content"]
    opts = _options(content)
    q = next(k for k in RIGHT if k in content)
    return "Answer: " + next(letter for letter, text in opts.items() if text == RIGHT[q])


def mixed_replies(messages):
    """q1 right, q2 wrong, q3 unreadable, q4 a lower-case letter the strict rule does not read."""
    content = messages[-1]["content"]
    if "Capital of Laos?" in content:
        return "Answer: B"
    if "River through" in content:
        return "Answer: C"
    if "7 + 8" in content:
        return "I am not sure about this one."
    return "c"
