"""`glotbench rescore RUN... --variant NAME=VALUE`: a finished run's stored answers scored again under
other documented settings, with no model call. Each run's data is re-read (SHA-256 checked) for the
references; the answers come from samples.jsonl.

Variants (one setting each; `as_run` is the run's own settings, recomputed, which must reproduce the
run's number):

| variant | values | what changes |
|---|---|---|
| `segmenter` | `laonlp`, `khmercut`, `pyidaungsu`, `charcluster`, `none` | how Lao, Thai, Khmer and Burmese text is split into words before BLEU, chrF++'s word n-grams and token F1 (`laonlp`: the installed LaoNLP; `khmercut`: Khmer words, `pyidaungsu`: Burmese words, the `words` extra; a language's segmenter applies to its language only, the others keep their profile's; each named with its version in `segmenters`) |
| `bleu_tokenize` | sacrebleu's tokenizers (`13a`, `intl`, `char`, `none`, `zh`, ...), `spm:PATH` | BLEU's tokenizer over the (segmented) text; `spm:PATH`: spBLEU, the text as written cut into the pieces of the local SentencePiece model file at PATH (FLORES-200's `flores200sacrebleuspm`: sacrebleu's `flores200` downloads it, this never does), named in the BLEU signature by its SHA-256 (`tok:spm-<12 hex>`) |
| `norm` | `nfc`, `nfkc`, `vi_tone`, `ar_harakat`, `lao_am`, `zawgyi` | the text (answers and references) normalised first: Unicode NFC or NFKC; Vietnamese tone marks moved out of the syllable (hòa = hoà); Arabic harakat and tatweel removed; Lao AM composed (U+0ECD U+0EB2 -> U+0EB3); a text that myanmartools finds Zawgyi (p >= checks.language.ZAWGYI_P) converted to Unicode by ICU's `Zawgyi-my` transliterator (PyICU, the `zawgyi` extra), other texts unchanged. For vi-diacritics, `nfc`/`nfkc` compare texts strictly (the tone position counts) |
| `f1_norm` | `unicode`, `squad` | token F1's normalisation (metrics/token_f1.py) |

`--metric-checkpoint DIR` adds a learned metric (metrics/learned.py: COMET-22- or xCOMET-style, MetricX-24, from
a local checkpoint, never downloaded) to every run, under each variant: the mean segment score per group
(COMET: a fraction; MetricX-24: error points 0-25, ranked lowest first; the source is the benchmark's declared `input_answer` field, the reference its first one;
`norm` variants normalise the three texts first, the others leave it as run). A failed sample, or a
reply flagged `wrong_language` under `wrong_language=zero`, gets the metric's worst (COMET 0, MetricX 25) or its own score (a failure: the empty reply's), whichever is
worse (COMET-22's head is unbounded: a bare 0 could raise it). Its signature (the checkpoint's
SHA-256) is in the output's `learned`. A benchmark without a declared source field is left out.

Benchmarks: every one that declares what it re-scores (`Benchmark.rescore_plan`, a `RescorePlan`;
a task file's: its scorer's): corpus metrics (laobench-translation, deepsea-wmt24pp, deepsea-crosssum,
task files with a corpus scorer), token F1 (deepsea-xquad, token_f1 tasks) and vi-diacritics' exact
match; no benchmark is named here. A failed
sample keeps the benchmark's failure rule (an empty hypothesis; F1 0; not exact). A run under
`wrong_language=zero` keeps that policy: its corpus metrics are means of sentence scores, and a reply
flagged `wrong_language` scores 0 under every variant.

Several runs: per benchmark and group, each variant's ranking of the models, and the pairs of
models whose order differs from their order as run (`flips`).
"""

from __future__ import annotations

import functools
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from glotbench.errors import GlotbenchError
from glotbench.metrics.corpus import SPM_PREFIX, is_spm, spm_model

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark

VARIANTS: dict[str, tuple[str, ...]] = {
    "segmenter": ("laonlp", "khmercut", "pyidaungsu", "charcluster", "none"),
    # sacrebleu's spm/flores101/flores200 download their model: spBLEU is `spm:PATH` (a local file)
    "bleu_tokenize": ("none", "13a", "intl", "char", "zh", "ja-mecab", "spm:PATH"),
    "norm": ("nfc", "nfkc", "vi_tone", "ar_harakat", "lao_am", "zawgyi"),
    "f1_norm": ("unicode", "squad"),
}
AS_RUN = "as_run"
_HARAKAT = dict.fromkeys([*range(0x064B, 0x0660), 0x0670, 0x0640])


