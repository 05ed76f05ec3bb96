"""What is registered: the tables of benchmarks, model backends, task scorer kinds and extraction
steps, filled by the decorators, the built-ins (by import path, so listing them imports nothing
heavy) and the entry-point groups `glotbench.benchmarks`, `glotbench.models`, `glotbench.scorers`
and `glotbench.steps`.

    @register_benchmark("my-bench")          # a Benchmark class or a factory returning one
    class MyBench(Benchmark): ...

    @register_model("echo")                  # a factory(rest, spec=..., **opts) -> Model, or a class
    class EchoModel(ModelBase): ...

    @register_scorer("char_f1")              # a tasks.scorers.Scorer class; its `Spec` (a pydantic
    class CharF1(Scorer): ...                # model with `kind: Literal["char_f1"]`) reads the task's keys

    @register_step("thai_year")              # a factory(argument) -> step(text, options) -> Extraction
    def thai_year(arg): ...

A task file names a registered scorer kind (`scorer: {kind: char_f1, ...}`) or step (`extract: {a:
[thai_year]}`) as it names a built-in one; the built-in scorers and steps (tasks/scorers.py,
tasks/pipelines.py) are never replaced: a plugin that takes one of their names is an error when a
task is built, never silently ignored.

It imports nothing of glotbench but its errors, so benchmarks, tasks and backends register
themselves here from any layer; `glotbench.registry` turns a name into a benchmark (a registered
name, a task file, `MODULE:CLASS`) and is where users import all of this from.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, TypeVar

from glotbench.errors import SpecError, module_missing, user_module_error

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    target: Any  # the class/factory, or "module:attr" (imported on first use)
    description: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)

    def resolve(self) -> Any:
        return import_path(self.target) if isinstance(self.target, str) else self.target


_DEEPSEA = "glotbench.benchmarks.deepsea:"
_BENCHMARKS: dict[str, Entry] = {
    "deepsea-mgsm": Entry(_DEEPSEA + "MGSM", "DeepSEA MGSM math, numeric exact match"),
    "deepsea-indommlu": Entry(_DEEPSEA + "IndoMMLU", "DeepSEA IndoMMLU subject MCQ, accuracy macro-averaged over subjects"),
    "deepsea-xquad": Entry(_DEEPSEA + "XQuAD", "DeepSEA XQuAD extractive QA, token F1 (first reference)"),
    "deepsea-crosssum": Entry(_DEEPSEA + "CrossSum", "DeepSEA CrossSum summarisation, corpus chrF2"),
    "deepsea-wmt24pp": Entry(_DEEPSEA + "WMT24pp", "DeepSEA WMT24++ translation, corpus chrF2 (not MetricX-24)"),
    "vi-diacritics": Entry("glotbench.benchmarks.vi_diacritics:VietnameseDiacritics",
                           "Vietnamese diacritic restoration (Dấu or Die style)"),
    "vi-tone-errors": Entry("glotbench.benchmarks.vi_tone_errors:VietnameseToneErrors",
                            "Vietnamese tone and vowel-mark error correction, with error detection"),
    "laobench-mcq": Entry("glotbench.benchmarks.laobench:LaoBenchMCQ",
                          "LaoBench multiple choice (options: method=generate|loglik)"),
    "laobench-translation": Entry("glotbench.benchmarks.laobench:LaoBenchTranslation",
                                  "LaoBench Lao<->Chinese<->English translation, BLEU and chrF++"),
    "laobench-arena-prompts": Entry("glotbench.benchmarks.arena:ArenaPrompts",
                                    "open-ended prompts (answers only; a phase of laobench-arena)"),
    "laobench-arena": Entry("glotbench.benchmarks.arena:LaoBenchArena",
                            "LaoBench arena: the candidate against a baseline (--bench-opt baseline=SPEC), judged by --judge"),
    "aragen": Entry("glotbench.benchmarks.aragen:AraGen",
                    "AraGen: generative Arabic QA, answers as the release makes them, judged with 3C3H by --judge"),
    "sea-mt-bench": Entry("glotbench.benchmarks.sea_mt_bench:SeaMtBench",
                          "SEA-MT-Bench: two turns against a fixed baseline, both orders, SEA-HELM's weighted win rate "
                          "(--bench-opt config=LANG, --judge J, --data FILE)"),
    "aragen-answers": Entry("glotbench.benchmarks.aragen:AraGenAnswers",
                            "AraGen answer generation (first pass; aragen runs all phases)"),
}
_HIDDEN = {"laobench-arena-prompts", "aragen-answers"}  # phases of laobench-arena / aragen, not listed
_MODELS: dict[str, Entry] = {
    "openai": Entry("glotbench.models.openai_compat:from_spec",
                    "openai:MODEL@BASE_URL  any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp...)"),
    "local": Entry("glotbench.models.hf:embedded_default",
                   "local  the embedded default: Gemma 3 270M (GGUF Q4_K_M) via transformers"),
    "hf": Entry("glotbench.models.hf:from_spec", "hf:PATH_OR_REPO  a transformers causal LM"),
    "vllm": Entry("glotbench.models.vllm:from_spec",
                  "vllm:MODEL[,KEY=VALUE...]  vLLM's offline engine on a GPU (settings passed to vllm.LLM)"),
    "replay": Entry("glotbench.models.replay:ReplayModel",
                    "replay:FILE.jsonl  outputs produced elsewhere ({\"id\", \"output\"} per line)"),
    "python": Entry("glotbench.models.python_fn:PythonModel",
                    "python:MODULE:FUNCTION  a Python callable taking the chat messages"),
}
_SCORERS: dict[str, Entry] = {}  # task scorer kinds from outside (the built-ins: tasks/scorers.py)
_STEPS: dict[str, Entry] = {}  # extraction steps from outside (the built-ins: tasks/pipelines.py)
_GROUPS = {"benchmark": ("glotbench.benchmarks", _BENCHMARKS), "model": ("glotbench.models", _MODELS),
           "scorer": ("glotbench.scorers", _SCORERS), "step": ("glotbench.steps", _STEPS)}
_entry_points_loaded = False
_SHADOWED: dict[str, str] = {}  # "benchmark NAME" / "model SCHEME" -> the entry point a registered name hides


def import_path(path: str) -> Any:
    """The object `MODULE:NAME` names (a module next to the user's work is found too, as `python -m` does)."""
    module, _, attr = path.partition(":")
    if not module or not attr:
        raise SpecError(f"{path!r} is not MODULE:NAME")
    try:
        try:
            obj: Any = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if not module_missing(e, module) or os.getcwd() in sys.path:
                raise
            sys.path.insert(0, os.getcwd())  # as `python -m` does: modules next to the user's work
            obj = importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise SpecError(f"cannot import {module!r}: {e}" if module_missing(e, module) else user_module_error(module, e)) from None
    except Exception as e:  # noqa: BLE001 - the user's module failed while importing (SyntaxError, ...)
        raise SpecError(user_module_error(module, e)) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise SpecError(f"{module!r} has no {attr!r}")
        obj = getattr(obj, part)
    return obj


def register_benchmark(name: str, description: str = "") -> Callable[[T], T]:
    """Register a Benchmark class (or a factory of one) under `name`. A class that leaves a station
    abstract is refused here; a declared fact is checked when the benchmark is built (registry)."""
    def deco(obj: T) -> T:
        if inspect.isclass(obj) and inspect.isabstract(obj):  # it could never be built
            missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
            raise SpecError(f"register_benchmark({name!r}): {obj.__name__} does not implement {missing}")
        _BENCHMARKS[name] = Entry(obj, description or (getattr(obj, "description", "") or "").strip())
        return obj
    return deco


def register_model(scheme: str, description: str = "") -> Callable[[T], T]:
    """Register a model backend for specs `SCHEME:REST`: a factory or class called as
    `factory(rest, spec=spec, **opts)` (opts: concurrency, timeout_s, api_key_env where given)."""
    def deco(obj: T) -> T:
        doc = ((obj.__doc__ or "").strip().splitlines() or [""])[0]
        _MODELS[scheme] = Entry(obj, description or f"{scheme}:...  {doc}".rstrip())
        return obj
    return deco


def register_scorer(kind: str, description: str = "") -> Callable[[T], T]:
    """Register a task scorer kind: a `glotbench.tasks.scorers.Scorer` subclass (built as
    `cls(spec, lang)`) whose class attribute `Spec` is the pydantic model of its task-file keys, with
    `kind: Literal[KIND]`."""
    def deco(obj: T) -> T:
        _SCORERS[kind] = Entry(obj, description or _first_line(obj))
        return obj
    return deco


def register_step(name: str, description: str = "", *, needs_arg: bool = False, version: str | None = None) -> Callable[[T], T]:
    """Register an extraction step: a factory called with the step's argument (None when the task
    writes the bare name; `needs_arg`: a bare name is an error) that returns the step, a callable
    `(text, {label: option text}) -> glotbench.extract.Extraction`. `version` goes into the
    signature with the name (`name@vVERSION`): bump it when the step reads replies differently."""
    def deco(obj: T) -> T:
        _STEPS[name] = Entry(obj, description or _first_line(obj), {"needs_arg": needs_arg, "version": version})
        return obj
    return deco


def _first_line(obj: Any) -> str:
    return ((getattr(obj, "__doc__", None) or "").strip().splitlines() or [""])[0]


def load_entry_points() -> None:
    """Add the plugins' entry points to the tables (once; never over a registered name)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for kind, (group, table) in _GROUPS.items():
        for ep in metadata.entry_points(group=group):
            if ep.name in table and table[ep.name].target != ep.value:
                _SHADOWED[f"{kind} {ep.name}"] = ep.value  # said by `glotbench list`, never silently
            table.setdefault(ep.name, Entry(ep.value, f"(plugin {ep.value})"))


def shadowed() -> dict[str, str]:
    """Plugin entry points whose name a built-in or registered one already holds ("benchmark
    laobench-mcq" -> "pkg.mod:Cls"): the registered one is what runs."""
    load_entry_points()
    return dict(_SHADOWED)


def benchmarks(hidden: bool = False) -> dict[str, str]:
    """Registered benchmark names -> descriptions."""
    load_entry_points()
    return {n: e.description for n, e in sorted(_BENCHMARKS.items()) if hidden or n not in _HIDDEN}


def models() -> dict[str, str]:
    """Registered model schemes -> descriptions."""
    load_entry_points()
    return {n: e.description for n, e in _MODELS.items()}


def benchmark_entry(name: str) -> Entry | None:
    """The registered benchmark `name` (its entry points scanned only on a miss: they never override a
    registered name; docs/performance.md, start-up), or None."""
    if name not in _BENCHMARKS:
        load_entry_points()
    return _BENCHMARKS.get(name)


def scorer_entry(kind: str) -> Entry | None:
    """The scorer kind registered from outside (decorator or entry point), or None."""
    if kind not in _SCORERS:
        load_entry_points()
    return _SCORERS.get(kind)


def step_entry(name: str) -> Entry | None:
    """The extraction step registered from outside (decorator or entry point), or None."""
    if name not in _STEPS:
        load_entry_points()
    return _STEPS.get(name)


def scorers() -> dict[str, str]:
    """Scorer kinds registered from outside -> descriptions."""
    load_entry_points()
    return {n: e.description for n, e in sorted(_SCORERS.items())}


def steps() -> dict[str, str]:
    """Extraction steps registered from outside -> descriptions."""
    load_entry_points()
    return {n: e.description for n, e in sorted(_STEPS.items())}


def load_model(spec: str, **opts: Any) -> Any:
    """Build a Model from a spec string `SCHEME:REST`."""
    scheme, _, rest = spec.partition(":")
    if scheme not in _MODELS:
        load_entry_points()
    if scheme not in _MODELS:
        raise SpecError(f"unknown model spec {spec!r}: it must start with one of {', '.join(_MODELS)}")
    return _MODELS[scheme].resolve()(rest, spec=spec, **opts)
