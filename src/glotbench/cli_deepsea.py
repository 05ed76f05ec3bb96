"""The `glotbench deepsea` commands (registered by glotbench.cli)."""

from __future__ import annotations

from typing import Optional

import typer

from glotbench.cli_common import die as _die

deepsea_app = typer.Typer(help="DeepSEA tools: convert upstream files, score predictions, verify an archive, diagnose the scorers.",
                          no_args_is_help=True)


@deepsea_app.command("convert")
def deepsea_convert(
    task: str = typer.Argument(..., help="mgsm, indommlu, xquad, crosssum or wmt24pp."),
    inputs: list[str] = typer.Argument(..., help="LANG=FILE pairs in the upstream format."),
    out: str = typer.Option(..., "--out", "-o", help="The task file to write, in glotbench's DeepSEA layout."),
    keep_bad_source: bool = typer.Option(False, help="WMT24++: keep rows marked is_bad_source."),
) -> None:
    """Convert upstream files (MGSM TSV, IndoMMLU CSV, XQuAD JSON, CrossSum JSONL, WMT24++ JSONL)."""
    import json as _json

    from glotbench.benchmarks.deepsea_tools import convert
    from glotbench.errors import GlotbenchError

    langs = {}
    try:
        for pair in inputs:
            lang, sep, path = pair.partition("=")
            if not sep:
                raise GlotbenchError(f"inputs are LANG=FILE, got {pair!r}")
            langs[lang] = convert(task, path, keep_bad_source=keep_bad_source)
    except GlotbenchError as e:
        _die(str(e))
    except (KeyError, ValueError) as e:
        _die(f"cannot convert: {type(e).__name__}: {e}")
    from pathlib import Path

    Path(out).write_text(_json.dumps({"task": task, "languages": langs}, ensure_ascii=False, indent=1), encoding="utf-8")
    typer.echo(f"wrote {out}: " + ", ".join(f"{k} {len(v)}" for k, v in langs.items()))


@deepsea_app.command("score")
def deepsea_score(
    task: str = typer.Argument(..., help="mgsm, indommlu, xquad, crosssum or wmt24pp."),
    predictions: str = typer.Argument(..., help="JSON: {lang: [prediction, ...]} ({lang: {subject: [...]}} for indommlu)."),
    data: Optional[str] = typer.Option(None, help="The task file (default: the bundled sample)."),
) -> None:
    """Score a predictions file with the task's rules; coverage is checked strictly, no model is called."""
    import json as _json
    from pathlib import Path

    from glotbench.benchmarks.deepsea_tools import score_predictions
    from glotbench.errors import GlotbenchError

    try:
        preds = _json.loads(Path(predictions).read_text(encoding="utf-8"))
        typer.echo(_json.dumps(score_predictions(task, data, preds), indent=2, ensure_ascii=False))
    except GlotbenchError as e:
        _die(str(e))
    except (OSError, ValueError) as e:
        _die(f"cannot read {predictions}: {e}")


@deepsea_app.command("verify-archive")
def deepsea_verify(
    archive: str = typer.Argument(..., help="The release archive (zip or tar)."),
    sha256: str = typer.Option(..., "--sha256", help="The archive's pinned SHA-256."),
    manifest: Optional[str] = typer.Option(None, help="Expected languages, counts and order hashes per task (JSON)."),
) -> None:
    """Check a pinned archive without printing any benchmark text."""
    import json as _json

    from glotbench.benchmarks.deepsea_tools import verify_archive
    from glotbench.errors import GlotbenchError

    try:
        rep = verify_archive(archive, sha256, manifest)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(_json.dumps(rep, indent=2))
    if not rep["ok"]:
        raise typer.Exit(1)


@deepsea_app.command("diagnostic")
def deepsea_diagnostic(seed: int = typer.Option(0, help="Seed of the synthetic cases.")) -> None:
    """Run the scorer contract on synthetic cases; no model is called."""
    from glotbench.benchmarks.deepsea_tools import diagnostic

    d = diagnostic(seed)
    typer.echo(" ".join(f"{k}={v}" for k, v in d.items()))
    if d["reference_score_error"] != 0 or not d["coverage_rejections"].startswith(d["coverage_rejections"].split("/")[1]):
        raise typer.Exit(1)


