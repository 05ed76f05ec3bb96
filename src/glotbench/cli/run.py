"""`glotbench list`, `run`, `report`, `score`, `compare` and `board`: one benchmark run and what reads it."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from glotbench.cli.options import (ApiKeyEnv, BenchOpt, CachePath, ConcurrencyOrAuto, Data, Limit, MaxRetries, MaxTokens,
                                   ModelSpec, NoCache, Out, PriceIn, PriceOut, Progress, Resamples, Seed, Temperature,
                                   Thinking, Timeout, run_options)


def list_cmd() -> None:
    """List the benchmarks and the model backends."""
    from glotbench.benchmarks.registry import BENCHMARKS
    from glotbench.models.registry import BACKENDS

    typer.echo("benchmarks:")
    for name, (_, desc) in sorted(BENCHMARKS.items()):
        typer.echo(f"  {name:<16} {desc}")
    typer.echo("model backends (--model SPEC):")
    for _, (_, desc) in BACKENDS.items():
        typer.echo(f"  {desc}")


def run(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `glotbench list`).")],
    model: ModelSpec = "local",
    data: Data = None,
    limit: Limit = None,
    concurrency: ConcurrencyOrAuto = None,
    repeats: Annotated[int, typer.Option(help="Run each item N times, to measure stability.")] = 1,
    out: Out = None,
    temperature: Temperature = None,
    max_tokens: MaxTokens = None,
    seed: Seed = None,
    stop: Annotated[list[str], typer.Option("--stop", help="Stop sequence (repeatable), added to the benchmark's.")] = [],
    structured_output: Annotated[bool, typer.Option(help="Ask for JSON-schema output (response_format) where the benchmark defines one.")] = False,
    thinking: Thinking = None,
    bench_opt: BenchOpt = [],
    timeout: Timeout = 120.0,
    max_retries: MaxRetries = 5,
    no_cache: NoCache = False,
    cache_path: CachePath = None,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    api_key_env: ApiKeyEnv = None,
    progress: Progress = True,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Estimate the requests, tokens and (with prices) the cost range; call no model, write nothing.")] = False,
    max_cost: Annotated[Optional[float], typer.Option(help="Stop sending requests before this run's spent cost (USD, from usage counts; needs --price-in/--price-out) would pass this; the same command resumes.")] = None,
    max_concurrency: Annotated[int, typer.Option(help="The ceiling of --concurrency auto.")] = 64,
    batch: Annotated[bool, typer.Option("--batch", help="Send the uncached requests through the endpoint's Batch API (/v1/files, /v1/batches); failures are retried as normal requests.")] = False,
    batch_discount: Annotated[float, typer.Option(help="The batch price's discount on --price-in/--price-out (0.5: half price).")] = 0.5,
    batch_poll: Annotated[float, typer.Option(help="Seconds between polls of a batch's status.")] = 30.0,
) -> None:
    """Run BENCHMARK on a model and write a run directory with results.json and samples.jsonl."""
    import logging
    import sys

    from glotbench.engine.evaluate import evaluate
    from glotbench.report.terminal import print_results

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    import gc

    gc.freeze()  # the modules imported above live as long as the process (see `app.main`)
    opts = run_options(
        thinking=thinking, bench_opt=bench_opt, data=data, limit=limit, repeats=repeats, concurrency=concurrency,
        temperature=temperature, max_tokens=max_tokens, seed=seed, stop=tuple(stop), structured_output=structured_output,
        timeout=timeout, max_retries=max_retries, no_cache=no_cache, cache_path=cache_path, out=out,
        price_in=price_in, price_out=price_out, api_key_env=api_key_env, progress=progress,
        max_cost_usd=max_cost, max_concurrency=max_concurrency, batch=batch, batch_discount=batch_discount,
        batch_poll_s=batch_poll)
    if dry_run:
        from glotbench.engine.estimate import estimate_run, format_estimate

        for line in format_estimate(estimate_run(benchmark, model, opts)):
            typer.echo(line)
        return
    result = evaluate(benchmark, model, opts)
    print_results(result.results)
    typer.echo(f"run directory: {result.out_dir}")
    stopped = result.results.get("stopped")
    if stopped:
        typer.echo(f"{stopped['message']} ({stopped['not_sent']} requests not sent)", err=True)
        raise typer.Exit(3)


def report(
    run_dir: Annotated[str, typer.Argument(help="A run directory (or arena/AraGen directory; or a folder of runs: its newest).")],
    file: Annotated[Optional[str], typer.Argument(help="With --html: the page to write (default RUN/report.html).")] = None,
    html: Annotated[bool, typer.Option("--html", help="Write a self-contained HTML report instead of the table.")] = False,
    open_: Annotated[bool, typer.Option("--open", help="Open the HTML report in a browser.")] = False,
) -> None:
    """Print a finished run's results table again, or write its HTML report (--html [FILE])."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.terminal import load_results, print_results

    if not (html or open_):
        if file is not None:
            raise GlotbenchError(f"unexpected argument {file!r} (a report file needs --html)")
        print_results(load_results(run_dir))
        return
    from glotbench.report.html import write_report
    from glotbench.report.rundata import latest_run

    path = write_report(latest_run(run_dir), file)
    typer.echo(f"report: {path}")
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


