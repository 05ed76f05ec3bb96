"""Annotation round trip: export items and flags, import two or more annotators' labels, agreement
with bootstrap CIs, the disagreements, and adjudicated labels with who decided.

Agreement (each with a 95% percentile bootstrap CI over items, seeded):
- Fleiss' κ (statsmodels) over the items that every annotator labelled (the others are counted);
- Cohen's κ (statsmodels) for each pair of annotators, over the items both labelled;
- Krippendorff's α (the `krippendorff` package), nominal, and ordinal when an order of the labels is
  given (`--order low,mid,high`) or every label is a number; missing labels are allowed.

Label files are read through declared schemas (`glotbench.runfiles`: `LabelCsvRow`, `LabelRow`,
`LabelStudioExport`): CSV or JSONL with `id`, `annotator`, `label`, or a Label Studio JSON export
(tasks with `data.id` and `annotations[].result[].value.choices`, annotator from `completed_by`).
One label per (item, annotator) over all files; a second one is an error, not a silent overwrite.
CSV rows left empty, skipped (cancelled) Label Studio annotations and unannotated tasks are counted
and reported, never silently dropped.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np

from glotbench.build.common import Candidate
from glotbench.data import locate, read_object, read_rows, read_text
from glotbench.errors import DataError, GlotbenchError
from glotbench.rundir import to_json, write_json_atomic, write_jsonl_atomic
from glotbench.runfiles import AdjudicationRow, LabelCsvRow, LabelRow, LabelStudioExport, label_studio_place
from glotbench.stats import DEFAULT_SEED, cohens_kappa, fleiss_kappa
from glotbench.stats.agreement import bootstrap_statistic, krippendorff_alpha

Labels = dict[str, dict[str, str]]  # item id -> annotator -> label


def export(cands: Sequence[Candidate], flags: Sequence[Mapping[str, Any]], path: str, fmt: str) -> int:
    """Write the items (with their flags and reasons) for annotators; returns the number written."""
    by_item: dict[str, list[str]] = {}
    for f in flags:
        by_item.setdefault(str(f["id"]), []).append(f"{f['check']}: {', '.join(f['flags'])} ({f.get('reason') or ''})")
    rows = [{"id": c.id, "text": c.text, "key": c.record.get("answer"), "flags": " | ".join(by_item.get(c.id, []))}
            for c in cands]
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=["id", "text", "key", "flags", "annotator", "label", "note"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "key": "" if r["key"] is None else json.dumps(r["key"], ensure_ascii=False)})
        # a lone surrogate (a `\\ud800` escape in the candidates' JSON) has no UTF-8: U+FFFD's "?" in a
        # spreadsheet's text; the JSON formats keep it as its `\\u` escape (rundir's writers)
        tmp.write_text(buf.getvalue(), encoding="utf-8", errors="replace")
    elif fmt == "jsonl":
        write_jsonl_atomic(p, rows)
        return len(rows)
    elif fmt == "labelstudio":
        write_json_atomic(p, [{"data": {**r, "key": "" if r["key"] is None else str(r["key"])}} for r in rows])
        return len(rows)
    else:
        raise GlotbenchError(f"unknown export format {fmt!r} (csv, jsonl, labelstudio)")
    tmp.replace(p)
    return len(rows)


LABEL_STUDIO_CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Header value="Key: $key   Flags: $flags"/>
  <Choices name="label" toName="text" choice="single" showInline="true">
    <Choice value="keep"/><Choice value="fix"/><Choice value="drop"/>
  </Choices>
</View>"""


@dataclass(frozen=True)
class LabelImport:
    """The labels of some label files and what was in them without being a label: CSV rows left
    empty, annotations skipped in Label Studio (`was_cancelled`), tasks nobody annotated."""

    labels: Labels
    not_counted: dict[str, int]

    def note(self) -> str | None:
        """One line saying what was not counted, or None when everything was a label."""
        parts = [f"{n} {_NOT_COUNTED[what][n != 1]}" for what, n in self.not_counted.items() if n]
        return "not counted: " + ", ".join(parts) if parts else None


_NOT_COUNTED = {"unlabelled_rows": ("CSV row without a label", "CSV rows without a label"),
                "cancelled_annotations": ("skipped (cancelled) annotation", "skipped (cancelled) annotations"),
                "unannotated_tasks": ("task without annotations", "tasks without annotations")}


