"""Inspect's scoring rules, reproduced from inspect_ai 0.3.285 so an imported `eval.yaml` task scores
as `inspect eval hf/ORG/DATASET` scores it (docs/tasks.md, "Inspect's eval.yaml"):

    choice_answer      solver/_multiple_choice.py `parse_answers` (one answer): the letter after the
                       last `ANSWER:` ($..$, **..** and (X) unwrapped first), or None
    exact_score        scorer/_classification.py `max_exact_score`: `_normalize` (tokens split on space
                       and '-', casefolded, punctuation removed unless the token is a number, numbers
                       as float text, English articles removed) equal; an empty target never matches
    f1_score           `max_f1_score`: SQuAD bag-of-tokens F1 over the same tokens, rounded to 2 places
    match_text         scorer/_common.py `match_str` without `numeric` (begin, end, any, exact; case
                       folded, surrounding punctuation stripped)
    includes_text      scorer/_match.py `includes`
    pattern_score      scorer/_pattern.py `pattern` (and `answer`: its letter, word and line patterns)

tests/test_tasks_inspect.py holds each against inspect's own functions (the test extra `inspect-ai`).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Sequence

_DOLLAR = re.compile(r"\x24\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\x24")
_BOLD = re.compile(r"\*\*\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\*\*")
_PAREN = re.compile(r"(?i)(^|[:,])(\s*)\(([A-Za-z\d])\)(?=\s*(?:,|\.|\n|\Z))")
_LINE = re.compile(r"(?i)^ANSWER\s*:\s*([A-Za-z\d ,]+)\s*(?:$|\n|\.)", re.MULTILINE)
_ANY = re.compile(r"(?i)ANSWER\s*:\s*([A-Za-z\d ,]+)(?:[^\w]|\n|$|\.)")


def answer_character(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index - 25)


def choice_answer(completion: str, n_choices: int) -> str | None:
    """The one letter `parse_answers(state, multiple_correct=False)` finds, or None."""
    text = _PAREN.sub(r"\1\2\3", _BOLD.sub(r"\1", _DOLLAR.sub(r"\1", completion)))
    matches = _LINE.findall(text) or _ANY.findall(text)
    if not matches:
        return None
    matched = matches[-1].strip().rstrip(".").upper()
    tokens = [t for t in matched.split(",") if t]
    allowed = {answer_character(i) for i in range(n_choices)}
    return tokens[0] if len(tokens) == 1 and tokens[0] in allowed else None


def _finite(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False


def _strip_punctuation(s: str) -> str:
    return s.strip(string.whitespace + string.punctuation)


_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def _normalize_token(token: str) -> str:
    token = token.casefold()
    if not _finite(token):
        stripped = _strip_punctuation(token)
        token = stripped if _finite(stripped) else "".join(ch for ch in token if ch not in string.punctuation)
    if _finite(token):
        token = str(float(token))
    return " ".join(_ARTICLES.sub(" ", token).split())


def normalize(text: str, stop_words: Sequence[str] | None = None) -> str:
    """`_normalize` of scorer/_classification.py."""
    folded = [_normalize_token(w) for w in stop_words or ()]
    tokens = [t for t in (_normalize_token(x) for x in re.split(" |-", text)) if t not in folded]
    return " ".join(t for t in tokens if t.strip()).strip()


def exact_score(answer: str, targets: Sequence[str]) -> bool:
    a = normalize(answer)
    return any(t and t == a for t in (normalize(x) for x in targets))


def _f1(answer: Counter[str], target: Counter[str]) -> float:
    common = sum((answer & target).values())
    precision = common / sum(answer.values()) if answer else 1.0
    recall = common / sum(target.values()) if target else 1.0
    return 0.0 if precision == 0.0 and recall == 0.0 else 2 * precision * recall / (precision + recall)


def f1_score(answer: str, targets: Sequence[str], stop_words: Sequence[str] | None = None) -> float:
    words = Counter(normalize(answer, stop_words).split())
    best = 0.0
    for t in targets:
        tw = Counter(normalize(t, stop_words).split())
        if tw:
            best = max(best, _f1(words, tw))
    return round(best, 2)


def match_text(value: str, target: str, location: str = "end", ignore_case: bool = True) -> bool:
    """`match_str(value, target, location, ignore_case, ignore_punctuation=True, numeric=False)`."""
    v, t = value.strip(), target.strip()
    if ignore_case:
        v, t = v.casefold(), t.casefold()
    v, t = _strip_punctuation(v), _strip_punctuation(t)
    if location == "begin":
        return v.startswith(t)
    if location == "end":
        return v.endswith(t)
    if location == "exact":
        return v == t
    return t in v


def includes_text(value: str, target: str, ignore_case: bool = True) -> bool:
    if ignore_case:
        value, target = value.casefold(), target.casefold()
    return target in value


# scorer/_answer.py's patterns (inspect_ai/_util/pattern.py)
ANSWER_PATTERNS = {
    "letter": r"(?is)ANSWER\s*:\s*([A-Za-z])(?:[^\w]|\n|$)(?!.*ANSWER\s*:)",
    "word": r"(?is)ANSWER\s*:\s*(\S+?)(?=[.,;:!?]?\s*(?:\n|$))(?!.*ANSWER\s*:)",
    "line": r"(?i)ANSWER\s*:\s*([^\n]+)\s*\Z",
}


def pattern_score(completion: str, targets: Sequence[str], pattern: str, ignore_case: bool = True,
                  match_all: bool = False) -> bool:
    """`pattern(pattern, ignore_case, match_all)`: the groups of the first match (or the whole match)
    against the targets (`lower()` when ignoring case); an empty matched text never scores."""
    m = re.search(pattern, completion, re.IGNORECASE if ignore_case else 0)
    if not m:
        return False
    wanted = [t.lower() for t in targets] if ignore_case else list(targets)
    groups = [g for g in (m.groups() or (m.group(0),)) if isinstance(g, str)]
    hit = [(g.lower() if ignore_case else g) in wanted for g in groups]
    if match_all:
        return bool(groups) and all(hit) and bool("".join(targets))
    first = next((g for h, g in zip(hit, groups) if h), None)  # match_first: the first group in the targets
    return bool(first)