def parse_variant(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if text == AS_RUN:
        return AS_RUN, ""
    if name == "bleu_tokenize" and sep and value.startswith(SPM_PREFIX):
        spm_model(value)  # the file is there and is a SentencePiece model, or one error line
        return name, value
    if not sep or name not in VARIANTS or value not in VARIANTS[name]:
        choices = "; ".join(f"{k}={'|'.join(v)}" for k, v in VARIANTS.items())
        raise GlotbenchError(f"unknown variant {text!r}; variants: {choices}")
    return name, value


def normalise(text: str, norm: str | None) -> str:
    if norm == "nfc":
        return unicodedata.normalize("NFC", text)
    if norm == "nfkc":
        return unicodedata.normalize("NFKC", text)
    if norm == "ar_harakat":
        return text.translate(_HARAKAT)
    if norm == "lao_am":
        from glotbench.text.segment import repair_lao_am

        return repair_lao_am(text)
    if norm == "zawgyi":
        return zawgyi_to_unicode(text)
    if norm == "vi_tone":
        import re

        from glotbench.text.vietnamese import TONE_MARKS

        def move(m: Any) -> str:
            d = unicodedata.normalize("NFD", m.group(0))
            tones = "".join(c for c in d if c in TONE_MARKS)
            return unicodedata.normalize("NFC", "".join(c for c in d if c not in TONE_MARKS)) + tones
        return re.sub(r"\w+", move, unicodedata.normalize("NFC", text))
    return text


def zawgyi_to_unicode(text: str) -> str:
    """`text` in Unicode when myanmartools finds it Zawgyi (p >= ZAWGYI_P), by ICU's `Zawgyi-my`
    transliterator (the conversion myanmartools' own documentation names); otherwise unchanged (a
    Unicode text through the converter would be garbled)."""
    from glotbench.checks.language import ZAWGYI_P, zawgyi_probability

    return _zawgyi_converter().transliterate(text) if zawgyi_probability(text) >= ZAWGYI_P else text


@functools.lru_cache(maxsize=1)
def _zawgyi_converter() -> Any:
    try:
        import icu
    except ImportError as e:
        raise GlotbenchError(f"norm=zawgyi needs ICU: pip install \"glotbench[zawgyi]\" ({e})") from e
    return icu.Transliterator.createInstance("Zawgyi-my")


def zawgyi_converter_name() -> str:
    """ICU's version, as the `norm=zawgyi` conversion is named in rescore's output."""
    import icu

    return f"icu-{icu.ICU_VERSION}-Zawgyi-my"


@dataclass(frozen=True)
class Plan:
    """How a benchmark's answers are scored again: metric kinds, each sample's language and references."""

    kinds: tuple[str, ...]  # bleu, chrf, chrf++, token_f1, exact
    lang: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None]
    refs: Callable[[Mapping[str, Any]], list[str]]
    group: str | None  # the group the benchmark reports per (None: pooled)
    f1: tuple[str, str] = ("max", "unicode")  # token F1's references rule and normalisation
    names: Mapping[str, str] | None = None  # kind -> the run's metric name
    bleu_tokenize: str | None = None  # the run's BLEU tokenizer over segmented text

    def group_of(self, row: Mapping[str, Any]) -> str:
        """The group a stored sample is reported in ("all" where the benchmark pools)."""
        return str((row.get("meta") or {}).get(self.group, "unknown")) if self.group else "all"


def _first(*keys: str) -> Callable[[Mapping[str, Any]], list[str]]:
    def refs(gold: Mapping[str, Any]) -> list[str]:
        for k in keys:
            v = gold.get(k)
            if isinstance(v, str):
                return [v]
            if isinstance(v, (list, tuple)) and v:
                return [str(x) for x in v]
        return []
    return refs


def plan_for(bench: Benchmark) -> Plan:
    from glotbench.checks.language import expected_language

    declared = bench.rescore_plan()  # the benchmark's declared fact (Benchmark.rescore_plan)
    if declared is None:
        raise GlotbenchError(f"rescore has no settings to vary for {bench.name}: it re-scores corpus metrics "
                             "(translation, summaries), token F1 and vi-diacritics' exact match")
    lang: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] = (
        (lambda f, m: expected_language(bench, f, m)) if declared.per_item_language else (lambda f, m: bench.lang))
    return Plan(declared.kinds, lang, _first(*declared.refs), declared.group, f1=declared.f1, names=declared.names,
                bleu_tokenize=declared.bleu_tokenize)


