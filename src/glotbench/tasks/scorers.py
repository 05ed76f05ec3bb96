"""Scorers of a task: per-item statistics for each extraction pipeline, and the metrics over them.

Every pipeline `p` scores into its own statistics (`p:correct`, `p:items`, `p:no_answer`, or
sacrebleu's `p:chrf++.0`...), so pipelines are reported side by side from one set of replies; the
headline pipeline's metrics carry the plain names (`accuracy`, `chrf++`), the others `NAME[p]`.
A pipeline that found no answer scores as the failure does (0, the reference still counted by the
corpus metrics) and counts in its `no_answer_rate`. The parts reused: glotbench.metrics (ratio
metrics, sacrebleu with the language's segmenter, token F1, numeric matching) and languages.py.
"""

from __future__ import annotations

import re
import string
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from glotbench.items import Item
from glotbench.metrics import RatioMetric
from glotbench.signature import Signature

if TYPE_CHECKING:
    from glotbench.benchmarks.base import AnswerKind, RescorePlan

MODEL_FAILURES = frozenset({"rate_limited", "server_error", "timeout", "connection", "bad_response", "client_error",
                            "auth", "exception", "no_output", "scorer_error"})


def metric_name(base: str, pipeline: str, headline: bool) -> str:
    return base if headline else f"{base}[{pipeline}]"


def _gold(item: Item, *keys: str) -> Any:
    for k in keys:
        if k in item.gold:
            return item.gold[k]
    raise KeyError(f"the item has no gold {' or '.join(keys)} (fields.gold)")


class Scorer:
    """Per-pipeline statistics and metrics; `stats(None, ...)` is the no-answer score (same keys)."""

    base = "accuracy"
    description = ""
    gold_keys: tuple[str, ...] = ("answer",)  # the gold it reads, the first present
    # The task's declared facts that follow from its scorer (TaskBenchmark sets them): the kind of
    # answer extracted (Benchmark.answer_kind), and whether an answer is text in the task's language
    # (the language check expects it there).
    answer_kind: AnswerKind | None = None
    answers_in_language: bool = False
    judged: bool = False  # scored by judges after the answers (Benchmark.judged: engine/judged.py)

    def __init__(self, spec: Any, lang: str | None):
        self.spec = spec
        self.lang = lang

    def check_gold(self, item: Item) -> str | None:
        """What is wrong with an item's gold for this scorer, or None. Checked when the data is
        loaded: a gold the scorer cannot read would make every such item a scorer error or a miss
        nobody could avoid, in a run that looks valid."""
        if self.gold_keys and not any(k in item.gold for k in self.gold_keys):
            return (f"fields.gold: no {' or '.join(self.gold_keys)} (the {self.spec.kind} scorer reads it; "
                    f"the item's gold has: {', '.join(item.gold) or 'nothing'})")
        return None

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        ok = 0.0 if answer is None else float(self.correct(answer, item))
        return {f"{p}:correct": ok, f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}

    def correct(self, answer: str, item: Item) -> bool:
        raise NotImplementedError

    def metrics(self, p: str, headline: bool) -> list[Any]:
        return [RatioMetric(metric_name(self.base, p, headline), f"{p}:correct", f"{p}:items",
                            f"{self.description} ({p})", label=metric_name(self.base, p, headline)),
                RatioMetric(metric_name("no_answer_rate", p, headline), f"{p}:no_answer", f"{p}:items",
                            f"share of replies the {p} pipeline found no answer in", show_ci=False,
                            label=metric_name("no answer", p, headline), lower_is_better=True)]

    def signature(self) -> str:
        return self.spec.kind

    def rescore_plan(self) -> RescorePlan | None:
        """What `glotbench rescore` varies for a task scored this way (Benchmark.rescore_plan), or None."""
        return None


