"""A panel of judges, shared by the arena and AraGen.

Several judges score the same samples; one self-judging policy (`SelfJudging`) for both: a judge
that is the candidate's own model is skipped, and with `same_family` one of its model family too,
since models prefer their own answers; malformed verdicts are retried by the runner (the judge
benchmarks name their `retry_failures`); each judge runs as an ordinary phase with the run's
concurrency, timeout, cache and retries, over a Dataset held in memory (engine/judged.py `run_panel`);
the panel's score is the mean of the judges' scores, with a bootstrap CI that resamples items for all
judges together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.models.base import Model
from glotbench.models.family import model_family
from glotbench.stats import (DEFAULT_SEED, MIN_BOOTSTRAP_UNITS, MIN_INDEPENDENT_UNITS, Estimate, bootstrap_many,
                             collapse_fallback)


def same_model(a: Model, b: Model) -> bool:
    """The same model: the same cache id, or the same named model (backends without a model name,
    such as python: callables, are compared by cache id alone)."""
    name_a, name_b = a.description().get("model"), b.description().get("model")
    return a.cache_id == b.cache_id or (name_a is not None and name_a == name_b)


@dataclass(frozen=True)
class SelfJudging:
    """The self-judging policy of the arena and AraGen (models prefer their own answers): a judge that
    is the candidate's own model (`same_model`) is always skipped; with `same_family`, so is a judge
    of the candidate's model family (models/family.py; `families` states SPEC -> FAMILY)."""

    same_family: bool = False
    families: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def declared(cls, same_family: bool, families: str) -> "SelfJudging":
        """The policy a judged benchmark's options declare: `families` as SPEC=FAMILY;SPEC=FAMILY."""
        from glotbench.models.family import parse_families

        try:
            return cls(same_family, parse_families([p for p in families.split(";") if p.strip()]))
        except ValueError as e:
            raise GlotbenchError(f"families: {e}".replace("--family ", "")) from None

    def family(self, spec: str) -> str:
        return model_family(spec, self.families)

    def skips(self, judge_spec: str, judge: Model, candidate_spec: str, candidate: Model | None) -> bool:
        """`candidate`: the candidate's model, None when its answers come from a file (replay): then the
        judge named as the candidate is (its spec) is the candidate still."""
        if judge_spec == candidate_spec or (candidate is not None and same_model(judge, candidate)):
            return True
        return self.same_family and self.family(judge_spec) == self.family(candidate_spec)


async def select_judges(judges: Sequence[str], candidate_spec: str, candidate: Model | None, options: Any,
                        policy: SelfJudging, *, check: Callable[[Model], bool] = lambda m: False,
                        contestants: Sequence[Model] = ()) -> tuple[list[str], list[str]]:
    """(judges kept, judges skipped) under the policy, decided before any call: each judge is built
    (a bad spec fails here) and, where `check(judge)` says so, its endpoint checked. `contestants`:
    the other models whose answers are judged (the arena's baseline): a judge that is one of them is
    skipped too, since a judge is never a contestant."""
    from glotbench.rundir import slug

    seen: dict[str, str] = {}
    for spec in judges:  # each judge's verdicts count once, in a phase directory of its own
        if slug(spec) in seen:
            raise GlotbenchError(f"judge {spec} is named twice" if seen[slug(spec)] == spec else
                                 f"judges {seen[slug(spec)]} and {spec} would share one phase directory "
                                 f"(judge-{slug(spec)}); name each judge once")
        seen[slug(spec)] = spec
    kept: list[str] = []
    skipped: list[str] = []
    built: dict[str, Model] = {}
    for spec in judges:
        judge = build_judge(spec, options)
        try:
            for other, model in built.items():  # one model's verdicts count once, however its endpoint is spelt
                if same_model(judge, model):
                    raise GlotbenchError(f"judges {other} and {spec} are the same model "
                                         f"({judge.description().get('model') or spec}): name each judge once")
            built[spec] = judge
            if policy.skips(spec, judge, candidate_spec, candidate) or any(same_model(judge, m) for m in contestants):
                skipped.append(spec)
                continue
            kept.append(spec)
            if check(judge):
                await judge.check()
        finally:
            await judge.aclose()
    if skipped and options.every_judge:  # a service's set: its whole panel judges every run, or none
        raise PanelIncomplete(f"judge {skipped[0]} would be skipped as the candidate or a contestant (the same model "
                              "name or family): every judge of this set scores every run; submit under another "
                              "model name")
    return kept, skipped


