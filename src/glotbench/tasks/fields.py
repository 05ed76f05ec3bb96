"""Rows to items: the task's field mapping (id, public, choices, gold, meta), renamed or derived by
templates, and the few-shot examples each item carries.

The public part holds only what `fields.public` names, plus `choices` (the option texts) and
`fewshot` (the examples shown before the item, with their answers: they come from the few-shot
split, never from the item's own gold). A multiple-choice gold `answer` may be an option label
(A, B, ...) or one of the option texts (SIB-200's `category`); it is stored as the label.
Every problem names the row: `FILE:LINE: field: problem`.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping, Sequence

from glotbench.errors import DataError
from glotbench.items import Item
from glotbench.languages import remove_zero_width
from glotbench.tasks.source import Row
from glotbench.tasks.template import LETTERS, is_template, render, value_of

RESERVED = ("choices", "fewshot")


def _text(value: Any, where: str) -> str:
    if value is None or isinstance(value, (dict, list)):
        raise DataError(f"{where}: must be text, got {'null' if value is None else type(value).__name__}")
    return str(value)


def make_item(where: str, row: Mapping[str, Any], fields: Any, position: int, opt: Mapping[str, Any],
              lang: str | None) -> Item:
    ctx = {**row, "opt": opt}
    iid = _text(value_of(fields.id, ctx, f"{where}: fields.id"), f"{where}: fields.id") if fields.id else str(position)
    if not iid.strip():
        raise DataError(f"{where}: fields.id: empty")
    named = {c: c for c in fields.public} if isinstance(fields.public, list) else dict(fields.public)
    public = {name: value_of(spec, ctx, f"{where}: fields.public.{name}") for name, spec in named.items()}
    gold: dict[str, Any] = {}
    for name, spec in fields.gold.items():
        gold[name] = ([_gold(_gold_value(s, ctx, row, f"{where}: fields.gold.{name}.{i}", False),
                             f"{where}: fields.gold.{name}.{i}")
                       for i, s in enumerate(spec)] if isinstance(spec, list)
                      else _gold(_gold_value(spec, ctx, row, f"{where}: fields.gold.{name}", True),
                                 f"{where}: fields.gold.{name}"))
    twins: tuple[str, ...] = ()
    if fields.choices is not None:
        if isinstance(fields.choices, str):
            texts = _choice_list(value_of(fields.choices, ctx, f"{where}: fields.choices"), fields.choices,
                                 f"{where}: fields.choices")
        else:
            texts = list(fields.choices.fixed) if hasattr(fields.choices, "fixed") else [
                _text(value_of(c, ctx, f"{where}: fields.choices.{i}"), f"{where}: fields.choices.{i}")
                for i, c in enumerate(fields.choices)]
        for i, t in enumerate(texts):
            if not remove_zero_width(t).strip():  # U+200B alone is as empty as a space, and invisible
                raise DataError(f"{where}: fields.choices.{i}: an empty option")
        twins = duplicate_options(texts)
        public["choices"] = texts
        gold["answer"] = _label(gold.get("answer"), texts, f"{where}: fields.gold.answer",
                                _as_written(fields.gold.get("answer"), row))
    meta = {name: _text(value_of(spec, ctx, f"{where}: fields.meta.{name}"), f"{where}: fields.meta.{name}")
            for name, spec in fields.meta.items()}
    if lang:
        meta["lang"] = lang
    if twins:  # kept: a letter still reads; a reply naming the shared text reads as no answer
        meta["duplicate_options"] = "=".join(twins)
    return Item.create(iid, public, gold, meta)


def duplicate_options(texts: Sequence[str]) -> tuple[str, ...]:
    """The labels of the first options that share one text as replies are matched to options
    (glotbench.extract.normalise_option: case, format characters and spacing ignored), e.g. ("A",
    "C"); () when every option's text is its own. Such an item is kept (published sets have them;
    a letter still reads, and a reply naming the shared text reads as no answer) and counted in
    results.json `duplicate_options`, a note in every view and a line of `tasks check`; a gold given
    as that text is an error (`_label`: it names no one option)."""
    from glotbench.extract import normalise_option

    seen: dict[str, int] = {}
    for i, t in enumerate(texts):
        j = seen.setdefault(normalise_option(t), i)
        if j != i:
            return tuple(LETTERS[k] for k, u in enumerate(texts) if normalise_option(u) == normalise_option(t))
    return ()


def _gold(value: Any, where: str) -> Any:
    """A gold value as the row has it; null (a missing answer) is an error, not an item nobody can get
    right counted as the model's failure. A list column's null members likewise."""
    if value is None or isinstance(value, list) and any(v is None for v in value):
        raise DataError(f"{where}: null (the row has no gold answer: fix the row or leave it out of the data)")
    return value


def _choice_list(value: Any, spec: str, where: str) -> list[str]:
    """The options from one column holding a list, or from a template rendering a list literal (as
    lm-eval reads its doc_to_choice templates: the text through `ast.literal_eval`)."""
    import ast

    if isinstance(value, str) and is_template(spec):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise DataError(f"{where}: the template gave {value[:80]!r}, not a list literal") from None
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        raise DataError(f"{where}: expected a list of at least two options, got {type(value).__name__}")
    return [_text(v, f"{where}.{i}") for i, v in enumerate(value)]


def _gold_value(spec: Any, ctx: Mapping[str, Any], row: Mapping[str, Any], where: str, lists: bool) -> Any:
    """A gold template's value; its error (`letter: '0' is out of range`) names the row's columns and
    values the template read (`correct_answer_num '0'`), as the user wrote them."""
    try:
        return value_of(spec, ctx, where, lists=lists)
    except DataError as e:
        written, msg = _as_written(spec, row), str(e)
        if not written or not msg.startswith(f"{where}: "):
            raise
        raise DataError(f"{where}: {written}: {msg[len(where) + 2:]}") from None


def _as_written(spec: Any, row: Mapping[str, Any]) -> str:
    """The row's own columns and values behind a gold template (`correct_answer_num '5'`), for an
    error that names what the user wrote, not what the template made of it; "" for a plain column."""
    if not isinstance(spec, str) or not is_template(spec):
        return ""
    from jinja2 import meta

    from glotbench.tasks.template import environment

    try:
        names = sorted(meta.find_undeclared_variables(environment().parse(spec)))
    except Exception:  # noqa: BLE001 -- the template compiled already; a name list is only a courtesy
        return ""
    return ", ".join(f"{n} {row[n]!r}" for n in names if n in row and n != "opt")


def _label(value: Any, texts: Sequence[str], where: str, written: str = "") -> str:
    """The gold option as its label: a label as it is, an option's text as that option's label.
    `written`: the row's columns and values a template made `value` from (named in an error)."""
    labels = LETTERS[:len(texts)]
    if value is None:
        raise DataError(f"{where}: missing (a multiple-choice task needs the gold option)")
    v = str(value).strip()
    if len(v) == 1 and v in labels:
        return v
    from glotbench.extract import normalise_option

    hits = [labels[i] for i, t in enumerate(texts) if t.strip() == v]
    twins = [labels[i] for i, t in enumerate(texts) if normalise_option(t) == normalise_option(v)]
    if len(hits) > 1 or hits and len(twins) > 1:  # the text names no one option, as replies are read
        raise DataError(f"{where}: {value!r} is the text of options {', '.join(twins)}: give the gold's label")
    if hits:
        return hits[0]
    given = f"{written} (made {value!r})" if written else repr(value)
    raise DataError(f"{where}: {given} is neither an option label ({', '.join(labels)}) nor one option's text")


