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
`report --judges --write-cards DIR` (AraGen runs, arenas), both
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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from glotbench.errors import GlotbenchError
from glotbench.rundir import slug
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
    labels: int = Field(ge=0)  # labelled answers the agreement is measured on
    agreement: Agreement
    position_consistency: float | None
    position_consistency_prompts: int
    self_family_preference: float | None
    self_family_items: dict[str, int]
    length_bias: LengthBias
    parse_failure_rate: float | None
    verdicts_asked: int
    made: str

    @model_validator(mode="after")
    def _in_range(self) -> "JudgeCard":
        """A card read from a file is checked as one written by glotbench would be: Cohen's kappa
        and its CI within [-1, 1] and in order, rates within [0, 1], counts not negative (a
        hand-edited kappa of 1.4 validated a judge)."""
        k = self.agreement.cohens_kappa
        vals = [v for v in (k.ci_low, k.value, k.ci_high) if v is not None]
        if any(not -1.0 <= v <= 1.0 for v in vals) or vals != sorted(vals):
            raise ValueError(f"cohens_kappa {k.value} ({k.ci_low}–{k.ci_high}): kappa and its CI lie in [-1, 1], "
                             "ci_low <= value <= ci_high")
        for name in ("position_consistency", "parse_failure_rate"):
            v = getattr(self, name)
            if v is not None and not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} {v}: a share lies in [0, 1]")
        ra = self.agreement.raw_agreement
        if ra is not None and not 0.0 <= ra <= 1.0:
            raise ValueError(f"raw_agreement {ra}: a share lies in [0, 1]")
        if min(k.n, self.verdicts_asked, self.position_consistency_prompts, self.length_bias.n) < 0:
            raise ValueError("a count is negative")
        return self

    def validated(self, min_kappa: float = MIN_KAPPA, min_labels: int = MIN_LABELS) -> tuple[bool, str]:
        """The rule is on kappa's point estimate (Landis & Koch's "substantial"); the reason names
        its 95% CI, which on 30 labels is wide: read it before trusting a judge near the threshold."""
        k = self.agreement.cohens_kappa.value
        if self.labels < min_labels:
            return False, f"{self.labels} labelled answers, {min_labels} needed"
        if k is None:
            return False, "kappa with people undefined (one category only)"
        if k < min_kappa:
            return False, f"kappa {k:.2f} below {min_kappa:g}"
        ci = self.agreement.cohens_kappa
        band = f" (95% CI {ci.ci_low:.2f}–{ci.ci_high:.2f})" if ci.ci_low is not None and ci.ci_high is not None else ""
        return True, f"kappa {k:.2f}{band} on {self.labels} labels"


def card_file(directory: str | Path, judge: str, language: str) -> Path:
    return Path(directory) / f"{slug(judge_name(judge), 'judge')}.{slug(language, 'judge')}.json"


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


