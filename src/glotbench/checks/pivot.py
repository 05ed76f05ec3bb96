"""English pivot: the parts (engine/pivot.py runs them).

`--pivot en --pivot-model SPEC` answers a task in English: each item's public text (every string
field, the options and choices; not few-shot examples) is translated to English by the pivot model
(`PivotTranslate`, a benchmark run of its own: cached, logged in its run directory), the task is
asked on the translated item, and its answer scored as the task defines: a letter or a number
against the same gold; a text answer (a span, a summary) translated back into the item's language
by the pivot model first (a second translation run), then scored against the native references.
The pivot run's signature carries `|pivot:en(PIVOT_MODEL)|`, so it never shares a board column with
a native run; results.json `checks.pivot` holds native against pivot with the paired test.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset
from glotbench.errors import DataError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.models.base import GenerateConfig, Prompt

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


class Pivoted:
    """The mixin of a task asked through the pivot: its signature names the pivot."""

    pivot: str = ""

    def signature_parts(self) -> Mapping[str, str]:
        return {**super().signature_parts(), "pivot": self.pivot}  # type: ignore[misc]


class GivenAnswer:
    """The mixin of the final phase of a text task: the reply is the back-translated answer itself;
    an item whose answer did not come through (`_failures`: `answer_<kind>` when the English answer
    failed, `pivot_failed` when its translation back did) fails as that kind."""

    _failures: Mapping[str, str] = {}

    def extract(self, text: str, item: PublicItem) -> Extraction:
        kind = self._failures.get(item.id)
        if kind:
            return Extraction(None, kind)
        got = free_text(text)
        pipes = getattr(self, "pipelines", None)  # a task file scores every pipeline's answer
        if got.answer is not None and isinstance(pipes, Mapping) and getattr(self, "spec", None) is not None:
            return Extraction({name: got.answer for name in pipes})  # type: ignore[arg-type]
        return got


def with_mixins(bench: Any, *mixins: type, **attrs: Any) -> Any:
    base = type(bench)
    cls = type("".join(m.__name__ for m in mixins) + base.__name__, (*mixins, base), {"__module__": __name__})
    obj: Any = object.__new__(cls)
    obj.__dict__.update(bench.__dict__)
    obj.__dict__.update(attrs)
    return obj


def paired(bench: Benchmark, metrics: Any, native: Any, pivot: Any, resamples: int = 1000) -> dict[str, Any]:
    """Native against pivot on the items both scored: the headline of each, the difference (pivot -
    native) with its paired-bootstrap CI and p, and approximate randomisation's p; per group too."""
    import numpy as np

    from glotbench.stats import paired_test, paired_too_few

    head = metrics[0]
    keys = list(head.keys)

    def rows(samples: Any) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for s in samples:
            r = out.setdefault(s.id, {})
            for k in keys:
                r[k] = r.get(k, 0.0) + float(s.score.stats.get(k, 0.0))
        return out

    a, b = rows(native), rows(pivot)
    meta = {s.id: s.meta for s in native}

    def test(ids: list[str]) -> dict[str, Any]:
        A = np.array([[a[i][k] for k in keys] for i in ids]).reshape(len(ids), len(keys))
        B = np.array([[b[i][k] for k in keys] for i in ids]).reshape(len(ids), len(keys))
        return {**paired_test(A, B, head.score, resamples=resamples, trials=resamples).to_dict(), "items": len(ids),
                **({"too_few_units": True} if paired_too_few(len(ids)) else {})}  # the † of compare and diff

    common = [i for i in a if i in b]
    out: dict[str, Any] = {"metric": head.name, "scale": getattr(head, "scale", "fraction"),
                           "overall": test(common) if bench.pooled_overall else None, "groups": {}}
    for key in bench.group_by[:1]:
        vals: dict[str, list[str]] = {}
        for i in common:
            vals.setdefault(str(meta[i].get(key, "unknown")), []).append(i)
        out["groups"][key] = {v: test(ids) for v, ids in sorted(vals.items())}
    return out
