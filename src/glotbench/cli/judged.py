"""The hidden aliases `arena` and `aragen` (now `glotbench run laobench-arena` / `run aragen`: judged
benchmarks, their settings `--bench-opt`s), `arena-report` and `judge-audit` (now `report --judges`);
the judges' report that `report --judges` prints."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from glotbench.cli.options import (JUDGE_CALLS, JUDGED_ITEMS, MODEL_CALLS, Human, MaxTokens, ModelSpec, Out, WriteCards,
                                   alias, exit_if_invalid, print_endpoints, run_options, to_json, with_options)

Judges = Annotated[list[str], typer.Option("--judge", help="A judge model spec (repeatable; two or more recommended).")]
# The panel's self-judging policy (judges/panel.SelfJudging): the candidate's own model is always skipped.
SkipSameFamily = Annotated[bool, typer.Option(help="Also skip a judge of the candidate's model family (self-preference).")]
Families = Annotated[list[str], typer.Option("--family", help="State a model's family: SPEC=FAMILY (repeatable).")]
JudgeCards = Annotated[Optional[str], typer.Option("--judge-cards", help="Directory of judge validity cards (default: $GLOTBENCH_JUDGE_CARDS); a judge without a passing card for the language is marked not validated.")]


@with_options(JUDGED_ITEMS, JUDGE_CALLS, MODEL_CALLS)
def arena(
    model: ModelSpec,
    baseline: Annotated[str, typer.Option("--baseline", help="The fixed baseline: a model spec, or replay:FILE.jsonl of its answers.")],
    judge: Judges,
    out: Out = None,
    unanswered: Annotated[str, typer.Option("--unanswered", help="An unanswered prompt: loss (default: a loss "
                                            "for the side that did not answer) or drop (left out, listed).")] = "loss",
    single_order: Annotated[str, typer.Option("--single-order", help="A prompt judged in one order only: fail "
                                              "(default: counted failed, listed) or accept (scored, flagged).")] = "fail",
    skip_same_family: SkipSameFamily = False,
    family: Families = [],  # noqa: B006
    judge_cards: JudgeCards = None,
    **shared: Any,
) -> None:
    """Arena: the candidate against a fixed baseline, each pair judged twice (positions swapped) by every judge."""
    import asyncio

    from glotbench.engine.arena import run_arena
    from glotbench.report.judged import print_arena
    from glotbench.judges.panel import SelfJudging
    from glotbench.models.family import parse_families

    opts = run_options(out=out, **shared)
    print_endpoints([("model", model), ("baseline", baseline), *((f"judge {j}", j) for j in judge)], opts.api_key_env)
    res = asyncio.run(run_arena(model, baseline, judge, opts, unanswered=unanswered, single_order=single_order,
                                self_judging=SelfJudging(skip_same_family, parse_families(family)),
                                judge_cards=judge_cards))
    print_arena(res.results)
    typer.echo(f"arena directory: {res.out_dir}")
    exit_if_invalid(res.results)


def arena_report(
    arenas: Annotated[list[str], typer.Argument(help="Arena directories, one candidate model each.")],
    human: Human = None,
    bt: Annotated[bool, typer.Option("--bt", help="Add Bradley–Terry ratings and the ranking.")] = False,
    write_cards: WriteCards = None,
) -> None:
    """Cross-judge report of arena directories: now `glotbench report --judges`."""
    typer.echo(to_json(judges_report(arenas, human, bt, write_cards, "arena")))


@with_options(JUDGED_ITEMS, JUDGE_CALLS, MODEL_CALLS)
def aragen(
    model: Annotated[str, typer.Option("--model", "-m", help="The model spec to evaluate, or replay:FILE of its answers (upstream's answer/judged JSON, or JSONL).")],
    judge: Judges,
    policy: Annotated[str, typer.Option(help="Entries without an answer or a valid verdict: drop, zero, or upstream (unanswered 0, unjudged dropped).")] = "drop",
    judge_prompt: Annotated[Optional[str], typer.Option(help="Use upstream's judge messages, read from your copy of the 3C3H repository (DIR or pipeline/jury.py).")] = None,
    parse: Annotated[str, typer.Option(help="Verdict parsing: strict, or 3c3h (upstream's parser and 4-decimal rounding).")] = "strict",
    zeroing: Annotated[str, typer.Option(help="Zeroing rule: correct (upstream code) or correct-or-complete (AraGen announcement).")] = "correct",
    jury: Annotated[str, typer.Option("--jury", help="Combining judges: mean (of per-judge figures), average or vote (upstream's).")] = "mean",
    system_prompt: Annotated[Optional[str], typer.Option(help="System message for the candidate (default: none); @FILE reads it from a file.")] = None,
    skip_same_family: SkipSameFamily = False,
    family: Families = [],  # noqa: B006
    judge_repeats: Annotated[int, typer.Option(help="Judge each sample K times (for the consistency audit; use a temperature > 0).")] = 1,
    judge_temperature: Annotated[float, typer.Option(help="Judge sampling temperature.")] = 0.0,
    judge_seed: Annotated[Optional[int], typer.Option(help="Judge sampling seed (upstream's judges: 42).")] = None,
    max_tokens: MaxTokens = None,
    out: Out = None,
    judge_cards: JudgeCards = None,
    **shared: Any,
) -> None:
    """AraGen: answers generated as the release does (rounds 0, 1, 2), judged with 3C3H by every judge."""
    import asyncio
    from pathlib import Path

    from glotbench.engine.aragen import run_aragen
    from glotbench.report.judged import print_aragen
    from glotbench.models.family import parse_families

    if system_prompt is not None and system_prompt.startswith("@"):
        system_prompt = Path(system_prompt[1:]).read_text(encoding="utf-8")
    opts = run_options(max_tokens=max_tokens, out=out, **shared)
    print_endpoints([("model", model), *((f"judge {j}", j) for j in judge)], opts.api_key_env)
    res = asyncio.run(run_aragen(model, judge, opts, policy=policy, skip_same_family=skip_same_family,
                                 judge_repeats=judge_repeats, judge_temperature=judge_temperature,
                                 judge_prompt=judge_prompt, parse=parse, zeroing=zeroing, strategy=jury,
                                 system_prompt=system_prompt, families=parse_families(family),
                                 judge_seed=judge_seed, judge_cards=judge_cards))
    print_aragen(res)
    typer.echo(f"output directory: {res['out_dir']}")
    exit_if_invalid(res)


def judge_audit(
    runs: Annotated[list[str], typer.Argument(help="`glotbench aragen` output directories (one model each).")],
    human: Human = None,
    write_cards: WriteCards = None,
) -> None:
    """Judge audit of AraGen directories: now `glotbench report --judges`."""
    typer.echo(to_json(judges_report(runs, human, False, write_cards, "aragen")))


def judges_report(dirs: list[str], human: Optional[str], bt: bool, write_cards: Optional[str],
                  kind: Optional[str] = None) -> dict[str, Any]:
    """The judges' report of arena directories (cross-judge agreement) or AraGen directories (the
    judge audit): what `arena-report` and `judge-audit` printed."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.rundata import judged_dirs, judged_kind

    dirs = [str(d) for d in judged_dirs(dirs, kind)]  # a folder: the judged runs under it
    # The kind by what a directory holds (its results.json's `judged` section, or an older summary
    # file); the readers below check its contents (the old commands named the kind).
    kinds = {kind} if kind else {judged_kind(d) or "run" for d in dirs}
    if kinds == {"arena"}:
        from glotbench.engine.arena import cross_judge_report

        res = cross_judge_report(dirs, human)
        if bt:
            from glotbench.report.arena_rank import rank_arenas

            res["bradley_terry"] = rank_arenas(dirs)
        if write_cards:
            from glotbench.judges.card_sources import arena_cards
            from glotbench.judges.cards import write_cards as write

            res["cards"] = write(arena_cards(dirs, human), write_cards)
        return res
    if kinds == {"aragen"}:
        if bt:
            raise GlotbenchError("--bt ranks arena directories; these are AraGen directories")
        from glotbench.judges.audit import judge_audit

        res = judge_audit(dirs, human)
        if write_cards:
            from glotbench.judges.card_sources import aragen_cards
            from glotbench.judges.cards import write_cards as write

            res["cards"] = write(aragen_cards(dirs, human), write_cards)
        return res
    raise GlotbenchError("the judges' report reads arena directories or AraGen directories, one kind at a time; "
                         f"these are: {', '.join(sorted(kinds))} (other runs, plain or judged: `glotbench board` or "
                         "`compare`)")


def register(app: typer.Typer) -> None:
    alias(app, "arena", arena)  # `glotbench run laobench-arena` (the benchmark's options: --bench-opt)
    alias(app, "aragen", aragen)  # `glotbench run aragen`
    alias(app, "arena-report", arena_report)
    alias(app, "judge-audit", judge_audit)