def make_items(rows: Sequence[Row], fields: Any, opt: Mapping[str, Any], lang: str | None) -> list[Item]:
    items: list[Item] = []
    seen: dict[str, str] = {}  # id -> where it first was
    for n, (where, row) in enumerate(rows):
        item = make_item(where, row, fields, n, opt, lang)
        if item.id in seen:
            raise DataError(f"{where}: fields.id: {item.id!r} is also the id of {seen[item.id]}")
        seen[item.id] = where
        items.append(item)
    return items


def shot_answer(shot: Item, template: str | None, labels: Sequence[str], opt: Mapping[str, Any],
                gold_choice: Callable[[Item], str]) -> str:
    """A few-shot example's answer text: the template over its public and gold fields, or by default
    its gold choice as the continuations write it (its label as displayed, its text, or its
    continuation template: lm-eval's doc_to_choice[doc_to_target]), its reference, or its answer."""
    if template is None:
        if "choices" in shot.public:
            return gold_choice(shot)
        for key in ("reference", "answer", "answers"):
            if key in shot.gold:
                value = shot.gold[key]
                return str(value[0] if isinstance(value, list) else value)
        raise DataError(f"few-shot example {shot.id}: give fewshot.answer (no reference or answer in its gold)")
    ctx = {**shot.public, **shot.gold, "opt": opt,
           "answer_label": labels[LETTERS.index(shot.gold["answer"])] if "choices" in shot.public else None}
    return render(template, ctx, f"fewshot.answer (example {shot.id})")