def _segment(text: str, lang: str | None, segmenter: str | None) -> str:
    """The text's words joined by spaces for a language written without spaces (as SacreMetric does)."""
    from glotbench.text.segment import needs_segmentation, segment, segment_as

    if not needs_segmentation(lang) or segmenter == "none":
        return text
    return " ".join(segment(text, lang) if segmenter in (None, "laonlp") else segment_as(text, lang, segmenter))


def _corpus(kind: str, hyps: list[str], refs: list[list[str]], lang: str | None, settings: Mapping[str, str],
            plan: Plan, zeroed: list[bool] | None = None, sentences: bool = False) -> tuple[float, list[float]]:
    """The corpus score, and with `sentences` each segment's sentence score (sacrebleu's formula on the
    segment's own statistics; BLEU with effective order, as sacrebleu's `sentence_score` recommends)."""
    from glotbench.metrics.corpus import SacreMetric
    from glotbench.text.segment import needs_segmentation

    norm, seg = settings.get("norm"), settings.get("segmenter")
    spm = settings.get("bleu_tokenize") or (plan.bleu_tokenize if is_spm(plan.bleu_tokenize) else None)
    if kind == "bleu" and is_spm(spm):
        seg = "none"  # spBLEU (a variant, or the run's own): the model's pieces of the text as written
    hyps = [_segment(normalise(h, norm), lang, seg) for h in hyps]
    refs = [[_segment(normalise(r, norm), lang, seg) for r in rs] for rs in refs]
    args: dict[str, Any] = {}
    if kind == "bleu":
        default = (plan.bleu_tokenize or "none") if needs_segmentation(lang) and seg != "none" else None
        tok = spm if is_spm(spm) else settings.get("bleu_tokenize") or default
        if tok is None:
            from glotbench.languages import segmenter_of
            from glotbench.metrics.corpus import CHAR_SCRIPT_TOKENIZERS

            tok = CHAR_SCRIPT_TOKENIZERS.get(lang or "", "char") if segmenter_of(lang) == "char" else "13a"
        args["tokenize"] = tok
    metric = SacreMetric(kind, None, **args)  # segmented above: the metric scores the text as given
    rows = metric.stats(hyps, refs)
    segments: list[float] = []
    if sentences:
        sentence = SacreMetric(kind, None, effective_order=True, **args) if kind == "bleu" else metric
        segments = [0.0 if zeroed and zeroed[i] else sentence.score_from_stats(r) for i, r in enumerate(rows)]
    if zeroed is not None:  # wrong_language=zero: the mean of sentence scores, a flagged reply's 0
        return (sum(0.0 if z else metric.score_from_stats(r) for r, z in zip(rows, zeroed)) / len(rows)
                if rows else 0.0), segments
    return metric.score_stats(rows, resamples=0).estimate.value, segments


def _f1(answers: list[str | None], refs: list[list[str]], langs: list[str | None], settings: Mapping[str, str],
        plan: Plan) -> float:
    from glotbench.metrics.token_f1 import f1_tokens, normalize_answer

    refs_rule, norm = plan.f1
    norm = settings.get("f1_norm") or norm
    seg, tnorm = settings.get("segmenter"), settings.get("norm")
    total = 0.0
    for a, rs, lang in zip(answers, refs, langs):
        if a is None or not rs:
            continue

        def toks(text: str) -> list[str]:
            text = normalise(text, tnorm)
            if seg in ("charcluster", "khmercut", "pyidaungsu", "none") and norm == "unicode":
                from glotbench.text.segment import needs_segmentation

                if needs_segmentation(lang):
                    return normalize_answer(_segment(text, lang, seg), None, norm)
            return normalize_answer(text, lang, norm)
        chosen = rs[:1] if refs_rule == "first" else rs
        total += max(f1_tokens(toks(a), toks(r)) for r in chosen)
    return total / len(answers) if answers else float("nan")