class OptionAccuracy(Scorer):
    answer_kind = "letter"
    description = "share of items whose chosen option is the gold one"

    def correct(self, answer: str, item: Item) -> bool:
        return answer == _gold(item, "answer")

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        out = super().stats(answer, item, p)
        if self.spec.balanced:  # the gold class's pair, for the class-balanced metrics
            gold = _gold(item, "answer")
            out.update({f"{p}:class_correct:{gold}": out[f"{p}:correct"], f"{p}:class_items:{gold}": 1.0})
        return out

    def metrics(self, p: str, headline: bool) -> list[Any]:
        from glotbench.metrics import MacroMetric
        from glotbench.tasks.template import LETTERS

        plain = super().metrics(p, headline)
        if not self.spec.balanced:
            return plain
        balanced = [MacroMetric(metric_name(name, p, headline), tuple(LETTERS), f"{p}:class_correct",
                                f"{p}:class_items", f"{what} ({p})", label=metric_name(name, p, headline),
                                scale="fraction", normalised=normalised)
                    for name, normalised, what in (
                        ("normalized_accuracy", True, "SEA-HELM's normalised accuracy: balanced accuracy "
                                                      "against the 1/k floor of its k gold classes"),
                        ("balanced_accuracy", False, "mean recall over the gold classes"))]
        return balanced + plain

    def signature(self) -> str:
        return "option_accuracy(balanced)" if self.spec.balanced else "option_accuracy"


def normalise(text: str, steps: Sequence[str]) -> str:
    from glotbench.languages import remove_zero_width, to_ascii_digits

    for s in steps:
        if s == "strip":
            text = text.strip()
        elif s == "lower":
            text = text.lower()
        elif s == "casefold":
            text = text.casefold()
        elif s == "nfkc":
            text = unicodedata.normalize("NFKC", text)
        elif s == "collapse_spaces":
            text = " ".join(text.split())
        elif s == "remove_punct":
            text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        elif s == "ascii_digits":
            text = to_ascii_digits(text)
        elif s == "remove_zero_width":
            text = remove_zero_width(text)
        elif s == "remove_ascii_punct":  # Python's string.punctuation, as lm-eval's ignore_punctuation
            text = text.translate(_ASCII_PUNCT)
        elif s == "remove_ascii_digits":  # string.digits, as lm-eval's ignore_numbers
            text = text.translate(_ASCII_DIGITS)
    return text


_ASCII_PUNCT = str.maketrans("", "", string.punctuation)
_ASCII_DIGITS = str.maketrans("", "", string.digits)


class ExactMatch(Scorer):
    answer_kind = "text"
    base = "exact_match"
    gold_keys = ("answer", "answers")
    description = "share of answers equal to a gold answer after the named normalisation"

    def check_gold(self, item: Item) -> str | None:
        problem = super().check_gold(item)
        if problem is None and self.spec.labels:
            labels = {self._norm(label) for label in self.spec.labels}
            outside = [g for g in self._golds(item) if self._norm(str(g)) not in labels]
            if outside:
                return (f"fields.gold: {outside[0]!r} is not one of the scorer's {len(labels)} labels "
                        f"({', '.join(self.spec.labels[:3])}, ...): no reply could match it")
        return problem

    @staticmethod
    def _golds(item: Item) -> list[Any]:
        gold = _gold(item, "answer", "answers")
        return list(gold) if isinstance(gold, (list, tuple)) else [gold]  # one answer (text, or a number read as text)

    def correct(self, answer: str, item: Item) -> bool:
        return self._norm(answer) in {self._norm(str(g)) for g in self._golds(item)}

    def _norm(self, text: str) -> str:
        for pattern in self.spec.ignore:
            text = re.sub(pattern, "", text)
        return normalise(text, self.spec.normalise)

    def signature(self) -> str:
        ignore = "".join(f";ignore={p}" for p in self.spec.ignore).replace("|", "%7C")
        from glotbench.extract import READING_VERSION

        steps = [f"{n}@r{READING_VERSION}" if n == "remove_zero_width" else n for n in self.spec.normalise]
        return f"exact_match({'+'.join(steps) or 'none'}{ignore})"


