"""DeepSEA's data files, read through glotbench.data: the per-task layout
`{"task": "mgsm", "languages": {"th": [{...example...}, ...], ...}}` as declared pydantic schemas
that keep the release's rules (which fields an example needs, what makes a gold answer valid), and
the resource-groups file. Errors: `FILE:LINE: th example 0: problem`."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from decimal import InvalidOperation
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, RootModel, model_validator

from glotbench.data import parse_object
from glotbench.errors import DataError
from glotbench.extract import parse_number
from glotbench.loading import sha256_file

MAX_BYTES = 256 * 2**20  # kept for callers; files are bounded by glotbench.data.MAX_FILE_BYTES


@dataclass(frozen=True)
class TaskSpec:
    public: tuple[str, ...]  # the only fields a prompt may use
    gold: tuple[str, ...]
    meta: tuple[str, ...] = ()
    count: int | None = None  # examples per language in the official release, when known
    in_language: str = ""  # the field written in the example's language (its script is checked at load)


TASKS: dict[str, TaskSpec] = {
    "mgsm": TaskSpec(public=("question",), gold=("answer_number",), count=250, in_language="question"),
    "indommlu": TaskSpec(public=("question", "options"), gold=("answer",), meta=("subject",), in_language="question"),
    "xquad": TaskSpec(public=("context", "question"), gold=("answers",), in_language="context"),
    "crosssum": TaskSpec(public=("text",), gold=("summary",), in_language="summary"),
    "wmt24pp": TaskSpec(public=("source",), gold=("target",), meta=("lp",), in_language="target"),
}




class _Example(RootModel[dict[str, Any]]):
    """One example of a task: the task's public, gold and meta fields present and non-empty, then
    the task's own rule (ROW_CHECKS); other fields are kept but never reach a prompt."""

    task: ClassVar[str] = ""  # set per task by _task_file_schema

    @model_validator(mode="before")
    @classmethod
    def _rules(cls, row: Any) -> Any:
        if not isinstance(row, dict):
            raise ValueError(f"an example must be an object, got {type(row).__name__}")
        spec = TASKS[cls.task]
        for f in spec.public + spec.gold + spec.meta:
            if row.get(f) in (None, "", [], {}):
                raise ValueError(f"missing field '{f}'")
        problem = ROW_CHECKS[cls.task](row)
        if problem:
            raise ValueError(problem)
        return row


@functools.cache
def _task_file_schema(task: str) -> type[BaseModel]:
    example = type(f"{task}Example", (_Example,), {"task": task})
    default_task = task

    class TaskFile(BaseModel):
        model_config = ConfigDict(frozen=True, strict=True, extra="allow")
        task: str = default_task
        languages: dict[str, list[example]]  # type: ignore[valid-type]

        @model_validator(mode="before")
        @classmethod
        def _shape(cls, v: Any) -> Any:
            langs = v.get("languages") if isinstance(v, dict) else None
            if not isinstance(langs, dict) or not langs:
                raise ValueError("expected {\"task\": ..., \"languages\": {lang: [examples]}}")
            if v.get("task", task) != task:
                raise ValueError(f"holds task {v.get('task')!r}, not {task!r}")
            for lang, rows in langs.items():
                if not isinstance(rows, list) or not rows:
                    raise ValueError(f"language {lang!r} must hold a non-empty list")
            return v

    return TaskFile


def _where(loc: tuple[Any, ...]) -> str:
    """`th example 0` for an example's place; a file-level problem names itself."""
    if len(loc) >= 3 and loc[0] == "languages":
        return f"{loc[1]} example {loc[2]}" + "".join(f".{x}" for x in loc[3:] if x != "root")
    return ".".join(str(x) for x in loc)