def _exact(answers: list[str | None], refs: list[list[str]], settings: Mapping[str, str],
           sources: list[str | None]) -> float:
    """vi-diacritics' exact match: a reply that rewrote the words (its stripped form is not the
    source) is never exact, whatever the variant."""
    from glotbench.text.vietnamese import comparison_key, normalize_space, same_letters

    norm = settings.get("norm")
    if norm in ("nfc", "nfkc"):
        key = lambda t: normalize_space(normalise(t, norm))  # noqa: E731 - strict: the tone position counts
    else:
        key = lambda t: comparison_key(normalise(t, norm))  # noqa: E731
    hits = sum(1 for a, rs, src in zip(answers, refs, sources)
               if a is not None and (src is None or same_letters(a, src)) and key(a) in {key(r) for r in rs})
    return hits / len(answers) if answers else float("nan")


def rescore_samples(plan: Plan, bench: Benchmark, rows: Sequence[Mapping[str, Any]], gold: Mapping[str, Mapping[str, Any]],
                    settings: Mapping[str, str], segments: bool = False) -> dict[str, Any]:
    """{metric: {"overall": value or None, "groups": {group: value}}} for one setting; with `segments`,
    a corpus metric's sentence scores too ({"segments": {group: [score of each sample, in order]}})."""
    from glotbench.checks.language import answer_text

    zero = bench.wrong_language == "zero"
    buckets: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        buckets[plan.group_of(r)].append(r)
    out: dict[str, Any] = {}
    for kind in plan.kinds:
        per: dict[str, float] = {}
        seg: dict[str, list[float]] = {}
        for g, rs in sorted(buckets.items()):
            # a run under wrong_language=zero (benchmarks/settings.py): a flagged reply has no credit
            zeroed = [zero and "wrong_language" in (r.get("flags") or ()) for r in rs]
            answers = [None if r.get("failure") or z else answer_text(bench, r.get("answer")) for r, z in zip(rs, zeroed)]
            refs = [plan.refs(gold.get(str(r["id"]), {})) for r in rs]
            langs = [plan.lang(r.get("input") or {}, r.get("meta") or {}) for r in rs]
            if kind == "token_f1":
                per[g] = 100.0 * _f1(answers, refs, langs, settings, plan) if plan.names else _f1(answers, refs, langs, settings, plan)
            elif kind == "exact":
                per[g] = _exact(answers, refs, settings, [(r.get("input") or {}).get("text") for r in rs])
            else:
                per[g], sentences = _corpus(kind, [a or "" for a in answers], refs, langs[0] if langs else None,
                                            settings, plan, zeroed if zero else None, segments)
                seg[g] = sentences
        name = (plan.names or {}).get(kind, kind)
        out[name] = {"overall": per.get("all"), "groups": {} if not plan.group else per}
        if segments and seg:
            out[name]["segments"] = seg
    return out


@dataclass(frozen=True)
class RunRescore:
    path: str
    model: str
    benchmark: str
    signature: str
    group_key: str | None
    scores: dict[str, dict[str, Any]]  # variant -> metric -> {overall, groups}
    stored: dict[str, Any]  # metric -> {overall, groups}: the run's own figures
    notes: tuple[str, ...] = ()  # what must be read with its numbers (rundir/validity.py `notes`)
    valid: bool = True  # valid and whole: only such runs are ranked
    item_set: str = "all items"  # ranked only against runs on the same items with the same signature
    comparable: tuple[str, str] = ("", "full")
    # metric -> {overall: the stored estimate (value, interval, n, †), groups: {group: estimate}}: the
    # interval the views print beside the stored figure (a re-scored figure has none: no resampling)
    estimates: dict[str, Any] | None = None
    scales: dict[str, str | None] | None = None  # metric -> the run's unit (fraction, points)
    kinds: Mapping[str, str] | None = None  # metric -> its kind (bleu, chrf, chrf++, token_f1, exact)
    languages: tuple[str, ...] = ()  # the languages its answers are scored in
    lower_is_better: tuple[str, ...] = ()  # metrics ranked lowest first (MetricX-24: an error score)


CORPUS_KINDS = frozenset({"bleu", "chrf", "chrf++"})


def learned_plan(bench: Benchmark) -> Plan:
    """The benchmark's rescore plan when a learned translation metric fits it (a declared source field,
    `input_answer`, and a corpus metric), else one GlotbenchError line: what `run --metric-checkpoint`
    checks before any model call and `rescore --metric-checkpoint` leaves a run out for."""
    declared = bench.rescore_plan()
    if bench.input_answer is None or declared is None or not CORPUS_KINDS & set(declared.kinds):
        raise GlotbenchError(f"{bench.name} is not a translation benchmark (no declared source field, input_answer, "
                             "with a corpus metric): a learned translation metric reads the source, the "
                             "translation and the reference")
    return plan_for(bench)