def board(
    runs: Annotated[list[str], typer.Argument(help="Run directories, or folders searched for runs.")],
    html: Annotated[Optional[str], typer.Option("--html", help="Also write the board as a self-contained HTML page.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Printed export: md, csv, latex or json.")] = "md",
    test: Annotated[str, typer.Option(help="Significance test against each column's best: randomization or bootstrap.")] = "randomization",
    alpha: Annotated[float, typer.Option(help="Cells with p >= alpha are marked as not different from the best.")] = 0.05,
    resamples: Resamples = 1000,
) -> None:
    """Models x benchmarks with CIs and significance marks, the score-cost frontier, per-group scores."""
    from glotbench.report.board import build_board, export, write_board_html

    b = build_board(runs, test=test, alpha=alpha, resamples=resamples)
    text = export(b, fmt)
    if html:
        write_board_html(b, html)
        typer.echo(f"board: {html}", err=True)
    for x in b["left_out"]:
        typer.echo(f"left out: {x['path']}: {x['reason']}", err=True)
    typer.echo(text, nl=False)


def score(
    hypotheses: Annotated[str, typer.Argument(help="Hypotheses, one segment per line.")],
    references: Annotated[list[str], typer.Argument(help="One or more reference files, aligned by line.")],
    metric: Annotated[str, typer.Option("--metric", help="bleu, chrf, chrf++ or token_f1.")] = "chrf++",
    lang: Annotated[Optional[str], typer.Option("--lang", help="ISO 639-1 code; lo, th, km, my are segmented first, zh/ja use sacrebleu's tokenizers for BLEU.")] = None,
    tokenize: Annotated[Optional[str], typer.Option("--tokenize", help="BLEU's sacrebleu tokenizer; over lo/th/km/my segmentation: none (default) or 13a.")] = None,
    f1_norm: Annotated[str, typer.Option("--f1-norm", help="token_f1 normalisation: unicode (default) or squad (SQuAD v1.1's own).")] = "unicode",
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the 95% CI.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 12345,
) -> None:
    """Score text files like sacrebleu: the corpus score, its 95% bootstrap CI and the signature."""
    from glotbench.report.score_files import score_files

    est, signature = score_files(metric, hypotheses, references, lang=lang, f1_norm=f1_norm, tokenize=tokenize,
                                 resamples=resamples, seed=seed)
    typer.echo(f"{metric} = {est.value:.2f}  (95% CI {est.ci_low:.2f}–{est.ci_high:.2f}, n={est.n})")
    typer.echo(signature)


def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run directory.")],
    run_b: Annotated[str, typer.Argument(help="Run directory to compare with it.")],
    resamples: Resamples = 1000,
) -> None:
    """Paired comparison of two runs on the same items: B − A per metric, CI and p-values."""
    from glotbench.report.compare import compare_runs, print_comparison

    print_comparison(compare_runs(run_a, run_b, resamples=resamples))


def register(app: typer.Typer) -> None:
    app.command("list")(list_cmd)
    for fn in (run, report, score, compare, board):
        app.command()(fn)
