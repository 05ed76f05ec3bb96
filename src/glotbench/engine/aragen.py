"""`run_aragen`: AraGen's judged run with its settings as arguments (the hidden `aragen` command, the
Python API). `aragen` declares its run (benchmarks/aragen.py `AraGen`: the release's answer passes,
or a file of answers; 3C3H games; each judge's figures under the failure policy; the jury), and the
one judged pipeline (engine/judged.py) runs it. Every setting is checked before any model is called."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping

from glotbench.benchmarks.aragen import AraGen
from glotbench.core import Dataset
from glotbench.engine.evaluate import RunOptions
from glotbench.engine.judged import run_declared
from glotbench.errors import GlotbenchError
from glotbench.judges.jury import POLICIES, STRATEGIES
from glotbench.judges.panel import SelfJudging
from glotbench.judges.rubric import PARSE_MODES, ZEROING_RULES
from glotbench.models.base import Model
from glotbench.models.family import model_family  # noqa: F401 - where the tests and callers have read it


def _check(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise GlotbenchError(f"--{name} must be one of {', '.join(allowed)}, got {value!r}")


async def run_aragen(model: str | Model, judges: list[str], options: RunOptions, *, policy: str = "drop",
                     skip_same_family: bool = False, judge_repeats: int = 1, judge_temperature: float = 0.0,
                     judge_prompt: str | None = None, parse: str = "strict", zeroing: str = "correct",
                     strategy: str = "mean", system_prompt: str | None = None,
                     families: Mapping[str, str] | None = None, judge_seed: int | None = None,
                     judge_cards: str | None = None, dataset: Dataset | None = None) -> dict[str, Any]:
    """The run; its summary (results.json's `judged.summary`, with `out_dir`)."""
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
    bench = AraGen(policy, parse, zeroing, strategy, judge_prompt, None, judge_repeats, judge_temperature, judge_seed,
                   skip_same_family)
    bench.system_prompt = system_prompt  # the text itself (the benchmark option reads @FILE)
    bench.panel_policy = SelfJudging(skip_same_family, dict(families or {}))
    res, summary = await run_declared(bench, model, replace(options, judge_cards=judge_cards), dataset, judges)
    return {**summary, "out_dir": str(res.out_dir)}