def learned_segments(metric: Any, plan: Plan, bench: Benchmark, rows: Sequence[Mapping[str, Any]],
                     gold: Mapping[str, Mapping[str, Any]], norm: str | None = None) -> list[float]:
    """Each stored sample's learned-metric score (metrics/learned.py), all scored in one batched pass:
    the source is the benchmark's declared `input_answer` field, the reference its first one. THE
    learned-metric path of `rescore` and of `run --metric-checkpoint`."""
    from glotbench.checks.language import answer_text

    field = bench.input_answer
    if field is None:
        raise GlotbenchError(f"{bench.name} declares no source field (input_answer): a learned translation "
                             "metric reads the source")
    zero = bench.wrong_language == "zero"
    credited = [not (r.get("failure") or (zero and "wrong_language" in (r.get("flags") or ()))) for r in rows]
    srcs = [normalise(str((r.get("input") or {}).get(field) or ""), norm) for r in rows]
    hyps = [normalise(answer_text(bench, r.get("answer")) or "", norm) for r in rows]
    refs = [normalise((plan.refs(gold.get(str(r["id"]), {})) or [""])[0], norm) for r in rows]
    # every segment is scored, a failure as the empty reply: an uncredited one gets the metric's worst
    # or its own score, whichever is worse. COMET-22's regression head is unbounded (a score can be
    # below 0), so a bare 0 could raise a wrong-language reply above its own score and the policy
    # `zero` would raise the metric; capped, no policy can.
    got = metric.score(srcs, hyps, refs)
    cap = min if metric.checkpoint.higher_is_better else max
    return [g if ok else cap(g, metric.checkpoint.worst) for g, ok in zip(got, credited)]


def learned_scores(metric: Any, plan: Plan, bench: Benchmark, rows: Sequence[Mapping[str, Any]],
                   gold: Mapping[str, Mapping[str, Any]], norm: str | None, segments: bool = False) -> dict[str, Any]:
    """{"overall", "groups"} of a learned metric over the stored answers: the mean segment score
    (`learned_segments`) per group; with `segments`, each sample's score too ({"segments": {group:
    [score of each sample, in order]}}, as `rescore_samples` gives a corpus metric's: the segment-level
    agreement)."""
    buckets: dict[str, list[float]] = defaultdict(list)
    for r, x in zip(rows, learned_segments(metric, plan, bench, rows, gold, norm)):
        buckets[plan.group_of(r)].append(x)
    per = {g: sum(v) / len(v) for g, v in sorted(buckets.items())}
    out: dict[str, Any] = {"overall": per.get("all"), "groups": {} if not plan.group else per}
    if segments:
        out["segments"] = {g: list(v) for g, v in sorted(buckets.items())}
    return out


