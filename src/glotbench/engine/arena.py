"""`glotbench arena`: a candidate against a fixed baseline, judged pairwise by one or more judges.

Three phases, each an ordinary run (cached, resumable, with its own run directory under OUT):
answers of the candidate, answers of the baseline (a model, or `replay:FILE` for answers made
elsewhere), then each judge's games (both orders). A judge that is the candidate is skipped, and
with `--skip-same-family` one of its family (self-preference; the panel's `SelfJudging`, as AraGen). OUT/results.json is the candidate's judged run; its `judged` section's summary holds the final
score, each judge's score, CIs over prompts, coverage, position consistency and the failures.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from glotbench.benchmarks.arena import SINGLE_ORDER_POLICIES, UNANSWERED_POLICIES, ArenaPrompts, JudgeGames, LaoBenchArena
from glotbench.core import Dataset, RunResult
from glotbench.engine.evaluate import RunOptions, evaluate_async
from glotbench.engine.panel import check_judged_options, phase_options, run_panel, write_judged
from glotbench.errors import GlotbenchError
from glotbench.judges.cards import validation
from glotbench.judges.panel import SelfJudging, mean_of_judges, select_judges
from glotbench.models.base import Model
from glotbench.rundir import OLD_SUMMARIES, RESULTS, read_results, set_aside_invalid, slug
from glotbench.rundir.selection import comparability, describe_item_set, select
from glotbench.rundir.validity import combine, validity_text
from glotbench.registry import load_model
from glotbench.runfiles import ArenaHumanRow, ArenaScores, read_judged, read_unique_rows


@dataclass(frozen=True)
class ArenaResult:
    out_dir: Path
    results: dict[str, Any]
    answers: RunResult | None = None  # the candidate's answers phase


async def judged_result(bench: LaoBenchArena, model: str | Model, options: RunOptions,
                        dataset: Dataset | None = None) -> RunResult:
    """`evaluate_async`'s dispatch of `laobench-arena` (a judged benchmark, `judge_pipeline` arena):
    its options are the benchmark's (baseline, unanswered, single_order, skip_same_family, families),
    its judges the run's (`--judge`); the result is the candidate's judged run (results.json, the
    mean of judges its headline; no judge a model of it), its samples the candidate's answers."""
    if bench.baseline is None:
        raise GlotbenchError(f"{bench.name} needs a baseline: --bench-opt baseline=SPEC (a model spec, or "
                             "replay:FILE.jsonl of its answers)")
    judges = list(options.judges or bench.default_judges)
    check_judged_options(bench.name, options)
    res = await run_arena(model, bench.baseline, judges, phase_options(options), unanswered=bench.unanswered,
                          single_order=bench.single_order,
                          self_judging=SelfJudging.declared(bench.skip_same_family, bench.families),
                          judge_cards=options.judge_cards, dataset=dataset)
    answers = res.answers
    return RunResult(res.out_dir, read_results(res.out_dir), answers.samples if answers else (),
                     answers.dataset if answers else None)


ARENA_LANGUAGE = ArenaPrompts.language  # the judge prompt (judges/pairwise.py) asks about answers for Lao-speaking users


@dataclass(frozen=True)
class PromptAccounting:
    """Per judge, the values each prompt enters the score with, and what happened to every prompt."""

    values: dict[str, dict[str, list[float]]]  # judge -> prompt -> values (one per order)
    ids: list[str]  # the prompts in the denominator
    unanswered: dict[str, list[str]]  # "candidate" / "baseline" / "both" -> prompt ids
    dropped: list[str]  # unanswered prompts left out (policy "drop")
    failed: dict[str, list[str]]  # judge -> prompts without both valid orders (policy "fail") or with none
    single_order: dict[str, list[str]]  # judge -> prompts scored from one order (policy "accept")
    consistency: dict[str, dict[str, Any]]  # judge -> {"value", "prompts"}


