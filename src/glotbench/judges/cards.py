"""Validity cards: what is known of one judge in one language, and whether its judged scores count.

LLM judges agree with people far less in low-resource languages than in English, so a judged score
is trusted per (judge, language), never per judge. A card (one JSON file, `JudgeCard`) holds, for
one judge and one language, measured on labelled answers (judges/card_sources.py):
- agreement with people: Cohen's kappa and Krippendorff's nominal alpha, each with a 95%
  percentile bootstrap CI over the labelled answers, and the raw agreement rate;
- position consistency (pairwise judging: the share of prompts with the same verdict in both
  orders), self-family preference (how much more the judge favours answers of its own model family
  than the other judges do), length bias (Spearman's rho of the verdict with the answer's length),
  and the parse-failure rate (verdicts that never parsed, after retries, over verdicts asked).

Cards live in a directory (one file per judge and language: `<judge>.<lang>.json`), written by
`judge-audit --write-cards DIR` (AraGen runs) and `arena-report --write-cards DIR` (arenas), both
with `--human LABELS`. A judged command (`arena`, `aragen`, a task scored by a rubric) reads the
directory given with `--judge-cards DIR`, else `$GLOTBENCH_JUDGE_CARDS`, and records in its results
`judge_validation`: per judge, validated or not and why. A judge is validated for a language when
its card there has at least `MIN_LABELS` labelled answers and Cohen's kappa of at least `MIN_KAPPA`
(0.6: "substantial" agreement, Landis & Koch 1977). Every other judged score (no card, too few
labels, kappa below the threshold or undefined) is marked "judge not validated for LANG" in the
table, the report and the board (rundir/validity.py `notes`).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from glotbench.errors import GlotbenchError
from glotbench.rundir.validity import judge_name, validation_text  # noqa: F401 - a judge as cards name it; the note

CARDS_ENV = "GLOTBENCH_JUDGE_CARDS"
MIN_KAPPA = 0.6
MIN_LABELS = 30


class _Card(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="forbid")


class CardEstimate(_Card):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


class Agreement(_Card):
    on: str  # what was compared: "winner (candidate/baseline/tie)", "Correct (0/1)"
    cohens_kappa: CardEstimate
    krippendorff_alpha: CardEstimate
    raw_agreement: float | None


class LengthBias(_Card):
    on: str
    spearman: float | None
    p_value: float | None
    n: int


class JudgeCard(_Card):
    format: Literal[1] = 1
    judge: str  # the judge's spec without its endpoint (`openai:qwen3`)
    language: str  # a language code (languages.resolve_code)
    family: str | None
    source: Literal["arena", "aragen"]
    runs: list[str]
    labels: int  # labelled answers the agreement is measured on
    agreement: Agreement
    position_consistency: float | None
    position_consistency_prompts: int
    self_family_preference: float | None
    self_family_items: dict[str, int]
    length_bias: LengthBias
    parse_failure_rate: float | None
    verdicts_asked: int
    made: str

    def validated(self, min_kappa: float = MIN_KAPPA, min_labels: int = MIN_LABELS) -> tuple[bool, str]:
        k = self.agreement.cohens_kappa.value
        if self.labels < min_labels:
            return False, f"{self.labels} labelled answers, {min_labels} needed"
        if k is None:
            return False, "kappa with people undefined (one category only)"
        if k < min_kappa:
            return False, f"kappa {k:.2f} below {min_kappa:g}"
        return True, f"kappa {k:.2f} on {self.labels} labels"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "judge"


def card_file(directory: str | Path, judge: str, language: str) -> Path:
    return Path(directory) / f"{_slug(judge_name(judge))}.{_slug(language)}.json"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_cards(cards: Sequence[JudgeCard], directory: str | Path) -> list[str]:
    """One file per card (replacing an older card of the same judge and language); the paths."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GlotbenchError(f"cannot write cards to {d}: {e.strerror or e}") from None
    out = []
    for c in cards:
        p = card_file(d, c.judge, c.language)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(c.model_dump_json(indent=1) + "\n", encoding="utf-8")
        tmp.replace(p)
        out.append(str(p))
    return out


def read_cards(directory: str | Path) -> dict[tuple[str, str], tuple[str, JudgeCard]]:
    """(judge, language) -> (file, card) for every `*.json` in the directory, each validated against
    `JudgeCard` (a malformed card is one `FILE:LINE: field: problem` error)."""
    from glotbench.data import read_object
    from glotbench.languages import resolve_code

    d = Path(directory)
    if not d.is_dir():
        raise GlotbenchError(f"judge cards: {d} is not a directory")
    out: dict[tuple[str, str], tuple[str, JudgeCard]] = {}
    for p in sorted(d.glob("*.json")):
        card = read_object(p, JudgeCard)
        out[(card.judge, resolve_code(card.language) or card.language)] = (str(p), card)
    return out


def cards_dir(given: str | None) -> str | None:
    """The cards directory: the one given, else `$GLOTBENCH_JUDGE_CARDS`, else none."""
    return given or os.environ.get(CARDS_ENV) or None


def validation(judges: Sequence[str], language: str | None, directory: str | None = None, *,
               min_kappa: float = MIN_KAPPA, min_labels: int = MIN_LABELS) -> dict[str, Any]:
    """results' `judge_validation`: for each judge, whether its card for `language` validates it."""
    from glotbench.languages import resolve_code

    lang = resolve_code(language) if language else None
    d = cards_dir(directory)
    cards = read_cards(d) if d else {}
    per: dict[str, Any] = {}
    for j in judges:
        found = cards.get((judge_name(j), lang)) if lang else None
        if found is None:
            why = ("the judged language is unknown" if not lang else
                   f"no card for {lang}" + ("" if d else " (no cards directory: --judge-cards or $" + CARDS_ENV + ")"))
            per[j] = {"validated": False, "reason": why, "card": None}
            continue
        path, card = found
        ok, why = card.validated(min_kappa, min_labels)
        per[j] = {"validated": ok, "reason": why, "card": path, "kappa": card.agreement.cohens_kappa.value,
                  "labels": card.labels}
    return {"language": lang, "cards": d, "min_kappa": min_kappa, "min_labels": min_labels, "judges": per,
            "rule": f"validated: a card for the language with at least {min_labels} labelled answers and Cohen's "
                    f"kappa with people of at least {min_kappa:g}"}


