"""Benchmarks composed from named parts, from a task file (YAML) or from Python; both validate into
the same `TaskSpec` and build the same `TaskBenchmark`.

    from glotbench.tasks import task

    @task("belebele-lao-mini")
    def belebele_lao_mini(config: str = "lao_Laoo"):      # its parameters are --bench-opt settings
        return dict(
            version="1.0", language=config,
            data={"hub": "facebook/belebele", "config": config, "split": "test",
                  "revision": "c25c4d7bfbc5de244583947ba230fc4ee93d4a89", "files": f"data/{config}.jsonl"},
            fields={"id": "{{ link }}#{{ question_number }}", "public": {"passage": "flores_passage", "question": "question"},
                    "choices": ["mc_answer1", "mc_answer2", "mc_answer3", "mc_answer4"],
                    "gold": {"answer": "{{ correct_answer_num | letter(1) }}"}},
            prompt={"user": "{{ passage }}\\n\\n{{ question }}\\n{{ options }}\\n\\nAnswer with the letter."},
            extract={"letter": ["option_letter"]}, scorer="option_accuracy")

Every key is documented in docs/tasks.md; the three ways to add a benchmark side by side in
docs/extending.md.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from glotbench.tasks.files import Where, add_include_path, find_task, read_task_file, task_names, validate_spec

if TYPE_CHECKING:
    from glotbench.tasks.spec import TaskSpec


def __getattr__(name: str) -> Any:
    """`TaskSpec` imported when first asked for: a run of a built-in benchmark reads this package only
    to learn that no `--include-path` task shadows its name (registry.get_benchmark), and the spec
    module's import cost each such run 17-23 ms of CPU (docs/performance.md, issue 32)."""
    if name == "TaskSpec":
        from glotbench.tasks.spec import TaskSpec

        return TaskSpec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Task", "TaskSpec", "add_include_path", "find_task", "from_file", "task", "task_names"]


def Task(**keys: Any) -> TaskSpec:  # noqa: N802 - reads as the object it builds
    """A TaskSpec from its keys (dicts or parts), validated as a task file is; errors name the task."""
    return validate_spec(keys, Where(str(keys.get("name") or "task")))


def from_file(path: str | Path, base_dir: str | Path | None = None) -> Callable[..., Any]:
    """The factory of a task file: `from_file(p)(config="khm_Khmr")` is its TaskBenchmark. A plugin's
    entry point (group `glotbench.benchmarks`) may name such a factory. `base_dir`: where its relative
    paths (data, few-shot files) start, default the file's folder (a run's copy: the original's)."""
    from glotbench.tasks.benchmark import task_factory

    spec, where = read_task_file(path)
    return task_factory(spec, where, Path(base_dir or Path(path).resolve().parent))


def task(name: str | Callable[..., Any] | None = None, description: str = "") -> Any:
    """Register a function returning a task's keys (a dict, or a TaskSpec) as a benchmark. Its
    parameters are the run's `--bench-opt` settings (typed by their annotations); the settings every
    task has (method, shots, prompt, ...) come on top. The name defaults to the function's."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        from glotbench.plugins import register_benchmark
        from glotbench.tasks.benchmark import BUILTIN_OPTIONS, TaskBenchmark
        from glotbench.tasks.spec import TaskSpec

        task_name = name if isinstance(name, str) else fn.__name__.replace("_", "-")
        own = inspect.signature(fn).parameters
        clash = set(own) & set(BUILTIN_OPTIONS)
        if clash:
            raise ValueError(f"@task {task_name}: {sorted(clash)[0]!r} is a setting every task has")

        def make(**options: Any) -> TaskBenchmark:
            keys = fn(**{k: v for k, v in options.items() if k in own})
            spec = keys if isinstance(keys, TaskSpec) else Task(**{"name": task_name, **keys})
            return TaskBenchmark(spec, None, None, **{k: v for k, v in options.items() if k not in own})

        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own.values()]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=t)
                   for k, (d, t, _) in BUILTIN_OPTIONS.items()]
        make.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        make.__annotations__ = {**{k: p.annotation for k, p in own.items() if p.annotation is not p.empty},
                                **{k: t for k, (_, t, _) in BUILTIN_OPTIONS.items()}}
        make.__name__ = make.__qualname__ = task_name
        make.__module__ = fn.__module__
        register_benchmark(task_name, description or (fn.__doc__ or "").strip().split("\n")[0])(make)
        return make

    return deco(name) if callable(name) else deco