def account_prompts(prompt_ids: list[str], answered: dict[str, set[str]],
                    by_order: dict[str, dict[str, dict[str, float]]], *, unanswered: str = "loss",
                    single_order: str = "fail") -> PromptAccounting:
    """The arena's arithmetic over every prompt (the seed's formula averages over all N prompts).

    An unanswered prompt (missing or empty answer, or an error) is, with `unanswered="loss"`, a loss
    for the candidate when only the candidate failed, a win when only the baseline failed, a tie when
    both did, for every judge; with "drop" it leaves the denominator and is listed. A judged prompt
    needs both orders: with `single_order="fail"` one valid order counts the prompt as failed for
    that judge (listed, not scored); with "accept" it is scored from that order and flagged.
    Position consistency is over the prompts with both orders, and says how many those are."""
    if unanswered not in UNANSWERED_POLICIES:
        raise GlotbenchError(f"--unanswered must be one of {', '.join(UNANSWERED_POLICIES)}, got {unanswered!r}")
    if single_order not in SINGLE_ORDER_POLICIES:
        raise GlotbenchError(f"--single-order must be one of {', '.join(SINGLE_ORDER_POLICIES)}, got {single_order!r}")
    missing = {"candidate": [], "baseline": [], "both": []}  # type: dict[str, list[str]]
    forfeit: dict[str, float] = {}
    for pid in prompt_ids:
        c, b = pid in answered["candidate"], pid in answered["baseline"]
        if not (c and b):
            kind = "both" if not (c or b) else "candidate" if not c else "baseline"
            missing[kind].append(pid)
            forfeit[pid] = {"candidate": 0.0, "baseline": 1.0, "both": 0.5}[kind]
    dropped = list(forfeit) if unanswered == "drop" else []
    ids = [p for p in prompt_ids if p not in dropped]
    values: dict[str, dict[str, list[float]]] = {}
    failed: dict[str, list[str]] = {}
    single: dict[str, list[str]] = {}
    consistency: dict[str, dict[str, Any]] = {}
    for judge, orders_of in by_order.items():
        vals: dict[str, list[float]] = {}
        failed[judge], single[judge] = [], []
        agree = both = 0
        for pid in ids:
            if pid in forfeit:
                vals[pid] = [forfeit[pid]]
                continue
            orders = orders_of.get(pid, {})
            if len(orders) == 2:
                vals[pid] = [orders["0"], orders["1"]]
                both += 1
                agree += orders["0"] == orders["1"]
            elif len(orders) == 1 and single_order == "accept":
                vals[pid] = list(orders.values())
                single[judge].append(pid)
            else:
                failed[judge].append(pid)
        if any(p not in forfeit for p in vals):  # a judge with no valid verdict is reported by its failures
            values[judge] = vals
        consistency[judge] = {"value": agree / both if both else None, "prompts": both}
    return PromptAccounting(values, ids, missing, dropped, failed, single, consistency)