class NumericMatch(Scorer):
    answer_kind = "number"
    base = "numeric_em"
    description = "share of answers numerically equal to the gold number (native digits read)"

    def check_gold(self, item: Item) -> str | None:
        from glotbench.extract import parse_number

        problem = super().check_gold(item)
        if problem is None:
            gold = item.gold["answer"]
            try:
                if isinstance(gold, (list, dict, bool)) or not parse_number(gold).is_finite():
                    raise InvalidOperation
            except InvalidOperation:
                problem = f"fields.gold.answer: {gold!r} is not a number (the numeric_match scorer compares numbers)"
        return problem

    def correct(self, answer: str, item: Item) -> bool:
        from glotbench.extract import parse_number

        try:
            return Decimal(answer) == parse_number(_gold(item, "answer"))
        except InvalidOperation:
            return False

    def signature(self) -> str:
        from glotbench.extract import READING_VERSION

        return f"numeric_em(to_ascii_digits@r{READING_VERSION})"


class TokenF1(Scorer):
    answer_kind, answers_in_language = "text", True
    base = "token_f1"
    gold_keys = ("answers", "answer")

    def rescore_plan(self) -> RescorePlan:
        from glotbench.benchmarks.base import RescorePlan

        return RescorePlan(("token_f1",), self.gold_keys, f1=(self.spec.refs, self.spec.norm), per_item_language=False)
    description = "token F1 against the references"

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        from glotbench.metrics.token_f1 import token_f1

        gold = _gold(item, "answers", "answer")
        refs = [gold] if isinstance(gold, str) else [str(g) for g in gold]
        rule = {"refs": self.spec.refs, "norm": self.spec.norm, "empty": self.spec.empty}
        f1 = 0.0 if answer is None else token_f1(answer, refs, self.lang, **rule)
        out = {f"{p}:f1": f1, f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}
        if self.spec.exact_match:
            from glotbench.metrics.token_f1 import exact_match

            out[f"{p}:em"] = 0.0 if answer is None else exact_match(answer, refs, self.lang, **rule)
        return out

    def metrics(self, p: str, headline: bool) -> list[Any]:
        first = RatioMetric(metric_name("token_f1", p, headline), f"{p}:f1", f"{p}:items",
                            f"mean token F1 ({p})", scale="fraction", label=metric_name("token F1", p, headline))
        em = [RatioMetric(metric_name("exact_match", p, headline), f"{p}:em", f"{p}:items",
                          f"share of answers equal to a reference after the normalisation ({p})",
                          label=metric_name("EM", p, headline))] if self.spec.exact_match else []
        return [first, *em, super().metrics(p, headline)[1]]

    def signature(self) -> str:
        from glotbench.metrics.token_f1 import token_f1_signature

        sig = Signature.parse(token_f1_signature(self.lang, self.spec.refs, self.spec.norm, self.spec.empty)).nested()
        return sig + ("+exact_match" if self.spec.exact_match else "")


class Corpus(Scorer):
    """BLEU / chrF / chrF++ through sacrebleu, the text segmented with the target language's segmenter
    (glotbench.metrics.corpus); the item stores the sufficient statistics."""

    def rescore_plan(self) -> RescorePlan:
        from glotbench.benchmarks.base import RescorePlan

        return RescorePlan(tuple(self.spec.metrics), ("reference", "answer"), bleu_tokenize=self.spec.bleu_tokenize,
                           per_item_language=False)

    answers_in_language = True

    gold_keys = ("reference", "answer")

    def __init__(self, spec: Any, lang: str | None):
        super().__init__(spec, lang)
        self._sacre: dict[str, Any] = {}

    def _metric(self, kind: str) -> Any:
        from glotbench.metrics.corpus import SacreMetric, is_spm, needs_segmentation

        if kind not in self._sacre:
            lang = self.lang if self.spec.segment else None  # None: sacrebleu's defaults on the text as written
            spbleu = is_spm(self.spec.bleu_tokenize)  # spBLEU: the model's pieces, whatever the language
            opts = {"tokenize": self.spec.bleu_tokenize} if kind == "bleu" and (spbleu or needs_segmentation(lang)) else {}
            self._sacre[kind] = SacreMetric(kind, lang, **opts)
        return self._sacre[kind]

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        ref = str(_gold(item, "reference", "answer"))
        out: dict[str, float] = {f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}
        for kind in self.spec.metrics:
            vector = self._metric(kind).stats([answer or ""], [[ref]])[0]
            out.update({f"{p}:{kind}.{i}": float(v) for i, v in enumerate(vector)})
        return out

    def metrics(self, p: str, headline: bool) -> list[Any]:
        from glotbench.metrics.corpus import CorpusMetric

        out: list[Any] = []
        for kind in self.spec.metrics:
            label = {"chrf++": "chrF++", "chrf": "chrF", "bleu": "BLEU"}[kind]
            out.append(_Prefixed(CorpusMetric(metric_name(kind, p, headline), kind,
                                              f"corpus {label} ({p}), " + (f"segmented for {self.lang or 'none'}"
                                                                           if self.spec.segment else "not segmented"),
                                              label=metric_name(label, p, headline)), f"{p}:{kind}"))
        return out + [super().metrics(p, headline)[1]]

    def signature(self) -> str:
        parts = []
        for kind in self.spec.metrics:
            m = self._metric(kind)
            m.stats(["a"], [["a"]])
            parts.append(Signature.parse(m.signature()).nested())
        return "+".join(parts)