def rescore_run(run_dir: str | Path, variants: Sequence[str], segments: bool = False, learned: Any = None) -> RunRescore:
    from glotbench.report import rundata

    data = rundata.load_run(run_dir)
    if data.kind != "run":
        raise GlotbenchError(f"a judged run ({data.kind}); rescore reads ordinary runs")  # the caller names the path
    results = data.results
    bench = rundata.bench_of(results)
    plan = plan_for(bench) if learned is None else learned_plan(bench)  # a learned metric: translation only
    gold, note = rundata.references(results)
    if not gold:
        raise GlotbenchError(f"{run_dir}: cannot re-score without the references: {note}")
    rows = list(rundata.iter_samples(data.path))
    scores = {}
    for v in [AS_RUN, *[x for x in variants if x != AS_RUN]]:
        name, value = parse_variant(v)
        scores[v] = rescore_samples(plan, bench, rows, gold, {} if name == AS_RUN else {name: value}, segments)
    if learned is not None:  # once per distinct text normalisation: the other settings leave it as run
        norms = {v: parse_variant(v)[1] if parse_variant(v)[0] == "norm" else None for v in scores}
        per_norm = {n: learned_scores(learned, plan, bench, rows, gold, n, segments) for n in dict.fromkeys(norms.values())}
        for v, n in norms.items():
            scores[v][learned.checkpoint.kind] = per_norm[n]
    stored, estimates, scales = {}, {}, {}
    for metric in next(iter(scores.values())):
        sc = results["scores"]
        stored[metric] = {"overall": (sc["overall"].get(metric) or {}).get("value"),
                          "groups": {g: (e.get(metric) or {}).get("value")
                                     for g, e in (sc.get("groups", {}).get(plan.group, {}) if plan.group else {}).items()}}
        estimates[metric] = {"overall": sc["overall"].get(metric),
                             "groups": {g: e.get(metric) for g, e in
                                        (sc.get("groups", {}).get(plan.group, {}) if plan.group else {}).items()}}
        scales[metric] = (results.get("metrics") or {}).get(metric, {}).get("scale") or \
            (_learned_scale(learned) if learned is not None and metric == learned.checkpoint.kind else None)
    from glotbench.rundir.selection import comparability, describe_item_set
    from glotbench.rundir.validity import is_valid, notes

    run_notes = tuple(notes(results))
    if learned is not None and learned.checkpoint.kind in stored:
        from glotbench.metrics.learned import stored_signature

        was = stored_signature(results)
        if was is not None and was != learned.signature():  # the run's figure is another checkpoint's
            kind = learned.checkpoint.kind
            stored[kind] = {"overall": None, "groups": {g: None for g in stored[kind]["groups"] or {}}}
            estimates[kind] = {"overall": None, "groups": {}}
            run_notes += (f"results.json's {kind} was scored with another checkpoint ({was}), not "
                          f"{learned.signature()}: its stored figure is not shown beside this one's",)
    return RunRescore(str(run_dir), results["model"]["spec"], results["benchmark"]["name"], results["signature"],
                      plan.group, scores, stored, run_notes, is_valid(results),
                      describe_item_set(results), comparability(results), estimates, scales,
                      {(plan.names or {}).get(k, k): k for k in plan.kinds},
                      tuple(sorted({x for r in rows if (x := plan.lang(r.get("input") or {}, r.get("meta") or {}))})),
                      () if learned is None or learned.checkpoint.higher_is_better else (learned.checkpoint.kind,))


def spm_models(variants: Sequence[str]) -> dict[str, dict[str, str]]:
    """The SentencePiece model files of `bleu_tokenize=spm:PATH` variants: path, SHA-256 and signature tag."""
    out = {}
    for v in variants:
        name, value = parse_variant(v)
        if name == "bleu_tokenize" and is_spm(value):
            m = spm_model(value)
            out[v] = {"path": m.path, "sha256": m.sha256, "tok": m.tag}
    return out


def _learned_scale(learned: Any) -> str:
    """COMET's scores read as fractions (shown x100); MetricX-24's 0-25 error points as they are."""
    return "fraction" if learned.checkpoint.higher_is_better else "points"


def tiers(values: dict[str, float | None]) -> list[list[str]]:
    """The models best first, equal scores in one tier (`[["a", "b"], ["c"]]`: a and b tie, then c);
    models without a score last, as one tier. Scores are equal when they agree to 1e-9 of their size
    (the same formula over the same counts; float noise is no ranking)."""
    scored = sorted(((x, m) for m, x in values.items() if x is not None), key=lambda t: (-t[0], t[1]))
    out: list[list[str]] = []
    last: float | None = None
    for x, m in scored:
        if last is not None and abs(x - last) <= 1e-9 * max(1.0, abs(x), abs(last)):
            out[-1].append(m)
        else:
            out.append([m])
        last = x
    none = sorted(m for m, x in values.items() if x is None)
    return out + ([none] if none else [])


def _pooled(runs: Sequence[RunRescore]) -> tuple[dict[tuple[str, tuple[str, str]], list[RunRescore]],
                                                  dict[str, list[dict[str, str]]]]:
    """The valid, whole runs by benchmark and comparable item set (signature and items), and per
    benchmark the runs left out with why: what `rankings` ranks and `agreement` pools."""
    pooled: dict[tuple[str, tuple[str, str]], list[RunRescore]] = defaultdict(list)
    left: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in runs:
        if r.valid:
            pooled[(r.benchmark, r.comparable)].append(r)
        else:
            left[r.benchmark].append({"model": r.model, "path": r.path, "why": "; ".join(r.notes) or "not valid"})
    return pooled, left


