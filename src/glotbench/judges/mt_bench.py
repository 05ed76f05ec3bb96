"""SEA-MT-Bench's pairwise judging as SEA-HELM does it (aisingapore/SEA-HELM at 6844e6c5,
seahelm_tasks/multi_turn/mt_bench/config.yaml, src/dataloaders/judges/pairwise_dataloader.py,
src/metrics/llm_judges/pairwise_llm_judge_metric.py): the judge prompts of turn 1 and turn 2, the
verdict labels, how the two orders of one turn become one outcome, and the weighted win rate.

| step              | rule                                                                               |
|-------------------|------------------------------------------------------------------------------------|
| games             | per question, per turn, two orders: `baseline-before` (A = baseline) and           |
|                   | `baseline-after` (A = candidate); turn 2's prompt shows both turns                 |
| verdict           | exactly one of `[[A]]`, `[[B]]`, `[[C]]` (tie) appears in the reply, else ERROR    |
| one turn          | first (baseline-before) is a tie, or the two differ: TIE; else the shared outcome  |
|                   | (both ERROR: ERROR)                                                                |
| value             | WIN 1, TIE 0.5, LOSE and ERROR 0                                                   |
| category          | win rate over every turn outcome of its questions (both turns pooled)              |
| weighted win rate | the mean of the categories' win rates (SEA-HELM prints it x 100)                   |
"""

from __future__ import annotations

from collections import Counter, defaultdict
from enum import Enum
from typing import Any, Iterable, Mapping, Sequence

from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics
from glotbench.stats import DEFAULT_SEED

REFERENCE = "aisingapore/SEA-HELM"
REFERENCE_COMMIT = "6844e6c5cae439a413281df31271d388fcbad12f"

LABELS = {"A_wins": "[[A]]", "B_wins": "[[B]]", "Tie": "[[C]]"}  # config.yaml judgement_labels
ORDERS = ("baseline-before", "baseline-after")  # the dataloader's order: the first is judgement_1
CATEGORIES_WITH_REFERENCE = ("math", "reasoning")  # config.yaml categories_with_reference
JUDGE_TEMPERATURE, JUDGE_MAX_TOKENS = 0.6, 2048  # config.yaml judge_generation_kwargs
ANSWER_MAX_TOKENS = 1024  # config.yaml languages.*.max_tokens
BASELINE_MODEL = "gpt-4.1-2025-04-14"  # config.yaml baseline_model: the data's baselines key

_SYSTEM_1 = ("Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
             "assistants to the user question displayed below. You should choose the assistant that follows the "
             "user's instructions and answers the user's question better. Your evaluation should consider factors "
             "such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of their "
             "responses. The language used by the AI assistants should also be the same as that used in the user "
             "question. Begin your evaluation by comparing the two responses and provide a short explanation. ")
_SYSTEM_2 = ("Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
             "assistants to the user questions. You should choose the assistant that follows the user's "
             "instructions and answers the user's questions better. Your evaluation should consider factors such "
             "as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of their responses. "
             "The language used by the AI assistants should also be the same as that used in the user question. "
             "You should focus on who provides a better answer to the second user question. Begin your evaluation "
             "by comparing the responses of the two assistants and provide a short explanation. ")
_SYSTEM_REF_1 = ("Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
                 "assistants to the user question displayed below. Your evaluation should consider correctness and "
                 "helpfulness. The language used by the AI assistants should also be the same as that used in the "
                 "user question. You will be given a reference answer, assistant A's answer, and assistant B's "
                 "answer. Your job is to evaluate which assistant's answer is better. Begin your evaluation by "
                 "comparing both assistants' answers with the reference answer. Identify and correct any mistakes. ")
_SYSTEM_REF_2 = ("Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
                 "assistants to the user questions. Your evaluation should consider correctness and helpfulness. "
                 "The language used by the AI assistants should also be the same as that used in the user question. "
                 "You will be given reference answers, the assistant A's answers, the assistant B's answers. Your "
                 "job is to determine which assistant provides correct and helpful answers to the second user "
                 "question. Begin your evaluation by comparing both assistants' answers with the reference answers. "
                 "Identify and correct any mistakes. ")
_SYSTEM_TAIL = ("Avoid any position biases and ensure that the order in which the responses were presented does not "
                "influence your decision. Do not allow the length of the responses to influence your evaluation. Do "
                "not favor certain names of the assistants. Be as objective as possible. After providing your "
                "explanation, output your final verdict by strictly following this format: \"{A_wins}\" if assistant "
                "A is better, \"{B_wins}\" if assistant B is better, and \"{Tie}\" for a tie.")

