"""The `glotbench deepsea` commands: convert upstream files, score predictions, verify an archive, diagnose."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from glotbench.cli.options import Data, ErrorHandlingGroup, read_json, split_pairs, to_json

deepsea_app = typer.Typer(help="DeepSEA tools: convert upstream files, score predictions, verify an archive, diagnose the scorers.",
                          no_args_is_help=True, cls=ErrorHandlingGroup)

Task = Annotated[str, typer.Argument(help="mgsm, indommlu, xquad, crosssum or wmt24pp.")]


@deepsea_app.command("convert")
def deepsea_convert(
    task: Task,
    inputs: Annotated[list[str], typer.Argument(help="LANG=FILE pairs in the upstream format.")],
    out: Annotated[str, typer.Option("--out", "-o", help="The task file to write, in glotbench's DeepSEA layout.")],
    keep_bad_source: Annotated[bool, typer.Option(help="WMT24++: keep rows marked is_bad_source.")] = False,
) -> None:
    """Convert upstream files (MGSM TSV, IndoMMLU CSV, XQuAD JSON, CrossSum JSONL, WMT24++ JSONL)."""
    from pathlib import Path

    from glotbench.benchmarks.deepsea_tools import convert

    langs = {lang: convert(task, path, keep_bad_source=keep_bad_source)
             for lang, path in split_pairs(inputs, "inputs", "LANG=FILE")}
    Path(out).write_text(to_json({"task": task, "languages": langs}), encoding="utf-8")
    typer.echo(f"wrote {out}: " + ", ".join(f"{k} {len(v)}" for k, v in langs.items()))


@deepsea_app.command("score")
def deepsea_score(
    task: Task,
    predictions: Annotated[str, typer.Argument(help="JSON: {lang: [prediction, ...]} ({lang: {subject: [...]}} for indommlu).")],
    data: Data = None,
) -> None:
    """Score a predictions file with the task's rules; coverage is checked strictly, no model is called."""
    from glotbench.benchmarks.deepsea_tools import score_predictions

    typer.echo(to_json(score_predictions(task, data, read_json(predictions))))


@deepsea_app.command("verify-archive")
def deepsea_verify(
    archive: Annotated[str, typer.Argument(help="The release archive (zip or tar).")],
    sha256: Annotated[str, typer.Option("--sha256", help="The archive's pinned SHA-256.")],
    manifest: Annotated[Optional[str], typer.Option(help="Expected languages, counts and order hashes per task (JSON).")] = None,
) -> None:
    """Check a pinned archive without printing any benchmark text."""
    from glotbench.benchmarks.deepsea_tools import verify_archive

    rep = verify_archive(archive, sha256, manifest)
    typer.echo(to_json(rep))
    if not rep["ok"]:
        raise typer.Exit(1)


@deepsea_app.command("diagnostic")
def deepsea_diagnostic(seed: Annotated[int, typer.Option(help="Seed of the synthetic cases.")] = 0) -> None:
    """Run the scorer contract on synthetic cases; no model is called."""
    from glotbench.benchmarks.deepsea_tools import diagnostic

    d = diagnostic(seed)
    typer.echo(" ".join(f"{k}={v}" for k, v in d.items()))
    if d["reference_score_error"] != 0 or not d["coverage_rejections"].startswith(d["coverage_rejections"].split("/")[1]):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(deepsea_app, name="deepsea")
