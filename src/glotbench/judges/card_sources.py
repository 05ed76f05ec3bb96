"""Judge validity cards (judges/cards.py) measured from judged runs and people's labels.

- AraGen (`report --judges RUNS --human LABELS --write-cards DIR`): Arabic. Agreement on Correct (the
  judge's first verdict on the first answer, 0/1, against the person's); self-family preference as
  the judge audit's self-bias; length bias: Spearman's rho of the judge's scaled 3C3H with the
  answer's length in characters (both answers of a follow-up entry together; answers read from the
  run's answer phases, so none for answers replayed from a file); parse failures over verdicts asked.
  No position consistency: 3C3H judges one answer at a time.
- Arena (`report --judges DIRS --human LABELS --write-cards DIR`): Lao (the arena's judge prompt asks
  about answers written for Lao-speaking users). Agreement on the winner (candidate, baseline or
  tie: the judge's two orders averaged, above 1/2 the candidate, below the baseline); position
  consistency pooled over the arenas' prompts judged in both orders; self-family preference: on the
  candidates of the judge's own family, the judge's mean score minus the other judges' on the same
  prompts, less the same gap on other families' candidates; length bias: Spearman's rho of the
  judge's score with (len(candidate) − len(baseline)) / (len(candidate) + len(baseline)), characters;
  parse failures (malformed verdicts after retries) over the games asked (two per prompt both sides
  answered).
Statistics the data cannot define are null.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.judges.cards import JudgeCard, judge_name, now
from glotbench.stats import DEFAULT_SEED, spearman
from glotbench.stats.agreement import two_raters

PARSE_FAILURES = ("bad_response", "bad_verdict")


def _agreement(on: str, pairs: list[tuple[Any, Any]], resamples: int, seed: int) -> dict[str, Any]:
    if not pairs:
        none = {"value": None, "ci_low": None, "ci_high": None, "n": 0}
        return {"on": on, "cohens_kappa": none, "krippendorff_alpha": none, "raw_agreement": None}
    r = two_raters([h for h, _ in pairs], [j for _, j in pairs], resamples=resamples, seed=seed)
    return {"on": on, "cohens_kappa": r["cohens_kappa"], "krippendorff_alpha": r["krippendorff_alpha"],
            "raw_agreement": r["raw_agreement"]}


def _length_bias(on: str, xs: list[float], ys: list[float]) -> dict[str, Any]:
    rho, p = spearman(xs, ys) if len(xs) >= 3 else (None, None)
    return {"on": on, "spearman": rho, "p_value": p, "n": len(xs)}


def _outputs(run_dir: Path) -> dict[str, str]:
    """Each sample's raw output in a phase directory (repeat 0), or nothing when it has none."""
    from glotbench.rundir import SAMPLES, sample_outputs

    return sample_outputs(run_dir) if (run_dir / SAMPLES).is_file() else {}


def aragen_cards(dirs: list[str], human: str | None, *, resamples: int = 1000, seed: int = DEFAULT_SEED) -> list[JudgeCard]:
    from glotbench.judges.audit import human_pairs, judge_audit, load_audit_inputs

    if not human:
        raise GlotbenchError("a validity card measures agreement with people: give --human LABELS")
    runs, labels = load_audit_inputs(dirs, human)
    audit = judge_audit(dirs, human)["judges"]
    lengths: dict[tuple[str, str], int] = {}
    for d, r in zip(dirs, runs):
        parts = [_outputs(Path(d) / "answers-1"), _outputs(Path(d) / "answers-2")]
        for sn in {k for p in parts for k in p}:
            lengths[(r["model"], sn)] = sum(len(p.get(sn, "")) for p in parts)
    cards = []
    for j, rep in audit.items():
        mine = [r for r in runs if j in r["per_judge"]]
        pairs = human_pairs(j, mine, labels)["Correct"]
        xs, ys = [], []
        for r in mine:
            for sn, v in r["per_judge"][j]["item_scores"].items():
                if (r["model"], sn) in lengths:
                    xs.append(float(lengths[(r["model"], sn)]))
                    ys.append(float(v))
        cards.append(JudgeCard.model_validate({
            "judge": judge_name(j), "language": "ar", "family": rep.get("family"), "source": "aragen",
            "runs": list(dirs), "labels": len(pairs),
            "agreement": _agreement("Correct (0/1): the judge's first verdict on the first answer", pairs, resamples, seed),
            "position_consistency": None, "position_consistency_prompts": 0,
            "self_family_preference": rep.get("self_bias"), "self_family_items": rep.get("self_bias_items", {}),
            "length_bias": _length_bias("scaled 3C3H against the answer's length in characters", xs, ys),
            "parse_failure_rate": rep.get("parse_failure_rate"), "verdicts_asked": int(rep.get("verdicts_asked") or 0),
            "made": now()}))
    return cards