_TEMPLATE_1 = ("[User Question]\n{question_1}\n\n[The Start of Assistant A's Answer]\n{answer_a_1}\n"
               "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{answer_b_1}\n"
               "[The End of Assistant B's Answer]")
_TEMPLATE_REF_1 = ("[User Question]\n{question_1}\n\n[The Start of Reference Answer]\n{ref_answer_1}\n"
                   "[The End of Reference Answer]\n\n[The Start of Assistant A's Answer]\n{answer_a_1}\n"
                   "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{answer_b_1}\n"
                   "[The End of Assistant B's Answer]")


_TEMPLATE_2 = ("<|The Start of Assistant A's Conversation with User|>\n\n### User:\n{question_1}\n\n### Assistant A:\n"
               "{answer_a_1}\n\n### User:\n{question_2}\n\n### Assistant A:\n{answer_a_2}\n\n"
               "<|The End of Assistant A's Conversation with User|>\n\n\n"
               "<|The Start of Assistant B's Conversation with User|>\n\n### User:\n{question_1}\n\n### Assistant B:\n"
               "{answer_b_1}\n\n### User:\n{question_2}\n\n### Assistant B:\n{answer_b_2}\n\n"
               "<|The End of Assistant B's Conversation with User|>")
_TEMPLATE_REF_2 = ("<|The Start of Reference Answer|>\n\n### User:\n{question_1}\n\n### Reference answer:\n"
                   "{ref_answer_1}\n\n### User:\n{question_2}\n\n### Reference answer:\n{ref_answer_2}\n\n"
                   "<|The End of Reference Answer|>\n\n\n" + _TEMPLATE_2)


# judge_prompts: (system prompt, user template) per turn, without and with a reference answer
JUDGE_PROMPTS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "without-reference": ((_SYSTEM_1 + _SYSTEM_TAIL, _TEMPLATE_1), (_SYSTEM_2 + _SYSTEM_TAIL, _TEMPLATE_2)),
    "with-reference": ((_SYSTEM_REF_1 + _SYSTEM_TAIL, _TEMPLATE_REF_1), (_SYSTEM_REF_2 + _SYSTEM_TAIL, _TEMPLATE_REF_2)),
}