class Rouge(Scorer):
    """ROUGE-L per item (glotbench.metrics.rouge: rouge_score with the language's segmenter, or SEA-HELM's
    tokenizer); the metric is the mean of item F1s, precision and recall beside it."""
    answer_kind, answers_in_language = "text", True

    base = "rougeL"
    gold_keys = ("reference", "answer")

    def __init__(self, spec: Any, lang: str | None):
        from glotbench.metrics.rouge import RougeL

        super().__init__(spec, lang)
        self._rouge = RougeL(lang, spec.tokenize)

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        prf = (0.0, 0.0, 0.0) if answer is None else self._rouge.score(answer, str(_gold(item, "reference", "answer")))
        return {f"{p}:rougeL_p": prf[0], f"{p}:rougeL_r": prf[1], f"{p}:rougeL_f": prf[2], f"{p}:items": 1.0,
                f"{p}:no_answer": float(answer is None)}

    def metrics(self, p: str, headline: bool) -> list[Any]:
        return [RatioMetric(metric_name(name, p, headline), f"{p}:{key}", f"{p}:items", f"mean ROUGE-L {what} ({p})",
                            label=metric_name(label, p, headline))
                for name, key, what, label in (("rougeL", "rougeL_f", "F1", "ROUGE-L"),
                                               ("rougeL_precision", "rougeL_p", "precision", "ROUGE-L P"),
                                               ("rougeL_recall", "rougeL_r", "recall", "ROUGE-L R"))
                ] + [super().metrics(p, headline)[1]]

    def signature(self) -> str:
        return Signature.parse(self._rouge.signature()).nested()


