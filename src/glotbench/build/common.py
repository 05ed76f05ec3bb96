"""Candidate files shared by the build commands: JSONL rows with an id, text fields and an optional key.

A row's text is the fields named with `--text-field`, or by default every string (or list of strings)
except the id, the key and label fields (NON_TEXT). Rows keep every field as written, so a file written
back (`dedupe --apply`, `select`) is the input minus the rows dropped. A row without text is an error
naming its file and line: an item that cannot be compared must not pass silently.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from glotbench.errors import DataError
from glotbench.loading import read_jsonl
from glotbench.text.segment import repair_lao_am

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark
    from glotbench.core import Dataset
    from pathlib import Path

NON_TEXT = frozenset({"id", "answer", "key", "gold", "label", "labels", "lang", "language", "subject",
                      "category", "split", "source", "meta", "direction", "data_type", "subdomain", "domain",
                      "dimension", "type", "task", "difficulty"})
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One row of a candidate file: where it is, its id, its comparable text and the row as written."""

    file: str
    line: int
    id: str
    text: str
    record: Mapping[str, Any]

    @property
    def uid(self) -> str:
        """Unique across files: FILE#ID."""
        return f"{self.file}#{self.id}"

    def key(self, field: str = "answer") -> Any:
        return self.record.get(field)


def _strings(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple)):
        return [s for x in v for s in _strings(x)]
    if isinstance(v, dict):
        return [s for x in v.values() for s in _strings(x)]
    return []


def row_text(rec: Mapping[str, Any], text_fields: Sequence[str] | None, key_field: str = "answer") -> str:
    if text_fields:
        parts = [s for f in text_fields for s in _strings(rec.get(f))]
    else:
        parts = [s for k, v in rec.items() if k not in NON_TEXT and k != key_field for s in _strings(v)]
    return "\n".join(p for p in parts if p.strip())


def load_candidates(paths: Iterable[str], text_fields: Sequence[str] | None = None,
                    key_field: str = "answer") -> list[Candidate]:
    """Every row of every file, in order. Ids come from `id` (else `line<N>`); a repeated id within a
    file, a row without text, or a malformed line raises DataError naming FILE:LINE."""
    out: list[Candidate] = []
    for path in paths:
        seen: set[str] = set()
        for n, rec in read_jsonl(path):
            where = f"{path}:{n}"
            rid = rec.get("id", f"line{n}")
            if not isinstance(rid, (str, int)) or isinstance(rid, bool):
                raise DataError(f"{where}: field 'id' must be a string or an integer")
            rid = str(rid)
            if rid in seen:
                raise DataError(f"{where}: duplicate id {rid!r}")
            seen.add(rid)
            text = row_text(rec, text_fields, key_field)
            if not text.strip():
                fields = ", ".join(text_fields) if text_fields else "any text field"
                raise DataError(f"{where}: item {rid!r} has no text (looked in {fields})")
            out.append(Candidate(str(path), n, rid, text, rec))
        if not seen:
            raise DataError(f"{path}: no items")
    return out


def options_of(rec: Mapping[str, Any]) -> list[str] | None:
    """An MCQ item's options in letter order: an `options`/`choices` list, a {letter: text} mapping,
    or LaoBench's top-level `A`, `B`, `C`, ... fields."""
    for name in ("options", "choices"):
        v = rec.get(name)
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return list(v)
        if isinstance(v, dict) and all(isinstance(x, str) for x in v.values()):
            return [v[k] for k in sorted(v)]
    letters = []
    for k in "ABCDEFGHIJ":
        if not isinstance(rec.get(k), str):
            break
        letters.append(rec[k])
    return letters or None


def normalise(text: str) -> str:
    """NFC, Lao AM composed (NFC leaves U+0ECD U+0EB2 apart), case-folded, whitespace collapsed."""
    return _SPACE.sub(" ", repair_lao_am(unicodedata.normalize("NFC", text)).casefold()).strip()


async def judge_phase(bench: Benchmark, model: Any, run_dir: Path, run_options: Any, dataset: Dataset,
                      repeats: int = 1) -> dict[str, Any]:
    """One judge's run over `dataset` in `run_dir` (a build command's phase), as its results.json:
    a finished valid run there is read back (a command stopped after it resumes), one whose calls
    failed (invalid, rundir/validity.py) is run again in place, its good replies from the cache."""
    from dataclasses import replace

    from glotbench.engine.evaluate import evaluate_async
    from glotbench.rundir import finished_run, read_results

    if finished_run(run_dir):  # the one finished-run rule: complete and valid
        return read_results(run_dir)
    res = await evaluate_async(bench, model, replace(run_options, out=str(run_dir), repeats=repeats, limit=None,
                                                     data=None), dataset=dataset)
    return dict(res.results)