def attach_shots(items: list[Item], pool: list[Item], spec: Any, n: int, seed: int, labels: Sequence[str],
                 opt: Mapping[str, Any], same_split: bool, gold_choice: Callable[[Item], str]) -> list[Item]:
    """Each item with its few-shot examples in `public["fewshot"]`: the fixed `ids`, the first n
    (`sampler: first_n`), n drawn with a seed per item (never the item itself), or n drawn from one
    random stream over the items in order (`sequential`, lm-eval's draws); with `match`,
    only examples sharing that field's value with the item (MMLU's examples of the same subject)."""
    if n == 0 and not spec.ids:
        return items
    by_id = {p.id: p for p in pool}
    fixed = [by_id[i] if i in by_id else _missing(i) for i in spec.ids]
    out = []
    def key(x: Item) -> Any:
        return x.public.get(spec.match, x.meta.get(spec.match))

    stream = random.Random(seed)
    for it in items:
        candidates = [p for p in pool if not (same_split and p.id == it.id)
                      and (spec.match is None or key(p) == key(it))]
        if fixed:
            shots = [s for s in fixed if s.id != it.id or not same_split]
        elif spec.sampler == "first_n":
            shots = candidates[:n]
        elif spec.sampler == "sequential":  # lm-eval's ContextSampler: n + 1 drawn when the item may be among them
            matching = [p for p in pool if spec.match is None or key(p) == key(it)]
            k = n + 1 if (same_split if spec.draw_spare is None else spec.draw_spare) else n
            drawn = stream.sample(matching, k) if k <= len(matching) else []
            shots = [p for p in drawn if not (same_split and p.id == it.id)][:n]
        else:
            shots = random.Random(f"{seed}:{it.id}").sample(candidates, min(n, len(candidates)))
        if len(shots) < (len(fixed) or n) and not fixed:
            same = f" with {spec.match} {key(it)!r}" if spec.match else ""
            raise DataError(f"few-shot: {n} examples asked, the pool has {len(candidates)}{same} for item {it.id}")
        examples = [{"public": {k: v for k, v in s.public.items() if k != "fewshot"},
                     "answer": shot_answer(s, spec.answer, labels, opt, gold_choice)} for s in shots]
        out.append(Item.create(it.id, {**it.public, "fewshot": examples}, it.gold, it.meta))
    return out


def fewshot_leak(items: Sequence[Item]) -> dict[str, Any] | None:
    """Items one of whose few-shot examples is the item itself (the same public fields): a pool
    that holds the test rows (`fewshot_data=` the test file, a split that repeats them, duplicate
    rows) puts an item's answer in its own prompt. lm-eval leaves an item out of its examples only
    when the few-shot split is the test split, and so does glotbench (the prompts stay lm-eval's);
    such a run says so instead. Compared by content: a translation of the item (the same id in
    another language's file) is not seen."""
    hit = []
    for it in items:
        shots = it.public.get("fewshot") or ()
        own = {k: v for k, v in it.public.items() if k != "fewshot"} if shots else None
        if any(dict(ex.get("public") or {}) == own for ex in shots):
            hit.append(it.id)
    return {"items": len(hit), "of": len(items), "first": hit[:10]} if hit else None


def _missing(i: str) -> Item:
    raise DataError(f"fewshot.ids: no example with id {i!r} in the few-shot split")