class EntityF1(Scorer):
    """Entity-level F1 over a tag per token, as seqeval scores it (glotbench.metrics.ner): the reply's
    tags (the `bio_tags` step: one per token, space-separated) against the gold `tags`; a reply whose
    tags are not one per token predicts no entity and counts as no answer. Micro figures: each item
    keeps its correct, predicted and true entity counts, and the metrics are ratios of their sums."""

    base = "entity_f1"
    gold_keys = ("tags",)

    def _gold_tags(self, item: Item) -> list[str]:
        labels = self.spec.labels
        return [labels[int(t)] if labels else str(t) for t in _gold(item, "tags")]

    def check_gold(self, item: Item) -> str | None:
        problem = super().check_gold(item)
        if problem is None:
            tags = item.gold["tags"]
            if not isinstance(tags, (list, tuple)):
                return f"fields.gold.tags: a list of tags, one per token (got {type(tags).__name__})"
            if self.spec.labels and any(not str(t).isdigit() or int(t) >= len(self.spec.labels) for t in tags):
                return f"fields.gold.tags: {list(tags)} has a tag that is not an index of the scorer's {len(self.spec.labels)} labels"
            tokens = item.public.get("tokens")  # the tokens the prompt numbers: a reply gives one tag each
            if isinstance(tokens, (list, tuple)) and len(tokens) != len(tags):
                return (f"fields.gold.tags: {len(tags)} tags for {len(tokens)} tokens (one tag per token; a reply "
                        f"tagging every token would be scored as no answer)")
        return problem

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        from glotbench.metrics.ner import entity_counts

        gold = self._gold_tags(item)
        pred = answer.split() if answer is not None else None
        if pred is not None and len(pred) != len(gold):
            pred = None
        correct, found, true = entity_counts(pred, gold)
        return {f"{p}:ent_correct": float(correct), f"{p}:ent_pred": float(found), f"{p}:ent_true": float(true),
                f"{p}:ent_f1_num": 2.0 * correct, f"{p}:ent_f1_den": float(found + true), f"{p}:items": 1.0,
                f"{p}:no_answer": float(pred is None)}

    def metrics(self, p: str, headline: bool) -> list[Any]:
        return [RatioMetric(metric_name(name, p, headline), f"{p}:{num}", f"{p}:{den}", f"entity {what}, seqeval's rule ({p})",
                            label=metric_name(label, p, headline))
                for name, num, den, what, label in (("entity_f1", "ent_f1_num", "ent_f1_den", "F1", "entity F1"),
                                                    ("entity_precision", "ent_correct", "ent_pred", "precision", "entity P"),
                                                    ("entity_recall", "ent_correct", "ent_true", "recall", "entity R"))
                ] + [super().metrics(p, headline)[1]]

    def signature(self) -> str:
        from glotbench.metrics.ner import SEQEVAL_VERSION

        return f"entity_f1(seqeval-{SEQEVAL_VERSION}-default)"


class _Prefixed:
    """A CorpusMetric whose statistics carry the pipeline's prefix (`p:chrf++.0`...)."""

    def __init__(self, inner: Any, prefix: str):
        self.inner = inner
        self.prefix = prefix
        self.name, self.description, self.show_ci = inner.name, inner.description, inner.show_ci
        self.label, self.scale, self.lower_is_better = inner.label, inner.scale, inner.lower_is_better

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}.{i}" for i in range(self.inner.width))

    def score(self, row: Any) -> float:
        return self.inner.score(row)

    def sentence_mean(self) -> Any:
        from glotbench.metrics.corpus import sentence_mean

        return sentence_mean(self, self.prefix)

    def __repr__(self) -> str:
        return f"CorpusMetric({self.name!r}, {self.inner.kind!r}, keys={self.prefix}.*)"


