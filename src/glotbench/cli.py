"""The `glotbench` command. Thin: parse options, call the library, print. Heavy modules are imported
inside the commands so start-up stays fast."""

from __future__ import annotations

import sys
from typing import Optional

import typer

app = typer.Typer(
    help="Evaluate large language models in low-resource languages.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


from glotbench.cli_common import die as _die  # noqa: E402


@app.command("list")
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


@app.command()
def run(
    benchmark: str = typer.Argument(..., help="Benchmark name (see `glotbench list`)."),
    model: str = typer.Option("local", "--model", "-m", help="Model spec, e.g. openai:qwen3@http://localhost:8000/v1"),
    data: Optional[str] = typer.Option(None, help="Run on this data file instead of the bundled data."),
    limit: Optional[int] = typer.Option(None, help="Only the first N items."),
    concurrency: Optional[int] = typer.Option(None, help="Requests in flight (default: the backend's)."),
    repeats: int = typer.Option(1, help="Run each item N times, to measure stability."),
    out: Optional[str] = typer.Option(None, help="Run directory (default: runs/BENCHMARK/TIME-MODEL)."),
    temperature: Optional[float] = typer.Option(None, help="Sampling temperature (default: the benchmark's)."),
    max_tokens: Optional[int] = typer.Option(None, help="Reply token limit (default: the benchmark's)."),
    seed: Optional[int] = typer.Option(None, help="Sampling seed, passed to the model."),
    stop: list[str] = typer.Option([], "--stop", help="Stop sequence (repeatable), added to the benchmark's."),
    structured_output: bool = typer.Option(False, help="Ask for JSON-schema output (response_format) where the benchmark defines one."),
    thinking: Optional[bool] = typer.Option(None, "--thinking/--no-thinking", help="Ask a reasoning model for its thinking or non-thinking mode (chat_template_kwargs.enable_thinking)."),
    bench_opt: list[str] = typer.Option([], "--bench-opt", help="Benchmark setting KEY=VALUE (repeatable), e.g. method=loglik."),
    timeout: float = typer.Option(120.0, help="Per-request timeout in seconds."),
    max_retries: int = typer.Option(5, help="Retries per request (429, 5xx, timeouts)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the call cache."),
    cache_path: Optional[str] = typer.Option(None, help="Call cache file (default: ~/.cache/glotbench/calls.sqlite)."),
    price_in: Optional[float] = typer.Option(None, help="Price per million prompt tokens, for the cost line."),
    price_out: Optional[float] = typer.Option(None, help="Price per million completion tokens."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the API key (default OPENAI_API_KEY)."),
    progress: bool = typer.Option(True, help="Show the progress bar."),
) -> None:
    """Run BENCHMARK on a model and write a run directory with results.json and samples.jsonl."""
    import logging

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    from glotbench.engine.evaluate import RunOptions, evaluate
    from glotbench.errors import GlotbenchError
    from glotbench.report.terminal import print_results

    pairs = []
    for kv in bench_opt:
        if "=" not in kv:
            _die(f"--bench-opt takes KEY=VALUE, got {kv!r}")
        pairs.append(tuple(kv.split("=", 1)))
    opts = RunOptions(
        thinking=thinking, bench_options=tuple(pairs),
        data=data, limit=limit, repeats=repeats, concurrency=concurrency, temperature=temperature,
        max_tokens=max_tokens, seed=seed, stop=tuple(stop), structured_output=structured_output, timeout_s=timeout,
        max_retries=max_retries, use_cache=not no_cache, cache_path=cache_path, out=out,
        price_in_per_mtok=price_in, price_out_per_mtok=price_out, api_key_env=api_key_env,
        progress=progress,
    )
    try:
        result = evaluate(benchmark, model, opts)
    except GlotbenchError as e:
        _die(str(e))
    except KeyboardInterrupt:
        _die("interrupted; run the same command again to resume from the cache", 130)
    print_results(result.results)
    typer.echo(f"run directory: {result.out_dir}")


@app.command()
def report(run_dir: str = typer.Argument(..., help="A run directory written by `glotbench run`.")) -> None:
    """Print a finished run's results table again."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.terminal import load_results, print_results

    try:
        print_results(load_results(run_dir))
    except GlotbenchError as e:
        _die(str(e))
    except (KeyError, TypeError, ValueError) as e:
        _die(f"{run_dir}/results.json is not in the expected format ({type(e).__name__}: {e})")


@app.command()
def score(
    hypotheses: str = typer.Argument(..., help="Hypotheses, one segment per line."),
    references: list[str] = typer.Argument(..., help="One or more reference files, aligned by line."),
    metric: str = typer.Option("chrf++", "--metric", help="bleu, chrf, chrf++ or token_f1."),
    lang: Optional[str] = typer.Option(None, "--lang", help="ISO 639-1 code; lo, th, km, my are segmented first, zh/ja use sacrebleu's tokenizers for BLEU."),
    resamples: int = typer.Option(1000, help="Bootstrap resamples for the 95% CI."),
    seed: int = typer.Option(12345, help="Bootstrap seed."),
) -> None:
    """Score text files like sacrebleu: the corpus score, its 95% bootstrap CI and the signature."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.score_files import score_files

    try:
        est, signature = score_files(metric, hypotheses, references, lang=lang, resamples=resamples, seed=seed)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{metric} = {est.value:.2f}  (95% CI {est.ci_low:.2f}–{est.ci_high:.2f}, n={est.n})")
    typer.echo(signature)


@app.command()
def compare(
    run_a: str = typer.Argument(..., help="Baseline run directory."),
    run_b: str = typer.Argument(..., help="Run directory to compare with it."),
    resamples: int = typer.Option(1000, help="Bootstrap resamples and randomisation trials."),
) -> None:
    """Paired comparison of two runs on the same items: B − A per metric, CI and p-values."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.compare import compare_runs, print_comparison

    try:
        print_comparison(compare_runs(run_a, run_b, resamples=resamples))
    except GlotbenchError as e:
        _die(str(e))
    except (KeyError, TypeError, ValueError, OSError) as e:
        _die(f"cannot compare these runs: {type(e).__name__}: {e}")


@app.command()
def arena(
    model: str = typer.Option(..., "--model", "-m", help="The candidate model spec."),
    baseline: str = typer.Option(..., "--baseline", help="The fixed baseline: a model spec, or replay:FILE.jsonl of its answers."),
    judge: list[str] = typer.Option(..., "--judge", help="A judge model spec (repeatable; two or more recommended)."),
    data: Optional[str] = typer.Option(None, help="Prompts file ({\"id\", \"prompt\", \"category\"} per line); default: the bundled Lao sample."),
    limit: Optional[int] = typer.Option(None, help="Only the first N prompts."),
    out: Optional[str] = typer.Option(None, help="Arena directory (default: runs/arena/TIME-MODEL)."),
    concurrency: Optional[int] = typer.Option(None, help="Requests in flight per phase."),
    max_retries: int = typer.Option(5, help="Retries per call; a malformed verdict is retried too."),
    timeout: float = typer.Option(120.0, help="Per-request timeout in seconds."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the call cache."),
    cache_path: Optional[str] = typer.Option(None, help="Call cache file."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the judges' API key."),
    progress: bool = typer.Option(True, help="Show progress."),
) -> None:
    """Arena: the candidate against a fixed baseline, each pair judged twice (positions swapped) by every judge."""
    import asyncio

    from glotbench.engine.arena import print_arena, run_arena
    from glotbench.engine.evaluate import RunOptions
    from glotbench.errors import GlotbenchError

    opts = RunOptions(data=data, limit=limit, concurrency=concurrency, max_retries=max_retries, timeout_s=timeout,
                      use_cache=not no_cache, cache_path=cache_path, out=out, api_key_env=api_key_env,
                      progress=progress)
    try:
        res = asyncio.run(run_arena(model, baseline, judge, opts))
    except GlotbenchError as e:
        _die(str(e))
    print_arena(res.results)
    typer.echo(f"arena directory: {res.out_dir}")


@app.command("arena-report")
def arena_report(
    arenas: list[str] = typer.Argument(..., help="Arena directories, one candidate model each."),
    human: Optional[str] = typer.Option(None, help="Human verdicts: {\"candidate\", \"prompt_id\", \"winner\"} per line."),
) -> None:
    """Cross-judge report: each judge's score per model, their spread, rank correlations, human agreement."""
    import json as _json

    from glotbench.engine.arena import cross_judge_report
    from glotbench.errors import GlotbenchError

    try:
        typer.echo(_json.dumps(cross_judge_report(arenas, human), indent=2, ensure_ascii=False))
    except GlotbenchError as e:
        _die(str(e))


@app.command()
def contamination(
    benchmark: str = typer.Argument(..., help="Benchmark name."),
    corpus: list[str] = typer.Argument(..., help="Reference corpus text files."),
    data: Optional[str] = typer.Option(None, help="The benchmark's data file (default: bundled)."),
    char_n: int = typer.Option(50, help="Character n-gram length for scripts without spaces (Lao, Thai, ...)."),
    word_n: int = typer.Option(13, help="Word n-gram length for other scripts."),
) -> None:
    """Share of items that share a long n-gram with a corpus, and the overlapping item ids."""
    import json as _json

    from glotbench.benchmarks.registry import get_benchmark
    from glotbench.contamination import check
    from glotbench.errors import GlotbenchError

    try:
        items = get_benchmark(benchmark).load(data)
        res = check(items, corpus, char_n=char_n, word_n=word_n)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{res['overlapping']} of {res['items']} items ({100 * res['share']:.1f}%) share an n-gram "
               f"with the corpus (chars {char_n}, words {word_n})")
    typer.echo(_json.dumps(res["overlapping_ids"], ensure_ascii=False))


@app.command()
def aragen(
    model: str = typer.Option(..., "--model", "-m", help="The model spec to evaluate."),
    judge: list[str] = typer.Option(..., "--judge", help="A 3C3H judge model spec (repeatable)."),
    data: Optional[str] = typer.Option(None, help="An AraGen task file (JSON list); default: the bundled sample."),
    limit: Optional[int] = typer.Option(None, help="Only the first N entries."),
    policy: str = typer.Option("drop", help="Samples without a valid verdict: drop (upstream) or zero."),
    skip_same_family: bool = typer.Option(False, help="Skip a judge of the model's own family (self-preference)."),
    judge_repeats: int = typer.Option(1, help="Judge each sample K times (for the consistency audit; use a temperature > 0)."),
    judge_temperature: float = typer.Option(0.0, help="Judge sampling temperature."),
    out: Optional[str] = typer.Option(None, help="Output directory (default: runs/aragen/TIME-MODEL)."),
    concurrency: Optional[int] = typer.Option(None, help="Requests in flight per phase."),
    max_retries: int = typer.Option(5, help="Retries per call; a malformed verdict is retried too."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the call cache."),
    cache_path: Optional[str] = typer.Option(None, help="Call cache file."),
    progress: bool = typer.Option(True, help="Show progress."),
) -> None:
    """AraGen: answers generated as the release does (rounds 0, 1, 2), judged with 3C3H by every judge."""
    import asyncio

    from glotbench.engine.aragen import print_aragen, run_aragen
    from glotbench.engine.evaluate import RunOptions
    from glotbench.errors import GlotbenchError

    opts = RunOptions(data=data, limit=limit, concurrency=concurrency, max_retries=max_retries,
                      use_cache=not no_cache, cache_path=cache_path, out=out, progress=progress)
    try:
        res = asyncio.run(run_aragen(model, judge, opts, policy=policy, skip_same_family=skip_same_family,
                                     judge_repeats=judge_repeats, judge_temperature=judge_temperature))
    except GlotbenchError as e:
        _die(str(e))
    print_aragen(res)
    typer.echo(f"output directory: {res['out_dir']}")


@app.command("judge-audit")
def judge_audit_cmd(
    runs: list[str] = typer.Argument(..., help="`glotbench aragen` output directories (one model each)."),
    human: Optional[str] = typer.Option(None, help="Human labels: {\"model\", \"sn\", \"Correct\", \"Complete\", \"score\"} per line."),
) -> None:
    """Judge audit: kappa against human labels, consistency, self-bias and guideline adherence."""
    import json as _json

    from glotbench.errors import GlotbenchError
    from glotbench.judges.audit import judge_audit

    try:
        typer.echo(_json.dumps(judge_audit(runs, human), indent=2, ensure_ascii=False))
    except GlotbenchError as e:
        _die(str(e))


from glotbench.cli_deepsea import deepsea_app  # noqa: E402
from glotbench.cli_service import serve, service_app  # noqa: E402

app.add_typer(deepsea_app, name="deepsea")
app.add_typer(service_app, name="service")
app.add_typer(__import__("glotbench.cli_build", fromlist=["build_app"]).build_app, name="build")
app.command()(serve)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
