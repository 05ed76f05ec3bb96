"""`glotbench run BENCH --pivot en --pivot-model SPEC`: a task answered through English.

Each item's public text (every string field, the options and choices; not few-shot examples) is
translated to English by the pivot model (`PivotTranslate`, a benchmark run of its own: cached,
logged in its run directory), the task is asked on the translated item, and its answer scored as
the task defines: a letter or a number against the same gold; a text answer (a span, a summary)
translated back into the item's language by the pivot model first (a second translation run), then
scored against the native references. The pivot is a run setting of the task (`RunSettings.pivot`,
benchmarks/settings.py): the run's signature carries `|pivot:en(PIVOT_MODEL)|`, so it never shares a
board column with a native run; results.json `checks.pivot` holds native against pivot with the
paired test (checks/pivot.py).

Phases, each an ordinary run (the call cache, retries, resumption), under `--out`:

    pivot/translate-in/    the items' texts translated to English by the pivot model
    pivot/answers/         the task asked on the translated items (text tasks only; else this is --out)
    pivot/translate-back/  text answers translated back into each item's language (text tasks)
    pivot/native/          the same task, model and items asked natively (for the comparison)
    --out                  the pivot run: results.json (signature `|pivot:en(SPEC)|`, `checks.pivot`)

A letter or number answer is scored against the gold as it is; a text answer is scored after its
translation back (the final phase replays the back-translations: no model call). A text the pivot
model failed to translate stays in its language (counted in `checks.pivot.untranslated`); an
answer it failed to translate back is scored as the task scores a failure (`pivot_failed`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar, Mapping

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, RunResult
from glotbench.errors import DataError, GlotbenchError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.models.base import ModelBase, Response
from glotbench.core import GenerateConfig, Prompt

TEXT_KINDS = ("text",)


SKIP = frozenset({"lang", "lp", "direction", "source_language", "target_language", "fewshot", "id"})
SEP = "::"


def language_name(code: str | None) -> str:
    from glotbench.languages import profile

    p = profile(code)
    return p.name if p is not None else (code or "the original language")


class PivotTranslate(Benchmark):
    """Texts translated by the pivot model: items `ITEM::FIELD` with `text`, `source`, `target`."""

    name = "pivot-translate"
    version = "1.0"
    description = "texts translated for the English pivot (no gold: the share translated)"
    metrics = (RatioMetric("translated_rate", "translated", "n", "share of texts translated", show_ci=False),)
    default_config = GenerateConfig(temperature=0.0, max_tokens=2048)
    SYSTEM: ClassVar[str] = "You are a translator. Reply with the translation only: no notes, no quotation marks."

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("pivot translations are built from a task's items (engine/pivot.py), not loaded")

    def render(self, item: PublicItem) -> Prompt:
        text = (f"Translate the following {item['source']} text into {item['target']}. Keep numbers, names, "
                f"symbols and line breaks as they are.\n\n{item['text']}")
        return Prompt(messages=({"role": "system", "content": self.SYSTEM}, {"role": "user", "content": text}),
                      text=f"{item['source']}: {item['text']}\n{item['target']}:", text_stop=("\n",))

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"translated": 1.0, "n": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"translated": 0.0, "n": 1.0}, failure=failure)


def texts_of(item: Item) -> dict[str, str]:
    """The item's public texts to translate, by path (`question`, `options.A`, `choices.2`)."""
    out: dict[str, str] = {}
    for k, v in item.public.items():
        if k in SKIP:
            continue
        if isinstance(v, str) and v.strip():
            out[k] = v
        elif isinstance(v, Mapping):
            out.update({f"{k}.{kk}": vv for kk, vv in v.items() if isinstance(vv, str) and vv.strip()})
        elif isinstance(v, (list, tuple)):
            out.update({f"{k}.{i}": vv for i, vv in enumerate(v) if isinstance(vv, str) and vv.strip()})
    return out


def item_language(bench: Benchmark, item: Item) -> str | None:
    from glotbench.languages import resolve_code

    return resolve_code(item.meta.get("lang") or item.public.get("lang")) or bench.lang


def translation_items(bench: Benchmark, items: Dataset, target: str) -> Dataset:
    """One PivotTranslate item per text of each item not already in `target`."""
    out = []
    for it in items:
        lang = item_language(bench, it)
        if lang == target:
            continue
        for path, text in texts_of(it).items():
            out.append(Item.create(f"{it.id}{SEP}{path}", {"text": text, "source": language_name(lang),
                                                          "target": language_name(target)},
                                   {}, {"lang": lang or "unknown", "field": path.split(".")[0]}))
    return Dataset(tuple(out), f"pivot:{items.source}", None)