class InstructionFollowing(Scorer):
    """IFEval's instructions (glotbench.tasks.ifeval): per item, the instructions followed strictly
    and loosely, in the expected language. Prompt level: every instruction followed; instruction
    level: each counted. An instruction not scored for the language (a word count without a word
    segmenter) is left out of both; an item with none left is left out (`left_out_rate`)."""

    base = "prompt_strict_acc"
    gold_keys = ("instructions",)

    def _pairs(self, item: Item) -> list[tuple[str, dict[str, Any]]]:
        from glotbench.tasks.ifeval import clean_kwargs

        ids, kwargs = item.gold["instructions"], item.gold.get("kwargs", {})
        ids = [ids] if isinstance(ids, str) else list(ids)
        kwargs = [kwargs] if isinstance(kwargs, Mapping) else list(kwargs)
        return [(str(i), clean_kwargs(k) if isinstance(k, Mapping) else k) for i, k in zip(ids, kwargs)]

    def check_gold(self, item: Item) -> str | None:
        from glotbench.tasks.ifeval import problem as instruction_problem

        found = super().check_gold(item)
        if found:
            return found
        ids, kwargs = item.gold["instructions"], item.gold.get("kwargs", {})
        n_ids = 1 if isinstance(ids, str) else len(ids) if isinstance(ids, (list, tuple)) else -1
        n_kw = 1 if isinstance(kwargs, Mapping) else len(kwargs) if isinstance(kwargs, (list, tuple)) else -1
        if n_ids < 1 or n_kw != n_ids:
            return (f"fields.gold: instructions ({n_ids}) and kwargs ({n_kw}) must be lists of one entry per "
                    "instruction (an id, and a mapping of its arguments)")
        for inst, kw in self._pairs(item):
            found = instruction_problem(inst, kw, self.lang)
            if found:
                return f"fields.gold: {found}"
        return None

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        from glotbench.tasks.ifeval import NotScored, expected_language, follows, in_language, loose_variants

        lang, rule = self.lang or "en", self.spec.words
        scored: list[tuple[str, dict[str, Any]]] = []
        for inst, kw in self._pairs(item):
            try:
                follows(inst, kw, "", lang, rule)
            except NotScored:
                continue
            scored.append((inst, kw))
        n = float(len(scored))
        out = {f"{p}:{k}": 0.0 for k in ("prompt_strict", "prompt_loose", "inst_strict", "inst_loose",
                                         "in_language", "prompt_strict_any_language")}
        out.update({f"{p}:items": float(bool(scored)), f"{p}:instructions": n, f"{p}:rows": 1.0,
                    f"{p}:left_out": float(not scored), f"{p}:no_answer": float(answer is None and bool(scored))})
        if answer is None or not scored:
            return out
        variants = loose_variants(answer)
        gate: dict[str, bool] = {}
        strict, loose, ok_all = [], [], True
        for inst, kw in scored:
            want = expected_language(inst, kw, lang)
            if want not in gate:
                gate[want] = in_language(answer, want) if self.spec.language_gate else True
            ok_all = ok_all and gate[want]
            s = follows(inst, kw, answer, lang, rule)
            lo = s or any(follows(inst, kw, v, lang, rule) for v in variants[1:])
            strict.append((s, gate[want]))
            loose.append((lo, gate[want]))
        out.update({f"{p}:prompt_strict": float(all(a and g for a, g in strict)),
                    f"{p}:prompt_loose": float(all(a and g for a, g in loose)),
                    f"{p}:inst_strict": float(sum(a and g for a, g in strict)),
                    f"{p}:inst_loose": float(sum(a and g for a, g in loose)),
                    f"{p}:in_language": float(ok_all),
                    f"{p}:prompt_strict_any_language": float(all(a for a, _ in strict))})
        return out

    def metrics(self, p: str, headline: bool) -> list[Any]:
        def ratio(base: str, num: str, den: str, what: str, label: str, show_ci: bool = True) -> RatioMetric:
            return RatioMetric(metric_name(base, p, headline), f"{p}:{num}", f"{p}:{den}", f"{what} ({p})",
                               show_ci=show_ci, label=metric_name(label, p, headline),
                               lower_is_better=base in ("left_out_rate", "no_answer_rate"))

        gated = " in the expected language" if self.spec.language_gate else ""
        return [ratio("prompt_strict_acc", "prompt_strict", "items", f"share of prompts whose every instruction is followed{gated}", "prompt strict"),
                ratio("prompt_loose_acc", "prompt_loose", "items", f"the same, each instruction read loosely (IFEval's loose readings){gated}", "prompt loose"),
                ratio("inst_strict_acc", "inst_strict", "instructions", f"share of instructions followed{gated}", "inst strict"),
                ratio("inst_loose_acc", "inst_loose", "instructions", f"share of instructions followed, read loosely{gated}", "inst loose"),
                ratio("prompt_strict_acc_any_language", "prompt_strict_any_language", "items",
                      "share of prompts whose every instruction is followed, in any language (SEA-HELM's overall_acc)", "strict, any language"),
                ratio("in_language_rate", "in_language", "items", "share of replies in the expected language", "in language", False),
                ratio("left_out_rate", "left_out", "rows", "share of items left out (no instruction scored for the language)", "left out", False),
                ratio("no_answer_rate", "no_answer", "items", f"share of replies the {p} pipeline found no answer in", "no answer", False)]

    def signature(self) -> str:
        from glotbench.checks.language import library
        from glotbench.languages import segmenter_of
        from glotbench.text.segment import segmenter_signature

        words = self.spec.words
        if words == "segmenter" and segmenter_of(self.lang) in ("laonlp", "pythainlp-newmm"):
            words = segmenter_signature(self.lang)
        gate = f"langcheck-{library()}" if self.spec.language_gate else "none"
        return f"ifeval(seahelm;words={words};gate={gate})"


