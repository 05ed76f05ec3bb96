"""`glotbench list`, `run`, `report`, `score`, `compare` and `board`: one benchmark run and what reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from glotbench.cli.options import (HTML_SUFFIXES, ITEMS, MODEL_CALLS, PRICES, BenchOpt, ConcurrencyOrAuto, Correction,
                                   Human, MaxTokens, MetricCheckpoint, ModelSpec, Moved, Out, Quick, Resamples, Seed, Subset, Temperature,
                                   Thinking, WriteCards, html_option, html_page, run_options, to_json, use_moved, with_options)


def list_cmd() -> None:
    """List the benchmarks and the model backends."""
    from glotbench.plugins import benchmarks, models

    typer.echo("benchmarks:")
    for name, desc in benchmarks().items():
        typer.echo(f"  {name:<16} {desc}")
    from glotbench.tasks import task_names

    typer.echo("tasks (task files; `glotbench tasks list --include-path DIR` for more):")
    for name, desc in sorted(task_names().items()):
        typer.echo(f"  {name:<16} {desc}")
    typer.echo("model backends (--model SPEC):")
    for desc in models().values():
        typer.echo(f"  {desc}")
    from glotbench.plugins import scorers, shadowed, steps

    for title, table in (("task scorer kinds from plugins (scorer: {kind: KIND}):", scorers()),
                         ("extraction steps from plugins (extract: {NAME: [STEP, ...]}):", steps())):
        if table:
            typer.echo(title)
            for name, desc in table.items():
                typer.echo(f"  {name:<16} {desc}")
    for what, target in shadowed().items():
        typer.echo(f"warning: the plugin entry point {what} ({target}) is not used: a built-in or registered "
                   f"{what.split()[0]} has that name; give it another", err=True)


@with_options(ITEMS, MODEL_CALLS, PRICES)
def run(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `glotbench list`).")],
    model: ModelSpec = "local",
    subset: Subset = None,
    quick: Quick = False,
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
    include_path: Annotated[list[str], typer.Option("--include-path", help="A folder of task files (repeatable): its tasks run by name.")] = [],
    judge: Annotated[list[str], typer.Option("--judge", help="A judge model of a judged benchmark: laobench-arena, aragen, a task scored by a rubric (repeatable; default: the task's scorer.judges).")] = [],
    judge_cards: Annotated[Optional[str], typer.Option("--judge-cards", help="With --judge: directory of judge validity cards (default: $GLOTBENCH_JUDGE_CARDS).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Estimate the requests, tokens and (with prices) the cost range; call no model, write nothing.")] = False,
    max_cost: Annotated[Optional[float], typer.Option(help="Stop sending requests before this run's spent cost (USD, from usage counts; needs --price-in/--price-out) would pass this; the same command resumes. A judged run's one budget: answers, baseline and every judge.")] = None,
    price_of: Annotated[list[str], typer.Option("--price-of", help="SPEC=IN,OUT: another model's prices per million tokens (a judge's, the baseline's; repeatable); a judged run's phase of a model without them is priced at --price-in/--price-out.")] = [],
    max_concurrency: Annotated[int, typer.Option(help="The ceiling of --concurrency auto.")] = 64,
    batch: Annotated[bool, typer.Option("--batch", help="Send the uncached requests through the endpoint's Batch API (/v1/files, /v1/batches); failures are retried as normal requests.")] = False,
    batch_discount: Annotated[float, typer.Option(help="The batch price's discount on --price-in/--price-out (0.5: half price).")] = 0.5,
    batch_poll: Annotated[float, typer.Option(help="Seconds between polls of a batch's status.")] = 30.0,
    pivot: Annotated[Optional[str], typer.Option("--pivot", help="Answer through this language (en): the input translated by --pivot-model, text answers translated back; native vs pivot compared (docs/checks.md).")] = None,
    pivot_model: Annotated[Optional[str], typer.Option("--pivot-model", help="The model that translates for --pivot (a model spec).")] = None,
    metric_checkpoint: MetricCheckpoint = None,
    **shared: Any,
) -> None:
    """Run BENCHMARK (a name, a task file FILE.yaml, or MODULE:CLASS) on a model and write a run
    directory with results.json and samples.jsonl. Exit 3: the run is invalid (too many model calls
    failed); everything is written, and the same command finishes it later."""
    import logging
    import sys

    from glotbench.engine.evaluate import evaluate
    from glotbench.report.terminal import print_results

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    import gc

    gc.freeze()  # the modules imported above live as long as the process (see `app.main`)
    if quick and subset not in (None, "quick"):
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"--quick is --subset quick; it cannot be combined with --subset {subset}")
    opts = run_options(
        thinking=thinking, bench_opt=bench_opt, repeats=repeats, concurrency=concurrency,
        subset="quick" if quick else subset, temperature=temperature, max_tokens=max_tokens, seed=seed,
        stop=tuple(stop), structured_output=structured_output, out=out, max_cost_usd=max_cost,
        max_concurrency=max_concurrency, batch=batch, batch_discount=batch_discount, batch_poll_s=batch_poll,
        metric_checkpoint=metric_checkpoint, model_prices=model_prices(price_of), **shared)
    if metric_checkpoint is not None and (pivot is not None or pivot_model is not None):
        from glotbench.errors import GlotbenchError

        raise GlotbenchError("--metric-checkpoint scores a plain run: add it with `glotbench rescore RUN --metric-checkpoint DIR` after --pivot")
    if include_path:
        from glotbench.tasks import add_include_path

        for folder in include_path:
            add_include_path(folder)
    if dry_run:
        from glotbench.engine.estimate import estimate_run, format_estimate

        est = estimate_run(benchmark, model, opts)
        if pivot is not None or pivot_model is not None:  # the pivot's phases are not estimated
            est.not_counted.append(f"--pivot: {pivot_model or 'the pivot model'}'s translations (each input text, "
                                   "and text answers back) and the model's requests on the translated input; "
                                   "these figures are the native run's only")
        if judge and not any("judges'" in x for x in est.not_counted):
            est.not_counted.append("the judges' requests (--judge): these figures are the answering model's only")
        for line in format_estimate(est):
            typer.echo(line)
        return
    from glotbench.cli.options import print_endpoints

    print_endpoints([("", model), *_option_models(benchmark, opts.bench_options), *((f"judge {j}", j) for j in judge),
                     *([(f"pivot model {pivot_model}", pivot_model)] if pivot_model else [])], opts.api_key_env)
    if judge or judge_cards:  # a judged benchmark's judges; evaluate decides what is judged (engine/evaluate.py)
        from dataclasses import replace

        opts = replace(opts, judges=tuple(judge), judge_cards=judge_cards)
    if pivot is not None or pivot_model is not None:
        from glotbench.engine.pivot import pivot_cli

        result = pivot_cli(benchmark, model, pivot, pivot_model, opts)
    else:
        result = evaluate(benchmark, model, opts)
    if result.results.get("judged"):  # the mean of judges (results.json `judged`), never the answers' rate
        from glotbench.cli.options import exit_if_invalid
        from glotbench.report.rundata import load_run

        data = load_run(result.out_dir)
        print_judged_run(data.kind, data.results, data.path)
        record = data.results
        typer.echo(f"run directory: {result.out_dir}")
        index_in_store(result)
        exit_if_invalid(record)  # a phase whose calls failed: one error line, exit 3 (results.json is written)
        return
    print_results(result.results, endpoint=False)  # printed at the start
    from glotbench.report.checks_text import checks_lines

    for line in checks_lines(result.results):  # results.json `checks` (docs/checks.md)
        typer.echo(line)
    typer.echo(f"run directory: {result.out_dir}")
    index_in_store(result)
    finish_message(result.results, sys.argv)


def model_prices(values: list[str]) -> tuple[tuple[str, float, float], ...]:
    """`--price-of SPEC=IN,OUT` as (spec, price in, price out), each checked: one error line."""
    from glotbench.errors import GlotbenchError

    out: dict[str, tuple[str, float, float]] = {}
    for value in values:
        spec, eq, prices = value.rpartition("=")
        parts = prices.split(",")
        try:
            pin, pout = (float(x) for x in parts) if len(parts) == 2 else (None, None)
        except ValueError:
            pin = pout = None
        if not eq or not spec.strip() or pin is None or pout is None:
            raise GlotbenchError(f"--price-of {value!r}: give SPEC=IN,OUT (USD per million prompt and completion "
                                 "tokens), e.g. --price-of openai:gpt-4o=2.5,10")
        if spec in out:
            raise GlotbenchError(f"--price-of {spec} is given twice: give it once")
        out[spec] = (spec, pin, pout)
    return tuple(out.values())


def _option_models(benchmark: str, bench_options: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """The models a registered benchmark's options name (`Benchmark.model_options`: the arena's
    baseline), labelled by option, for the endpoint lines printed before anything is called."""
    from glotbench.benchmarks.base import Benchmark
    from glotbench.plugins import benchmark_entry

    entry = benchmark_entry(benchmark)
    target = entry.resolve() if entry is not None else None
    names = target.model_options if isinstance(target, type) and issubclass(target, Benchmark) else ()
    return [(key, value) for key, value in bench_options if key in names]


def print_judged_run(kind: str, summary: dict, run_dir: Path | None = None) -> None:
    """A judged run's table by its kind (results.json `judged.kind`): a rubric task's, an arena's, AraGen's,
    SEA-MT-Bench's; any other kind (a plugin's) the panel's table. With `run_dir`, the notes its record
    holds and its summary lacks (a rubric run's subset) under it too."""
    from glotbench.rundir.schema import BUILTIN_JUDGED_KINDS

    if run_dir is not None:  # what every view says beside the number (rundir/validity.py `notes`)
        from glotbench.report.rundata import run_results

        record = run_results(run_dir)
        summary = {**{k: record[k] for k in ("selection", "data_label", "judge_validation", "validity") if k in record},
                   **summary}
        if (record.get("judged") or {}).get("cost"):  # the whole run's cost, every phase: not the answers' alone
            summary["judged_cost"] = record["judged"]["cost"]
    if kind not in BUILTIN_JUDGED_KINDS:
        from glotbench.report.judged import print_panel

        print_panel(summary)
    elif kind == "rubric":
        from glotbench.report.judged import print_judged

        print_judged(summary)
    elif kind == "mt-bench":
        from glotbench.report.judged import print_mt_bench

        print_mt_bench(summary)
    else:
        from glotbench.report.judged import print_aragen, print_arena

        (print_arena if kind == "arena" else print_aragen)(summary)


def _full_command(argv: list[str]) -> str:
    """The command line that runs the whole dataset: `argv` without --quick, --subset and --limit
    (and --out, whose directory now holds this run)."""
    import shlex

    out, skip = ["glotbench"], False
    for arg in argv[1:]:
        if skip:
            skip = False
            continue
        if arg in ("--quick",):
            continue
        if arg in ("--subset", "--limit", "--out"):
            skip = True
            continue
        if arg.startswith(("--subset=", "--limit=", "--out=")):
            continue
        out.append(arg)
    return " ".join(shlex.quote(a) for a in out)


def finish_message(results: dict, argv: list[str]) -> None:
    """After the table: how to run the full set (a subset run), and for an invalid run one error
    line and exit code 3 (results.json is written and marked invalid first)."""
    from glotbench.cli.options import exit_if_invalid
    from glotbench.rundir.selection import selection_of

    sel = selection_of(results)
    if sel["full"] and sel.get("subset"):
        typer.echo(f"The {sel['subset']} subset of this data is the whole set ({sel['n']} items).")
    if not sel["full"]:
        how = f"the {sel['subset']} subset, " if sel.get("subset") else ""
        typer.echo(f"This run scored {how}{sel['n']} of the {sel['of']} items: its numbers are not the benchmark's. "
                   f"The full set: {_full_command(argv)}")
    exit_if_invalid(results)
    stopped = results.get("stopped")
    if stopped:  # --max-cost: what was not sent; the same command resumes
        typer.echo(f"{stopped['message']} ({stopped['not_sent']} requests not sent)", err=True)
        raise typer.Exit(3)


def index_in_store(result) -> None:
    """Index a finished run in the results store (`runs ls` lists it), as sweeps do; a store that
    cannot be written is a warning: the run directory is the record, the store only its index."""
    import logging

    from glotbench.cli.options import describe
    from glotbench.store.index import index_run

    if result.results.get("status") != "complete":  # a run stopped by --max-cost is indexed when finished
        return
    logging.getLogger("alembic").setLevel(logging.WARNING)  # `run` logs at INFO: not Alembic's plugin setup
    try:
        index_run(result.results, result.out_dir)
    except Exception as e:  # noqa: BLE001 - any failure of the index leaves the run as it is
        typer.echo(f"warning: the run is not in the results store ({describe(e)}); "
                   f"`glotbench runs import {result.out_dir}` adds it", err=True)


def report(
    run_dirs: Annotated[list[str], typer.Argument(help="A run directory (or arena/AraGen directory; or a folder of runs: its newest). Several arena or AraGen directories (one candidate each): the judges' report.")],
    html: Annotated[Optional[str], html_option("RUN/report.html")] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open the HTML report in a browser.")] = False,
    judges: Annotated[bool, typer.Option("--judges", help="The judges' report, also for one directory: arena directories: each judge's score per model, their spread, rank correlations, human agreement; AraGen directories: kappa against human labels, consistency, self-bias, guideline adherence (JSON).")] = False,
    human: Human = None,
    bt: Annotated[bool, typer.Option("--bt", help="Judges' report of arena directories: add Bradley–Terry ratings and the ranking (as `board --bt`).")] = False,
    write_cards: WriteCards = None,
    moved: Moved = [],
) -> None:
    """Print a finished run's results table again, or write its HTML report (--html [FILE]); several
    arena or AraGen directories (or --judges): the judges' report."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.terminal import print_results

    use_moved(moved)
    if len(run_dirs) == 2 and html == "" and run_dirs[1].lower().endswith(HTML_SUFFIXES):
        typer.echo("note: `report RUN FILE --html` is now `report RUN --html FILE`", err=True)
        run_dirs, html = run_dirs[:1], run_dirs[1]  # the form before `--html [FILE]`
    page = next((d for d in run_dirs[1:] if d.lower().endswith(HTML_SUFFIXES)), None)
    if page is not None:
        raise GlotbenchError(f"unexpected argument {page!r} (a report file needs --html: `report RUN --html FILE`)")
    if judges or len(run_dirs) > 1 or human or bt or write_cards:
        if html is not None or open_:
            raise GlotbenchError("the judges' report is JSON only: drop --html/--open")
        from glotbench.cli.judged import judges_report

        typer.echo(to_json(judges_report(run_dirs, human, bt, write_cards)))
        return
    if html is None and not open_:
        from glotbench.report.rundata import latest_run, load_run

        data = load_run(latest_run(run_dirs[0]))
        if data.kind == "run":
            print_results(data.results)
        else:  # the judged score: the mean of judges, never the answers' rate
            print_judged_run(data.kind, data.results, data.path)
        return
    from glotbench.report.html import write_report
    from glotbench.report.rundata import latest_run

    path = write_report(latest_run(run_dirs[0]), html or None)
    typer.echo(f"report: {path}")
    if open_:
        import webbrowser

        uri = path.resolve().as_uri()
        try:
            opened = webbrowser.open(uri)
        except webbrowser.Error:
            opened = False
        if not opened:  # a server, a container: say where the page is instead of nothing
            typer.echo(f"no browser could be started here (set BROWSER to choose one); open {uri}", err=True)


def board(
    runs: Annotated[list[str], typer.Argument(help="Run directories, or folders searched for runs.")],
    html: Annotated[Optional[str], html_option("board.html", "Also write the board as a self-contained HTML page")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Printed export: md, csv, latex or json (--bt: md or json).")] = "md",
    test: Annotated[str, typer.Option(help="Significance test against each column's best: randomization or bootstrap.")] = "randomization",
    alpha: Annotated[float, typer.Option(help="Cells with adjusted p >= alpha are marked as not different from the best.")] = 0.05,
    resamples: Resamples = 1000,
    pivot: Annotated[Optional[str], typer.Option(help="language: one table per language, models x tasks.")] = None,
    language: Annotated[list[str], typer.Option("--language", help="Only this language's table (lo, lao, lao_Laoo; "
                                                "zh-TW is zh-Hant apart from zh; repeatable); implies --pivot language.")] = [],
    correction: Correction = "holm",
    bt: Annotated[bool, typer.Option("--bt", help="Arena directories: Bradley–Terry ratings and ranking of the candidates, per judge and mean of judges, with CIs over prompts.")] = False,
    style: Annotated[bool, typer.Option("--style-control", help="With --bt: also fit with answer length and markdown counts as covariates.")] = False,
) -> None:
    """Models x benchmarks with CIs and significance marks, the score-cost frontier, per-group scores;
    --pivot language: one table per language (how good each model is in Lao: one table); --bt:
    arena candidates ranked by Bradley–Terry."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.board import build_board, export, write_board_html

    if language and pivot is None:  # one language's table is the pivot's view: asking for it asks for the pivot
        pivot = "language"
    from glotbench.languages import language_code

    for x in language:  # a code that names no language: one line before any run is read
        try:
            language_code(x)
        except ValueError as bad:
            raise GlotbenchError(f"--language {bad}") from None
    if style and not bt:
        raise GlotbenchError("--style-control needs --bt")
    if bt:
        if html is not None or pivot or fmt not in ("md", "json"):
            raise GlotbenchError("--bt prints md (text) or json: drop --html, --pivot, --language and other formats")
        from glotbench.report.arena_rank import rank_arenas, rank_text

        res = rank_arenas(runs, style=style, resamples=resamples)
        typer.echo(to_json(res) if fmt == "json" else rank_text(res))
        return
    b = build_board(runs, test=test, alpha=alpha, resamples=resamples, pivot=pivot, languages=language or None,
                    correction=correction)
    text = export(b, fmt)
    page = html_page(html, "board.html")
    if page:
        typer.echo(f"board: {write_board_html(b, page)}", err=True)
    for x in b["left_out"]:
        typer.echo(f"left out: {x['path']}: {x['reason']}", err=True)
    typer.echo(text, nl=False)


def score(
    hypotheses: Annotated[str, typer.Argument(help="Hypotheses, one segment per line.")],
    references: Annotated[list[str], typer.Argument(help="One or more reference files, aligned by line.")],
    metric: Annotated[list[str], typer.Option("--metric", help="bleu, chrf, chrf++, token_f1 or exact_match (SQuAD EM); repeatable.")] = ["chrf++"],
    lang: Annotated[Optional[str], typer.Option("--lang", help="ISO 639-1 code; lo, th, km, my are segmented first, zh/ja use sacrebleu's tokenizers for BLEU.")] = None,
    tokenize: Annotated[Optional[str], typer.Option("--tokenize", help="BLEU's sacrebleu tokenizer; over lo/th/km/my segmentation: none (default) or 13a.")] = None,
    smooth_method: Annotated[Optional[str], typer.Option("--smooth-method", help="BLEU smoothing: exp (default), floor, add-k or none.")] = None,
    smooth_value: Annotated[Optional[float], typer.Option("--smooth-value", help="BLEU smoothing value for floor (default 0.1) or add-k (default 1).")] = None,
    effective_order: Annotated[bool, typer.Option("--effective-order", help="BLEU: use only the n-gram orders the hypothesis has (sacrebleu's effective_order).")] = False,
    max_ngram_order: Annotated[Optional[int], typer.Option("--max-ngram-order", help="BLEU's maximum n-gram order (default 4).")] = None,
    chrf_beta: Annotated[Optional[int], typer.Option("--chrf-beta", help="chrF's β: recall weighted β times precision (default 2).")] = None,
    chrf_char_order: Annotated[Optional[int], typer.Option("--chrf-char-order", help="chrF's character n-gram order (default 6).")] = None,
    chrf_whitespace: Annotated[bool, typer.Option("--chrf-whitespace", help="chrF: keep whitespace in the character n-grams.")] = False,
    chrf_eps_smoothing: Annotated[bool, typer.Option("--chrf-eps-smoothing", help="chrF: epsilon smoothing (chrF++.py, NLTK, Moses) instead of effective order.")] = False,
    lowercase: Annotated[bool, typer.Option("--lowercase", help="BLEU and chrF: case-insensitive (token F1 and exact match always are).")] = False,
    f1_norm: Annotated[str, typer.Option("--f1-norm", help="token_f1/exact_match normalisation: unicode (default) or squad (SQuAD v1.1's own).")] = "unicode",
    f1_empty: Annotated[str, typer.Option("--f1-empty", help="token_f1/exact_match with empty answers: v1.1 (default; SQuAD v1.1's script) or v2.0.")] = "v1.1",
    sentence_level: Annotated[bool, typer.Option("--sentence-level", help="One score per segment instead of the corpus score (BLEU with effective order).")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text (default) or json (full precision).")] = "text",
    width: Annotated[int, typer.Option("--width", min=0, help="Decimals printed in text format.")] = 2,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the 95% CI (0: none).")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 12345,
) -> None:
    """Score text files like sacrebleu: the corpus score, its 95% bootstrap CI and the signature."""
    import json

    from glotbench.errors import GlotbenchError
    from glotbench.report.score_files import FileScoreOptions, score_files

    if fmt not in ("text", "json"):
        raise GlotbenchError(f"--format must be text or json, got {fmt!r}")
    if lang is not None:  # a code that names no language would only be written into the signature
        from glotbench.languages import language_code

        try:  # the profile's code: `lao`, `lao_Laoo`, `lo-LA`, `bur`, `mya` segment and sign as `lo`, `my`
            lang = language_code(lang)
        except ValueError as bad:
            raise GlotbenchError(f"--lang {bad}") from None
    opts = FileScoreOptions(lang=lang, f1_norm=f1_norm, f1_empty=f1_empty, tokenize=tokenize,
                            smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order,
                            max_ngram_order=max_ngram_order, chrf_beta=chrf_beta, chrf_char_order=chrf_char_order,
                            chrf_whitespace=chrf_whitespace, chrf_eps_smoothing=chrf_eps_smoothing,
                            lowercase=lowercase, sentence_level=sentence_level, resamples=resamples, seed=seed)
    results = score_files(metric, hypotheses, references, opts)
    if fmt == "json":
        docs = [r.to_dict() for r in results]
        typer.echo(json.dumps(docs[0] if len(docs) == 1 else docs, ensure_ascii=False))
        return
    from glotbench.stats import MIN_BOOTSTRAP_UNITS

    few = False
    for r in results:
        if r.segments is not None:
            for v in r.segments:
                typer.echo(f"{v:.{width}f}")
        else:
            e = r.estimate
            mark = "†" if resamples > 0 and e.n < MIN_BOOTSTRAP_UNITS else ""
            few = few or bool(mark)
            typer.echo(f"{r.metric} = {e.value:.{width}f}  (95% CI {e.ci_low:.{width}f}–{e.ci_high:.{width}f}, n={e.n}){mark}")
        typer.echo(r.signature)
    if few:
        typer.echo(f"† fewer than {MIN_BOOTSTRAP_UNITS} segments: the percentile bootstrap's measured coverage is "
                   "under 93% (docs/metrics.md)")


def compare(
    runs: Annotated[list[str], typer.Argument(help="Two or more run directories on the same items (the first is A).")],
    resamples: Resamples = 1000,
    correction: Correction = "holm",
    fmt: Annotated[str, typer.Option("--format", help="text (default) or json (raw and adjusted p-values).")] = "text",
    items: Annotated[bool, typer.Option("--items", help="Two runs: the items whose outcome differs, grouped, with the paired test; outputs and references side by side.")] = False,
    only: Annotated[Optional[str], typer.Option("--only", help="With --items: only the items where a (A right or higher) or b is better.")] = None,
    group: Annotated[Optional[str], typer.Option("--group", help="With --items: only the items of one group: KEY=VALUE (e.g. category=everyday).")] = None,
    html: Annotated[Optional[str], html_option("compare.html", "Two runs: write the items' side-by-side page (filters by group and outcome) instead of text")] = None,
    moved: Moved = [],
) -> None:
    """Paired comparison of runs on the same items: each pair's B − A per metric, CI and p-values
    (adjusted for the number of pairs: --correction); --items: the items two runs disagree on."""
    from glotbench.errors import GlotbenchError

    if fmt not in ("text", "json"):
        raise GlotbenchError(f"--format must be text or json, got {fmt!r}")
    use_moved(moved)
    if items or html is not None or only or group:
        if len(runs) != 2:
            raise GlotbenchError(f"--items, --only, --group and --html compare two runs' items; got {len(runs)} runs")
        from glotbench.cli.stats import print_diff

        print_diff(runs[0], runs[1], only=only, group=group, resamples=resamples, fmt=fmt,
                   page=html_page(html, "compare.html"), command="compare")
        return
    from glotbench.report.compare import compare_many, print_many

    res = compare_many(runs, resamples=resamples, correction=correction)
    if fmt == "json":
        typer.echo(to_json(res))
    else:
        print_many(res)


def register(app: typer.Typer) -> None:
    app.command("list")(list_cmd)
    for fn in (run, report, score, compare, board):
        app.command()(fn)
