"""One registry for benchmarks, model backends, task scorer kinds and extraction steps: the
decorators and tables (`glotbench.plugins`,
re-exported here, where users import them from), and `get_benchmark`, which turns a name into a
benchmark object.

A name is looked up as a registered benchmark (a built-in, a decorated class, an entry point of the
group `glotbench.benchmarks`), then as a task file (`hf/ORG/DATASET[/TASK_ID]@SHA`: a hub dataset's
Inspect eval.yaml, glotbench.tasks.inspect_yaml) (`glotbench.tasks.files`: `--include-path`
folders, then the shipped library; a path to a `.yaml` file is a task), then as a class named
directly: `glotbench run my_pkg.my_module:MyBenchmark`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from glotbench.errors import SpecError
from glotbench.plugins import (Entry, benchmark_entry, benchmarks, import_path, load_model, models, register_benchmark,
                               register_model, register_scorer, register_step, scorers, steps)

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark
    from glotbench.benchmarks.settings import RunSettings
    from glotbench.datasheet import Datasheet

__all__ = ["Entry", "Family", "benchmarks", "families", "get_benchmark", "load_model", "models",
           "register_benchmark", "register_model", "register_scorer", "register_step", "scorers", "steps",
           "task_copy"]


def get_benchmark(name: str, **options: Any) -> Benchmark:
    """A benchmark by registered name or by import path `pkg.module:Class`; `options` are its
    documented settings (`--bench-opt KEY=VALUE`), as text or typed values; text is converted to
    each setting's declared type (benchmarks/options.py)."""
    entry = benchmark_entry(name)
    if entry is not None:
        from glotbench.tasks.files import included_task

        if (shadow := included_task(name)) is not None:  # neither may win silently
            raise SpecError(f"{name} is a built-in benchmark and also the name of the task file {shadow} "
                            "(--include-path): rename the task (its name: key) to run it")
        target, kwargs = entry.resolve(), entry.kwargs
    elif (task := _task(name)) is not None:
        target, kwargs = task, {}
    elif ":" in name:
        target, kwargs = import_path(name), {}
    else:
        raise SpecError(f"unknown benchmark {name!r}; available: {', '.join(benchmarks())} "
                        "(or a task: a name from `glotbench tasks list`, or a FILE.yaml; "
                        "or MODULE:CLASS for a benchmark defined elsewhere)")
    return _build(name, target, kwargs, options)


def task_copy(copy: str, base_dir: str, **options: Any) -> Benchmark:
    """The benchmark of a run's copy of its task file (rundir: `task_file.copy`), its relative paths
    read from `base_dir` (the original file's folder), with the run's options, as `get_benchmark` builds it."""
    from glotbench.tasks import from_file

    return _build(copy, from_file(copy, base_dir), {}, options)


def _build(name: str, target: Any, kwargs: dict[str, Any], options: dict[str, Any]) -> Benchmark:
    from glotbench.benchmarks.base import Benchmark, contract_fault  # imported when a benchmark is wanted, not to list them
    from glotbench.benchmarks.settings import split_options

    options, settings = split_options(options)  # permute=, wrong_language=: every benchmark's run settings
    if isinstance(target, Benchmark):
        if options:
            raise SpecError(f"{name} is an instance; it takes no options")
        if (fault := contract_fault(target)) is not None:
            raise SpecError(f"{name}: {fault}")
        return _with_settings(target, settings)
    if isinstance(target, type) and (fault := contract_fault(target)) is not None:  # before its options are read
        raise SpecError(f"{name}: {fault}")
    from glotbench.benchmarks.options import convert_options

    typed = convert_options(target, options, name=name)  # text -> declared types; unknown names named
    try:
        bench = target(**kwargs, **typed)
    except TypeError as e:
        raise SpecError(f"bad option for {name}: {e}") from None
    if not isinstance(bench, Benchmark):
        raise SpecError(f"{name} did not give a glotbench Benchmark (got {type(bench).__name__})")
    if (fault := contract_fault(bench)) is not None:  # a declared fact missing or of another type
        raise SpecError(f"{name}: {fault}")
    return _with_settings(bench, settings)


def _with_settings(bench: Benchmark, settings: RunSettings) -> Benchmark:
    """`bench` with the run settings (benchmarks/settings.py): itself when they are the default, else
    a copy of the same class holding them (a registered instance is shared: never changed)."""
    if settings.default:
        return bench
    from glotbench.benchmarks.settings import replace

    return replace(bench, permute=settings.permute, wrong_language=settings.wrong_language)


def _task(name: str) -> Any:
    """The factory of a task file found by path or by name (glotbench.tasks.files), or None."""
    from glotbench.tasks import files

    if name.startswith("hf/"):  # a hub dataset's Inspect eval.yaml (glotbench.tasks.inspect_yaml)
        from glotbench.tasks.inspect_yaml import hub_factory

        return hub_factory(name)
    path = files.find_task(name)
    if path is None:
        return None
    from glotbench.tasks import from_file

    return from_file(path)


@dataclass(frozen=True)
class Family:
    """A benchmark family as `tasks list` shows it: a built-in benchmark or a task file by name,
    with its datasheet (None: it declares none, so it is in no language's list)."""

    name: str
    description: str
    datasheet: Datasheet | None
    task_file: bool


def families(language: str | None = None, problems: dict[str, str] | None = None) -> list[Family]:
    """Every benchmark and task found by name, sorted; with `language` (any spelling; its group by
    languages.language_group: `zh-TW` is `zh-Hant`, not `zh`), only those whose datasheet covers it. A task file that does not validate is left out
    (`tasks list` names it: files.unreadable, `tasks check` says why); `problems`, when given, gets
    each such file and its first error line (a `--language` listing or suite names them)."""
    from glotbench.benchmarks.base import Benchmark
    from glotbench.errors import GlotbenchError
    from glotbench.languages import language_group
    from glotbench.tasks import files

    out: dict[str, Family] = {}
    for name, desc in benchmarks().items():
        target = benchmark_entry(name).resolve()  # type: ignore[union-attr]  # listed, so registered
        ds = target.datasheet if isinstance(target, type) and issubclass(target, Benchmark) else None
        out[name] = Family(name, desc, ds, False)
    for name, desc in files.task_names().items():
        if name in out:
            continue
        try:
            spec, _ = files.read_task_file(files.find_task(name))  # type: ignore[arg-type]  # found by name
        except GlotbenchError as e:
            if problems is not None:
                problems[str(files.find_task(name))] = str(e).splitlines()[0]
            continue
        out[name] = Family(name, desc, spec.datasheet, True)
    if problems is not None:  # a file that is no task at all (not YAML, not UTF-8): named too
        problems.update({str(p): why for p, why in files.unreadable().items()})
    code = language_group(language) if language else None
    return [f for _, f in sorted(out.items())
            if code is None or (f.datasheet is not None and f.datasheet.options_for(code) is not None)]
