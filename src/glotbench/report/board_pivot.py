"""`glotbench board --pivot language`: the board as one table per language, models x tasks, so "how
good is this model in Lao" is one table.

A run enters the table of its language: a task run or a one-language built-in (results.json
`task.language`, `benchmark.language`: Benchmark.run_language) with its headline;
a run reported by language (a `lang` group: DeepSEA's five tasks) in each of its languages, with that
group's estimate, its n and, for the significance marks, only that language's items. Each cell is
still one signature on one item set (the board's rule, report/board.py `columns_of`), so a task's
default prompt and its `prompt=lm-eval` variant are two columns, never one. A run that names no
language (one over several languages without a `lang` group) is left out, saying so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from glotbench.report.board import Run, columns_of, languages_of


def run_languages(run: Run) -> list[str]:
    """The languages a run reports (report/board.py `languages_of`)."""
    return languages_of(run.results)


def language_name(code: str) -> str:
    from glotbench.languages import language_label

    return language_label(code)


def language_tables(runs: list[Run], left_out: list[dict[str, str]], languages: list[str] | None,
                    column: Callable[[str, list[Run]], dict[str, Any]],
                    card: Callable[[str, dict[str, list[Run]], list[dict[str, str]]], dict[str, Any]] | None = None,
                    ) -> list[dict[str, Any]]:
    """One table per language (in code order, or the order `languages` asks): its models and its
    columns, each column built by `column(name, runs)` over that language's views of the runs; with
    `card`, the language's report card (report/card.py) from the same chosen runs."""
    from glotbench.errors import GlotbenchError
    from glotbench.languages import checked_group

    damaged = list(left_out)  # runs unreadable before any table (collect): each named on its languages' cards
    by_lang: dict[str, list[Run]] = {}
    for r in runs:
        langs = run_languages(r)
        if not langs:
            left_out.append({"path": str(r.path), "reason": f"{r.benchmark}: names no language (no one language recorded, "
                                                             "no `lang` group): not in a language's table"})
        for lang in langs:
            by_lang.setdefault(lang, []).append(replace(r, lang=lang))  # a judged run keeps its rows
    try:
        wanted = list(dict.fromkeys(checked_group(x) for x in languages)) if languages else sorted(by_lang)
    except ValueError as e:
        raise GlotbenchError(f"--language {e}") from None
    missing = [x for x in wanted if x not in by_lang]
    if languages and len(missing) == len(wanted):
        raise GlotbenchError(f"no run in {', '.join(missing)}; the runs' languages: {', '.join(sorted(by_lang)) or 'none'}")
    tables = []
    for lang in wanted:
        if lang not in by_lang:
            continue
        before = len(left_out)
        chosen = columns_of(by_lang[lang], left_out, by="task")
        cols = [column(name, rs) for name, rs in chosen.items()]
        for x in left_out[before:]:
            x["reason"] = f"{x['reason']} (in {lang})"
        table: dict[str, Any] = {"language": lang, "name": language_name(lang), "columns": cols,
                 "models": list(dict.fromkeys(m for c in cols for m in c["cells"]))}
        if card is not None:
            table["card"] = card(lang, chosen, [*(x for x in damaged if lang in x.get("languages", "").split()),
                                                *left_out[before:]])
        tables.append(table)
    return tables
