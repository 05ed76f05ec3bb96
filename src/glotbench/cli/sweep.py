"""`glotbench sweep` (a matrix of runs, locally, on Ray or on Slurm) and `glotbench runs` (the results store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from glotbench.cli.options import ErrorHandlingGroup, die as _die

runs_app = typer.Typer(help="The results store: list, show and index finished runs.", no_args_is_help=True,
                       cls=ErrorHandlingGroup)


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _score(x: float | None, scale: str | None) -> str:
    """A score in the unit every human-facing line uses: percent, or points (report/terminal.py)."""
    from glotbench.report.terminal import scaled

    return "-" if x is None else scaled(x, scale)


def _unit(scale: str | None) -> str:
    from glotbench.report.terminal import UNIT

    return UNIT.get(scale, "?")


def sweep(
    sweep_file: Optional[str] = typer.Argument(None, help="Sweep file (YAML): models, benchmarks, seeds, output root "
                                                          "(with --language: optional, its models and settings)."),
    language: Optional[str] = typer.Option(None, "--language", "-l", help="Run every benchmark family whose datasheet "
                                           "covers this language (lo, km, my, th, vi, id, tl...), with the options selecting it."),
    model: list[str] = typer.Option([], "--model", "-m", help="With --language: a model spec (repeatable)."),
    out: Optional[str] = typer.Option(None, "--out", "-o", help="With --language: the output root (default runs/suite-LANG)."),
    data: Optional[str] = typer.Option(None, "--data", help="With --language, offline: a folder of NAME.jsonl (.json, "
                                       ".parquet) files in each task's hub schema; a task without one is skipped."),
    include_path: list[str] = typer.Option([], "--include-path", help="Also a folder of task files (repeatable)."),
    judge: list[str] = typer.Option([], "--judge", help="With --language: a judge of the judged tasks (repeatable)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the runs, their model calls, tokens and (with prices) cost range; call no model."),
    ray: bool = typer.Option(False, "--ray", help="Run each run as a Ray task (a local Ray instance unless --ray-address)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS",
                                              help="An existing Ray cluster, e.g. ray://head:10001 or auto (implies --ray)."),
    slurm: bool = typer.Option(False, "--slurm", help="Run each run as a Slurm job through submitit (the sweep file's slurm: section)."),
    progress: bool = typer.Option(True, help="Show the progress view over the matrix."),
    max_failure_rate: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="Override the sweep file's max_failure_rate (default 0.05): above it a run is invalid."),
) -> None:
    """Run a matrix of models × benchmarks × seeds; finished runs are skipped, unfinished and invalid
    ones resume. Exit 1: a run failed; exit 3: a run is invalid (too many failed model calls)."""
    import asyncio

    from glotbench.engine.sweep import endpoint_budgets, expand, load_sweep
    from glotbench.rundir.validity import INVALID_RUN_EXIT
    from glotbench.errors import GlotbenchError

    from glotbench.tasks import add_include_path

    for folder in include_path:
        add_include_path(folder)
    suite = None
    try:
        if language is not None:
            spec, suite = _language_spec(language, sweep_file, model, out, data, judge)
        elif sweep_file is None:
            _die("give a sweep file, or --language CODE with --model SPEC")
        else:
            if model or out or data or judge:
                _die("--model, --out, --data and --judge go with --language (a sweep file names its own)")
            spec = load_sweep(sweep_file)
        if max_failure_rate is not None:
            spec = spec.model_copy(update={"max_failure_rate": max_failure_rate})
        runs = expand(spec)
        budgets = endpoint_budgets(spec)
    except GlotbenchError as e:
        _die(str(e))
    if suite is not None:
        typer.echo(f"{suite.language}: {len(suite.benchmarks)} benchmark families in the suite"
                   + (f", {len(suite.skipped)} skipped" if suite.skipped else ""))
        for name, why in suite.skipped:
            typer.echo(f"skipped {name}: {why}")
        if data and (line := suite.unread_line(data)):
            typer.echo(f"warning: {line}", err=True)
    if dry_run:
        from glotbench.engine.sweep_estimate import print_sweep_estimate

        print_sweep_estimate(runs, budgets, typer.echo)
        return
    if sum(bool(x) for x in (ray or ray_address, slurm)) > 1:
        _die("choose one executor: --ray or --slurm")
    from glotbench.cli.options import print_endpoints

    for m in spec.models:  # where each model's requests go, before the first run starts
        print_endpoints([(f"model {m.label}", m.spec)], m.api_key_env)
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
    from glotbench.report.terminal import FEW_NOTE, interval_text

    # the headline as every view prints it: value, 95% interval (with † on too few units) and n
    texts = [interval_text(o.estimate, o.scale) if o.estimate else _score(o.score, o.scale) for o in outcomes]
    w = max([24, *map(len, texts)])
    typer.echo(f"{'run':<60} {'status':<8} {'score (95% CI) n':<{w}} {'unit':<6} {'calls':>6} {'time':>7}")
    for o, text in zip(outcomes, texts):
        unit = _unit(o.scale) if o.score is not None else ""
        typer.echo(f"{o.run.run_id:<60} {o.status:<8} {text:<{w}} {unit:<6} {o.calls:>6} "
                   f"{o.seconds:>6.1f}s" + (f"  {o.error}" if o.error else "") + "".join(f"  [{n}]" for n in o.notes))
    if any((o.estimate or {}).get("too_few_units") for o in outcomes):
        typer.echo(FEW_NOTE)
    failed = sum(o.status == "failed" for o in outcomes)
    invalid = sum(o.status == "invalid" for o in outcomes)
    typer.echo(f"{len(outcomes) - failed - invalid} runs finished, {failed} failed"
               + (f", {invalid} invalid" if invalid else "") + f"; output under {spec.out}")
    if invalid:
        typer.echo(f"error: {invalid} run(s) invalid: more than {spec.max_failure_rate:g} of their model calls failed "
                   "(see each run's line); run the same sweep again to finish them from the call cache", err=True)
    if failed:
        raise typer.Exit(1)
    if invalid:
        raise typer.Exit(INVALID_RUN_EXIT)


def _language_spec(language: str, sweep_file: Optional[str], models: list[str], out: Optional[str],
                   data: Optional[str], judges: list[str]):
    """The sweep of a language's suite: the sweep file's models and settings (or --model), the
    benchmarks every family covering the language (engine/sweep.py `language_suite`)."""
    from glotbench.engine.sweep import language_suite, parse_sweep, read_sweep_file

    body = read_sweep_file(sweep_file) if sweep_file is not None else {}
    if not isinstance(body, dict):
        _die(f"{sweep_file}: a sweep file is a mapping (with --language: models and settings)")
    if models:
        body["models"] = [{"spec": m} for m in models]
    if not body.get("models"):
        _die("--language needs a model: --model SPEC (repeatable), or a sweep file with models")
    if judges:
        body["judges"] = list(judges)
    suite = language_suite(language, data, tuple(str(j) for j in body.get("judges") or ()))
    body["benchmarks"] = [b.model_dump(exclude_defaults=True) for b in suite.benchmarks]
    body["out"] = out or body.get("out") or f"runs/suite-{suite.language}"
    return parse_sweep(body, str(sweep_file) if sweep_file else f"the {suite.language} suite"), suite


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
    """List indexed runs: benchmark, model, headline score with its 95% CI (percent, or points for
    a points metric; --json keeps the stored fractions), items scored (of how many), tokens, cost,
    and what to read with the number (invalid, subset, sample data, a judge not validated)."""
    from glotbench.errors import GlotbenchError
    from glotbench.store.db import row_notes

    try:
        rows = _store(db).list(benchmark=benchmark, model=model)
    except GlotbenchError as e:
        _die(str(e))
    if as_json:
        for r in rows:
            head = _headline(r)
            typer.echo(json.dumps({"id": r.id, "benchmark": r.benchmark, "model": r.model, "headline": r.headline,
                                   "score": r.score, "ci_low": r.ci_low, "ci_high": r.ci_high, "scale": r.scale,
                                   "n": head.get("n"), "clusters": head.get("clusters"),
                                   "ci_method": head.get("ci_method"), "too_few_units": bool(head.get("too_few_units")),
                                   "selection": r.selection, "validity": r.validity, "data_label": r.data_label,
                                   "judge_validation": r.judge_validation,
                                   "run_dir": r.run_dir}, ensure_ascii=False))
        return
    from glotbench.report.terminal import ci_text, n_text

    typer.echo(f"{'id':>4} {'benchmark':<22} {'model':<40} {'metric':<16} {'score':>7} {'95% CI':>15} {'n':>9} "
               f"{'unit':<6} {'items':>9} {'tokens':>9} {'cost $':>8}")
    for r in rows:
        head = _headline(r)
        ci = ci_text(head, r.scale) or "-"  # `(55.0–69.1)†`, as every view prints an interval
        sel = r.selection or {}
        items = f"{r.items}/{sel['of']}" if sel.get("of") is not None else str(r.items)
        typer.echo(f"{r.id:>4} {r.benchmark[:22]:<22} {r.model[:40]:<40} {r.headline[:16]:<16} "
                   f"{_score(r.score, r.scale):>7} {ci:>15} {n_text(head) or '-':>9} {_unit(r.scale):<6} "
                   f"{items:>9} {r.prompt_tokens + r.completion_tokens:>9} {_fmt(r.cost_usd, 4):>8}"
                   + "".join(f"  [{t}]" for t in row_notes(r)))
    typer.echo(f"{len(rows)} runs" + ("; ? = indexed before the unit was recorded (the stored number)"
                                      if any(r.scale is None for r in rows) else "")
               + ("; n: the units the interval rests on (items, ‡ clusters)" if rows else "")
               + ("; † = too few units for the interval's measured coverage (docs/metrics.md)"
                  if any(_headline(r).get("too_few_units") for r in rows) else ""))


@runs_app.command("board")
def runs_board(
    benchmark: Optional[list[str]] = typer.Option(None, help="Only these benchmarks (repeatable)."),
    model: Optional[str] = typer.Option(None, help="Only models whose spec contains this."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
) -> None:
    """Models × benchmarks from the store: headline score and 95% CI (several runs: mean and range).
    Runs with different signatures (prompt, data, metric, options) get separate columns."""
    from glotbench.errors import GlotbenchError
    from glotbench.store.db import board, board_columns

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
    heads = sorted({(r.benchmark, r.headline, _unit(r.scale)) for r in rows})
    typer.echo("metrics: " + ", ".join(f"{b} {h} ({u})" for b, h, u in heads)
               + "; 95% CI, n: the units it rests on (items, ‡ clusters)")
    if any(_headline(r).get("too_few_units") for r in rows):
        from glotbench.report.terminal import FEW_NOTE

        typer.echo(FEW_NOTE)
    typer.echo("columns:")  # what each column's numbers are of: its items, and sample data
    for col, text in board_columns(rows).items():
        typer.echo(f"  {col}: {text}")


@runs_app.command("show")
def runs_show(
    ref: str = typer.Argument(..., help="Run id, run key (8+ hex characters) or run directory."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Everything the store holds, as JSON (scores as stored: fractions)."),
) -> None:
    """One run from the store: its headline and every group's score with the 95% CI (percent, or
    points for a points metric), counts, tokens, cost and directory; --json for the whole row."""
    from glotbench.errors import GlotbenchError

    try:
        r = _store(db).get(ref)
    except GlotbenchError as e:
        _die(str(e))
    if as_json:
        cols = [c.name for c in r.__table__.columns]
        typer.echo(json.dumps({c: getattr(r, c) for c in cols}, default=str, ensure_ascii=False, indent=2))
        return
    _show_run(r)


def _show_run(r) -> None:
    from glotbench.report.terminal import FEW_NOTE, interval_text, visible

    def est(e: dict | None) -> str:
        return interval_text(e, r.scale, none="-")  # `62.3 (55.0–69.1)† n=12‡4`

    unit = {"%": "percent", "points": "points (0–100)"}.get(_unit(r.scale), "unknown unit (indexed before it was recorded)")
    from glotbench.store.db import row_notes

    lines = [f"run {r.id}: {r.benchmark} v{r.benchmark_version} · {r.model}",
             f"{r.headline}: {est(_headline(r))}   [{unit}, 95% CI]", *row_notes(r)]
    for key, groups in (r.scores.get("groups") or {}).items():
        lines.append(f"by {key}:")
        lines += [f"  {value}: {est((g or {}).get(r.headline))}" for value, g in groups.items()]
    lines += [f"items {r.items} · failed {r.failed} · tokens in {r.prompt_tokens} out {r.completion_tokens}"
              + (f" · cost ${r.cost_usd:.4f}" if r.cost_usd is not None else ""),
              f"started {r.started} · finished {r.finished}", f"directory: {r.run_dir}", f"signature: {r.signature}"]
    ests = [_headline(r), *((g or {}).get(r.headline) for groups in (r.scores.get("groups") or {}).values()
                            for g in groups.values())]
    if any((e or {}).get("clusters") for e in ests):
        lines.append(f"n=items‡clusters: the interval counts clusters (clusters: {(r.scores.get('clusters') or {}).get('key')})")
    if any((e or {}).get("too_few_units") for e in ests):
        lines.append(FEW_NOTE)
    for line in lines:
        typer.echo(visible(line))


def _headline(r) -> dict:
    """The headline's estimate as the store holds it (the overall row of its scores)."""
    from glotbench.store.db import headline_estimate

    return headline_estimate(r)