def back_items(bench: Benchmark, answers: Mapping[str, str], items: Mapping[str, Item], source: str) -> Dataset:
    """One PivotTranslate item per English answer, into its item's language."""
    out = []
    for iid, text in answers.items():
        lang = item_language(bench, items[iid])
        out.append(Item.create(f"{iid}{SEP}answer", {"text": text, "source": language_name(source),
                                                    "target": language_name(lang)}, {}, {"lang": lang or "unknown"}))
    return Dataset(tuple(out), "pivot:answers", None)


def pivoted(items: Dataset, translations: Mapping[str, str], asked: set[str]) -> tuple[Dataset, dict[str, list[str]]]:
    """The items with each translated text in place; a text `asked` for (`ITEM::PATH`) that did not
    come back is kept as it is and listed per item (an item already in the pivot language asks none)."""
    out: list[Item] = []
    missing: dict[str, list[str]] = {}
    for it in items:
        public: dict[str, Any] = {k: (dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, (list, tuple))
                                      else v) for k, v in it.public.items()}
        for path in texts_of(it):
            key = f"{it.id}{SEP}{path}"
            got = translations.get(key)
            if got is None:
                if key in asked:
                    missing.setdefault(it.id, []).append(path)
                continue
            head, _, tail = path.partition(".")
            if not tail:
                public[head] = got
            elif isinstance(public[head], dict):
                public[head][tail] = got
            else:
                public[head][int(tail)] = got
        out.append(dataclasses.replace(it, public=dict(public)))
    return dataclasses.replace(items, items=tuple(Item.create(i.id, i.public, i.gold, i.meta) for i in out)), missing


class _Replay(ModelBase):
    """The final phase's model: each item's back-translated answer; "" where there is none (the
    final benchmark names that item's failure: `RunSettings.given`)."""

    def __init__(self, spec: str, replies: dict[str, str]):
        super().__init__(spec=spec)
        self.replies = replies
        self.cache_id = f"pivot-replay:{spec}"

    async def generate(self, prompt: Any, config: Any, *, item_id: str = "", repeat: int = 0) -> Response:
        return Response(text=self.replies.get(item_id, ""), finish_reason="stop", latency_s=0.0)


def _phase_options(options: Any, out: Path, **kw: Any) -> Any:
    """A phase's options: its own directory, every selected item, marked as a phase (`phase`: never a
    run of its own in a folder that `board` or `export` search, rundata.judged_phase)."""
    return dataclasses.replace(options, out=str(out), limit=None, subset=None, bench_options=(), **kw)