def rankings(runs: Sequence[RunRescore]) -> list[dict[str, Any]]:
    """Per benchmark, metric and group: each variant's order of the models and the pairs that flip
    against the order as run. Only valid, whole runs are ranked, and only against runs with the
    same signature and item set (a 10-item run is not ranked against a full one); each entry
    names the runs it leaves out and why."""
    out = []
    by_bench, unranked = _pooled(runs)
    sets: defaultdict[str, int] = defaultdict(int)
    for bench, _ in by_bench:
        sets[bench] += 1
    for (bench, _), rs in sorted(by_bench.items(), key=lambda kv: (kv[0][0], kv[1][0].item_set)):
        base = rs[0].scores[AS_RUN]
        for metric in base:
            sign = -1.0 if metric in rs[0].lower_is_better else 1.0  # ordered by sign * value, best first
            groups = list(base[metric]["groups"]) or ["overall"]
            for g in groups:
                def value(r: RunRescore, v: str) -> float | None:
                    m = r.scores[v][metric]
                    return m["overall"] if g == "overall" else m["groups"].get(g)

                entry: dict[str, Any] = {"benchmark": bench, "metric": metric, "group": g, "variants": {},
                                         "item_set": rs[0].item_set, "not_ranked": unranked.get(bench, [])}
                if sets[bench] > 1:
                    entry["note"] = "runs on other items or with another signature are ranked apart"
                # the runs with a value as run, highest first, with that value
                ranked = sorted(((r, sign * x) for r in rs if (x := value(r, AS_RUN)) is not None), key=lambda rx: -rx[1])
                if sign < 0:
                    entry["lower_is_better"] = True
                for v in rs[0].scores:
                    vals = {r.model: value(r, v) for r in rs}
                    keyed = {m: (None if x is None else sign * x) for m, x in vals.items()}
                    order = [m for m, x in sorted(keyed.items(), key=lambda kv: (-(kv[1] if kv[1] is not None else -1e9), kv[0]))]
                    # a flip: a pair strictly ordered as run and strictly the other way here (equal
                    # scores are a tie, never an order)
                    flips = [[a.model, b.model] for i, (a, xa) in enumerate(ranked) for b, xb in ranked[i + 1:]
                             if xa > xb and (ya := keyed[a.model]) is not None
                             and (yb := keyed[b.model]) is not None and ya < yb]
                    entry["variants"][v] = {"values": vals, "order": order, "tiers": tiers(keyed), "flips": flips}
                out.append(entry)
    for bench, left in sorted(unranked.items()):
        if not any(b == bench for b, _ in by_bench):
            out.append({"benchmark": bench, "metric": None, "group": None, "variants": {}, "item_set": None,
                        "not_ranked": left})
    return out


# Which metric kinds a variant changes: the other metrics under that variant would repeat their
# as-run column in the agreement table.
AFFECTS: dict[str, frozenset[str]] = {
    "segmenter": frozenset({"bleu", "chrf++", "token_f1"}),  # chrF (word order 0) reads no words
    "bleu_tokenize": frozenset({"bleu"}),
    "norm": frozenset({"bleu", "chrf", "chrf++", "token_f1", "exact", "comet22", "xcomet", "metricx24"}),
    "f1_norm": frozenset({"token_f1"}),
}
MIN_SYSTEMS = 3  # system-level τ over fewer runs is not computed (two runs give only ±1)


def columns(run: RunRescore) -> list[tuple[str, str, str]]:
    """The agreement table's columns of a run: (label, variant, metric), each metric as run, then each
    variant that changes it. A new metric of a benchmark, or a new variant, is one more column."""
    out = []
    for v, per in run.scores.items():
        name, value = parse_variant(v)
        for m in per:
            kind = (run.kinds or {}).get(m, m)
            if name == AS_RUN:
                out.append((m, v, m))
            elif kind in AFFECTS.get(name, frozenset()):
                label = (f"spBLEU ({spm_model(value).tag})" if name == "bleu_tokenize" and is_spm(value)
                         else f"{m} ({v})")
                out.append((label, v, m))
    return out


