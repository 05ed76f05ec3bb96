"""What the reports read: a run directory's files (results.json, run.json, samples.jsonl; a judged run's
results.json with its `judged` section, or an older one's arena.json, aragen.json, rubric.json), never a live benchmark object, except to recover the references of a
run's items (gold is not written to samples.jsonl) and a metric's formula for significance tests."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from glotbench.data import read_dict
from glotbench.errors import GlotbenchError
from glotbench.rundir import OLD_SUMMARIES, SAMPLES, judged_section, read_results, read_samples
from glotbench.rundir.files import samples_counted
from glotbench.rundir.files import RESULTS, RUN_JSON
from glotbench.rundir.schema import ReportSampleRow
from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_rows
from glotbench.runfiles import AragenFile, ArenaFile, JudgedFile, MtBenchFile, RubricFile, aragen_place, judged_summary
from glotbench.signature import Signature

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark

# The summary files judged runs wrote before their results.json held their record (`judged`): still read.
JUDGED_FILES = OLD_SUMMARIES
JUDGED_SCHEMAS: dict[str, type[BaseModel]] = {"arena": ArenaFile, "aragen": AragenFile, "rubric": RubricFile,
                                               "mt-bench": MtBenchFile}  # any other kind: a plugin's (JudgedFile)


@dataclass(frozen=True)
class RunData:
    path: Path
    kind: str  # "run", or its judged kind: "arena", "aragen", "rubric", "mt-bench", a plugin's
    results: dict[str, Any]  # results.json; a judged run's: its summary (results.json's `judged.summary`)


def judged_kind(path: str | Path) -> str | None:
    """What a judged run's top directory is ("rubric", "arena", "aragen"): its results.json's `judged`
    section, or the summary file an older run wrote; None for any other directory."""
    d = Path(path)
    for kind, name in JUDGED_FILES.items():
        if (d / name).is_file():
            return kind
    judged = judged_section(d)
    return None if judged is None else str(judged["kind"])


def judged_dirs(paths: Sequence[str | Path], kind: str | None = None) -> list[Path]:
    """The judged runs `paths` name, each once: a judged run's top directory (of `kind`, when given)
    as given; a folder as the judged runs under it, never their phases (as `board` reads folders);
    anything else as given, for its reader to say what it is."""
    from glotbench.rundir import RESULTS

    found: list[Path] = []
    for p in paths:
        root = Path(p)
        if judged_kind(root) is not None or not root.is_dir():
            found.append(root)
            continue
        under = sorted({f.parent for n in (RESULTS, *JUDGED_FILES.values()) for f in root.rglob(n)
                        if judged_kind(f.parent) is not None and (kind is None or judged_kind(f.parent) == kind)})
        found += under or [root]
    return list(dict.fromkeys(found))


def load_run(path: str | Path) -> RunData:
    """A finished run (results.json), or a judged run's top directory with its summary (results.json's
    `judged` section, or an older run's arena.json / aragen.json / rubric.json)."""
    d = Path(path)
    if not d.is_dir():
        raise GlotbenchError(f"{d} is not a run directory: " + ("a file, not a directory" if d.exists() else "not a directory"))
    for kind, name in JUDGED_FILES.items():
        if (d / name).exists() and not (d / RESULTS).exists():
            return RunData(d, kind, _judged_rule(kind, read_dict(d / name, JUDGED_SCHEMAS[kind], allow_nan=True,
                                                                 where=aragen_place if kind == "aragen" else None)))
    results = read_results(d)
    judged = results.get("judged")
    if judged is None:
        return RunData(d, "run", results)
    kind = judged["kind"]  # the summary, checked as its own file was
    check_judged(d, results)
    return RunData(d, kind, judged_summary(d, judged, JUDGED_SCHEMAS.get(kind, JudgedFile),
                                           aragen_place if kind == "aragen" else None))


def check_judged(d: Path, results: dict[str, Any]) -> dict[str, Any]:
    """`results` itself, once its `judged.stats` and `judged.rule` read: every reader (report,
    export, board, compare) refuses a damaged record in one line, not only those that score from it."""
    judged = results.get("judged") or {}
    if "stats" in judged:
        JudgedStats.read(judged["stats"], f"{d / RESULTS}: judged.stats")
    if "rule" in judged:
        JudgedMetrics.read(judged["rule"], f"{d / RESULTS}: judged.rule")
    return results


