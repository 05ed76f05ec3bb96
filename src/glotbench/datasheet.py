"""A benchmark's datasheet: the facts a researcher checks before trusting or publishing a score —
licence (and whether it allows commercial use), native or translated data, the upstream code and
data it follows (pinned commits), its citation as BibTeX, and the languages it covers with the
settings that select each one.

One frozen pydantic model, read from a task file's `datasheet:` key and declared by built-in
benchmarks as a class attribute, so `glotbench tasks list --language lo`, the language suite and
`glotbench cite` read the same facts. A language's options are checked against the benchmark's own
declared options where the benchmark is built (tasks/spec.py), not here.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Origin = Literal["native", "translated", "machine-translated", "mixed"]
Scalar = Union[str, int, float, bool, None]
_COMMIT = re.compile(r"[0-9a-f]{40}")
_CODE = re.compile(r"[a-z]{2,3}(-[A-Z][a-z]{3})?(-[A-Z]{2}|-[0-9]{3})?")  # lo, zh-Hant, pt-PT


class Datasheet(BaseModel):
    """What the data is, where it and its scoring rule come from, and how to cite it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    licence: str = Field(min_length=1)  # an SPDX id where one fits (CC-BY-SA-4.0), else the card's words
    commercial: bool | None  # false: non-commercial only; null: the sources disagree or say nothing
    licence_note: str = ""  # required when commercial is null: what disagrees (IndoMMLU: card vs README)
    origin: Origin  # how the evaluated text was made, for every language unless `origin_by_language` says
    origin_by_language: dict[str, Origin] = {}
    source: str = Field(min_length=1)  # where the data is published (the hub card's address, a paper)
    reference: str = ""  # the reference implementation whose scoring rule a variant reproduces (REPO/path)
    reference_commit: str | None = None  # its pinned commit (40 hex)
    citation: str = Field(min_length=1)  # BibTeX: one or more entries, each with a title and a year
    # Languages covered: a profile code (lo, km, my, th, vi, id, tl...), or a language group with its
    # script or region (zh-Hant, sr-Latn: languages.language_group) -> the options that select it
    # ({config: lao_Laoo}); {} where the benchmark covers one language and needs no setting.
    languages: dict[str, dict[str, Scalar]] = Field(min_length=1)
    # Languages covered whose rows the pinned revision (or a built-in's bundled sample) does not hold,
    # or not as far as anyone here could check: they run only with --data FILE (rows in the same
    # schema) or another revision. `tasks list --language` marks them and counts them apart.
    data_only: list[str] = []

    @field_validator("reference_commit")
    @classmethod
    def _commit(cls, v: str | None) -> str | None:
        if v is not None and not _COMMIT.fullmatch(v):
            raise ValueError("a commit is 40 lower-case hex digits (pin commits, not branch names)")
        return v

    @field_validator("languages", "origin_by_language")
    @classmethod
    def _codes(cls, v: dict[str, object]) -> dict[str, object]:
        from glotbench.languages import language_code, language_group

        for code in v:
            if not _CODE.fullmatch(code) or language_group(code) != code:
                raise ValueError(f"{code!r} is not a language code as glotbench names them (ISO 639-1 where there is "
                                 f"one, a script or region only where it is not the language's usual one: "
                                 f"{language_group(code) or '?'!s})")
            language_code(code)  # a language in IANA's registry (ValueError: the nearest known codes)
        return v

    @field_validator("citation")
    @classmethod
    def _bibtex(cls, v: str) -> str:
        entries = bibtex_entries(v)
        if not entries:
            raise ValueError("not BibTeX: give one or more entries (@article{key, title={...}, year={...}})")
        for e in entries:
            missing = [f for f in ("title", "year") if not e.get(f)]
            if missing:
                raise ValueError(f"BibTeX entry {e.get('ID')!r} lacks {', '.join(missing)}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "Datasheet":
        if self.commercial is None and not self.licence_note:
            raise ValueError("licence_note: say why commercial use is unclear (commercial: null)")
        if self.reference_commit and not self.reference:
            raise ValueError("reference: name the repository the commit belongs to")
        for key in ("origin_by_language", "data_only"):
            extra = set(getattr(self, key)) - set(self.languages)
            if extra:
                raise ValueError(f"{key}: {', '.join(sorted(extra))} not among languages")
        return self

    def needs_data(self, code: str) -> bool:
        """Whether `code` runs only with --data (its rows are not in the pinned or bundled data)."""
        from glotbench.languages import language_group

        return language_group(code) in self.data_only

    def origin_of(self, code: str) -> Origin:
        from glotbench.languages import language_group

        return self.origin_by_language.get(language_group(code), self.origin)

    def options_for(self, code: str) -> dict[str, Scalar] | None:
        """The options that select `code`'s language group (`lao_Laoo`, `lo-LA` are `lo`; `zh-TW` is
        `zh-Hant`, not `zh`: languages.language_group), or None if not covered."""
        from glotbench.languages import language_group

        return self.languages.get(language_group(code))

    @property
    def licence_line(self) -> str:
        use = {True: "", False: ", non-commercial", None: ", commercial use unclear"}[self.commercial]
        return f"{self.licence}{use}"


class Declared:
    """A built-in benchmark's datasheet, made (and validated) when first read, on the class or an
    instance: `datasheet = Declared(lambda: Datasheet(...))`. Validating it where the class is defined
    parsed the citation with bibtexparser and looked the languages up in langcodes on every import of
    the benchmark: 55 ms of CPU in each `glotbench run vi-diacritics`, which never reads the datasheet
    (docs/performance.md, issue 32). A faulty datasheet fails where it is first read (`tasks list`,
    an export's citations; tests/test_cpu_per_run.py reads every built-in's)."""

    def __init__(self, make: Callable[[], "Datasheet"]) -> None:
        self._make = make
        self._sheet: Datasheet | None = None

    def __get__(self, obj: object | None, owner: Any) -> "Datasheet":
        if self._sheet is None:
            sheet = self._make()
            if not isinstance(sheet, Datasheet):
                raise TypeError(f"a declared datasheet is {sheet!r}, not a Datasheet")
            self._sheet = sheet
        return self._sheet


def bibtex_entries(text: str) -> list[dict[str, str]]:
    """The entries of a BibTeX text (bibtexparser), [] when it holds none."""
    import bibtexparser
    from bibtexparser.bparser import BibTexParser

    try:  # biblatex's types too (@software, @dataset, @online): dataset cards use them
        return list(bibtexparser.loads(text, BibTexParser(ignore_nonstandard_types=False)).entries)
    except Exception:  # bibtexparser raises bare pyparsing errors on some broken input
        return []
