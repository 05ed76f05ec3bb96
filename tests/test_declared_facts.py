"""The Benchmark's declared facts (benchmarks/base.py: answer_kind, rewrites, lang, input_language,
output_language_rule and output_language) replace the tables of built-in names the checks kept: a
plugin that declares them gets every check a built-in gets, and the built-ins declare what the
tables said."""

from __future__ import annotations

from glotbench.benchmarks.base import Benchmark
from glotbench.checks.errors import error_kind
from glotbench.checks.extraction import answer_kind
from glotbench.checks.language import expectation
from glotbench.core import ItemScore
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.extract import Extraction, free_text, mc_letter
from glotbench.items import Item, PublicItem
from glotbench.metrics import RatioMetric
from glotbench.models.base import ModelBase, Prompt, Response
from glotbench.registry import get_benchmark


class Replies(ModelBase):
    """Answers each item with its own reply (by item id)."""

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__("replies", spec="python:replies")
        self.replies = replies

    async def generate(self, prompt, config, *, item_id="", repeat=0):
        return Response(text=self.replies[item_id], finish_reason="stop", latency_s=0.0)


class PluginMCQ(Benchmark):
    """A plugin's multiple choice: only its declared `answer_kind` says its answers are letters."""

    name, version, description = "plugin-mcq", "1", "a plugin's multiple choice"
    metrics = (RatioMetric("accuracy", "correct", "n", "accuracy"),)
    answer_kind = "letter"

    def load(self, path: str | None = None):
        return self.dataset([Item.create(f"q{i}", {"question": f"q{i}?", "options": {"A": "x", "B": "y", "C": "z"}},
                                         {"answer": gold}, {}) for i, gold in enumerate("ABCA")], "plugin")

    def render(self, item: PublicItem) -> Prompt:
        return Prompt(messages=({"role": "user", "content": item["question"]},), text=item["question"])

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return mc_letter(text, dict(item["options"]))

    def score(self, answer, item: Item) -> ItemScore:
        return ItemScore({"correct": float(answer == item.gold["answer"]), "n": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"correct": 0.0, "n": 1.0}, failure=failure)


class PluginThai(Benchmark):
    """A plugin whose answers are Thai text: `lang` and `output_language_rule` declare it."""

    name, version, description = "plugin-thai", "1", "a plugin's Thai answers"
    metrics = (RatioMetric("answered", "answered", "n", "answered"),)
    lang, output_language_rule = "th", "Thai (the plugin's answers)"

    def load(self, path: str | None = None):
        return self.dataset([Item.create(f"t{i}", {"prompt": "เขียนประโยค"}, {}, {}) for i in range(2)], "plugin")

    def render(self, item: PublicItem) -> Prompt:
        return Prompt(messages=({"role": "user", "content": item["prompt"]},), text=item["prompt"])

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer, item: Item) -> ItemScore:
        return ItemScore({"answered": 1.0, "n": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 0.0, "n": 1.0}, failure=failure)


def test_a_plugin_that_declares_letters_gets_the_extraction_and_error_checks(tmp_path):
    """q0 right, q1 wrong (C for B), q2 unreadable, q3 right: strict 2/4, unread 1, bounds 2/4 to 3/4."""
    replies = {"q0": "Answer: A", "q1": "Answer: C", "q2": "I cannot tell", "q3": "Answer: A"}
    res = evaluate(PluginMCQ(), Replies(replies), RunOptions(out=str(tmp_path / "r"), progress=False, use_cache=False)).results
    x = res["checks"]["extraction"]
    assert (x["kind"], x["strict"], x["unread"], x["lower"], x["upper"]) == ("letter", 0.5, 1, 0.5, 0.75)
    e = res["checks"]["errors"]
    assert e["kind"] == "letter" and e["overall"]["errors"]["no_answer"] == 1
    assert "language" not in res["checks"] or not res["checks"]["language"]  # letters have no language


def test_a_plugin_that_declares_its_output_language_gets_the_language_check(tmp_path):
    replies = {"t0": "แมวนั่งอยู่บนเสื่อและมองออกไปนอกหน้าต่างทุกวัน",
               "t1": "The cat sat on the mat and looked out of the window every day."}
    res = evaluate(PluginThai(), Replies(replies), RunOptions(out=str(tmp_path / "r"), progress=False, use_cache=False)).results
    lang = res["checks"]["language"]
    assert lang["expected"] == "Thai (the plugin's answers)"
    assert (lang["checked"], lang["wrong"]) == (2, 1)


class OwnRule(PluginThai):
    """A plugin that decides per item, without words for its rule (as plugins did before the facts)."""

    output_language_rule = None

    def output_language(self, item: PublicItem) -> str | None:
        return "lo"


def test_an_overridden_output_language_without_words_is_still_a_rule():
    rule = expectation(OwnRule())
    assert rule is not None and rule[1] == "the benchmark's output_language()" and rule[0]({}, {}) == "lo"
    assert expectation(PluginMCQ()) is None


def test_the_built_ins_declare_what_the_name_tables_said():
    """The tables removed from checks/extraction.py, errors.py and language.py, as declared facts."""
    kinds = {"laobench-mcq": "letter", "deepsea-indommlu": "letter", "deepsea-mgsm": "number",
             "deepsea-xquad": "text", "vi-diacritics": "text", "vi-tone-errors": "text",
             "laobench-translation": None, "deepsea-wmt24pp": None, "deepsea-crosssum": None}
    assert {n: answer_kind(get_benchmark(n)) for n in kinds} == kinds
    assert answer_kind(get_benchmark("laobench-mcq", method="loglik")) is None  # nothing extracted
    assert error_kind(get_benchmark("laobench-mcq", method="loglik")) == "letter"
    assert {n: error_kind(get_benchmark(n)) for n in ("vi-diacritics", "vi-tone-errors", "deepsea-mgsm", "deepsea-xquad")} \
        == {"vi-diacritics": "vietnamese", "vi-tone-errors": "vietnamese", "deepsea-mgsm": "number", "deepsea-xquad": None}
    cases = [  # benchmark, public fields, meta, expected language, the rule in words
        ("laobench-translation", {"direction": "lo-en"}, {}, "en", "the direction's target"),
        ("laobench-translation", {"direction": "en-lo"}, {}, "lo", "the direction's target"),
        ("deepsea-wmt24pp", {"lp": "en-th_TH"}, {"lp": "en-th_TH"}, "th", "the language pair's target"),
        ("deepsea-crosssum", {}, {"lang": "my"}, "my", "the article's language (a summary in the same language)"),
        ("deepsea-xquad", {}, {"lang": "vi"}, "vi", "the passage's language (a span of it)"),
        ("vi-diacritics", {}, {}, "vi", "Vietnamese (restored text)"),
        ("vi-tone-errors", {}, {}, "vi", "Vietnamese (corrected text)"),
        ("laobench-arena-prompts", {}, {}, "lo", "Lao (answers to Lao prompts)"),
        ("aragen-answers", {}, {}, "ar", "Arabic (answers to Arabic prompts)"),
    ]
    for name, fields, meta, lang, words in cases:
        rule = expectation(get_benchmark(name))
        assert rule is not None and (rule[0](fields, meta), rule[1]) == (lang, words), name
    for name in ("laobench-mcq", "deepsea-mgsm", "deepsea-indommlu"):
        assert expectation(get_benchmark(name)) is None, name
    assert get_benchmark("deepsea-wmt24pp").input_language == "en"
    assert [n for n in ("vi-diacritics", "vi-tone-errors", "laobench-translation") if get_benchmark(n).rewrites] \
        == ["vi-diacritics", "vi-tone-errors"]