def judge_messages(turn: int, order: str, questions: Sequence[str], candidate: Sequence[str],
                   baseline: Sequence[str], references: Sequence[str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """The judge's (system, user) messages for `turn` (1 or 2) in `order`, as PairwiseDataloader's
    `_prompt_formatter` builds them: A is the candidate when the baseline comes after it."""
    info: dict[str, str] = {}
    for i in range(turn):
        after = order == "baseline-after"
        info[f"question_{i + 1}"] = questions[i]
        info[f"answer_a_{i + 1}"] = candidate[i] if after else baseline[i]
        info[f"answer_b_{i + 1}"] = baseline[i] if after else candidate[i]
        if references is not None:
            info[f"ref_answer_{i + 1}"] = references[i]
    system, template = JUDGE_PROMPTS["with-reference" if references is not None else "without-reference"][turn - 1]
    return ({"role": "system", "content": system.format(**LABELS)},
            {"role": "user", "content": template.format(**info)})


class Outcome(Enum):
    """PairwiseLLMJudgeMetric.JudgementOutcome."""

    WIN = 1
    LOSE = 2
    TIE = 3
    ERROR = 4


def parse_judgement(text: str, reverse: bool) -> Outcome:
    """PairwiseLLMJudgeMetric.parse_judgement (ties allowed): exactly one label must appear in the
    reply (a substring test, so `[[A]]` twice is still one label); `reverse` for baseline-before."""
    win, lose, tie = LABELS["A_wins"] in text, LABELS["B_wins"] in text, LABELS["Tie"] in text
    if win + lose + tie != 1:
        return Outcome.ERROR
    if tie:
        return Outcome.TIE
    return (Outcome.LOSE if win else Outcome.WIN) if reverse else (Outcome.WIN if win else Outcome.LOSE)


def final_judgement(first: Outcome, second: Outcome) -> Outcome:
    """PairwiseLLMJudgeMetric.get_final_judgement (ties allowed): `first` is the baseline-before game."""
    return Outcome.TIE if first == Outcome.TIE or first != second else first


def outcome_value(outcome: Outcome) -> float:
    """PairwiseLLMJudgeMetric.get_score: win 1, tie 0.5, lose and error 0."""
    return 1.0 if outcome == Outcome.WIN else 0.5 if outcome == Outcome.TIE else 0.0


def win_rate(values: Sequence[float]) -> float:
    """get_win_rate: (wins + ties / 2) / every outcome (errors in the denominator)."""
    return sum(values) / len(values)


def weighted_win_rate(turn_values: Mapping[str, Sequence[float]], categories: Mapping[str, str]) -> dict[str, object]:
    """get_judge_metrics over each question's turn values: {"categories": {c: win rate},
    "win_rate": over every turn, "weighted_win_rate": the mean of the categories' rates} (fractions;
    SEA-HELM prints the weighted one x 100)."""
    by_cat: dict[str, list[float]] = defaultdict(list)
    for qid, vals in turn_values.items():
        by_cat[categories[qid]].extend(vals)
    cats = {c: win_rate(v) for c, v in by_cat.items() if v}
    every = [v for vals in turn_values.values() for v in vals]
    return {"categories": cats, "win_rate": win_rate(every) if every else None,
            "weighted_win_rate": sum(cats.values()) / len(cats) if cats else None}


def outcome_counts(outcomes: Sequence[Outcome]) -> dict[str, int]:
    c = Counter(o.name.lower() for o in outcomes)
    return {k: c.get(k, 0) for k in ("win", "tie", "lose", "error")}


TURNS = 2  # SEA-MT-Bench's turns per question


def forfeits(questions: Iterable[Any], candidate: Mapping[str, list[str]], baseline: Mapping[str, list[str]],
              policy: str) -> tuple[dict[tuple[str, str], float], set[tuple[str, str]]]:
    """The turns not judged because a side has no answer: their values (policy loss), or the set left
    out (policy drop)."""
    forfeit: dict[tuple[str, str], float] = {}
    for q in questions:
        for turn in range(1, TURNS + 1):
            c, b = len(candidate.get(q.id, ())) >= turn, len(baseline.get(q.id, ())) >= turn
            if not (c and b):
                forfeit[(q.id, str(turn))] = 0.5 if not (c or b) else 0.0 if not c else 1.0
    if policy == "drop":
        return {}, set(forfeit)
    return forfeit, set()


# SEA-HELM's weighted win rate over the run's values (judges/stats.py): every turn value counted once
# per category, the mean of the categories' rates; a metric per turn and per category too
WEIGHTED_WIN_RATE = JudgedMetrics(rule="weighted_by_cluster", slots=TURNS, clusters=True)


def scores(turn_values: Mapping[str, Mapping[str, list[float]]], ids: list[str], categories: Mapping[str, str], *,
           resamples: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Each judge's weighted win rate (SEA-HELM's rule, judges/mt_bench.py), their mean (`final`),
    per turn and per category (mean of judges), each with the judged pipelines' interval
    (`judged_interval`): the bootstrap resamples questions, every judge and turn of a question together."""
    stats = JudgedStats.of(turn_values, ids, clusters={i: categories[i] for i in ids})
    return scores_of(stats, judged_metrics(stats, WEIGHTED_WIN_RATE, resamples=resamples, seed=seed) if ids else {})


def scores_of(stats: JudgedStats, found: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """`scores`' summary from the run's values (its clusters the categories) and the metrics
    `WEIGHTED_WIN_RATE` names over them (`found`: judges/stats.py `judged_metrics`)."""
    judges, ids = list(stats.judges), list(stats.items)
    if not ids:
        return {"final": {"value": None, "ci_low": None, "ci_high": None, "n": 0, "ci_method": "none"},
                "judges": {j: {"value": None, "n": 0} for j in judges}, "turns": {}, "categories": {},
                "win_rate": {}, "questions": 0}
    # SEA-HELM's own numbers of each judge, from its formula over the same values (the point estimates above)
    seahelm = {j: weighted_win_rate({i: list(stats.values[j][i]) for i in ids if i in stats.values[j]},
                                    stats.clusters) for j in judges}
    cats = sorted({stats.clusters[i] for i in ids})
    return {"final": dict(found["final"]), "judges": {j: dict(found[f"judge:{j}"]) for j in judges},
            "turns": {str(t): dict(found[f"slot:{t}"]) for t in range(1, TURNS + 1)},
            "categories": {cat: dict(found[f"cluster:{cat}"]) for cat in cats},
            "win_rate": {j: s["win_rate"] for j, s in seahelm.items()},
            "category_win_rate": {j: s["categories"] for j, s in seahelm.items()},
            "questions": len(ids)}