def _judged_rule(kind: str, summary: dict[str, Any]) -> dict[str, Any]:
    """An older run's summary file with today's rule for a judged run (`validity.combine`): when no
    item has a judged score (no headline value), its validity says so, whatever it recorded then
    (an AraGen run whose every verdict was unreadable was written valid with a null score)."""
    from glotbench.rundir.validity import combine

    view, _ = view_of(kind, summary, {})
    final = view["scores"]["overall"][view["headline"]]
    if final.get("value") is not None and final.get("n") != 0:
        return summary
    v = summary.get("validity")
    phases: Mapping[str, Mapping[str, Any] | None] = (
        v["phases"] if isinstance(v, Mapping) and isinstance(v.get("phases"), Mapping)
        else {"run": v} if isinstance(v, Mapping) else {})
    return {**summary, "validity": combine(phases, judged=0, of=view["counts"].get("items"))}


def bench_of(results: Mapping[str, Any]) -> Benchmark:
    """The run's benchmark as it ran: by its spec (a task file, MODULE:CLASS) or name, with its recorded
    `--bench-opt`s (`compare`, `checks`, `rescore` score stored replies through it again)."""
    from glotbench.metrics.corpus import check_spm_of_run
    from glotbench.registry import get_benchmark, task_copy
    from glotbench.rundir import relocated, task_file_of

    b = results["benchmark"]
    opts = dict((results.get("config") or {}).get("bench_options") or {})
    records = list(b.get("files") or ()) or _older_file_records(opts, str(results.get("signature", "")))
    for rec in records:  # a file an option names, where it is now (or --moved), SHA-256 checked
        opts[rec["option"]] = relocated(rec)
    check_spm_of_run(opts.get("bleu_tokenize"), str(results.get("signature", "")))
    kept = task_file_of(b)  # a task file: the run's copy (or the original, unchanged), from any folder
    if kept is not None:
        return task_copy(kept[0], kept[1], **opts)
    if b.get("task_file"):
        raise GlotbenchError(f"the run's task file {b['task_file'].get('path')} is gone or changed, and so is its "
                             f"copy {b['task_file'].get('copy')} (SHA-256 {str(b['task_file'].get('sha256'))[:12]})")
    return get_benchmark(b.get("spec") or b["name"], **opts)


def _older_file_records(opts: Mapping[str, Any], signature: str) -> list[dict[str, str]]:
    """A run from before `benchmark.files`: the files its options name that are not at their recorded
    paths, each known by the 12 hex digits its signature keeps (`spm-<12>`, a few-shot file's
    `=file:<12>`), for `rundir.relocated` to find (`--moved`) or name."""
    import os
    import re

    from glotbench.metrics.corpus import SPM_PREFIX, is_spm

    out = []
    spm = str(opts.get("bleu_tokenize") or "")
    for option, value, path, pattern in (
            ("bleu_tokenize", spm, spm[len(SPM_PREFIX):] if is_spm(spm) else "", r"spm-([0-9a-f]{12})"),
            ("fewshot_data", str(opts.get("fewshot_data") or ""), str(opts.get("fewshot_data") or ""),
             r"=file:([0-9a-f]{12})")):
        tag = re.search(pattern, signature) if path and not os.path.exists(path) else None
        if tag:
            out.append({"option": option, "value": value, "path": path, "sha256": tag.group(1)})
    return out


def data_path_of(info: Mapping[str, Any]) -> str | None:
    """What to load a run's items from again (its `benchmark` record): its `--data` (`data_path`;
    before that was recorded, its source unless bundled), None for the benchmark's own data (a
    plugin's `load(None)`, whatever it names its source). A data file gone from where the run read
    it (a relative `--data` read from another folder, a task's folder moved) is found by its SHA-256
    among the `--moved` files (`rundir.relocated`), else one error line saying so."""
    import os

    from glotbench.rundir import relocated

    source = str(info.get("data") or "")
    path = info["data_path"] if "data_path" in info else (None if source.startswith("bundled") else source or None)
    read = path if path is not None else source if os.path.isabs(source) else None  # the file the run read
    if read is None or Path(read).exists() or not info.get("data_sha256"):
        return path
    return relocated({"option": "data", "path": read, "sha256": str(info["data_sha256"]), "value": read})