async def run_arena(candidate: str | Model, baseline: str, judges: list[str], options: RunOptions, *,
                    unanswered: str = "loss", single_order: str = "fail",
                    self_judging: SelfJudging = SelfJudging(), judge_cards: str | None = None,
                    dataset: Dataset | None = None) -> ArenaResult:
    """Candidate and baseline answer phases, then the judge panel over the games; phases pass their
    samples in memory (the call cache makes a re-run resume). `unanswered` and `single_order` are
    the named policies of `account_prompts`; `self_judging` says which judges are the candidate.
    `dataset`: the prompts, already loaded (default: the bundled ones, or `options.data`). `candidate`:
    a spec, or a model object (a service's guarded endpoint): its answers phase uses and closes it."""
    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    account_prompts([], {"candidate": set(), "baseline": set()}, {}, unanswered=unanswered,
                    single_order=single_order)  # check the policy names before any model call
    given = candidate  # the candidate's answers phase runs this: the spec, or the object itself
    candidate = candidate if isinstance(candidate, str) else candidate.spec
    out = Path(options.out or f"runs/arena/{datetime.now():%Y%m%d-%H%M%S}-{slug(candidate)}")
    # a finished valid arena: an error; an invalid or unfinished one is kept aside and runs again
    set_aside_invalid(out, RESULTS, ("candidate", "baseline"), older=(OLD_SUMMARIES["arena"],))
    cand_model = load_model(candidate) if isinstance(given, str) else given
    base_model = load_model(baseline)
    active: list[str] = []
    try:
        active, skipped = await select_judges(judges, candidate, cand_model, options, self_judging,
                                              contestants=(base_model,))
    finally:
        await base_model.aclose()
        if isinstance(given, str) or not active:  # an object given is the answers phase's to close
            await cand_model.aclose()
    if not active:
        raise GlotbenchError(f"no judge produced a valid verdict: every judge was skipped as the candidate "
                             f"or the baseline (skipped: {', '.join(skipped)})")
    judge_validation = validation(active, ARENA_LANGUAGE, judge_cards)  # a bad cards directory fails here
    bench = ArenaPrompts()
    all_prompts = bench.load(options.data) if dataset is None else dataset
    selection = select(all_prompts, (), limit=options.limit)  # a subset says so in every view
    prompts = selection.items
    phase = replace(options, out=None, data=None, limit=None)
    answers: dict[str, dict[str, str]] = {}
    validity: dict[str, Any] = {}
    phases: dict[str, RunResult] = {}
    for role, spec in (("candidate", given), ("baseline", baseline)):
        phases[role] = res = await evaluate_async(bench, spec, replace(phase, out=str(out / role), phase=role), dataset=prompts)
        answers[role] = {k: v for k, v in res.answers().items() if isinstance(v, str) and v.strip()}
        validity[f"{role} answers"] = res.results.get("validity")
    games = JudgeGames.build(prompts, answers["candidate"], answers["baseline"], all_prompts)
    # the judges' own sampling: the answers' generation settings (--temperature, --max-tokens...) are not theirs
    runs = await run_panel(JudgeGames(), games, active, replace(phase, repeats=1, temperature=None, max_tokens=None,
                                                                seed=None, stop=(), structured_output=False,
                                                                thinking=None), out)
    failures, ties = {}, {}
    by_order: dict[str, dict[str, dict[str, float]]] = {}
    for spec, res in runs.items():
        orders: dict[str, dict[str, float]] = defaultdict(dict)
        for smp in res.samples:
            if smp.failure is None:
                orders[smp.meta["prompt_id"]][smp.meta["order"]] = smp.stats["value"]
        by_order[spec] = orders
        failures[spec] = res.results["counts"]["failures"]
        validity[f"judge {spec}"] = res.results.get("validity")
        games_done = [x for v in orders.values() for x in v.values()]
        ties[spec] = sum(x == 0.5 for x in games_done) / len(games_done) if games_done else None
    acc = account_prompts([p.id for p in prompts], {r: set(a) for r, a in answers.items()}, by_order,
                          unanswered=unanswered, single_order=single_order)
    if acc.values and not acc.ids:
        raise GlotbenchError("no prompt is left to score: every prompt was unanswered and unanswered=drop")
    # no prompt judged (the candidate's, the baseline's, a judge's calls or verdicts failed): written as
    # AraGen and a rubric task are, every judge with no value, invalid with its reason (`combine`), so
    # that every view shows it; the command exits INVALID_RUN_EXIT naming the failed phase
    scores = mean_of_judges(acc.values or {spec: {} for spec in runs}, acc.ids if acc.values else [p.id for p in prompts],
                            resamples=options.bootstrap_resamples)
    results = {
        "candidate": candidate, "baseline": baseline, "judges": judges, "skipped_judges": skipped,
        "scores": scores, "failures": failures,
        "position_consistency": {j: c["value"] for j, c in acc.consistency.items()},
        "position_consistency_prompts": {j: c["prompts"] for j, c in acc.consistency.items()},
        "tie_rate": ties,
        "prompts": {"total": len(prompts), "answered_by_both": len(prompts) - len(acc.unanswered["candidate"])
                    - len(acc.unanswered["baseline"]) - len(acc.unanswered["both"]),
                    "scored": len(acc.ids) if acc.values else 0},
        "unanswered": {**acc.unanswered, "policy": unanswered, "dropped": acc.dropped},
        "incomplete_prompts": {"policy": single_order, "failed": acc.failed, "single_order": acc.single_order},
        "rules": "win 1, tie 0.5, loss 0; two orders averaged per prompt (a prompt needs both unless "
                 "single_order=accept); an unanswered prompt is a loss for the side that did not answer "
                 "(tie if neither did) unless unanswered=drop; mean over prompts per judge; mean over judges; "
                 "95% percentile bootstrap over prompts (Wilson on the prompts where it collapses)",
        "per_prompt": {j: {pid: sum(v) / len(v) for pid, v in vals.items()} for j, vals in acc.values.items()},
        "judge_prompt_version": JudgeGames.version, "judge_prompt_hash": JudgeGames().prompt_hash(games),
        "data": prompts.source, "data_sha256": prompts.sha256, "selection": selection.record(),
        "validity": combine(validity, judged=scores["final"].get("n"), of=len(prompts)),
        "data_label": bench.data_label(all_prompts),
        "judge_validation": judge_validation,
    }
    write_judged(out, "arena", results, phases["candidate"].results,
                 {"candidate": "candidate", "baseline": "baseline",
                  **{f"judge {spec}": run.out_dir.name for spec, run in runs.items()}})
    return ArenaResult(out, results, phases["candidate"])


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
