"""`glotbench run BENCH --pivot en --pivot-model SPEC`: a task answered through English (checks/pivot.py).

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
from typing import Any

from glotbench.core import RunResult
from glotbench.errors import GlotbenchError
from glotbench.models.base import ModelBase, Response

TEXT_KINDS = ("text",)


class _Replay(ModelBase):
    """The final phase's model: each item's back-translated answer; "" where there is none (the
    final benchmark names that item's failure: GivenAnswer)."""

    def __init__(self, spec: str, replies: dict[str, str]):
        super().__init__(spec=spec)
        self.replies = replies
        self.cache_id = f"pivot-replay:{spec}"

    async def generate(self, prompt: Any, config: Any, *, item_id: str = "", repeat: int = 0) -> Response:
        return Response(text=self.replies.get(item_id, ""), finish_reason="stop", latency_s=0.0)


def _phase_options(options: Any, out: Path, **kw: Any) -> Any:
    return dataclasses.replace(options, out=str(out), limit=None, subset=None, bench_options=(), **kw)


async def run_pivot(benchmark: str, model: str, pivot_model: str, options: Any, target: str = "en") -> RunResult:
    from glotbench.checks.extraction import answer_kind
    from glotbench.checks.language import answer_text
    from glotbench.checks.pivot import (GivenAnswer, Pivoted, PivotTranslate, back_items, paired, pivoted,
                                        translation_items, with_mixins)
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
    items = select(full, bench.group_by, limit=options.limit, subset=options.subset, repeats=options.repeats).items
    # 1. the items' texts into English
    asked = translation_items(bench, items, target)
    if not len(asked):
        raise GlotbenchError(f"{bench.name}: every selected item is already in {target}: nothing to pivot")
    tr_in = await evaluate_async(PivotTranslate(), pivot_model, _phase_options(options, root / "pivot" / "translate-in", repeats=1),
                                 dataset=asked)
    translations = {s.id: s.answer for s in tr_in.samples if isinstance(s.answer, str)}
    pivot_items, missing = pivoted(items, translations, {it.id for it in asked})
    tag = f"{target}({pivot_model})"
    pbench = with_mixins(bench, Pivoted, pivot=tag)
    text_task = answer_kind(bench) in TEXT_KINDS or _answers_text(bench)
    # 2. the task on the English items (the pivot run itself unless the answers go back)
    answers_dir = root / "pivot" / "answers" if text_task else root
    ans = await evaluate_async(pbench, model, dataclasses.replace(options, out=str(answers_dir), limit=None, subset=None),
                               dataset=pivot_items)
    final = ans
    back_failed = 0
    if text_task:
        # 3. the answers back into each item's language; 4. scored against the native references
        english = {s.id: text for s in ans.samples if s.repeat == 0 and (text := answer_text(bench, s.answer))}
        by_id = {it.id: it for it in items}
        native_text: dict[str, str] = {}
        if english:  # none when every English answer failed
            back = await evaluate_async(PivotTranslate(), pivot_model,
                                        _phase_options(options, root / "pivot" / "translate-back", repeats=1),
                                        dataset=back_items(bench, english, by_id, target))
            native_text = {s.id.rsplit("::", 1)[0]: s.answer for s in back.samples if isinstance(s.answer, str)}
        failures = {s.id: f"answer_{s.failure}" for s in ans.samples if s.failure}
        failures.update({i: "pivot_failed" for i in english if i not in native_text})
        back_failed = sum(1 for v in failures.values() if v == "pivot_failed")
        replies = {i: t for i, t in native_text.items() if i not in failures}
        fbench = with_mixins(bench, GivenAnswer, Pivoted, pivot=tag, _failures=failures)
        final = await evaluate_async(fbench, _Replay(f"{ans.results['model']['spec']}", replies),
                                     dataclasses.replace(options, out=str(root), limit=None, subset=None, use_cache=False),
                                     dataset=items)
    # the native run, for the paired comparison
    native = await evaluate_async(bench, model, dataclasses.replace(options, out=str(root / "pivot" / "native")),
                                  dataset=None)
    metrics = bench.metrics_for(full)
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


def _answers_text(bench: Any) -> bool:
    """Tasks whose answers are texts in the item's language (summaries): CrossSum, corpus scorers."""
    from glotbench.checks.language import expectation

    return expectation(bench) is not None


def pivot_cli(benchmark: str, model: str, pivot: str | None, pivot_model: str | None, options: Any) -> RunResult:
    """`run --pivot LANG --pivot-model SPEC`: both needed; the pivot run (and its comparison) printed."""
    import asyncio

    if not pivot or not pivot_model:
        raise GlotbenchError("--pivot and --pivot-model go together: --pivot en --pivot-model SPEC")
    return asyncio.run(run_pivot(benchmark, model, pivot_model, options, pivot))