async def run_pivot(benchmark: str, model: str, pivot_model: str, options: Any, target: str = "en") -> RunResult:
    from glotbench.checks.extraction import answer_kind
    from glotbench.checks.language import answer_text
    from glotbench.benchmarks.settings import replace
    from glotbench.checks.pivot import paired
    from glotbench.checks.stored import write_checks
    from glotbench.engine.evaluate import evaluate_async
    from glotbench.rundir.selection import select
    from glotbench.registry import get_benchmark

    if options.repeats != 1:
        raise GlotbenchError("--pivot runs one repeat (--repeats 1)")
    if target != "en":
        raise GlotbenchError(f"--pivot supports en (English), got {target!r}")
    if not options.out:
        raise GlotbenchError("--pivot needs --out DIR: its phases are written under it")
    bench = get_benchmark(benchmark, **dict(options.bench_options))
    if bench.input_language == target or bench.judged or bench.method != "generate":
        raise GlotbenchError(f"{bench.name}: --pivot is for tasks answered by generation whose input is not English "
                             "(DeepSEA MGSM, IndoMMLU, XQuAD, CrossSum; task files)")
    root = Path(options.out)
    full = bench.load(options.data)
    chosen = select(full, bench.group_by, limit=options.limit, subset=options.subset, repeats=options.repeats)
    items = chosen.items
    # 1. the items' texts into English
    asked = translation_items(bench, items, target)
    if not len(asked):
        raise GlotbenchError(f"{bench.name}: every selected item is already in {target}: nothing to pivot")
    tr_in = await evaluate_async(PivotTranslate(), pivot_model, _phase_options(options, root / "pivot" / "translate-in", repeats=1,
                                                                phase="pivot translate-in"),
                                 dataset=asked)
    translations = {s.id: s.answer for s in tr_in.samples if isinstance(s.answer, str)}
    pivot_items, missing = pivoted(items, translations, {it.id for it in asked})
    tag = f"{target}({pivot_model})"
    pbench = replace(bench, pivot=tag)
    text_task = answer_kind(bench) in TEXT_KINDS or _answers_text(bench)
    # 2. the task on the English items (the pivot run itself unless the answers go back)
    answers_dir = root / "pivot" / "answers" if text_task else root
    # the run's items were chosen from the whole dataset: its results.json says so (`subset:` signed)
    ans = await evaluate_async(pbench, model, dataclasses.replace(options, out=str(answers_dir), limit=None, subset=None,
                                                                  **({"phase": "pivot answers"} if text_task else {})),
                               dataset=dataclasses.replace(chosen, items=pivot_items))
    final = ans
    back_failed = 0
    if text_task:
        # 3. the answers back into each item's language; 4. scored against the native references
        english = {s.id: text for s in ans.samples if s.repeat == 0 and (text := answer_text(bench, s.answer))}
        by_id = {it.id: it for it in items}
        native_text: dict[str, str] = {}
        if english:  # none when every English answer failed
            back = await evaluate_async(PivotTranslate(), pivot_model,
                                        _phase_options(options, root / "pivot" / "translate-back", repeats=1,
                                                       phase="pivot translate-back"),
                                        dataset=back_items(bench, english, by_id, target))
            native_text = {s.id.rsplit("::", 1)[0]: s.answer for s in back.samples if isinstance(s.answer, str)}
        failures = {s.id: f"answer_{s.failure}" for s in ans.samples if s.failure}
        failures.update({i: "pivot_failed" for i in english if i not in native_text})
        back_failed = sum(1 for v in failures.values() if v == "pivot_failed")
        replies = {i: t for i, t in native_text.items() if i not in failures}
        fbench = replace(bench, pivot=tag, given=failures)
        final = await evaluate_async(fbench, _Replay(f"{ans.results['model']['spec']}", replies),
                                     dataclasses.replace(options, out=str(root), limit=None, subset=None, use_cache=False),
                                     dataset=chosen)
    # the native run, for the paired comparison
    native = await evaluate_async(bench, model, dataclasses.replace(options, out=str(root / "pivot" / "native"),
                                                                    phase="pivot native"),
                                  dataset=None)
    metrics = bench.run_metrics(full)
    block = dict(final.results.get("checks") or {})
    block["pivot"] = {
        "language": target, "pivot_model": pivot_model, "answer": "translated back" if text_task else "as given",
        "texts_translated": len(translations), "texts": len(tr_in.samples),
        "untranslated": {"items": len(missing), "texts": sum(len(v) for v in missing.values()),
                         "ids": sorted(missing)[:20]},
        "back_translation_failed": back_failed,
        "phases": {"translate_in": str(tr_in.out_dir), "answers": str(ans.out_dir),
                   "native": str(native.out_dir), **({"translate_back": str(root / "pivot" / "translate-back")} if text_task else {})},
        "native_vs_pivot": paired(bench, metrics, native.samples, final.samples, options.bootstrap_resamples or 1000),
    }
    # The pivot run is only as valid as its phases: a translation or answer phase whose calls mostly
    # failed makes it invalid too (rundir/validity.py), named in its validity record.
    phases = [("translate_in", tr_in), ("answers", ans), *([("native", native)])]
    bad = [(name, r.results["validity"]) for name, r in phases
           if isinstance(r.results.get("validity"), dict) and r.results["validity"].get("valid") is False]
    extra = {}
    if bad and final.results.get("validity", {}).get("valid") is not False:
        extra["validity"] = {**bad[0][1], "phase": bad[0][0]}
    write_checks(root, block, **extra)
    from glotbench.rundir import read_results

    results = read_results(root)  # as written by write_checks, read back through its schema
    return RunResult(root, results, final.samples, items)


def _answers_text(bench: Benchmark) -> bool:
    """Tasks whose answers are texts in the item's language (summaries): CrossSum, corpus scorers."""
    from glotbench.checks.language import expectation

    return expectation(bench) is not None


def pivot_cli(benchmark: str, model: str, pivot: str | None, pivot_model: str | None, options: Any) -> RunResult:
    """`run --pivot LANG --pivot-model SPEC`: both needed; the pivot run (and its comparison) printed."""
    import asyncio

    if not pivot or not pivot_model:
        raise GlotbenchError("--pivot and --pivot-model go together: --pivot en --pivot-model SPEC")
    return asyncio.run(run_pivot(benchmark, model, pivot_model, options, pivot))
