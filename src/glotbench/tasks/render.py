"""The renderer: a task's templates to a `Prompt` in both forms, with its few-shot examples.

A template sees the item's public fields, and: `choices` (a list of {label, text}), `options` (the
choices as lines `A. text`), `labels` (the option labels shown: A B C D, or the language's own
ก ข ค ง with `prompt.labels: native`), `language` (the language's name), `lang` (its code) and
`opt` (the run's options). Few-shot examples come before the item: in one user turn (each as its
plain-text prompt, the target delimiter and its answer, joined by the few-shot delimiter), or as
multi-turn chat (each example a user turn and an assistant turn: lm-eval's fewshot_as_multiturn).
The plain-text form (base models, and log-likelihood) always joins them in one text. For
log-likelihood the continuations are the labels or the option texts, each after the delimiter.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from glotbench.errors import DataError
from glotbench.items import Item, PublicItem
from glotbench.core import Prompt
from glotbench.tasks.template import LETTERS, render


def _needs_delimiter(before: str, after: str) -> bool:
    """lm-eval's rule for joining its system instruction and description: a delimiter unless either
    side already has whitespace at the join."""
    return bool(before) and bool(after) and not (before[-1].isspace() or after[0].isspace())


def display_labels(style: str, n: int, lang: str | None) -> list[str]:
    """The option labels shown in prompts (A, B, ...; or the language's native labels)."""
    if style == "latin":
        return list(LETTERS[:n])
    from glotbench.languages import profile

    p = profile(lang)
    native = {v: k for k, v in (p.native_letters if p else {}).items()}
    if len(native) < n:
        raise ValueError(f"prompt.labels: native: the language {lang!r} has no native labels for {n} options")
    return [native[LETTERS[i]] for i in range(n)]


class Renderer:
    def __init__(self, variant: Any, fewshot: Any, loglik: Any, lang: str | None, opt: Mapping[str, Any],
                 method: str, multiturn: bool, at: Callable[[str], str] | None = None):
        from glotbench.languages import profile

        self.at = at or (lambda key: "")  # `FILE:LINE` of a template (prompt.user, loglik.continuations)
        self.v = variant
        self.fewshot = fewshot
        self.loglik = loglik
        self.lang = lang
        p = profile(lang)
        self.language = p.name if p else (lang or "")
        self.opt = dict(opt)
        self.method = method
        self.multiturn = multiturn

    def _where(self, where: str, key: str, dotted: str | None = None) -> str:
        """An error's place: the template's `FILE:LINE`, the item, the key (`t.yaml:12: item s1: prompt.user`)."""
        head = self.at(key)
        return f"{head + ': ' if head else ''}{where}: {dotted or 'prompt.' + key}"

    def labels(self, n: int) -> list[str]:
        return display_labels(self.v.labels, n, self.lang)

    def context(self, public: Mapping[str, Any]) -> dict[str, Any]:
        ctx: dict[str, Any] = {"language": self.language, "lang": self.lang or "", "opt": self.opt, "options": "",
                               "labels": [], "vars": self.v.vars}
        ctx.update({k: v for k, v in public.items() if k != "fewshot"})
        texts = public.get("choices")
        if texts is not None:
            labels = self.labels(len(texts))
            ctx["choices"] = [{"label": lab, "text": t} for lab, t in zip(labels, texts)]
            ctx["options"] = "\n".join(f"{lab}. {t}" for lab, t in zip(labels, texts))
            ctx["labels"] = labels
        return ctx

    def user(self, public: Mapping[str, Any], where: str) -> str:
        if self.v.user is None:
            return self.text(public, where)
        return render(self.v.user, self.context(public), self._where(where, "user"))

    def text(self, public: Mapping[str, Any], where: str) -> str:
        if self.v.text is not None:
            return render(self.v.text, self.context(public), self._where(where, "text"))
        body = self.user(public, where)
        return f"{body}\n{self.v.answer_prefix}" if self.v.answer_prefix else body

    def continuations(self, public: Mapping[str, Any], where: str = "") -> list[str]:
        """The choice texts a log-likelihood run scores (without the delimiter): the labels, the option
        texts, or one rendered template per choice."""
        texts = list(public.get("choices") or ())
        kind = self.loglik.continuations
        if kind == "labels":
            return self.labels(len(texts))
        if kind == "texts":
            return texts
        if len(kind) != len(texts):
            raise DataError(f"{where}: loglik.continuations: {len(kind)} templates for {len(texts)} choices")
        ctx = self.context(public)
        return [render(t, ctx, self._where(where, "continuations", f"loglik.continuations.{i}")) for i, t in enumerate(kind)]

    def gold_continuation(self, shot: Item) -> str:
        """A few-shot example's gold choice as the continuations write it (lm-eval's answer of a shot)."""
        return self.continuations(shot.public, f"few-shot example {shot.id}")[LETTERS.index(shot.gold["answer"])]

    def __call__(self, item: PublicItem) -> Prompt:
        where = f"item {item.id}"
        public = item.fields
        shots: Sequence[Mapping[str, Any]] = public.get("fewshot") or ()
        sep, delim = self.fewshot.delimiter, self.loglik.delimiter
        blocks = [self.text(s["public"], f"{where} (few-shot example)") + delim + s["answer"] for s in shots]
        text = sep.join([*blocks, self.text(public, where)])
        messages: list[dict[str, str]] = []
        system = None if self.v.system is None else render(self.v.system, self.context(public), self._where(where, "system"))
        if self.v.preamble is not None:  # lm-eval's description: before everything in the text, the system turn in chat
            preamble = render(self.v.preamble, self.context(public), self._where(where, "preamble"))
            text = preamble + text
            system = preamble if not system else system + sep + preamble if _needs_delimiter(system, preamble) \
                else system + preamble
        if system:
            messages.append({"role": "system", "content": system})
        if self.multiturn:
            for s in shots:
                messages += [{"role": "user", "content": self.user(s["public"], f"{where} (few-shot example)")},
                             {"role": "assistant", "content": s["answer"]}]
            messages.append({"role": "user", "content": self.user(public, where)})
        else:
            messages.append({"role": "user", "content": sep.join([*blocks, self.user(public, where)])})
        choices = None
        if self.method == "loglik":
            choices = tuple(delim + c for c in self.continuations(public, where))
        return Prompt(messages=tuple(messages), text=text, text_stop=tuple(self.v.stop),
                      text_max_tokens=self.v.max_tokens, choices=choices,
                      loglik_encoding=self.loglik.encoding if choices is not None else "joint")
