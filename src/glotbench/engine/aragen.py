"""`glotbench aragen`: generate answers as the AraGen release does (or read them from a file), judge
them with a panel of 3C3H judges, and combine the judges. Every setting is checked before any model
is called; every entry of the task file is counted (judges/jury.py); phases pass their samples in
memory (the call cache makes a re-run resume)."""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from glotbench.benchmarks.aragen import (
    AraGen,
    AraGenAnswers,
    AraGenJudging,
    answer_dataset,
    entries_of,
    judging_dataset,
    load_answer_file,
    load_entries,
)
from glotbench.core import Dataset, RunResult, Sample
from glotbench.engine.evaluate import RunOptions, evaluate_async
from glotbench.engine.judged import check_judged_options, phase_options, run_panel, write_judged
from glotbench.errors import GlotbenchError
from glotbench.judges.cards import validation
from glotbench.judges.jury import POLICIES, STRATEGIES, Outcome, judge_summary, jury
from glotbench.judges.panel import SelfJudging, select_judges
from glotbench.models.base import Model
from glotbench.rundir import OLD_SUMMARIES, RESULTS, read_results, set_aside_invalid, slug
from glotbench.rundir.selection import first as selection_first, signed
from glotbench.signature import Signature
from glotbench.rundir.validity import combine, run_validity
from glotbench.judges.rubric import DIMENSIONS, PARSE_MODES, ZEROING_RULES
from glotbench.models.family import model_family  # noqa: F401 - where the tests and callers have read it
from glotbench.models.openai_compat import OpenAICompatModel
from glotbench.registry import load_model