def rebuild(results: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The run's benchmark with its recorded `--bench-opt`s, its dataset (the same data) and the items it asked."""
    b = results["benchmark"]
    bench = bench_of(results)
    dataset = bench.load(data_path_of(b))
    if b.get("data_sha256") and dataset.sha256 != b["data_sha256"]:
        raise GlotbenchError(f"the run's data ({b.get('data')}) has changed since the run: sha256 {dataset.sha256} "
                             f"is not the recorded {b['data_sha256']}")
    return bench, dataset, bench.expand(dataset)


def judged_phase(path: str | Path) -> bool:
    """A phase of a judged run (`answers`, `candidate`, `judge-*`...: its parent is a judged run's top
    directory): never a contestant of its own, the judged run's view stands for it."""
    d = Path(path)
    if judged_kind(d.resolve().parent) is not None:
        return True
    for name in (RESULTS, RUN_JSON):  # its own record says so: the judged run's top is unfinished or damaged
        try:
            config = json.loads((d / name).read_text(encoding="utf-8")).get("config")
        except (OSError, ValueError, AttributeError):
            continue
        return isinstance(config, dict) and bool(config.get("phase"))
    return False


def view_of(kind: str, r: Mapping[str, Any], base: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A judged run as the candidate's run (results.json's shape): its summary `r` (the judges' scores,
    per-item values) over its candidate's answers' results `base` (the benchmark, the candidate's model,
    config, counts, tokens; {} where there is none); and per-item rows of the candidate's judged value
    (mean over the judges that judged the item) for the board's paired tests. A judge is never a model
    of this view. What the judged pipelines write as the run's results.json (engine/judged.py `write_judged`).
    A kind with no summary schema of its own (a plugin's) is read as the panel's (runfiles.JudgedFile).
    These rows are an older run's: a run of this release has its rows from its values (results.json
    `judged.stats`: `judged_view`, `stats_rows`)."""
    per_item: dict[str, list[float]] = defaultdict(list)
    counts = dict(base.get("counts") or {})
    if kind == "rubric":
        pairwise = r.get("mode") == "pairwise"
        head, label = ("win_value", "mean game value against the reference (mean of judges)") if pairwise else \
            ("rubric", "rubric score (mean of judges)")
        for vals in (r.get("item_values") or {}).values():
            for i, v in vals.items():
                per_item[i].extend(v[:1])
        final = dict(r["scores"]["final"])  # n: the items judged (an item without a valid verdict is not one)
        final.setdefault("n", r["items"])
        res = {"benchmark": {"name": r["benchmark"], **{k: v for k, v in (base.get("benchmark") or {}).items()
                                                         if k != "name"}},
               "model": {**(base.get("model") or {}), "spec": r["model"]}, "headline": head,
               "metrics": {head: {"keys": ["value", "judged"], "scale": "fraction", "label": label}},
               "scores": {"overall": {head: final}}, "signature": r["signature"],
               "counts": {**counts, "items": r["items"]}, "config": {k: v for k, v in (base.get("config") or {}).items() if k != "phase"},
               "judged": {"kind": "rubric", "judges": list(r["scores"]["judges"])}}
    elif kind == "arena":
        head, label = "candidate_win_value", f"win value against {r['baseline']} (mean of judges)"
        for vals in (r.get("per_prompt") or {}).values():
            for i, v in vals.items():
                per_item[i].append(v)
        final = dict(r["scores"]["final"], n=(r.get("prompts") or {}).get("scored", len(per_item)))
        # every judge asked (the panel after its self-judging skips), whether or not its verdicts
        # could be read: a judge whose every verdict failed is still a setting of the number
        skipped = set(r.get("skipped_judges") or ())
        asked = r.get("judges")
        asked = asked if isinstance(asked, list) and all(isinstance(j, str) for j in asked) else r["scores"]["judges"]
        judges = [j for j in asked if j not in skipped]
        signature = Signature.build(glotbench="arena", baseline=r["baseline"], judges=",".join(judges),
                                    judge_prompt=r.get("judge_prompt_hash", ""),
                                    data=str(r.get("data_sha256") or "")[:12]).format()
        res = {"benchmark": {"name": "arena", "version": str(r.get("judge_prompt_version", ""))},
               "model": {**(base.get("model") or {}), "spec": r["candidate"]}, "headline": head,
               "metrics": {head: {"keys": ["value", "judged"], "scale": "fraction", "label": label}},
               "scores": {"overall": {head: final}}, "signature": signature,
               "counts": {**counts, "items": (r.get("prompts") or {}).get("total", final["n"])},
               "config": {k: v for k, v in (base.get("config") or {}).items() if k != "phase"},
               "judged": {"kind": "arena", "judges": judges, "baseline": r["baseline"]}}
    elif kind == "mt-bench":  # SEA-MT-Bench (benchmarks/sea_mt_bench.py): each question's mean over its turns
        head = "weighted_win_rate"
        for vals in (r.get("turn_values") or {}).values():
            for i, v in vals.items():
                if v:
                    per_item[i].append(sum(v) / len(v))
        s = r["scores"]
        # the questions the run read (its last turn's phase names its own items: "turn 2 of FILE")
        res = {"benchmark": {"name": r["benchmark"], **{k: v for k, v in (base.get("benchmark") or {}).items()
                                                         if k != "name"},
                             **{k: r[k] for k in ("data", "data_sha256") if r.get(k) is not None}},
               "model": {**(base.get("model") or {}), "spec": r["model"]}, "headline": head,
               "metrics": {head: {"keys": ["value", "judged"], "scale": "fraction",
                                  "label": f"SEA-HELM's weighted win rate against {r['baseline']} (mean of judges)"}},
               "scores": {"overall": {head: dict(s["final"])},
                          "groups": {"turn": {t: {head: dict(e)} for t, e in s["turns"].items()},
                                     "category": {c: {head: dict(e)} for c, e in s["categories"].items()}}},
               "signature": r["signature"], "counts": {**counts, "items": r["items"]},
               "config": {k: v for k, v in (base.get("config") or {}).items() if k != "phase"},
               "task": {"language": r["language"]},
               "judged": {"kind": "mt-bench", "judges": list(s["judges"]), "baseline": r["baseline"]}}
    elif kind not in JUDGED_SCHEMAS:  # a plugin's: the panel's summary (judges/pipeline.py panel_summary)
        head = r["headline"]  # its rows: judged_view's, from its values (`stats_rows`)
        res = {"benchmark": {"name": r["benchmark"], **{k: v for k, v in (base.get("benchmark") or {}).items()
                                                         if k != "name"}},
               "model": {**(base.get("model") or {}), "spec": r["model"]}, "headline": head,
               "metrics": {head: {"keys": ["value", "judged"], "scale": "fraction",
                                  "label": r.get("label") or f"{head} (mean of judges)"}},
               "scores": {"overall": {head: dict(r["scores"]["final"])}}, "signature": r["signature"],
               "counts": {**counts, "items": r["items"]},
               "config": {k: v for k, v in (base.get("config") or {}).items() if k != "phase"},
               "judged": {"kind": kind, "judges": list(r["scores"]["judges"]),
                          **({"baseline": r["baseline"]} if r.get("baseline") else {})}}
    else:  # aragen
        head = "3c3h"
        for vals in (r.get("item_scores") or {}).values():
            for i, v in vals.items():
                per_item[i].append(v)
        combined = r.get("mean_of_judges") or {}
        final = dict(combined.get("3c3h") or {"value": None})
        final.setdefault("n", combined.get("n", r.get("entries")))
        if not counts:  # answers replayed from a file: no candidate call was made
            counts = {"samples": r.get("entries", 0), "items": r.get("entries", 0), "failed": len(r.get("no_answer") or ()),
                      "model_calls": 0, "retries": 0, "cache_hits": 0}
        res = {"benchmark": {"name": "aragen", **({"version": str(r["version"])} if "version" in r else {})},
               "model": {**(base.get("model") or {}), "spec": r["model"]}, "headline": head,
               "metrics": {head: {"keys": ["value", "judged"], "scale": "fraction", "label": aragen_label(combined)}},
               "scores": {"overall": {head: final}}, "signature": r.get("signature", ""),
               "counts": {**counts, "items": r.get("entries", 0)}, "config": {k: v for k, v in (base.get("config") or {}).items() if k != "phase"},
               "judged": {"kind": "aragen", "judges": list(r.get("per_judge") or {})}}
    for key in ("selection", "validity", "data_label", "started", "finished", "task", "status", "judge_validation"):
        if key in r or key in base:
            res[key] = r.get(key, base.get(key))
    # the candidate's own tokens and cost (its answers: the judges' calls are not the candidate's)
    res["tokens"] = base.get("tokens") or {"prompt": 0, "completion": 0}
    res.update({k: base[k] for k in ("cost", "timing") if base.get(k)})
    rows = [{"id": i, "score": {"value": sum(v) / len(v), "judged": 1.0}} for i, v in per_item.items() if v]
    return res, rows


def stats_rows(stats: JudgedStats) -> list[dict[str, Any]]:
    """A judged run's per-item rows (the board's paired tests) from its values: each item's mean over
    the judges that judged it."""
    return [{"id": i, "score": {"value": v, "judged": 1.0}} for i, v in stats.item_means().items()]


def judged_view(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A judged run's top directory as the candidate's run, and its per-item rows (`view_of`): its
    results.json is that view already; an older run's summary file (arena.json, aragen.json,
    rubric.json) is read into it, over its candidate's answers' results where they are."""
    data = load_run(path)
    r, d = data.results, data.path
    if data.kind == "run":
        raise GlotbenchError(f"{d} is not a judged run")
    if (d / RESULTS).is_file():
        record = read_results(d)
        stats = (record.get("judged") or {}).get("stats")
        if stats is not None:  # every judged run of this release, whatever its kind: the rows from its values
            return record, stats_rows(JudgedStats.read(stats, f"{d / RESULTS}: judged.stats"))
        return record, view_of(data.kind, r, {})[1]
    answers = d / {"rubric": Path(str(r.get("answers_run") or "answers")).name, "arena": "candidate"}.get(data.kind, "")
    base = read_results(answers) if data.kind != "aragen" and (answers / RESULTS).is_file() else {}
    return view_of(data.kind, r, base)