class _Collect:
    """One label per (item, annotator) over every file: a second one is an error naming both places."""

    def __init__(self) -> None:
        self.labels: Labels = {}
        self.where: dict[tuple[str, str], str | Callable[[], str]] = {}

    def add(self, where: str | Callable[[], str], item: str, annotator: str, label: str) -> None:
        """`where` (or a function giving it, when finding it costs) places the label in its file."""
        first = self.where.get((item, annotator))
        if first is not None:
            place = where() if callable(where) else where
            first = first() if callable(first) else first
            before = self.labels[item][annotator]
            same = "the same label" if before == label else f"{label!r}; the first, {before!r},"
            raise DataError(f"{place}: a second label for item {item!r} by {annotator!r} ({same} is at {first})")
        self.where[(item, annotator)] = where
        self.labels.setdefault(item, {})[annotator] = label


def import_labels(paths: Sequence[str]) -> LabelImport:
    """Read label files (by suffix: `.csv`, `.json` = a Label Studio export, else JSONL) through their
    declared schemas (`glotbench.runfiles`); any bad file is one `FILE:LINE: field: problem` error."""
    got = _Collect()
    skipped = dict.fromkeys(_NOT_COUNTED, 0)
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise DataError(f"label file not found: {p}")
        before = len(got.where)
        kind = p.suffix.lower()
        if kind == ".json":
            tasks = read_object(p, LabelStudioExport, where=label_studio_place).root
            for n, t in enumerate(tasks):
                skipped["unannotated_tasks"] += not t.annotations
                for a in t.annotations:
                    if a.was_cancelled:
                        skipped["cancelled_annotations"] += 1
                    else:
                        got.add(partial(_task_place, p, n), t.data.id, a.annotator, a.choices[0])
        else:
            rows = read_rows(p, LabelCsvRow, fmt="csv") if kind == ".csv" else read_rows(p, LabelRow, fmt="jsonl")
            for line, r in rows:
                if not r.label:  # a CSV row left empty: this annotator did not label the item
                    skipped["unlabelled_rows"] += 1
                else:
                    got.add(f"{p}:{line}", r.id, r.annotator, r.label)
        if len(got.where) == before:
            raise DataError(f"{p}: no labels (CSV or JSONL with id, annotator, label; or a Label Studio JSON export)")
    return LabelImport(got.labels, skipped)


def _task_place(p: Path, n: int) -> str:
    """Where task `n` of a Label Studio export is (found only when a label needs placing)."""
    return f"{p}:{locate(read_text(p), (n,))}: task {n}"


def read_labels(paths: Sequence[str]) -> Labels:
    """item id -> annotator -> label, from label files (see `import_labels`)."""
    return import_labels(paths).labels


def _est(value: float | None, ci: tuple[float | None, float | None], n: int, **extra: Any) -> dict[str, Any]:
    return {"value": value, "ci_low": ci[0], "ci_high": ci[1], "items": n, **extra}