def _tau(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Kendall's τ-b and its two-sided p (scipy.stats.kendalltau); None where it is undefined (a
    constant column)."""
    import math
    import warnings

    from scipy.stats import kendalltau

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: scipy warns and returns nan
        res = kendalltau(x, y)
    tau, p = float(res.statistic), float(res.pvalue)
    return (None if math.isnan(tau) else tau), (None if math.isnan(p) else p)


def agreement(runs: Sequence[RunRescore]) -> list[dict[str, Any]]:
    """Kendall τ between every two columns (`columns`), per benchmark, item set and group (a
    language, a direction; a run without groups: its languages), at two levels:

    - `segment`: each segment's sentence scores, pooled over the runs (n = runs x segments); computed
      from one run on. Corpus metrics only (token F1 and exact match have no sentence score here).
    - `system`: the runs' corpus scores (n = runs); computed from MIN_SYSTEMS runs on.

    Only valid, whole runs with the same signature and item set are pooled, as `rankings` ranks them."""
    by_set, not_pooled = _pooled(runs)
    out = []
    for (bench, _), rs in sorted(by_set.items(), key=lambda kv: (kv[0][0], kv[1][0].languages, kv[1][0].item_set)):
        cols = columns(rs[0])
        groups = sorted({g for _, v, m in cols for g in rs[0].scores[v][m]["groups"]}) or ["overall"]
        for g in groups:
            label = g if g != "overall" else ",".join(rs[0].languages) or "overall"
            base = {"benchmark": bench, "group": g, "language": label, "item_set": rs[0].item_set,
                    "runs": len(rs), "columns": [c[0] for c in cols], "not_pooled": not_pooled.get(bench, [])}

            def system(v: str, m: str) -> list[float | None]:
                e = [r.scores[v][m] for r in rs]
                return [x["overall"] if g == "overall" else x["groups"].get(g) for x in e]

            def segment(v: str, m: str) -> list[float | None] | None:
                key = "all" if g == "overall" else g
                per = [r.scores[v][m].get("segments", {}).get(key) for r in rs]
                return None if any(x is None for x in per) else [x for run_seg in per for x in run_seg]

            for level, values, enough in (("segment", segment, True), ("system", system, len(rs) >= MIN_SYSTEMS)):
                vectors = [values(v, m) if enough else None for _, v, m in cols]
                tau: list[list[float | None]] = []
                p: list[list[float | None]] = []
                n = 0
                for a in vectors:
                    tau.append([])
                    p.append([])
                    for b in vectors:
                        pairs = [(x, y) for x, y in zip(a or (), b or ()) if x is not None and y is not None]
                        n = max(n, len(pairs))
                        t, q = _tau(*zip(*pairs)) if len(pairs) >= 2 else (None, None)
                        tau[-1].append(t)
                        p[-1].append(q)
                note = (None if enough else f"fewer than {MIN_SYSTEMS} runs: not computed") if level == "system" \
                    else (None if n else "no sentence scores (corpus metrics only)")
                out.append({**base, "level": level, "n": n, "tau": tau, "p": p, "note": note})
    return out


def rescore(paths: Sequence[str], variants: Sequence[str], agree: bool = False,
            metric_checkpoint: str | Path | None = None) -> dict[str, Any]:
    from glotbench.report.board import collect

    for v in variants:
        parse_variant(v)
    learned = None
    if metric_checkpoint is not None:
        from glotbench.metrics.learned import load

        learned = load(metric_checkpoint)
    runs, left_out = collect(list(paths))
    done, skipped = [], list(left_out)
    for r in runs:
        try:
            done.append(rescore_run(r.path, variants, segments=agree, learned=learned))
        except GlotbenchError as e:
            skipped.append({"path": str(r.path), "reason": str(e)})
    if not done:
        raise GlotbenchError("no run could be re-scored: " + "; ".join(f"{x['path']}: {x['reason']}" for x in skipped))
    from glotbench.text.segment import signature_of

    return {"variants": [AS_RUN, *[v for v in variants if v != AS_RUN]],
            "segmenters": {v: signature_of(parse_variant(v)[1]) for v in variants if parse_variant(v)[0] == "segmenter"},
            **({"converters": {"norm=zawgyi": zawgyi_converter_name()}} if "norm=zawgyi" in variants else {}),
            **({"spm_models": spm} if (spm := spm_models(variants)) else {}),
            **({"learned": {learned.checkpoint.kind: learned.signature()},
                "learned_lower_is_better": not learned.checkpoint.higher_is_better} if learned is not None else {}),
            "runs": [{"path": r.path, "model": r.model, "benchmark": r.benchmark, "signature": r.signature,
                      "group": r.group_key, "scores": r.scores, "stored": r.stored,
                      "stored_estimates": r.estimates or {}, "scales": r.scales or {}, "valid": r.valid,
                      "notes": list(r.notes), "item_set": r.item_set} for r in done],
            "rankings": rankings(done), **({"agreement": agreement(done)} if agree else {}), "left_out": skipped}
