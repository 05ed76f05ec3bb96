"""The `glotbench` command: the typer app and `main()`. Commands live in one module per group; each
parses options, calls one library function and prints. Heavy modules are imported inside the commands
so start-up stays fast; every input error is handled once, by `options.ErrorHandlingGroup`.

`main()` runs an app holding only the module that registers the command being run: typer builds
every registered command's parser on each start (0.04-0.05 s for all of them, 0.01 s for one
group). `glotbench --help`, an unknown command and `app` (tests, embedding) have them all."""

from __future__ import annotations

import importlib
import sys
from typing import Iterable

import typer

from glotbench.cli.options import ErrorHandlingGroup

# The top-level commands (and command groups) each module registers, in `--help` order;
# tests/test_cli.py checks this table against what the modules really register.
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("list", "run", "report", "score", "compare", "board"),
    "prompt": ("prompt",),
    "judged": ("arena", "arena-report", "aragen", "judge-audit"),
    "data": ("contamination",),
    "deepsea": ("deepsea",),
    "service": ("serve", "service"),
    "sweep": ("sweep", "runs"),
    "build": ("build",),
    "tasks": ("tasks",),
    "checks": ("rescore", "checks"),
    "stats": ("plan", "diff", "arena-rank"),
    "export": ("export",),
}


def build_app(modules: Iterable[str] = COMMANDS) -> typer.Typer:
    """The typer app with the commands of `modules` (names of `glotbench.cli` modules)."""
    app = typer.Typer(
        help="Evaluate large language models in low-resource languages.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        cls=ErrorHandlingGroup,
    )
    # A callback keeps the app a group: typer runs an app of one plain command (`contamination`, the
    # data module's only one) as that command itself, without the error handler, its name taken
    # as the command's first argument.
    app.callback()(_group)
    for name in modules:
        importlib.import_module(f"glotbench.cli.{name}").register(app)
    return app


def _group() -> None:
    """Evaluate large language models in low-resource languages."""


def modules_for(argv: list[str]) -> list[str]:
    """The modules needed to run `argv`: the one registering its command, or all of them (help,
    no command, a command that does not exist: the usage message lists every command)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if any(a in ("--help", "-h") for a in argv[:argv.index(command) if command in argv else len(argv)]):
        return list(COMMANDS)  # `glotbench --help run`: the top-level help, eager
    return [m for m, names in COMMANDS.items() if command in names] or list(COMMANDS)


app = build_app()  # every command: for tests, embedding and `typer.testing.CliRunner`


def main() -> None:
    """The console script. The cyclic garbage collector is tuned for a command-line process: a run
    allocates hundreds of thousands of small, acyclic objects (items, samples, score dicts), which
    at the default threshold (700) trigger a young collection every few items and several full ones
    over every imported module. Measured on a 10,000-item run: 0.55 s in the collector at the
    default, 0.13 s with these settings (docs/performance.md). Library callers keep Python's default."""
    import gc
    import os

    gc.set_threshold(10_000, 10, 10)
    gc.freeze()  # what start-up imported is never garbage: full collections skip it
    gc.enable()  # `glotbench.__main__` starts with the collector off
    # Pydantic plugins (observability hooks) are found by scanning every installed distribution's
    # entry points when the first schema is built (docs/performance.md, start-up). Our row
    # schemas use none, so the command turns them off as typer does for its own adapters, unless the
    # user set PYDANTIC_DISABLE_PLUGINS (an empty value loads them all again).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        # the name in usage lines is the console script's, however it was started (`python -m`, a fork)
        build_app(modules_for(sys.argv[1:]))(prog_name="glotbench")
    finally:
        gc.freeze()  # the interpreter's last collection at exit then skips the run's objects


if __name__ == "__main__":
    main()