@dataclass(frozen=True)
class JudgedPairing:
    """Judged runs' per-item rows in one column layout (`keys`), the score of their sum (`score`: the
    declared rule's mean of judges) and what that is, in words (`paired_on`): compare and the board
    pair judged runs on these, so their figures are the runs' judged headlines."""

    rows: list[dict[str, dict[str, float]]]
    keys: tuple[str, ...]
    score: Callable[[np.ndarray], float]
    paired_on: str


def aragen_label(combined: Mapping[str, Any]) -> str:
    """An AraGen run's headline label: the jury its `mean_of_judges` record was combined by
    (`average` and `vote` are per item over the judges, not the mean of the judges' scores)."""
    jury = combined.get("strategy") or "mean"
    return "3C3H (mean of judges)" if jury == "mean" else f"3C3H (jury: {jury})"


def judged_pairing(results: Sequence[Mapping[str, Any]]) -> JudgedPairing | None:
    """Each run's per-item rows under its declared rule (results.json `judged.stats` and
    `judged.rule`: judges/stats.py `judged_rows`), in one column layout, and the rule's `final` (the
    mean of judges) as the paired score: the figure over every item is the run's judged `final`. None
    where a run lacks the record (an older run) or the runs' rules, judges or clusters differ
    (`judged_pairing_or_why` says which)."""
    got = judged_pairing_or_why(results)
    return None if isinstance(got, str) else got


