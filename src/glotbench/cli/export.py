"""`glotbench export`: finished runs as CSV or JSON rows, Every Eval Ever records (a folder of
`<uuid>.json` files) that keep each number's signature, interval, n, checks and data label, or the
Hugging Face Hub's `.eval_results/*.yaml` files."""

from __future__ import annotations

from typing import Annotated

import typer


def export(
    runs: Annotated[list[str], typer.Argument(help="Finished run directories, folders holding them (searched "
                                                 "recursively), or EEE records glotbench wrote (files or folders).")],
    fmt: Annotated[str, typer.Option("--format", help="csv, json, eee (Every Eval Ever), hf-eval-results (Hugging Face Hub; these two need --out) or bibtex (glotbench and each benchmark's citation).")] = "csv",
    out: Annotated[str | None, typer.Option("--out", help="csv/json: a file (default: print); eee, hf-eval-results: a folder.")] = None,
    hf_dataset: Annotated[str | None, typer.Option("--hf-dataset", help="hf-eval-results: the benchmark's dataset on the Hub (default: the task's hub: data).")] = None,
    hf_task: Annotated[str | None, typer.Option("--hf-task", help="hf-eval-results: its task_id (default: the data's config, else 'default').")] = None,
) -> None:
    """Finished runs' scores with what quoting them needs: value, interval and its method, n,
    signature, validity, data label and notes; EEE records also the checks' verdicts.
    hf-eval-results writes OUT/MODEL/.eval_results/BENCH.yaml: upload that folder to the
    model's Hub repo yourself (docs/reporting.md). bibtex: what to cite for these runs. An EEE
    record given back is read as the board reads it (its aggregates); --format eee writes it unchanged."""
    from pathlib import Path

    from functools import partial

    from glotbench.cli.options import not_replaced
    from glotbench.errors import GlotbenchError
    from glotbench.report import export as ex

    if fmt not in ex.FORMATS:
        raise GlotbenchError(f"--format must be one of {', '.join(ex.FORMATS)}, got {fmt!r}")
    found, left_out = ex.sources(runs)  # run directories, folders of runs, EEE records
    for x in left_out:
        typer.echo(f"left out: {x['path']}: {x['reason']}", err=True)
    runs = [str(p) for p in found]
    if fmt in ("eee", "hf-eval-results"):
        if not out:
            raise GlotbenchError(f"--format {fmt} writes one file per run: give a folder with --out")
        skipped: list[dict[str, str]] = []
        paths = (ex.write_eee(runs, out, skipped) if fmt == "eee" else ex.write_hf(
            runs, out, hf_dataset, hf_task, check=partial(not_replaced, marker=ex.WRITTEN[fmt], what="the export",
                                                          fix="give another --out, or move the file")))
        if skipped and not paths:
            raise GlotbenchError("nothing to export: " + "; ".join(f"{x['path']}: {x['reason']}" for x in skipped))
        for x in skipped:
            typer.echo(f"left out: {x['path']}: {x['reason']}", err=True)
        for path in paths:
            typer.echo(str(path))
        return
    if fmt == "bibtex":
        text, missing = ex.bibtex(runs)
        for line in missing:
            typer.echo(line, err=True)
    else:
        text = ex.to_csv(runs) if fmt == "csv" else ex.to_json(runs)
    if out:  # a file of the user's (one glotbench's export did not write) is never replaced
        not_replaced(Path(out), ex.WRITTEN[fmt], f"the {fmt} export", fix="give another --out, or move the file")
        Path(out).write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=False)


def register(app: typer.Typer) -> None:
    app.command()(export)
