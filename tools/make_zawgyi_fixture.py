"""Build the Burmese Zawgyi fixture (tests/fixtures/zawgyi/burmese.jsonl): half Unicode, half Zawgyi.

The Unicode half: the 60 Burmese texts of the language-identification fixture (Debian's translation
catalogues, tests/fixtures/langid/labelled.jsonl) and, to test short strings too, the first two
space-separated words of each (at least 4 characters, duplicates dropped). The Zawgyi half: each of
those texts written in Zawgyi by pyidaungsu's `cvt2zg` (its rule-based Unicode-to-Zawgyi table, a
tool apart from both the detector, myanmartools, and the converter, ICU's Zawgyi-my, under test).
A row: {"text", "encoding": "unicode" | "zawgyi", "unicode": the Unicode text it was written from}.

    pip install "glotbench[words]" && python tools/make_zawgyi_fixture.py
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "fixtures" / "langid" / "labelled.jsonl"
OUT = ROOT / "tests" / "fixtures" / "zawgyi" / "burmese.jsonl"


def main() -> None:
    import pyidaungsu

    texts = [r["text"] for r in map(json.loads, SOURCE.read_text(encoding="utf-8").splitlines()) if r["lang"] == "my"]
    short = [" ".join(t.split()[:2]) for t in texts]
    seen: set[str] = set()
    unicode = [t for t in texts + short if len(t) >= 4 and not (t in seen or seen.add(t))]
    rows = [{"text": t, "encoding": "unicode", "unicode": t} for t in unicode]
    rows += [{"text": pyidaungsu.cvt2zg(t), "encoding": "zawgyi", "unicode": t} for t in unicode]
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{OUT}: {len(rows)} rows ({len(unicode)} Unicode, {len(unicode)} Zawgyi)")


if __name__ == "__main__":
    main()
