"""`glotbench rescore`: finished runs scored again under other documented settings, or (--checks) their
checks computed again from the stored outputs (hidden alias `checks`); neither calls a model."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from glotbench.cli.options import MetricCheckpoint, Moved, alias, use_moved


def rescore(
    runs: Annotated[list[str], typer.Argument(help="Run directories, or folders searched for runs.")],
    variant: Annotated[list[str], typer.Option("--variant", help="A setting NAME=VALUE to score under (repeatable): segmenter=laonlp|khmercut|pyidaungsu|charcluster|none, bleu_tokenize=13a|intl|char|none|...|spm:PATH (spBLEU with the local SentencePiece model file at PATH), norm=nfc|nfkc|vi_tone|ar_harakat|lao_am|zawgyi, f1_norm=unicode|squad.")] = [],
    agreement: Annotated[bool, typer.Option("--agreement", help="Also Kendall's tau between every two metric columns (each metric as run and under each --variant that changes it), per benchmark and language: over the segments' sentence scores (from one run on) and over the runs' scores (from 3 runs on).")] = False,
    metric_checkpoint: MetricCheckpoint = None,
    moved: Moved = [],
    fmt: Annotated[str, typer.Option("--format", help="md or json.")] = "md",
    out: Annotated[Optional[str], typer.Option("--out", help="Also write the JSON to this file.")] = None,
    checks_: Annotated[bool, typer.Option("--checks", help="Compute each run's checks (language, extraction bounds, error types, token premium) again from samples.jsonl and the run's data (SHA-256 checked), for runs made before a check existed; prints the JSON.")] = False,
    write: Annotated[bool, typer.Option("--write", help="With --checks: write the block into the run's results.json (`checks`).")] = False,
) -> None:
    """Score finished runs again from their stored answers under other settings (no model call):
    each variant's scores, the models' ranking under it, and the pairs whose order flips; --checks:
    the runs' checks computed again."""
    from glotbench.errors import GlotbenchError

    if fmt not in ("md", "json"):
        raise GlotbenchError(f"--format must be md or json, got {fmt!r}")
    if write and not checks_:
        raise GlotbenchError("--write needs --checks")
    use_moved(moved)
    if checks_:
        if variant or out or agreement or metric_checkpoint:
            raise GlotbenchError("--checks recomputes the stored checks: drop --variant, --agreement, --metric-checkpoint and --out")
        blocks = {run: recheck(run, write) for run in runs}
        typer.echo(json.dumps(blocks[runs[0]] if len(runs) == 1 else blocks, ensure_ascii=False, indent=2))
        return
    from glotbench.checks.rescore import rescore as run_rescore
    from glotbench.report.checks_text import rescore_markdown

    got = run_rescore(runs, variant, agreement, metric_checkpoint)
    text = json.dumps(got, ensure_ascii=False, indent=2) + "\n"
    if out:
        from pathlib import Path

        Path(out).write_text(text, encoding="utf-8")
    for x in got["left_out"]:
        typer.echo(f"left out: {x['path']}: {x['reason']}", err=True)
    typer.echo(text if fmt == "json" else rescore_markdown(got), nl=False)


def checks(
    run: Annotated[str, typer.Argument(help="A finished run directory.")],
    write: Annotated[bool, typer.Option("--write", help="Write the block into the run's results.json (`checks`).")] = False,
) -> None:
    """A finished run's checks computed again: now `glotbench rescore --checks`."""
    typer.echo(json.dumps(recheck(run, write), ensure_ascii=False, indent=2))


def recheck(run: str, write: bool) -> dict:
    """A finished run's checks block computed again from its stored outputs (and written when asked)."""
    from glotbench.checks.stored import checks_of_run, write_checks

    block = checks_of_run(run)
    if write:
        write_checks(run, block)
    return block


def register(app: typer.Typer) -> None:
    app.command()(rescore)
    alias(app, "checks", checks)
