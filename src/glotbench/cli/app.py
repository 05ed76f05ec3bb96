"""The `glotbench` command: the typer app and `main()`. Commands live in one module per group; each
parses options, calls one library function and prints. Heavy modules are imported inside the commands
so start-up stays fast; every input error is handled once, by `options.ErrorHandlingGroup`."""

from __future__ import annotations

import typer

from glotbench.cli import build, data, deepsea, judged, run, service, sweep
from glotbench.cli.options import ErrorHandlingGroup

app = typer.Typer(
    help="Evaluate large language models in low-resource languages.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=ErrorHandlingGroup,
)

for _group in (run, judged, data, deepsea, service, sweep, build):
    _group.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