def judged_pairing_or_why(results: Sequence[Mapping[str, Any]]) -> JudgedPairing | str:
    """`judged_pairing`, or why the runs cannot be paired on their judged rule (compare says it
    beside the figure it pairs on instead)."""
    recs = [r.get("judged") or {} for r in results]
    if any("stats" not in j or "rule" not in j for j in recs):
        return "a run written before results.json's judged.rule"
    rules = [JudgedMetrics.read(j["rule"], f"{r['model']['spec']}: judged.rule") for j, r in zip(recs, results)]
    stats = [JudgedStats.read(j["stats"], f"{r['model']['spec']}: judged.stats") for j, r in zip(recs, results)]
    order = stats[0].judges
    if any(rl != rules[0] for rl in rules):
        return "the runs' judged rules differ: " + "; ".join(rl.words() for rl in dict.fromkeys(rules))
    if any(set(st.judges) != set(order) for st in stats):
        return "the runs' judges differ"
    built = [judged_rows(st.model_copy(update={"judges": order}), rules[0]) for st in stats]
    if any(b.clusters != built[0].clusters for b in built):
        return "the runs' clusters differ"
    final = built[0].fns["final"]

    def score(row: np.ndarray) -> float:
        v = final(row)
        return v if v == v else 0.0  # no judged item in a resample: as an item ratio's empty count

    keys = tuple(f"c{k}" for k in range(built[0].rows.shape[1]))
    rows = [{i: dict(zip(keys, map(float, row))) for i, row in zip(b.items, b.rows)} for b in built]
    return JudgedPairing(rows, keys, score, f"the run's judged rule: {rules[0].words()}")