def _check(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise GlotbenchError(f"--{name} must be one of {', '.join(allowed)}, got {value!r}")


def _sha(text: str | None) -> str:
    return "none" if not text else hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


async def _generate(entries, source: str, digest: str, model: str | Model, phase: RunOptions, out: Path,
                    system: str | None, validity: dict[str, Any]
                    ) -> tuple[dict[str, list[str | None]], dict[str, int], RunResult]:
    """The candidate's answers (sn -> [first, second]), the generation failures by kind and the first
    pass's run; each phase's validity goes into `validity`."""
    failures: Counter[str] = Counter()
    gen = AraGenAnswers()
    first = await evaluate_async(gen, model, replace(phase, out=str(out / "answers-1"), phase="answers-1"),
                                 dataset=answer_dataset(entries, source, digest, system=system))
    validity["answers"] = first.results.get("validity")
    ans1 = {}
    for smp in first.samples:
        if smp.answer:
            ans1[smp.id] = smp.answer
        else:
            failures[smp.failure or "empty"] += 1
    answers: dict[str, list[str | None]] = {e.sn: [ans1.get(e.sn)] + [None] * (e.answers_needed - 1) for e in entries}
    if any(e.round == 2 and e.sn in ans1 for e in entries):
        second = await evaluate_async(gen, model, replace(phase, out=str(out / "answers-2"), phase="answers-2"),
                                      dataset=answer_dataset(entries, source, digest, own=ans1, system=system))
        validity["second-turn answers"] = second.results.get("validity")
        for smp in second.samples:
            if smp.answer:
                answers[smp.id][1] = smp.answer
            else:
                failures[f"second turn: {smp.failure or 'empty'}"] += 1
    return answers, dict(failures), first


_REJECTIONS = ("no_block", "not_json", "keys", "not_integer", "out_of_range", "not_finite", "think_unclosed")


def _rejection(failure: str, error: str | None) -> str | None:
    """Why a judge's verdict was rejected: the extraction's failure (`bad_verdict:keys`, or
    `think_unclosed`), itself or as named in a retried reply's error ("malformed 3C3H verdict
    (bad_verdict:keys): ...")."""
    m = re.search(r"\((?:bad_verdict:)?(\w+)\)", error or "")
    kind = m.group(1) if m else failure.rsplit(":", 1)[-1]
    return kind if kind in _REJECTIONS else None


def _outcomes(rows: tuple[Sample, ...], repeats: int) -> tuple[dict[str, list[Outcome]], Counter[str]]:
    by_sn: dict[str, list[Outcome]] = defaultdict(lambda: [Outcome(failure="missing")] * repeats)
    rejected: Counter[str] = Counter()
    for r in rows:
        outs = by_sn[r.id]
        if r.failure is None:
            o = Outcome({k: r.stats[k] for k in (*DIMENSIONS, "3c3h")}, None, bool(r.stats.get("breaks_zeroing")))
        else:
            kind = r.failure.split(":", 1)[0]
            o = Outcome(None, kind)
            rejected[_rejection(r.failure, r.error) or kind] += 1
        outs = list(outs)
        outs[r.repeat] = o
        by_sn[r.id] = outs
    return by_sn, rejected


async def judged_result(bench: AraGen, model: str | Model, options: RunOptions,
                        dataset: Dataset | None = None) -> RunResult:
    """`evaluate_async`'s dispatch of `aragen` (a judged benchmark, `judge_pipeline` aragen): its
    settings are the benchmark's options (policy, parse, zeroing, jury, judge_prompt, system_prompt,
    judge_repeats, judge_temperature, judge_seed, skip_same_family, families), its judges the run's
    (`--judge`); the result is the candidate's judged run (results.json, the mean of judges its
    headline; no judge a model of it), its samples the candidate's first answers (none: replayed)."""
    check_judged_options(bench.name, options)
    policy = SelfJudging.declared(bench.skip_same_family, bench.families)
    given = model
    if not isinstance(model, str):  # a model object (a sweep's, a service's) answers both passes: closed here, once
        from glotbench.models.limited import LimitedModel, SharedModel

        model = LimitedModel(SharedModel(model))
    try:
        results, answers = await _run(model,
                                      list(options.judges or bench.default_judges), phase_options(options),
                                      policy=bench.policy, skip_same_family=policy.same_family,
                                      judge_repeats=bench.judge_repeats, judge_temperature=bench.judge_temperature,
                                      judge_prompt=bench.judge_prompt, parse=bench.parse, zeroing=bench.zeroing,
                                      strategy=bench.jury, system_prompt=bench.system_prompt,
                                      families=policy.families, judge_seed=bench.judge_seed,
                                      judge_cards=options.judge_cards, dataset=dataset)
    finally:
        if not isinstance(given, str):
            await given.aclose()
    out = Path(results["out_dir"])
    return RunResult(out, read_results(out), answers.samples if answers else (), answers.dataset if answers else None)


async def run_aragen(model: str | Model, judges: list[str], options: RunOptions, **settings: Any) -> dict[str, Any]:
    """The run (`_run`'s settings); its summary (results.json's `judged.summary`, with `out_dir`)."""
    return (await _run(model, judges, options, **settings))[0]


async def _run(model: str | Model, judges: list[str], options: RunOptions, *, policy: str = "drop",
               skip_same_family: bool = False, judge_repeats: int = 1, judge_temperature: float = 0.0,
               judge_prompt: str | None = None, parse: str = "strict", zeroing: str = "correct",
               strategy: str = "mean", system_prompt: str | None = None,
               families: Mapping[str, str] | None = None, judge_seed: int | None = None,
               judge_cards: str | None = None, dataset: Dataset | None = None) -> tuple[dict[str, Any], RunResult | None]:
    # -- every check before any model is called --
    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    _check("policy", policy, POLICIES)
    _check("jury", strategy, STRATEGIES)
    _check("parse", parse, PARSE_MODES)
    _check("zeroing", zeroing, ZEROING_RULES)
    if not math.isfinite(judge_temperature) or judge_temperature < 0:
        raise GlotbenchError(f"--judge-temperature must be a finite number >= 0, got {judge_temperature}")
    if judge_repeats < 1:
        raise GlotbenchError(f"--judge-repeats must be at least 1, got {judge_repeats}")
    if options.limit is not None and options.limit < 1:
        raise GlotbenchError(f"--limit must be at least 1, got {options.limit}")
    if options.max_tokens is not None and options.max_tokens < 1:
        raise GlotbenchError(f"--max-tokens must be at least 1, got {options.max_tokens}")
    # the entries: from --data FILE, or carried by items held in memory (AraGen.load's: a service's set)
    entries, source, digest = (load_entries(options.data) if dataset is None else
                               (entries_of(dataset), dataset.source, dataset.sha256 or "none"))
    n_all, all_sns = len(entries), [e.sn for e in entries]
    # bundled sample data says so, read from the package or from a copy (benchmarks/base.py data_label)
    data_label = AraGenAnswers().data_label(answer_dataset(entries, source, digest))
    entries = entries[: options.limit]
    selection = selection_first([e.sn for e in entries], n_all, options.limit)
    upstream = None
    if judge_prompt is not None:
        from glotbench.judges.prompts import load_upstream_prompt

        upstream = load_upstream_prompt(judge_prompt)
    given = model  # the answer passes run this: the spec, or a model object (not closed between passes)
    model = model if isinstance(model, str) else model.spec
    replay = model[len("replay:"):] if model.startswith("replay:") else None
    replayed = load_answer_file(replay, entries) if replay else None
    out = Path(options.out or f"runs/aragen/{datetime.now():%Y%m%d-%H%M%S}-{slug(model)}")
    # a finished valid run: an error; an invalid or unfinished one is kept aside and runs again
    set_aside_invalid(out, RESULTS, ("answers-1", "answers-2"), older=(OLD_SUMMARIES["aragen"],))
    self_judging = SelfJudging(skip_same_family, dict(families or {}))
    cand_family = self_judging.family(model)
    # The panel's self-judging policy: answers from a file have no model to compare, only a family.
    cand_model = None if replay else load_model(model) if isinstance(given, str) else given
    try:  # a bad judge spec, or a judge endpoint that cannot be reached (HTTP: cheap to check), fails here
        active, skipped = await select_judges(judges, model, cand_model, options, self_judging,
                                              check=lambda judge: isinstance(judge, OpenAICompatModel))
    finally:
        if cand_model is not None and isinstance(given, str):
            await cand_model.aclose()
    if not active:
        raise GlotbenchError(f"every judge was skipped as the candidate or its family ({cand_family})")
    judge_validation = validation(active, "ar", judge_cards)  # AraGen is Arabic; a bad cards directory fails here

    # -- answers --
    phase = replace(options, out=None, data=None, limit=None, repeats=1)
    validity: dict[str, Any] = {}
    gen_failures: dict[str, int]  # by kind (none for replayed answers)
    answers_run: RunResult | None = None  # the candidate's first answers (none: replayed)
    if replayed is not None:
        answers, gen_failures = replayed[0], {}
        # An entry the file has no answer for is a replay's missing output, as for `glotbench run`:
        # counted against the threshold, not only left out by the policy.
        missing = sum(1 for e in entries if any(a is None for a in answers[e.sn]))
        validity["answers"] = run_validity({"missing": missing} if missing else {}, len(entries), 1,
                                           options.max_failure_rate)
    else:
        answers, gen_failures, answers_run = await _generate(entries, source, digest, given, phase, out, system_prompt, validity)
    task = AraGenJudging(upstream, parse, zeroing)
    games = judging_dataset(entries, answers, source, digest, all_sns)
    judged_ids = {it.id for it in games}
    no_answer = [e.sn for e in entries if e.sn not in judged_ids]
    order = [(e.sn, e.task) for e in entries]

    # -- judges --
    runs = await run_panel(task, games, active, replace(phase, max_tokens=None, repeats=judge_repeats,
                                                        temperature=judge_temperature, seed=judge_seed, stop=(),
                                                        structured_output=False, thinking=None), out)
    per_judge: dict[str, Any] = {}
    outcomes: dict[str, dict[str, list[Outcome]]] = {}
    for spec, res in runs.items():
        validity[f"judge {spec}"] = res.results.get("validity")
        by_sn, rejected = _outcomes(res.samples, judge_repeats)
        for sn in no_answer:
            by_sn[sn] = [Outcome(failure="no_answer")] * judge_repeats
        outcomes[spec] = by_sn
        summary = judge_summary(order, by_sn, policy=policy, mode=parse, resamples=options.bootstrap_resamples)
        valid = {sn: [o.dims["3c3h"] for o in outs if o.dims] for sn, outs in by_sn.items()}
        by_repeat = [judge_summary(order, {sn: [outs[r]] for sn, outs in by_sn.items()}, policy=policy, mode=parse,
                                   resamples=0)["scores"]["overall"]["3c3h"]["value"] for r in range(judge_repeats)]
        first = {r.id: {k: r.stats.get(f"first_{k}") for k in ("Correct", "Complete")}
                 for r in res.samples if r.repeat == 0 and r.failure is None}
        per_judge[spec] = {
            **summary, "family": self_judging.family(spec), "rejected": dict(rejected),
            "item_scores": {sn: statistics.fmean(v) for sn, v in valid.items() if v},
            "item_repeats": {sn: v for sn, v in valid.items() if len(v) >= 2},
            "dataset_3c3h_by_repeat": by_repeat, "first_verdicts": first,
        }
    combined = jury(order, outcomes, per_judge, strategy=strategy, policy=policy, mode=parse,
                    resamples=options.bootstrap_resamples)
    prompt_sig = f"3c3h-{upstream.sha256[:12]}" if upstream else f"rubric-{task.prompt_hash(games)}"
    signature = signed(Signature.build(
        glotbench="aragen", v=AraGenJudging.version, judge_prompt=prompt_sig, parse=parse,
        zeroing=zeroing, policy=policy, jury=strategy, followup="2:1", scale="(v-1)/4",
        cand_system=_sha(system_prompt), cand_max_tokens=options.max_tokens or 2048,
        judge_repeats=judge_repeats, judge_temperature=judge_temperature, judge_seed=judge_seed,
        judge_retries=options.max_retries,
        judges=",".join(slug(j) for j in active), data=digest[:12]).format(), selection)
    results = {
        "model": model, "family": cand_family, "judges": judges, "skipped_judges": skipped, "policy": policy,
        "parse": parse, "zeroing": zeroing, "jury_strategy": strategy,
        "judge_prompt": {"kind": "3c3h", "source": upstream.source, "sha256": upstream.sha256} if upstream
        else {"kind": "glotbench-rubric", "hash": task.prompt_hash(games)},
        "candidate_system_prompt": system_prompt,
        "data": source, "data_sha256": digest, "entries": len(entries), "selection": selection,
        "validity": combine(validity, judged=combined["n"], of=len(entries)), "data_label": data_label,
        "answers_source": {"file": replay, "sha256": replayed[1]} if replayed else {"model": model},
        "answered": len(entries) - len(no_answer), "no_answer": no_answer, "generation_failures": gen_failures,
        "mean_of_judges": combined, "per_judge": per_judge,
        "item_scores": {j: p["item_scores"] for j, p in per_judge.items()},
        "signature": signature, "judge_validation": judge_validation,
    }
    answers_1 = out / "answers-1"  # the candidate's answers (none: replayed from a file)
    write_judged(out, "aragen", {**results, "version": AraGenJudging.version},
                 read_results(answers_1) if (answers_1 / RESULTS).is_file() else {},
                 {**{d: d for d in ("answers-1", "answers-2") if (out / d / RESULTS).is_file()},
                  **{f"judge {spec}": run.out_dir.name for spec, run in runs.items()}})
    results["out_dir"] = str(out)
    return results, answers_run
