"""A panel of judges, shared by the arena and AraGen.

Several judges score the same samples; one self-judging policy (`SelfJudging`) for both: a judge
that is the candidate's own model is skipped, and with `same_family` one of its model family too,
since models prefer their own answers; malformed verdicts are retried by the runner (the judge
benchmarks name their `retry_failures`); each judge runs as an ordinary phase with the run's
concurrency, timeout, cache and retries, over a Dataset held in memory (engine/judged.py `run_panel`);
the panel's scores are metrics over the run's per-item, per-judge values (judges/stats.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from glotbench.errors import GlotbenchError
from glotbench.models.base import Model
from glotbench.models.family import model_family


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