def parse_task_file(text: str | bytes, name: str | Path, task: str) -> dict[str, list[dict[str, Any]]]:
    """A task file's text -> {language: [example, ...]}, each example checked (see _Example)."""
    if task not in TASKS:
        raise DataError(f"unknown DeepSEA task {task!r}; one of {', '.join(TASKS)}")
    doc = parse_object(text, name, _task_file_schema(task), where=_where)
    return {lang: [r.root for r in rows] for lang, rows in doc.languages.items()}  # type: ignore[attr-defined]


def load_official_json(path: str | Path, task: str, expected_sha256: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """The release's per-task file -> {language: [example, ...]}. The hash is checked before parsing;
    no network, no archive unpacking, no upstream code."""
    from glotbench.data import read_text, check_file

    if task not in TASKS:
        raise DataError(f"unknown DeepSEA task {task!r}; one of {', '.join(TASKS)}")
    p = check_file(path)
    if expected_sha256 is not None and sha256_file(p) != expected_sha256:
        raise DataError(f"{p}: sha256 is {sha256_file(p)}, expected {expected_sha256}")
    return parse_task_file(read_text(p), p, task)


class _Groups(RootModel[dict[str, list[str]]]):
    @model_validator(mode="before")
    @classmethod
    def _shape(cls, v: Any) -> Any:
        if not isinstance(v, dict) or not v:
            raise ValueError('expected {"group": ["lang", ...], ...}')
        for g, langs in v.items():
            if not isinstance(langs, list) or not langs or not all(isinstance(x, str) and x for x in langs):
                raise ValueError(f"group {g!r} must be a non-empty list of language codes, got {json.dumps(langs)}")
        return v


def read_groups(path: str) -> dict[str, list[str]]:
    """A resource-groups file: a JSON object mapping each group name to a list of language codes."""
    from glotbench.data import read_object

    return dict(read_object(path, _Groups).root)


def _check_mgsm(row: dict[str, Any]) -> str | None:
    gold = row["answer_number"]
    if isinstance(gold, bool) or not isinstance(gold, (int, float, str)):
        return f"answer_number must be a number, got {type(gold).__name__}"
    try:
        parse_number(gold)  # as the scorer reads it
    except InvalidOperation:
        return f"answer_number {gold!r} is not a number"
    return None


def _check_indommlu(row: dict[str, Any]) -> str | None:
    options, gold = row["options"], row["answer"]
    if not isinstance(options, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in options.items()):
        return "options must map option letters to their texts"
    if not all(k in "ABCDE" and len(k) == 1 for k in options):
        return f"option letters must be upper-case A-E, got {', '.join(map(repr, options))}"
    if gold not in options:
        return (f"answer {gold!r} is not one of the options' letters ({', '.join(options)})"
                + ("; gold letters are upper-case" if isinstance(gold, str) and gold.upper() in options else ""))
    if not isinstance(row["question"], str) or not isinstance(row["subject"], str):
        return "question and subject must be strings"
    return None


def _check_xquad(row: dict[str, Any]) -> str | None:
    answers = row["answers"]
    if not isinstance(answers, list) or not all(isinstance(a, str) and a.strip() for a in answers):
        return f"answers must be a list of non-empty strings (the references), got {type(answers).__name__}"
    if not isinstance(row["context"], str) or not isinstance(row["question"], str):
        return "context and question must be strings"
    return None


def _check_text(*fields: str) -> Any:
    def check(row: dict[str, Any]) -> str | None:
        bad = [f for f in fields if not isinstance(row[f], str)]
        return f"{', '.join(bad)} must be text" if bad else None
    return check


def _check_wmt(row: dict[str, Any]) -> str | None:
    problem = _check_text("source", "target", "lp")(row)
    if problem is None and not re.fullmatch(r"[a-z]{2,3}-[a-z]{2,3}(?:_[A-Za-z]{2,4})?", row["lp"]):
        return f"lp {row['lp']!r} is not a language pair such as en-th_TH"
    return problem


ROW_CHECKS = {"mgsm": _check_mgsm, "indommlu": _check_indommlu, "xquad": _check_xquad,
              "crosssum": _check_text("text", "summary"), "wmt24pp": _check_wmt}