class PanelIncomplete(GlotbenchError):
    """A run that must keep every judge (`RunOptions.every_judge`) would skip one: stopped before any call."""


def build_judge(spec: str, options: Any) -> Model:
    """A judge model built with the run's concurrency, timeout and key variable (not a default pool).
    A malformed verdict is retried by the runner: the judge benchmarks name their `retry_failures`."""
    from glotbench.plugins import load_model

    opts: dict[str, Any] = {"timeout_s": options.timeout_s}
    if options.concurrency is not None:
        opts["concurrency"] = options.concurrency
    if options.api_key_env is not None:
        opts["api_key_env"] = options.api_key_env
    return load_model(spec, **opts)


def mean_of_judges(values: Mapping[str, Mapping[str, Sequence[float]]], ids: Sequence[str], *,
                   resamples: int = 1000, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """`values[judge][item]` holds the values a judge gave an item (orders, repeats). Per judge and
    item they are averaged; a judge's score is the mean over the items it judged; the final score is
    the mean over judges. CIs resample items (all judges together)."""
    judges = list(values)
    if not judges:
        raise ValueError("no judge produced a verdict")
    rows = np.zeros((len(ids), 2 * len(judges)))
    for p, pid in enumerate(ids):
        for j, judge in enumerate(judges):
            v = values[judge].get(pid) or []
            if v:
                rows[p, 2 * j] = sum(v) / len(v)
                rows[p, 2 * j + 1] = 1.0

    def judge_fn(j: int) -> Callable[[np.ndarray], float]:
        return lambda r: float(r[2 * j] / r[2 * j + 1]) if r[2 * j + 1] > 0 else float("nan")

    def final(r: np.ndarray) -> float:
        per = [r[2 * j] / r[2 * j + 1] for j in range(len(judges)) if r[2 * j + 1] > 0]
        return float(np.mean(per)) if per else float("nan")

    fns = {"final": final, **{judge: judge_fn(j) for j, judge in enumerate(judges)}}
    est: dict[str, Estimate] = bootstrap_many(rows, fns, resamples=resamples, seed=seed)
    coverage = {judge: int(rows[:, 2 * j + 1].sum()) for j, judge in enumerate(judges)}
    judged = int((rows[:, 1::2] > 0).any(axis=1).sum())
    return {"final": judged_interval(est["final"], judged, resamples),
            "judges": {j: judged_interval(est[j], coverage[j], resamples) for j in judges},
            "prompts_judged": coverage, "prompts": len(ids)}


def judged_interval(e: Estimate, items: int, resamples: int) -> dict[str, Any]:
    """A judged score's interval record, the same for every judged pipeline: the percentile bootstrap
    over items; where it collapsed (all prompts won), Wilson on the items judged, as metrics/ratio.py
    `interval` does for any other score (every item's value in [0, 1]). `items`: the items the value
    rests on (an item no judge gave a valid verdict for is not one of them)."""
    d: dict[str, Any] = {**e.to_dict(), "n": items, "ci_method": "bootstrap" if resamples > 0 else "none"}
    fallback = collapse_fallback(d["value"], d["ci_low"], d["ci_high"], items) if resamples > 0 else None
    if fallback is not None:
        d.update(ci_low=fallback[0], ci_high=fallback[1], ci_method="wilson_fallback")
    # the † rule of every other score (metrics/ratio.py `interval`): the bootstrap under 100
    # items, Wilson under 30 (measured coverage under 93%: docs/metrics.md)
    if d["ci_method"] != "none" and d["n"] < (MIN_BOOTSTRAP_UNITS if d["ci_method"] == "bootstrap"
                                              else MIN_INDEPENDENT_UNITS):
        d["too_few_units"] = True
    return d
