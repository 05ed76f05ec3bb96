"""`glotbench export`: finished runs as CSV or JSON rows, or Every Eval Ever records (a folder of
`<uuid>.json` files) that keep each number's signature, interval, n, checks and data label."""

from __future__ import annotations

from typing import Annotated

import typer


def export(
    runs: Annotated[list[str], typer.Argument(help="Finished run directories.")],
    fmt: Annotated[str, typer.Option("--format", help="csv, json, or eee (Every Eval Ever: needs --out).")] = "csv",
    out: Annotated[str | None, typer.Option("--out", help="csv/json: a file (default: print); eee: a folder.")] = None,
) -> None:
    """Finished runs' scores with what quoting them needs: value, interval and its method, n,
    signature, validity, data label and notes; EEE records also the checks' verdicts."""
    from pathlib import Path

    from glotbench.errors import GlotbenchError
    from glotbench.report import export as ex

    if fmt not in ex.FORMATS:
        raise GlotbenchError(f"--format must be one of {', '.join(ex.FORMATS)}, got {fmt!r}")
    if fmt == "eee":
        if not out:
            raise GlotbenchError("--format eee writes one file per run: give a folder with --out")
        for path in ex.write_eee(runs, out):
            typer.echo(str(path))
        return
    text = ex.to_csv(runs) if fmt == "csv" else ex.to_json(runs)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=False)


def register(app: typer.Typer) -> None:
    app.command()(export)