def run_results(path: str | Path) -> dict[str, Any]:
    """A finished run's results: results.json, or a judged run's view (`judged_view`)."""
    d = Path(path)
    if not (d / RESULTS).is_file() and judged_kind(d) is not None:
        return judged_view(d)[0]
    return check_judged(d, read_results(d))


def judged_notes(path: str | Path) -> list[str]:
    """The notes of a judged run's top directory (invalid phases, judges not validated for the
    language), for the board's list of judged runs; none when it cannot be read."""
    from glotbench.rundir.validity import notes

    try:
        return notes(load_run(path).results)
    except GlotbenchError:
        return []


def unfinished_why(phases: list[Path]) -> str:
    """What to do about a judged run whose phases are there and its results.json is not: a phase
    stopped by `--max-cost` is named, as the run's own error line named it."""
    stopped = []
    for c in phases:
        try:
            if json.loads((c / RESULTS).read_text(encoding="utf-8")).get("status") == "stopped":
                stopped.append(c.name)
        except (OSError, ValueError, AttributeError):
            continue
    if stopped:
        return (f"its {', '.join(sorted(stopped))} phase was stopped by --max-cost: raise --max-cost and run the "
                "same command again to finish it (what was answered comes from the cache)")
    return "run the same command again to finish it"


def latest_run(path: str | Path) -> Path:
    """`path` itself when it is a run; else the most recently finished run directly under it."""
    d = Path(path)
    if any((d / n).is_file() for n in (RESULTS, RUN_JSON, *JUDGED_FILES.values())) or not d.is_dir():
        return d
    dirs = [c for c in d.iterdir() if c.is_dir()]
    phases = [c for c in dirs if judged_phase(c)]  # a judged run's candidate or judge: never the run itself
    done = [c for c in dirs if c not in phases and ((c / RESULTS).is_file() or any(
        (c / n).is_file() for n in JUDGED_FILES.values()))]
    if not done and phases:
        raise GlotbenchError(f"{d} is a judged run that did not finish: its phases ({', '.join(sorted(c.name for c in phases))}) "
                             f"are there, its results.json is not; {unfinished_why(phases)}")
    if not done:
        raise GlotbenchError(f"{d} holds no finished run")
    return max(done, key=lambda c: max(f.stat().st_mtime for f in c.iterdir() if f.suffix == ".json"))


