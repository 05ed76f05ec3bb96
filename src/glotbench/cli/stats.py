"""`glotbench plan`: how many items a comparison needs; which items two runs disagree on (`compare
--items`, hidden alias `diff`); arena candidates ranked without a fixed anchor (`board --bt`, hidden
alias `arena-rank`)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from glotbench.cli.options import BenchOpt, Data, alias, html_option, html_page, split_pairs, to_json

Fmt = Annotated[str, typer.Option("--format", help="text (default) or json.")]


def _fmt(fmt: str) -> None:
    if fmt not in ("text", "json"):
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"--format must be text or json, got {fmt!r}")


def plan(
    benchmark: Annotated[Optional[str], typer.Argument(help="A benchmark or task: its items (and clusters) are n.")] = None,
    data: Data = None,
    bench_opt: BenchOpt = [],  # noqa: B006
    items: Annotated[Optional[int], typer.Option(help="n items, instead of a benchmark.")] = None,
    runs: Annotated[list[str], typer.Option("--runs", help="Two finished runs on the same items (give twice): n, base rate, correlation and design effect measured from them.")] = [],  # noqa: B006
    base_rate: Annotated[Optional[float], typer.Option(help="The models' expected accuracy (0-1).")] = None,
    correlation: Annotated[Optional[float], typer.Option(help="Correlation (phi) of the two models' per-item outcomes (default: from --runs, else 0.5 assumed).")] = None,
    design_effect: Annotated[Optional[float], typer.Option(help="Clustered items count as n / design effect (a clustered run's design_effect).")] = None,
    alpha: Annotated[float, typer.Option(help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option(help="The power wanted.")] = 0.8,
    target_diff: Annotated[Optional[float], typer.Option(help="A difference in accuracy to plan for (0-1: 0.02 is 2 points): the items it needs.")] = None,
    fmt: Fmt = "text",
) -> None:
    """The smallest accuracy difference a paired test detects on these items, and the items a target difference needs."""
    from glotbench.report.plan import plan as make_plan
    from glotbench.report.plan import plan_text

    _fmt(fmt)
    p = make_plan(benchmark=benchmark, data=data, bench_options=split_pairs(bench_opt), items=items, runs=runs or None,
                  base_rate=base_rate, correlation=correlation, design_effect=design_effect, alpha=alpha,
                  target_power=power, target_diff=target_diff)
    typer.echo(to_json(p) if fmt == "json" else plan_text(p))


def arena_rank(
    arenas: Annotated[list[str], typer.Argument(help="Arena directories: candidates against a shared baseline or against each other.")],
    style: Annotated[bool, typer.Option("--style-control", help="Also fit with answer length and markdown counts as covariates.")] = False,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples over prompts.")] = 1000,
    fmt: Fmt = "text",
) -> None:
    """Bradley–Terry ranking of arena candidates: now `glotbench board --bt`."""
    from glotbench.report.arena_rank import rank_arenas, rank_text

    _fmt(fmt)
    res = rank_arenas(arenas, style=style, resamples=resamples)
    typer.echo(to_json(res) if fmt == "json" else rank_text(res))


def diff(
    run_a: Annotated[str, typer.Argument(help="Run A's directory.")],
    run_b: Annotated[str, typer.Argument(help="Run B's directory (the same items and signature).")],
    html: Annotated[Optional[str], html_option("diff.html", "Write the side-by-side page instead of text")] = None,
    out: Annotated[Optional[str], typer.Option("--out", hidden=True, help="With --html: the page (the old form of --html FILE).")] = None,
    only: Annotated[Optional[str], typer.Option("--only", help="List only the items where a (A right or higher) or b is better.")] = None,
    group: Annotated[Optional[str], typer.Option("--group", help="List only the items of one group: KEY=VALUE (e.g. category=everyday).")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples and randomisation trials of the paired test.")] = 1000,
    fmt: Fmt = "text",
) -> None:
    """The items two runs disagree on: now `glotbench compare --items`."""
    print_diff(run_a, run_b, only=only, group=group, resamples=resamples, fmt=fmt,
               page=html_page(html, out or "diff.html"))


def print_diff(run_a: str, run_b: str, *, only: Optional[str], group: Optional[str], resamples: int, fmt: str,
               page: Optional[str], command: str = "diff") -> None:
    """Print (or write as a page, named on stdout as `COMMAND: PATH`) the items whose outcome differs
    between two runs."""
    from glotbench.report.diff import diff_runs, diff_text, write_diff_html

    _fmt(fmt)
    pair = split_pairs([group], "--group")[0] if group else None
    d = diff_runs(run_a, run_b, only=only, group=pair, resamples=resamples)
    if page:
        typer.echo(f"{command}: {write_diff_html(d, page)}")
    else:
        typer.echo(to_json(d) if fmt == "json" else diff_text(d))


def register(app: typer.Typer) -> None:
    app.command()(plan)
    alias(app, "diff", diff)
    alias(app, "arena-rank", arena_rank)