def agreement(labels: Labels, order: Sequence[str] | None = None, resamples: int = 1000,
              seed: int = DEFAULT_SEED) -> dict[str, Any]:
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        raise GlotbenchError(f"--resamples must be 0 (no bootstrap) or more, got {resamples!r}")
    annotators = sorted({a for v in labels.values() for a in v})
    if len(annotators) < 2:
        raise GlotbenchError(f"agreement needs at least two annotators, found {len(annotators)}")
    items = sorted(labels)
    cats = sorted({lab for v in labels.values() for lab in v.values()})
    if order:
        unknown = sorted(set(cats) - set(order))
        if unknown:
            raise GlotbenchError(f"labels not in --order: {', '.join(unknown)}")
        rank: dict[str, float] | None = {lab: i for i, lab in enumerate(order)}
    elif all(_is_number(c) for c in cats):
        rank = {c: float(c) for c in cats}
    else:
        rank = None
    out: dict[str, Any] = {"annotators": annotators, "items": len(items), "labels": cats}

    complete = [i for i in items if len(labels[i]) == len(annotators)]
    rows = [[labels[i][a] for a in annotators] for i in complete]
    fk = fleiss_kappa(rows) if len(complete) > 1 else None
    out["fleiss_kappa"] = _est(fk, bootstrap_statistic(len(rows), lambda idx: fleiss_kappa([rows[k] for k in idx]), resamples, seed)
                               if fk is not None else (None, None), len(complete),
                               excluded_incomplete=len(items) - len(complete), library="statsmodels")
    pairs = {}
    for a, b in combinations(annotators, 2):
        both = [i for i in items if a in labels[i] and b in labels[i]]
        xa, xb = [labels[i][a] for i in both], [labels[i][b] for i in both]
        k = cohens_kappa(xa, xb) if both else None
        ci = bootstrap_statistic(len(both), lambda idx: cohens_kappa([xa[j] for j in idx], [xb[j] for j in idx]),
                        resamples, seed) if k is not None else (None, None)
        pairs[f"{a} ~ {b}"] = _est(k, ci, len(both), observed_agreement=(sum(x == y for x, y in zip(xa, xb)) / len(both))
                                   if both else None)
    out["cohens_kappa"] = pairs

    code = {c: i for i, c in enumerate(cats)}

    def alpha(idx: Sequence[int], level: Literal["nominal", "ordinal"], values: Mapping[str, float]) -> float | None:
        data = np.full((len(annotators), len(idx)), np.nan)
        for col, k in enumerate(idx):
            for r, a in enumerate(annotators):
                if a in labels[items[k]]:
                    data[r, col] = values[labels[items[k]][a]]
        return krippendorff_alpha(data, sorted(set(values.values())), level)

    all_idx = list(range(len(items)))
    levels: tuple[tuple[Literal["nominal", "ordinal"], Mapping[str, float] | None], ...] = (
        ("nominal", {c: float(i) for c, i in code.items()}), ("ordinal", rank))
    for level, values in levels:
        if values is None:
            continue
        value = alpha(all_idx, level, values)
        ci = (bootstrap_statistic(len(items), lambda idx: alpha(idx, level, values), resamples, seed)
              if value is not None else (None, None))
        out[f"krippendorff_alpha_{level}"] = _est(value, ci, len(items), library="krippendorff",
                                                  **({"order": list(order or sorted(values, key=values.__getitem__))}
                                                     if level == "ordinal" else {}))
    out["bootstrap"] = {"resamples": resamples, "seed": seed,
                        "ci": "95% percentile, items resampled" if resamples else "none (0 resamples)"}
    return out


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def disagreements(labels: Labels) -> list[dict[str, Any]]:
    return [{"id": i, "labels": dict(sorted(v.items()))} for i, v in sorted(labels.items()) if len(set(v.values())) > 1]


def adjudicate(path: str, labels: Labels, item: str, label: str, by: str, note: str = "") -> dict[str, Any]:
    """Append the decided label for ITEM to the adjudication file (JSONL); the latest decision wins."""
    if item not in labels:
        raise GlotbenchError(f"item {item!r} has no annotator labels")
    known = {lab for v in labels.values() for lab in v.values()}
    if label not in known:
        raise GlotbenchError(f"label {label!r} is not one the annotators used ({', '.join(sorted(known))})")
    if not by.strip():
        raise GlotbenchError("--by must name who decided")
    rec = {"id": item, "label": label, "decided_by": by, "note": note, "annotators": labels[item],
           "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as f:
        f.write(to_json(rec) + "\n")  # a lone surrogate from a label file: its \\u escape
    return rec


def final_labels(labels: Labels, adjudications: str | None) -> dict[str, Any]:
    """Each item's final label: the adjudicated one if any (latest wins), else the unanimous one; items
    with neither are listed as unresolved."""
    decided: dict[str, dict[str, Any]] = {}
    if adjudications and Path(adjudications).exists():
        for _, rec in read_rows(adjudications, AdjudicationRow, fmt="jsonl"):
            decided[rec.id] = {"label": rec.label, "decided_by": rec.decided_by}
    final, unresolved = {}, []
    for i, v in sorted(labels.items()):
        if i in decided:
            final[i] = {"label": decided[i]["label"], "source": "adjudicated", "decided_by": decided[i]["decided_by"]}
        elif len(set(v.values())) == 1:
            final[i] = {"label": next(iter(v.values())), "source": "unanimous"}
        else:
            unresolved.append(i)
    return {"final": final, "unresolved": unresolved}
