"""`glotbench sweep` (a matrix of runs, locally, on Ray or on Slurm) and `glotbench runs` (the results store)."""

from __future__ import annotations

import json
from typing import Optional

import typer

from glotbench.cli.options import ErrorHandlingGroup, die as _die

runs_app = typer.Typer(help="The results store: list, show and index finished runs.", no_args_is_help=True,
                       cls=ErrorHandlingGroup)


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def sweep(
    sweep_file: str = typer.Argument(..., help="Sweep file (YAML): models, benchmarks, seeds, output root."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the runs, their model calls, tokens and (with prices) cost range; call no model."),
    ray: bool = typer.Option(False, "--ray", help="Run each run as a Ray task (a local Ray instance unless --ray-address)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS",
                                              help="An existing Ray cluster, e.g. ray://head:10001 or auto (implies --ray)."),
    slurm: bool = typer.Option(False, "--slurm", help="Run each run as a Slurm job through submitit (the sweep file's slurm: section)."),
    progress: bool = typer.Option(True, help="Show the progress view over the matrix."),
) -> None:
    """Run a matrix of models × benchmarks × seeds; finished runs are skipped, unfinished ones resume."""
    import asyncio

    from glotbench.engine.sweep import endpoint_budgets, expand, load_sweep
    from glotbench.errors import GlotbenchError

    try:
        spec = load_sweep(sweep_file)
        runs = expand(spec)
        budgets = endpoint_budgets(spec)
    except GlotbenchError as e:
        _die(str(e))
    if dry_run:
        from glotbench.engine.sweep_estimate import print_sweep_estimate

        print_sweep_estimate(runs, budgets, typer.echo)
        return
    if sum(bool(x) for x in (ray or ray_address, slurm)) > 1:
        _die("choose one executor: --ray or --slurm")
    try:
        if slurm:
            from glotbench.engine.sweep_slurm import run_slurm

            outcomes = run_slurm(spec, runs, progress=progress)
        elif ray or ray_address:
            from glotbench.engine.sweep_ray import run_ray

            outcomes = run_ray(spec, runs, address=ray_address, progress=progress)
        else:
            from glotbench.engine.sweep_run import run_local

            outcomes = asyncio.run(run_local(spec, runs, progress=progress))
    except GlotbenchError as e:
        _die(str(e))
    except KeyboardInterrupt:
        _die("interrupted; run the same sweep again to resume (finished runs are skipped)", 130)
    typer.echo(f"{'run':<60} {'status':<8} {'score':>8} {'calls':>6} {'time':>7}")
    for o in outcomes:
        typer.echo(f"{o.run.run_id:<60} {o.status:<8} {_fmt(o.score):>8} {o.calls:>6} {o.seconds:>6.1f}s"
                   + (f"  {o.error}" if o.error else ""))
    failed = sum(o.status == "failed" for o in outcomes)
    typer.echo(f"{len(outcomes) - failed} runs finished, {failed} failed; output under {spec.out}")
    if failed:
        raise typer.Exit(1)


def _store(db: Optional[str]):
    from glotbench.store import ResultsStore

    return ResultsStore(db)


DB_HELP = "Results store URL (default: SQLite under the cache directory, or GLOTBENCH_STORE_URL)."


@runs_app.command("ls")
def runs_ls(
    benchmark: Optional[str] = typer.Option(None, help="Only this benchmark."),
    model: Optional[str] = typer.Option(None, help="Only models whose spec contains this."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per run."),
) -> None:
    """List indexed runs: benchmark, model, headline score with its 95% CI, tokens, cost."""
    from glotbench.errors import GlotbenchError

    try:
        rows = _store(db).list(benchmark=benchmark, model=model)
    except GlotbenchError as e:
        _die(str(e))
    if as_json:
        for r in rows:
            typer.echo(json.dumps({"id": r.id, "benchmark": r.benchmark, "model": r.model, "headline": r.headline,
                                   "score": r.score, "ci_low": r.ci_low, "ci_high": r.ci_high,
                                   "run_dir": r.run_dir}, ensure_ascii=False))
        return
    typer.echo(f"{'id':>4} {'benchmark':<22} {'model':<40} {'metric':<16} {'score':>7} {'95% CI':>15} "
               f"{'tokens':>9} {'cost $':>8}")
    for r in rows:
        ci = f"{_fmt(r.ci_low)}–{_fmt(r.ci_high)}"
        typer.echo(f"{r.id:>4} {r.benchmark[:22]:<22} {r.model[:40]:<40} {r.headline[:16]:<16} {_fmt(r.score):>7} "
                   f"{ci:>15} {r.prompt_tokens + r.completion_tokens:>9} {_fmt(r.cost_usd, 4):>8}")
    typer.echo(f"{len(rows)} runs")


@runs_app.command("board")
def runs_board(
    benchmark: Optional[list[str]] = typer.Option(None, help="Only these benchmarks (repeatable)."),
    model: Optional[str] = typer.Option(None, help="Only models whose spec contains this."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
) -> None:
    """Models × benchmarks from the store: headline score and 95% CI (several runs: mean and range).
    Runs with different signatures (prompt, data, metric, options) get separate columns."""
    from glotbench.errors import GlotbenchError
    from glotbench.store.db import board

    try:
        rows = _store(db).list(model=model)
    except GlotbenchError as e:
        _die(str(e))
    if benchmark:
        rows = [r for r in rows if r.benchmark in benchmark]
    if not rows:
        _die("no runs in the results store match")
    columns, table = board(rows)
    width = max(len(m) for m in table) + 2
    cw = {c: max(len(c), *(len(t.get(c, "")) for t in table.values())) + 2 for c in columns}
    typer.echo("model".ljust(width) + "".join(c.ljust(cw[c]) for c in columns))
    for m, cells in table.items():
        typer.echo(m.ljust(width) + "".join(cells.get(c, "-").ljust(cw[c]) for c in columns))
    heads = sorted({(r.benchmark, r.headline) for r in rows})
    typer.echo("metrics: " + ", ".join(f"{b} {h}" for b, h in heads))


@runs_app.command("show")
def runs_show(
    ref: str = typer.Argument(..., help="Run id, run key (8+ hex characters) or run directory."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
) -> None:
    """Everything the store holds about one run, as JSON (scores per group with CIs included)."""
    from glotbench.errors import GlotbenchError

    try:
        r = _store(db).get(ref)
    except GlotbenchError as e:
        _die(str(e))
    cols = [c.name for c in r.__table__.columns]
    typer.echo(json.dumps({c: getattr(r, c) for c in cols}, default=str, ensure_ascii=False, indent=2))


@runs_app.command("import")
def runs_import(
    dirs: list[str] = typer.Argument(..., help="Run directories, or folders holding them (searched recursively)."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
) -> None:
    """Index existing run directories (those with a results.json); already indexed ones are kept once."""
    from glotbench.errors import GlotbenchError
    from glotbench.store.db import find_run_dirs, run_record

    try:
        store = _store(db)
        found = find_run_dirs(dirs)
    except GlotbenchError as e:
        _die(str(e))
    added = skipped = bad = 0
    for d in found:
        try:
            if store.add(run_record(d)):
                added += 1
            else:
                skipped += 1
        except GlotbenchError as e:
            bad += 1
            typer.echo(f"warning: {e}", err=True)
    typer.echo(f"{added} runs indexed, {skipped} already indexed, {bad} unreadable")
    if not found:
        _die(f"no run directories (with results.json) under {', '.join(dirs)}")
    if bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(sweep)
    app.add_typer(runs_app, name="runs")