@runs_app.command("import")
def runs_import(
    dirs: list[str] = typer.Argument(..., help="Run directories, or folders holding them (searched recursively)."),
    db: Optional[str] = typer.Option(None, help=DB_HELP),
) -> None:
    """Index existing run directories (those with a results.json); already indexed ones are kept once,
    their rows refreshed with what the directory reads as today (its validity by today's rules)."""
    from glotbench.errors import GlotbenchError
    from glotbench.store.db import find_run_dirs, run_record, unfinished_run_dirs

    try:
        store = _store(db)
        found = find_run_dirs(dirs)
    except GlotbenchError as e:
        _die(str(e))
    unfinished = unfinished_run_dirs(dirs)
    for d, why in unfinished:  # skipped, one line each: never without a word
        typer.echo(f"warning: {d}: skipped: {why}", err=True)
    seen = [Path(d).resolve() for d in (*found, *(u for u, _ in unfinished))]
    for given in dirs if found else ():  # none found at all: the error below says so
        if not any(d == Path(given).resolve() or Path(given).resolve() in d.parents for d in seen):
            typer.echo(f"warning: {given}: skipped: no run directory (results.json or run.json) in it", err=True)
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
    typer.echo(f"{added} runs indexed, {skipped} already indexed, {bad} unreadable"
               + (f", {len(unfinished)} unfinished (skipped)" if unfinished else ""))
    if not found:
        _die(f"no run directories (with results.json) under {', '.join(dirs)}")
    if bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(sweep)
    app.add_typer(runs_app, name="runs")