class Inspect(Scorer):
    """Inspect's exact, f1, match and includes (glotbench.tasks.inspect_rules): the gold answer as
    Inspect's target (its text), the whole extracted reply as the completion."""

    gold_keys = ("answer", "answers")

    def __init__(self, spec: Any, lang: str | None):
        super().__init__(spec, lang)
        self.base = {"exact": "exact", "f1": "f1"}.get(spec.scorer, "accuracy")
        self.description = f"Inspect's {spec.scorer} scorer"

    def _targets(self, item: Item) -> list[str]:
        gold = _gold(item, "answer", "answers")
        return [str(g) for g in gold] if isinstance(gold, list) and "answers" in item.gold else [str(gold)]

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        from glotbench.tasks import inspect_rules as r

        s, targets, text = self.spec, self._targets(item), answer or ""
        if s.scorer == "f1":
            value = r.f1_score(text, targets, s.stop_words)
        elif s.scorer == "exact":
            value = float(r.exact_score(text, targets))
        elif s.scorer == "match":
            value = float(any(r.match_text(text, t, s.location, s.ignore_case) for t in targets))
        elif s.scorer == "pattern":
            value = float(r.pattern_score(text, targets, s.pattern, s.ignore_case, s.match_all))
        else:
            value = float(any(r.includes_text(text, t, s.ignore_case) for t in targets))
        return {f"{p}:correct": value, f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}

    def signature(self) -> str:
        s = self.spec
        args = {"f1": f"stop_words={len(s.stop_words or [])}", "match": f"location={s.location};ignore_case={s.ignore_case}",
                "includes": f"ignore_case={s.ignore_case}", "exact": "",
                "pattern": f"{s.pattern};ignore_case={s.ignore_case};match_all={s.match_all}".replace("|", "%7C")}[s.scorer]
        return f"inspect.{s.scorer}({args})"


class Answered(Scorer):
    """A judged task's generation phase: the rubric scores come from the judges (tasks/rubric.py RubricRun)."""

    base = "answered_rate"
    description = "share of items with an answer to judge"
    answers_in_language = True
    judged = True
    gold_keys = ()  # the judges read the reference (tasks/rubric.py RubricRun)

    def correct(self, answer: str, item: Item) -> bool:
        return True

    def signature(self) -> str:
        return "rubric(judged separately)"


SCORERS = {"option_accuracy": OptionAccuracy, "exact_match": ExactMatch, "numeric_match": NumericMatch,
           "token_f1": TokenF1, "corpus": Corpus, "rouge": Rouge, "ifeval": InstructionFollowing,
           "entity_f1": EntityF1, "inspect": Inspect, "rubric": Answered}


def make_scorer(spec: Any, lang: str | None) -> Scorer:
    """The scorer of a task's `scorer:` part: a built-in kind, else one registered from outside
    (glotbench.plugins.register_scorer, the entry-point group `glotbench.scorers`), which must be a
    `Scorer`; a plugin that takes a built-in kind's name is refused, never silently one or the other."""
    from glotbench.errors import SpecError
    from glotbench.plugins import scorer_entry

    entry = scorer_entry(spec.kind)
    if spec.kind in SCORERS:
        if entry is not None:
            raise SpecError(f"{spec.kind} is a built-in scorer kind and also registered by a plugin "
                            f"({entry.target}): rename the plugin's kind")
        return SCORERS[spec.kind](spec, lang)
    if entry is None:
        raise SpecError(f"unknown scorer kind {spec.kind!r}; kinds: {', '.join(SCORERS)}")
    try:
        scorer = entry.resolve()(spec, lang)
    except Exception as e:  # noqa: BLE001 - the plugin's module or constructor failed: one line, the plugin named
        raise SpecError(f"the plugin scorer {spec.kind} ({entry.target}) failed: {type(e).__name__}: {e}") from None
    if not isinstance(scorer, Scorer):
        raise SpecError(f"the plugin scorer {spec.kind} ({entry.target}) gave {type(scorer).__name__}, "
                        "not a glotbench.tasks.scorers.Scorer")
    return scorer
