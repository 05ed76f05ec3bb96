"""`glotbench arena`: a candidate against a fixed baseline, judged pairwise by one or more judges.

Three phases, each an ordinary run (cached, resumable, with its own run directory under OUT):
answers of the candidate, answers of the baseline (a model, or `replay:FILE` for answers made
elsewhere), then each judge's games (both orders). A judge that is the candidate is skipped, and
with `--skip-same-family` one of its family (self-preference; the panel's `SelfJudging`, as AraGen). OUT/results.json is the candidate's judged run; its `judged` section's summary holds the final
score, each judge's score, CIs over prompts, coverage, position consistency and the failures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from glotbench.benchmarks.arena import LaoBenchArena
from glotbench.core import Dataset, RunResult
from glotbench.engine.evaluate import RunOptions
from glotbench.engine.judged import run_declared
from glotbench.errors import GlotbenchError
from glotbench.judges.pairwise import account_prompts
from glotbench.judges.panel import SelfJudging
from glotbench.models.base import Model
from glotbench.rundir.selection import comparability, describe_item_set
from glotbench.rundir.validity import validity_text
from glotbench.runfiles import ArenaHumanRow, ArenaScores, read_judged, read_unique_rows


@dataclass(frozen=True)
class ArenaResult:
    out_dir: Path
    results: dict[str, Any]  # results.json's judged summary
    answers: RunResult | None = None  # the candidate's judged run (its samples: the candidate's answers)


async def run_arena(candidate: str | Model, baseline: str, judges: list[str], options: RunOptions, *,
                    unanswered: str = "loss", single_order: str = "fail",
                    self_judging: SelfJudging = SelfJudging(), judge_cards: str | None = None,
                    dataset: Dataset | None = None) -> ArenaResult:
    """`laobench-arena`'s judged run (benchmarks/arena.py declares it, engine/judged.py runs it) with
    its settings as arguments: `unanswered` and `single_order` are the named policies of
    `judges.pairwise.account_prompts`; `self_judging` says which judges are the candidate.
    `dataset`: the prompts, already loaded (default: the bundled ones, or `options.data`). `candidate`:
    a spec, or a model object (a service's guarded endpoint), closed once its answers are in."""
    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    account_prompts([], {"candidate": set(), "baseline": set()}, {}, unanswered=unanswered,
                    single_order=single_order)  # check the policy names before any model call
    bench = LaoBenchArena(baseline, unanswered, single_order)
    bench.panel_policy = self_judging
    res, summary = await run_declared(bench, candidate, replace(options, judge_cards=judge_cards), dataset, judges)
    return ArenaResult(res.out_dir, dict(summary), res)


def cross_judge_report(arena_dirs: list[str], human: str | None = None) -> dict[str, Any]:
    """Across arenas (one candidate each, same baseline and judges): each judge's score per model,
    the spread between judges, Spearman and Kendall correlations of the judges' model rankings, and,
    given human verdicts ({"candidate", "prompt_id", "winner": candidate|baseline|tie} per line), each
    judge's agreement rate and Cohen's kappa with them."""
    from glotbench.stats import cohens_kappa, kendall, spearman

    runs = [read_judged(d, "arena", ArenaScores, "a finished arena") for d in arena_dirs]
    # Each judge's model ranking compares arenas: on one item set only (rundir/selection.py).
    sets = {(r.get("data_sha256"), comparability({"signature": "", **r})[1]) for r in runs}
    if len(sets) > 1:
        raise GlotbenchError("the arenas scored different item sets, so their numbers are not comparable: "
                             + "; ".join(f"{d}: {describe_item_set(r)}" for d, r in zip(arena_dirs, runs))
                             + " (run every arena on the same data and --limit)")
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
    invalid = {r["candidate"]: text for r in runs if (text := validity_text(r))}
    if invalid:  # beside the numbers: the arenas that do not measure their candidate, and why
        out["invalid"] = invalid
    if human:
        rows = read_unique_rows(human, ArenaHumanRow, lambda r: (f"candidate {r.candidate}", f"prompt {r.prompt_id}"),
                                "one JSON object per line: candidate, prompt_id, winner")
        labels = {(r.candidate, r.prompt_id): r.winner for _, r in rows}
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
