"""`glotbench aragen`: generate answers as the AraGen release does, judge them with one or more 3C3H
judges, and combine the judges. Each phase is an ordinary run (cached, resumable) under OUT."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from glotbench.benchmarks.aragen import (
    AraGenAnswers,
    AraGenJudging,
    answer_dataset,
    judging_dataset,
    load_entries,
    validate_judgement,
)
from glotbench.core import Sample, jsonable
from glotbench.engine.evaluate import RunOptions, _slug, _write_json_atomic, evaluate_async
from glotbench.errors import GlotbenchError
from glotbench.report.judged import print_aragen  # noqa: F401 - the CLI's import path
from glotbench.judges.panel import mean_of_judges, model_family, run_panel
from glotbench.judges.rubric import DIMENSIONS


async def run_aragen(model: str, judges: list[str], options: RunOptions, *, policy: str = "drop",
                     skip_same_family: bool = False, judge_repeats: int = 1,
                     judge_temperature: float = 0.0) -> dict[str, Any]:
    """Both answer passes, then the judge panel; phases pass their samples in memory (the call
    cache makes a re-run resume)."""
    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    entries, source, digest = load_entries(options.data)
    entries = entries[: options.limit]
    out = Path(options.out or f"runs/aragen/{datetime.now():%Y%m%d-%H%M%S}-{_slug(model)}")
    if (out / "aragen.json").exists():
        raise GlotbenchError(f"{out} already holds a finished AraGen run; choose another --out")
    phase = replace(options, out=None, data=None, limit=None, repeats=1)
    gen = AraGenAnswers()
    first_set = answer_dataset(entries, source, digest)
    first = await evaluate_async(gen, model, replace(phase, out=str(out / "answers-1")), dataset=first_set)
    ans1 = {k: v for k, v in first.answers().items() if v}
    answers: dict[str, list[str]] = {sn: [a] for sn, a in ans1.items()}
    if any(e.round == 2 and e.sn in ans1 for e in entries):
        second = await evaluate_async(gen, model, replace(phase, out=str(out / "answers-2")),
                                      dataset=answer_dataset(entries, source, digest, own=ans1))
        for sn, a in second.answers().items():
            if a:
                answers[sn].append(a)
    task = AraGenJudging(policy)
    games = judging_dataset(entries, answers, source, digest)
    panel = await run_panel(task, games, judges, replace(phase, repeats=judge_repeats, temperature=judge_temperature),
                            out, validate=validate_judgement, what="3C3H verdict",
                            skip=lambda spec, judge: skip_same_family and model_family(spec) == model_family(model))
    skipped = panel.skipped
    if not panel.runs:
        raise GlotbenchError(f"every judge was skipped as the candidate's family ({model_family(model)})")
    per_judge: dict[str, Any] = {}
    values: dict[str, dict[str, list[float]]] = {}
    for spec, res in panel.runs.items():
        by_item: dict[str, list[Sample]] = defaultdict(list)
        for smp in res.samples:
            by_item[smp.id].append(smp)
        scored = {i: [x.stats["3c3h"] for x in rs if x.failure is None] for i, rs in by_item.items()}
        values[spec] = {i: v for i, v in scored.items() if v}
        consistency = [statistics.pstdev(v) for v in scored.values() if len(v) >= 2]
        n_samples = sum(len(v) for v in by_item.values())
        breaks = sum(x.stats.get("breaks_zeroing", 0) for rs in by_item.values() for x in rs)
        fails = res.results["counts"]["failures"]
        per_judge[spec] = {
            "scores": res.results["scores"],
            "coverage": res.results["scores"]["overall"]["coverage"]["value"],
            "failures": fails,
            "parse_failure_rate": sum(fails.values()) / n_samples if n_samples else None,
            "zeroing_break_rate": breaks / n_samples if n_samples else None,
            "consistency_std": statistics.fmean(consistency) if consistency else None,
            "first_verdicts": {i: jsonable(rs[0].answer) for i, rs in by_item.items() if rs[0].answer is not None},
        }
    item_scores = {j: {i: statistics.fmean(v) for i, v in vals.items()} for j, vals in values.items()}
    judged = [j for j in per_judge if values[j]]  # judges with at least one valid verdict
    if not judged:
        raise GlotbenchError(f"no judge produced a valid verdict: {({j: p['failures'] for j, p in per_judge.items()})}")
    ids = sorted({i for j in judged for i in values[j]})
    panel_scores = mean_of_judges({j: values[j] for j in judged}, ids, resamples=options.bootstrap_resamples)
    valid = [j for j in judged if per_judge[j]["scores"]["overall"]["3c3h"]["value"] is not None]
    overall = {d: statistics.fmean(per_judge[j]["scores"]["overall"][d.lower()]["value"] for j in valid)
               if valid else None for d in DIMENSIONS}
    results = {
        "model": model, "judges": judges, "skipped_judges": skipped, "policy": policy,
        "data": source, "data_sha256": digest, "entries": len(entries),
        "answered": {"first": len(ans1), "followups_second": sum(len(a) == 2 for a in answers.values())},
        "mean_of_judges": {"3c3h": panel_scores["final"], "dimensions": overall},
        "per_judge": per_judge, "item_scores": item_scores,
        "signature": f"glotbench:aragen|v:{AraGenJudging.version}|prompt:{task.prompt_hash(games)}|"
                     f"gen:{gen.prompt_hash(first_set)}|policy:{policy}|followup:2:1|scale:(v-1)/4|"
                     f"judges:{','.join(_slug(j) for j in judged)}|data:{digest[:12]}",
    }
    _write_json_atomic(out / "aragen.json", results)
    results["out_dir"] = str(out)
    return results
