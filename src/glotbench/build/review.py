"""Annotation round trip: export items and flags, import two or more annotators' labels, agreement
with bootstrap CIs, the disagreements, and adjudicated labels with who decided.

Agreement (each with a 95% percentile bootstrap CI over items, seeded):
- Fleiss' κ (statsmodels) over the items that every annotator labelled (the others are counted);
- Cohen's κ (statsmodels) for each pair of annotators, over the items both labelled;
- Krippendorff's α (the `krippendorff` package), nominal, and ordinal when an order of the labels is
  given (`--order low,mid,high`) or every label is a number; missing labels are allowed.

Label files: CSV or JSONL with `id`, `annotator`, `label` (and optionally `file`), or a Label Studio
JSON export (tasks with `data.id` and `annotations[].result[].value.choices`, annotator from
`completed_by`). One label per (item, annotator); a second one is an error, not a silent overwrite.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from datetime import datetime, timezone
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from glotbench.build.common import Candidate
from glotbench.errors import DataError, GlotbenchError
from glotbench.stats import DEFAULT_SEED, cohens_kappa, fleiss_kappa

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
        tmp.write_text(buf.getvalue(), encoding="utf-8")
    elif fmt == "jsonl":
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    elif fmt == "labelstudio":
        tasks = [{"data": {**r, "key": "" if r["key"] is None else str(r["key"])}} for r in rows]
        tmp.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
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


def _add(labels: Labels, where: str, item: Any, annotator: Any, label: Any) -> None:
    if item in (None, "") or annotator in (None, "") or label in (None, ""):
        raise DataError(f"{where}: needs id, annotator and label")
    item, annotator, label = str(item), str(annotator), str(label)
    if annotator in labels.setdefault(item, {}):
        raise DataError(f"{where}: a second label for item {item!r} by {annotator!r}")
    labels[item][annotator] = label


def read_labels(paths: Sequence[str]) -> Labels:
    labels: Labels = {}
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise DataError(f"label file not found: {p}")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{p}: not UTF-8 text") from None
        if p.suffix == ".csv":
            reader = csv.DictReader(io.StringIO(text))
            if not reader.fieldnames or not {"id", "annotator", "label"} <= set(reader.fieldnames):
                raise DataError(f"{p}: a label CSV needs the columns id, annotator, label")
            for n, row in enumerate(reader, 2):
                if row.get("label"):
                    _add(labels, f"{p}:{n}", row.get("id"), row.get("annotator"), row.get("label"))
        elif p.suffix == ".json":
            try:
                tasks = json.loads(text)
            except ValueError as e:
                raise DataError(f"{p}: not valid JSON ({e})") from None
            if not isinstance(tasks, list):
                raise DataError(f"{p}: a Label Studio export is a JSON list of tasks")
            for n, t in enumerate(tasks):
                try:
                    item = t["data"]["id"]
                    for a in t.get("annotations", []):
                        if a.get("was_cancelled"):
                            continue
                        who = a.get("completed_by")
                        who = who.get("email", who.get("id")) if isinstance(who, dict) else who
                        choices = [c for r in a.get("result", []) for c in r.get("value", {}).get("choices", [])]
                        if len(choices) != 1:
                            raise DataError(f"{p}: task {n}: expected one choice per annotation, got {choices}")
                        _add(labels, f"{p}: task {n}", item, who, choices[0])
                except (KeyError, TypeError, AttributeError):
                    raise DataError(f"{p}: task {n} is not a Label Studio task with data.id and annotations") from None
        else:
            from glotbench.loading import read_jsonl

            for n, rec in read_jsonl(p):
                _add(labels, f"{p}:{n}", rec.get("id"), rec.get("annotator"), rec.get("label"))
    return labels


def _bootstrap(n: int, stat: Callable[[np.ndarray], float | None], resamples: int, seed: int) -> tuple[float | None, float | None]:
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(resamples):
        v = stat(rng.integers(0, n, n))
        if v is not None and v == v:
            vals.append(v)
    if len(vals) < resamples * 0.5:  # mostly undefined resamples (one category): no CI
        return None, None
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return float(lo), float(hi)


def _est(value: float | None, ci: tuple[float | None, float | None], n: int, **extra: Any) -> dict[str, Any]:
    return {"value": value, "ci_low": ci[0], "ci_high": ci[1], "items": n, **extra}


def agreement(labels: Labels, order: Sequence[str] | None = None, resamples: int = 1000,
              seed: int = DEFAULT_SEED) -> dict[str, Any]:
    import krippendorff

    annotators = sorted({a for v in labels.values() for a in v})
    if len(annotators) < 2:
        raise GlotbenchError(f"agreement needs at least two annotators, found {len(annotators)}")
    items = sorted(labels)
    cats = sorted({l for v in labels.values() for l in v.values()})
    if order:
        unknown = sorted(set(cats) - set(order))
        if unknown:
            raise GlotbenchError(f"labels not in --order: {', '.join(unknown)}")
        rank = {l: i for i, l in enumerate(order)}
    elif all(_is_number(c) for c in cats):
        rank = {c: float(c) for c in cats}
    else:
        rank = None
    out: dict[str, Any] = {"annotators": annotators, "items": len(items), "labels": cats}

    complete = [i for i in items if len(labels[i]) == len(annotators)]
    rows = [[labels[i][a] for a in annotators] for i in complete]
    fk = fleiss_kappa(rows) if len(complete) > 1 else None
    out["fleiss_kappa"] = _est(fk, _bootstrap(len(rows), lambda idx: fleiss_kappa([rows[k] for k in idx]), resamples, seed)
                               if fk is not None else (None, None), len(complete),
                               excluded_incomplete=len(items) - len(complete), library="statsmodels")
    pairs = {}
    for a, b in combinations(annotators, 2):
        both = [i for i in items if a in labels[i] and b in labels[i]]
        xa, xb = [labels[i][a] for i in both], [labels[i][b] for i in both]
        k = cohens_kappa(xa, xb) if both else None
        ci = _bootstrap(len(both), lambda idx: cohens_kappa([xa[j] for j in idx], [xb[j] for j in idx]),
                        resamples, seed) if k is not None else (None, None)
        pairs[f"{a} ~ {b}"] = _est(k, ci, len(both), observed_agreement=(sum(x == y for x, y in zip(xa, xb)) / len(both))
                                   if both else None)
    out["cohens_kappa"] = pairs

    code = {c: i for i, c in enumerate(cats)}

    def alpha(idx: Sequence[int], level: str, values: Mapping[str, float]) -> float | None:
        data = np.full((len(annotators), len(idx)), np.nan)
        for col, k in enumerate(idx):
            for r, a in enumerate(annotators):
                if a in labels[items[k]]:
                    data[r, col] = values[labels[items[k]][a]]
        domain = sorted(set(values.values()))
        if len(domain) < 2 or np.count_nonzero(~np.isnan(data).all(axis=0)) < 2:
            return None
        try:
            with warnings.catch_warnings():  # a resample with one value only: undefined, returned as None
                warnings.simplefilter("ignore", RuntimeWarning)
                v = krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level)
        except (ValueError, ZeroDivisionError):
            return None
        return None if v != v else float(v)

    all_idx = list(range(len(items)))
    for level, values in (("nominal", {c: float(i) for c, i in code.items()}), ("ordinal", rank)):
        if values is None:
            continue
        a = alpha(all_idx, level, values)
        ci = _bootstrap(len(items), lambda idx: alpha(idx, level, values), resamples, seed) if a is not None else (None, None)
        out[f"krippendorff_alpha_{level}"] = _est(a, ci, len(items), library="krippendorff",
                                                  **({"order": list(order or sorted(values, key=values.get))}
                                                     if level == "ordinal" else {}))
    out["bootstrap"] = {"resamples": resamples, "seed": seed, "ci": "95% percentile, items resampled"}
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
    known = {l for v in labels.values() for l in v.values()}
    if label not in known:
        raise GlotbenchError(f"label {label!r} is not one the annotators used ({', '.join(sorted(known))})")
    if not by.strip():
        raise GlotbenchError("--by must name who decided")
    rec = {"id": item, "label": label, "decided_by": by, "note": note, "annotators": labels[item],
           "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return rec


def final_labels(labels: Labels, adjudications: str | None) -> dict[str, Any]:
    """Each item's final label: the adjudicated one if any (latest wins), else the unanimous one; items
    with neither are listed as unresolved."""
    decided: dict[str, dict[str, Any]] = {}
    if adjudications and Path(adjudications).exists():
        from glotbench.loading import read_jsonl

        for _, rec in read_jsonl(adjudications):
            decided[str(rec["id"])] = rec
    final, unresolved = {}, []
    for i, v in sorted(labels.items()):
        if i in decided:
            final[i] = {"label": decided[i]["label"], "source": "adjudicated", "decided_by": decided[i]["decided_by"]}
        elif len(set(v.values())) == 1:
            final[i] = {"label": next(iter(v.values())), "source": "unanimous"}
        else:
            unresolved.append(i)
    return {"final": final, "unresolved": unresolved}