def _winner(v: float) -> str:
    return "candidate" if v > 0.5 else "baseline" if v < 0.5 else "tie"


def arena_cards(dirs: list[str], human: str | None, *, resamples: int = 1000, seed: int = DEFAULT_SEED) -> list[JudgeCard]:
    from glotbench.models.family import model_family
    from glotbench.runfiles import ArenaFile, ArenaHumanRow, read_judged, read_unique_rows

    if not human:
        raise GlotbenchError("a validity card measures agreement with people: give --human LABELS")
    runs = [read_judged(d, "arena", ArenaFile, "a finished arena") for d in dirs]
    rows = read_unique_rows(human, ArenaHumanRow, lambda r: (f"candidate {r.candidate}", f"prompt {r.prompt_id}"),
                            "one JSON object per line: candidate, prompt_id, winner")
    labels = {(r.candidate, r.prompt_id): r.winner for _, r in rows}
    judges = sorted({j for r in runs for j in r.get("per_prompt", {})})
    lengths: dict[tuple[int, str], float] = {}
    for k, d in enumerate(dirs):
        cand, base = _outputs(Path(d) / "candidate"), _outputs(Path(d) / "baseline")
        for pid in set(cand) | set(base):
            a, b = len(cand.get(pid, "")), len(base.get(pid, ""))
            lengths[(k, pid)] = (a - b) / (a + b) if a + b else 0.0
    cards = []
    for j in judges:
        fam = model_family(j)
        pairs, xs, ys = [], [], []
        agree = both = 0
        failed = asked = 0
        gaps: dict[bool, list[float]] = {True: [], False: []}
        for k, r in enumerate(runs):
            mine = (r.get("per_prompt") or {}).get(j)
            if mine is None and j not in (r.get("failures") or {}):
                continue
            mine = mine or {}
            for pid, v in mine.items():
                h = labels.get((r["candidate"], pid))
                if h is not None:
                    pairs.append((h, _winner(v)))
                if (k, pid) in lengths:
                    xs.append(lengths[(k, pid)])
                    ys.append(v)
                others = [o[pid] for name, o in r["per_prompt"].items() if name != j and pid in o]
                if others:
                    gaps[model_family(r["candidate"]) == fam].append(v - statistics.fmean(others))
            pc, n_pc = (r.get("position_consistency") or {}).get(j), (r.get("position_consistency_prompts") or {}).get(j, 0)
            if pc is not None and n_pc:
                agree += pc * n_pc
                both += n_pc
            failed += sum(int((r.get("failures") or {}).get(j, {}).get(kind, 0)) for kind in PARSE_FAILURES)
            asked += 2 * int((r.get("prompts") or {}).get("answered_by_both", 0))
        cards.append(JudgeCard.model_validate({
            "judge": judge_name(j), "language": "lo", "family": fam, "source": "arena", "runs": list(dirs),
            "labels": len(pairs),
            "agreement": _agreement("winner: candidate, baseline or tie (the two orders averaged)", pairs, resamples, seed),
            "position_consistency": agree / both if both else None, "position_consistency_prompts": both,
            "self_family_preference": (statistics.fmean(gaps[True]) - statistics.fmean(gaps[False])
                                       if gaps[True] and gaps[False] else None),
            "self_family_items": {"own_family": len(gaps[True]), "other": len(gaps[False])},
            "length_bias": _length_bias("the judge's score for the candidate against (len(candidate) − len(baseline)) / "
                                        "(sum), characters", xs, ys),
            "parse_failure_rate": failed / asked if asked else None, "verdicts_asked": asked, "made": now()}))
    return cards
