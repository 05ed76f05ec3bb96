"""`glotbench arena`: a candidate against a fixed baseline, judged pairwise by one or more judges.

Three phases, each an ordinary run (cached, resumable, with its own run directory under OUT):
answers of the candidate, answers of the baseline (a model, or `replay:FILE` for answers made
elsewhere), then each judge's games (both orders). A judge that is the candidate is skipped
(self-preference). `arena.json` holds the final score, each judge's score, CIs over prompts,
coverage, position consistency and the failures.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from glotbench.benchmarks.arena import ArenaPrompts, JudgeGames, validate_verdict
from glotbench.engine.evaluate import RunOptions, _slug, _write_json_atomic, evaluate_async
from glotbench.errors import GlotbenchError
from glotbench.report.judged import print_arena  # noqa: F401 - the CLI's import path
from glotbench.judges.panel import mean_of_judges, run_panel, same_model
from glotbench.registry import load_model


@dataclass(frozen=True)
class ArenaResult:
    out_dir: Path
    results: dict[str, Any]


async def run_arena(candidate: str, baseline: str, judges: list[str], options: RunOptions) -> ArenaResult:
    """Candidate and baseline answer phases, then the judge panel over the games; phases pass their
    samples in memory (the call cache makes a re-run resume)."""
    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    out = Path(options.out or f"runs/arena/{datetime.now():%Y%m%d-%H%M%S}-{_slug(candidate)}")
    if (out / "arena.json").exists():
        raise GlotbenchError(f"{out} already holds a finished arena; choose another --out")
    bench = ArenaPrompts()
    prompts = bench.load(options.data)[: options.limit]
    phase = replace(options, out=None, data=None, limit=None)
    answers: dict[str, dict[str, str]] = {}
    for role, spec in (("candidate", candidate), ("baseline", baseline)):
        res = await evaluate_async(bench, spec, replace(phase, out=str(out / role)), dataset=prompts)
        answers[role] = {k: v for k, v in res.answers().items() if v}
    cand_model = load_model(candidate)
    games = JudgeGames.build(prompts, answers["candidate"], answers["baseline"])
    panel = await run_panel(JudgeGames(), games, judges, replace(phase, repeats=1), out,
                            validate=validate_verdict, what="verdict",
                            skip=lambda spec, judge: same_model(judge, cand_model))
    await cand_model.aclose()
    values: dict[str, dict[str, list[float]]] = {}
    failures, consistency, ties = {}, {}, {}
    for spec, res in panel.runs.items():
        per_prompt: dict[str, list[float]] = defaultdict(list)
        by_order: dict[str, dict[str, float]] = defaultdict(dict)
        for smp in res.samples:
            if smp.failure is None:
                pid = smp.meta["prompt_id"]
                per_prompt[pid].append(smp.stats["value"])
                by_order[pid][smp.meta["order"]] = smp.stats["value"]
        failures[spec] = res.results["counts"]["failures"]
        if per_prompt:  # a judge with no valid verdict at all is reported by its failures only
            values[spec] = per_prompt
        both = [v for v in by_order.values() if len(v) == 2]
        consistency[spec] = sum(v["0"] == v["1"] for v in both) / len(both) if both else None
        games_done = [x for v in per_prompt.values() for x in v]
        ties[spec] = sum(x == 0.5 for x in games_done) / len(games_done) if games_done else None
    skipped = panel.skipped
    if not values:
        raise GlotbenchError("no judge produced a valid verdict (skipped: "
                             f"{', '.join(skipped) or 'none'}; failures: {failures})")
    ids = [p.id for p in prompts if p.id in answers["candidate"] and p.id in answers["baseline"]]
    scores = mean_of_judges(values, ids, resamples=options.bootstrap_resamples)
    results = {
        "candidate": candidate, "baseline": baseline, "judges": judges, "skipped_judges": skipped,
        "scores": scores, "failures": failures, "position_consistency": consistency, "tie_rate": ties,
        "prompts": {"total": len(prompts), "answered_by_both": len(ids)},
        "rules": "win 1, tie 0.5, loss 0; two orders averaged per prompt; mean over prompts per judge; "
                 "mean over judges; 95% percentile bootstrap over prompts",
        "per_prompt": {j: {pid: sum(v) / len(v) for pid, v in vals.items()} for j, vals in values.items()},
        "judge_prompt_version": JudgeGames.version, "judge_prompt_hash": JudgeGames().prompt_hash(games),
        "data": prompts.source, "data_sha256": prompts.sha256,
    }
    _write_json_atomic(out / "arena.json", results)
    return ArenaResult(out, results)


def cross_judge_report(arena_dirs: list[str], human: str | None = None) -> dict[str, Any]:
    """Across arenas (one candidate each, same baseline and judges): each judge's score per model,
    the spread between judges, Spearman and Kendall correlations of the judges' model rankings, and,
    given human verdicts ({"candidate", "prompt_id", "winner": candidate|baseline|tie} per line), each
    judge's agreement rate and Cohen's kappa with them."""
    from glotbench.stats import cohens_kappa, kendall, spearman

    runs = []
    for d in arena_dirs:
        p = Path(d) / "arena.json"
        if not p.is_file():
            raise GlotbenchError(f"{d} is not a finished arena (no arena.json)")
        runs.append(json.loads(p.read_text(encoding="utf-8")))
    judges = sorted({j for r in runs for j in r["scores"]["judges"]})
    table = {r["candidate"]: {j: r["scores"]["judges"].get(j, {}).get("value") for j in judges} for r in runs}
    spread = {m: (max(v for v in row.values() if v is not None) - min(v for v in row.values() if v is not None))
              if any(v is not None for v in row.values()) else None for m, row in table.items()}
    correlations = {}
    models = list(table)
    for i, a in enumerate(judges):
        for b in judges[i + 1:]:
            common = [m for m in models if table[m][a] is not None and table[m][b] is not None]
            if len(common) >= 2:
                xa, xb = [table[m][a] for m in common], [table[m][b] for m in common]
                correlations[f"{a} ~ {b}"] = {"models": len(common), "spearman": spearman(xa, xb)[0],
                                              "kendall": kendall(xa, xb)[0]}
    out: dict[str, Any] = {"scores": table, "judge_spread": spread, "rank_correlations": correlations}
    if human:
        labels: dict[tuple[str, str], str] = {}
        from glotbench.loading import read_jsonl

        for n, rec in read_jsonl(human):
            if rec.get("winner") not in ("candidate", "baseline", "tie"):
                raise GlotbenchError(f"{human}:{n}: winner must be candidate, baseline or tie")
            labels[(str(rec.get("candidate")), str(rec.get("prompt_id")))] = rec["winner"]
        agreement = {}
        for j in judges:
            pairs = []
            for r in runs:
                for pid, v in r.get("per_prompt", {}).get(j, {}).items():
                    h = labels.get((r["candidate"], pid))
                    if h is not None:
                        pairs.append((h, "candidate" if v > 0.5 else "baseline" if v < 0.5 else "tie"))
            if pairs:
                agreement[j] = {"n": len(pairs), "agreement": sum(h == g for h, g in pairs) / len(pairs),
                                "cohens_kappa": cohens_kappa([h for h, _ in pairs], [g for _, g in pairs])}
        out["human_agreement"] = agreement
    return out