def iter_samples(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The samples.jsonl rows, each checked against ReportSampleRow, as the dicts the file holds; a
    finished run's file with fewer or more rows than its results.json counts (`counts.samples`: a
    file emptied, or cut at a line's end) is one GlotbenchError line, never a view of what is left."""
    rows = read_samples(run_dir, ReportSampleRow)
    samples_counted(run_dir, len(rows))
    yield from rows


def check_samples(run_dir: Path) -> None:
    """Reads a run's samples.jsonl through (nothing kept): GlotbenchError naming the first bad line (a
    line cut off, as a copy or a full disk leaves it), before a view has drawn half its tables."""
    for _ in iter_samples(run_dir):
        pass


def item_stats(samples: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per-item statistics summed over repeats (what the bootstrap and the paired tests resample),
    the learned metric's stored score among them (metrics/learned.py `sample_stats`)."""
    from glotbench.metrics.learned import check_samples, sample_stats

    check_samples(samples, SAMPLES)
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for rec in samples:
        for k, v in rec["score"].items():
            rows[rec["id"]][k] += float(v)
        for k, v in sample_stats(rec).items():
            rows[rec["id"]][k] += v
    return rows


def run_item_stats(results: dict[str, Any], samples: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per-item statistics as the run's aggregate scored them: a circular run's rotations combined
    per original item (benchmarks/circular.py), else `item_stats`. Every paired view (board, diff,
    plan) reads a run's items through here, so a rotation is never counted as an item."""
    from glotbench.checks.circular import item_stats as circular

    return circular(results, samples) or item_stats(samples)


def item_clusters(results: dict[str, Any], samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Each item's cluster (its meta value under the run's cluster field, `scores.clusters.key`), or
    None for a run without one: paired tests then resample and swap whole clusters."""
    key = ((results.get("scores") or {}).get("clusters") or {}).get("key")
    if not key:
        return None
    return {rec["id"]: (rec.get("meta") or {}).get(key) for rec in samples}


def metric_keys(results: dict[str, Any], name: str) -> list[str]:
    return list(results["metrics"][name]["keys"])


def score_fn(results: dict[str, Any], name: str) -> Callable[[np.ndarray], float]:
    """The metric's formula on a summed statistics row: the benchmark's own metric object when the
    benchmark is registered (corpus metrics need it), the learned metric's mean segment score, else a
    ratio of its two statistics."""
    from glotbench.metrics.learned import stored_metric

    learned = stored_metric(results)
    if learned is not None and learned.name == name:
        return learned.score
    try:
        bench = bench_of(results)
        for m in bench.metrics:
            if m.name == name and list(m.keys) == metric_keys(results, name):
                return m.score
    except Exception:  # noqa: BLE001 - an unknown or changed benchmark: fall back to the ratio rule
        pass
    keys = metric_keys(results, name)
    if len(keys) != 2:
        raise GlotbenchError(f"metric {name} of {results['benchmark']['name']} needs its benchmark to be scored")
    f = 100.0 if results["metrics"][name].get("scale") == "points" else 1.0
    return lambda row: float(f * row[0] / row[1]) if row[1] > 0 else 0.0


def outcome(rec: dict[str, Any], keys: list[str]) -> str | None:
    """correct / partial / incorrect for a ratio headline (numerator over denominator); None when the
    headline is not a per-item ratio (corpus metrics)."""
    if len(keys) != 2:
        return None
    num, den = (float(rec["score"].get(k, 0.0)) for k in keys)
    if rec.get("failure") or den <= 0 or num <= 0:
        return "incorrect"
    return "correct" if num >= den else "partial"


def references(results: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str]:
    """Each item's gold, loaded again from the run's data file, and a note for the page. Only when the
    file's SHA-256 still matches the run's: otherwise the references could belong to other items."""
    bench_info = results.get("benchmark", {})
    source = bench_info.get("data")
    try:
        bench = bench_of(results)  # a task run: from its kept copy
        items = bench.load(data_path_of(bench_info))
    except Exception as e:  # noqa: BLE001 - the page says why it shows no references
        return {}, f"references not shown: the data could not be loaded again ({type(e).__name__}: {e})"
    if getattr(items, "sha256", None) != bench_info.get("data_sha256"):
        return {}, f"references not shown: {source} changed since the run (SHA-256 differs)"
    return {it.id: dict(it.gold) for it in items}, f"references from {source} (SHA-256 verified)"


def signature_difference(a: str, b: str) -> str:
    diff = Signature.parse(a).difference(b)
    return "; ".join(f"{k} {'∅' if x is None else x} ≠ {'∅' if y is None else y}" for k, x, y in diff) or "signatures differ"
