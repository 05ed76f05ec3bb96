"""Helpers for the tests: answers that a test server or a python: model gives per item."""

from __future__ import annotations

import json

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics


def gold_answers(limit: int | None = None, transform=lambda ref: ref) -> dict[str, str]:
    """Map each item's exact prompt to a JSON reply built from its first reference."""
    bench = VietnameseDiacritics()
    items = bench.load()[:limit]
    return {bench.render(it.to_public()).messages[-1]["content"]:
            json.dumps({"restored_text": transform(it.gold["references"][0])}, ensure_ascii=False)
            for it in items}


_calls: dict[str, int] = {}


def flaky_model(messages):
    """A python: model that is right on the first call for each prompt and echoes the input after."""
    content = messages[-1]["content"]
    n = _calls.get(content, 0)
    _calls[content] = n + 1
    answers = gold_answers()
    if n == 0 and content in answers:
        return answers[content]
    return json.dumps({"restored_text": content.rsplit("Text: ", 1)[-1]}, ensure_ascii=False)


async def async_echo(messages):
    return {"text": json.dumps({"restored_text": messages[-1]["content"].rsplit("Text: ", 1)[-1]})}


def broken_model(messages):
    raise RuntimeError("bug in user code")


def exhausted_iterator(messages):
    """User code whose `next()` ran dry: StopIteration escapes the callable."""
    return next(iter(()))


def good_answer(messages):
    return "GOOD: " + messages[-1]["content"][:40]


def plain_answer(messages):
    return "plain: " + messages[-1]["content"][:40]


def lao_mcq_answers() -> dict[str, str]:
    """Each LaoBench sample prompt -> a reply in the item's language naming the right letter."""
    from glotbench.benchmarks.laobench import LaoBenchMCQ

    bench = LaoBenchMCQ()
    out = {}
    for it in bench.load():
        phrase = "ຄຳຕອບແມ່ນ" if it.public["lang"] == "lo" else "The answer is"
        out[bench.render(it.to_public()).messages[-1]["content"]] = f"<think>maybe A</think>{phrase} {it.gold['answer']}"
    return out


def lao_translations() -> dict[str, str]:
    from glotbench.benchmarks.laobench import LaoBenchTranslation

    bench = LaoBenchTranslation()
    return {it.public["question"]: "Translation: " + it.gold["reference"] for it in bench.load()}


def deepsea_letter_b(messages):
    """A python: model that always answers B, in DeepSEA's answer tag."""
    return "<answer>B</answer>"


def deepsea_letter_gold(messages):
    """A python: model that answers each bundled IndoMMLU item's gold letter."""
    from glotbench.benchmarks.deepsea import DeepSEATask

    bench = DeepSEATask("indommlu")
    gold = {bench.render(it.to_public()).messages[-1]["content"]: it.gold["answer"] for it in bench.load()}
    return f"<answer>{gold.get(messages[-1]['content'], 'A')}</answer>"


def mgsm_twelve(messages):
    return "Step by step... <answer>12</answer>"


def _user_prompt(content: str) -> str:
    return content.split("[User prompt]\n", 1)[-1].split("\n\n[Answer A]", 1)[0]


def odd_prompt(text: str) -> bool:
    """The arena tests' selector of 'some prompts' (by the length of the prompt text)."""
    return len(text) % 2 == 1


def silent_on_odd(messages):
    """A candidate that gives an empty answer to the odd prompts and a GOOD one to the others."""
    content = messages[-1]["content"]
    return "" if odd_prompt(content) else good_answer(messages)


def judge_fails_swapped_odd(messages):
    """A judge that prefers the GOOD answer, but whose verdict on odd prompts is malformed whenever
    the candidate stands second (order 1): those prompts get one valid order only."""
    content = messages[-1]["content"]
    a = content.split("[Answer A]\n", 1)[1].split("\n\n[Answer B]", 1)[0]
    if odd_prompt(_user_prompt(content)) and not a.startswith("GOOD"):
        return "I cannot decide."
    notes = {c: "ok" for c in ("correctness", "completeness", "reasoning", "clarity", "lao_fluency")}
    return json.dumps({"winner": "A" if a.startswith("GOOD") else "B", "notes": notes})


def collector_state(messages):
    """A python: model that answers with the cyclic collector's state in the process running it."""
    import gc

    return json.dumps({"restored_text": f"enabled={gc.isenabled()} threshold={gc.get_threshold()[0]}"})


def die_model(messages):
    """Kills its own process at the first call (a job lost on every attempt)."""
    import os

    os._exit(1)


def mixed_answer(messages):
    """A candidate between good_answer and plain_answer: GOOD on the odd prompts, plain on the others."""
    content = messages[-1]["content"]
    return good_answer(messages) if odd_prompt(content) else plain_answer(messages)


PROMPTS_ASKED: list[str] = []  # what `counted_letter` was asked, in order (a test clears it)


def counted_letter(messages):
    """An MCQ answer, each prompt it is asked kept in PROMPTS_ASKED."""
    PROMPTS_ASKED.append(messages[-1]["content"])
    return "Answer: B"
