"""`glotbench tasks`: the task files glotbench finds (the shipped library and `--include-path`
folders), and a check of a task file without running it."""

from __future__ import annotations

from typing import Annotated

import typer

from glotbench.cli.options import ErrorHandlingGroup

tasks_app = typer.Typer(help="Task files: benchmarks composed in YAML (docs/tasks.md).", cls=ErrorHandlingGroup,
                        no_args_is_help=True)
IncludePath = Annotated[list[str], typer.Option("--include-path", help="Also a folder of task files (repeatable).")]


@tasks_app.command("list")
def list_tasks(include_path: IncludePath = []) -> None:
    """The tasks found by name: the --include-path folders first, then the shipped library."""
    from glotbench.tasks import add_include_path, task_names

    for folder in include_path:
        add_include_path(folder)
    for name, desc in sorted(task_names().items()):
        typer.echo(f"  {name:<16} {desc}")


@tasks_app.command("check")
def check(
    task: Annotated[str, typer.Argument(help="A task file, or a task's name.")],
    bench_opt: Annotated[list[str], typer.Option("--bench-opt", help="A setting KEY=VALUE (repeatable).")] = [],
    data: Annotated[str | None, typer.Option(help="Also load this data file (in the hub's schema) and render its first item.")] = None,
    include_path: IncludePath = [],
) -> None:
    """Validate a task (every error FILE:LINE: field: problem) and print its signature parts; with
    --data, load the rows and show the first item's prompt. Calls no model."""
    from glotbench.cli.options import split_pairs
    from glotbench.registry import get_benchmark
    from glotbench.tasks import add_include_path

    for folder in include_path:
        add_include_path(folder)
    bench = get_benchmark(task, **dict(split_pairs(list(bench_opt))))
    typer.echo(f"{bench.name} v{bench.version}: ok")
    for k, v in bench.signature_parts().items():
        typer.echo(f"  {k}: {v}")
    if data is not None:
        dataset = bench.load(data)
        prompt = bench.render(dataset[0].to_public())
        typer.echo(f"{len(dataset)} items from {dataset.source}; the first item's prompt:")
        for m in prompt.messages:
            typer.echo(f"[{m['role']}]\n{m['content']}")


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
