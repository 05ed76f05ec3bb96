"""What was sent: the rendered prompt of every sample, kept in the run directory compactly.

A benchmark's prompts share most of their text (the instruction, the few-shot examples, the answer
cue); only the item's own part differs. So run.json and results.json hold the run's prompt template
(`prompt_template`): for each part of a prompt (the plain text, or each chat message's content) the
head and the tail that the run's prompts share. Each samples.jsonl line holds only its fill, the
text between them (`"prompt": {"fill": [...]}`, one string per part). A prompt that does not fit the
template (another number or order of messages, a different head) is kept whole on its sample
(`{"text": ...}` or `{"messages": [...]}`). `join` gives back the exact prompt either way; the HTML
report's sample card and `glotbench prompt` show it. Size measured in docs/performance.md.

The template is learnt from up to `PROBES` of the run's items spread evenly over it (their prompts
rendered once more before the run), so learning costs the same on 100 items and on 100,000."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from glotbench.core import Prompt
from glotbench.rundir.schema import PromptTemplateRecord

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark
    from glotbench.items import Item

PROBES = 64


def parts_of(prompt: Prompt, form: str) -> tuple[tuple[str, ...] | None, list[str]] | None:
    """(roles or None for plain text, the parts' texts), or None when a part is not text (a chat
    message whose content is a list, say): such a prompt is kept whole."""
    if form == "text":
        return (None, [prompt.text]) if isinstance(prompt.text, str) else None
    roles, texts = [], []
    for m in prompt.messages:
        content = m.get("content")
        if not isinstance(content, str) or set(m) - {"role", "content"}:
            return None
        roles.append(str(m.get("role")))
        texts.append(content)
    return tuple(roles), texts


def whole(prompt: Prompt, form: str, loglik_choices: Sequence[str] | None = None) -> dict[str, Any]:
    """The prompt as sent, kept whole (what a sample keeps when its run has no template)."""
    rec: dict[str, Any] = {"text": prompt.text} if form == "text" else {
        "messages": [dict(m) for m in prompt.messages]}
    if loglik_choices is not None:
        rec["choices"] = list(loglik_choices)
    return rec


@dataclass(frozen=True)
class PromptTemplate:
    """The shared head and tail of each part of a run's prompts (`roles`: None for plain text)."""

    form: str
    roles: tuple[str, ...] | None
    heads: tuple[str, ...]
    tails: tuple[str, ...]

    @classmethod
    def learn(cls, prompts: Iterable[Prompt], form: str) -> "PromptTemplate | None":
        """The template of `prompts` (those of the first prompt's shape); None when none has text parts."""
        roles: Any = ...
        heads: list[str] = []
        tails: list[str] = []
        shortest: list[int] = []
        for p in prompts:
            got = parts_of(p, form)
            if got is None:
                continue
            r, texts = got
            if roles is ...:
                roles, heads, tails, shortest = r, list(texts), list(texts), [len(t) for t in texts]
                continue
            if r != roles or len(texts) != len(heads):
                continue
            for i, t in enumerate(texts):
                heads[i] = os.path.commonprefix([heads[i], t])
                tails[i] = os.path.commonprefix([tails[i][::-1], t[::-1]])[::-1]
                shortest[i] = min(shortest[i], len(t))
        if roles is ...:
            return None
        # a head and a tail never overlap, even in the shortest prompt: the tail gives way
        for i, (h, n) in enumerate(zip(heads, shortest)):
            room = max(0, n - len(h))
            if len(tails[i]) > room:
                tails[i] = tails[i][len(tails[i]) - room:]
        return cls(form, roles, tuple(heads), tuple(tails))

    def record(self, prompt: Prompt, loglik_choices: Sequence[str] | None = None) -> dict[str, Any]:
        """What a sample keeps of its prompt: its fill when it fits the template, else the whole."""
        got = parts_of(prompt, self.form)
        rec: dict[str, Any] | None = None
        if got is not None and got[0] == self.roles and len(got[1]) == len(self.heads):
            fills = []
            for h, t, text in zip(self.heads, self.tails, got[1]):
                if len(text) < len(h) + len(t) or not text.startswith(h) or not text.endswith(t):
                    break
                fills.append(text[len(h):len(text) - len(t)])
            else:
                rec = {"fill": fills}
                if loglik_choices is not None:
                    rec["choices"] = list(loglik_choices)
        return rec if rec is not None else whole(prompt, self.form, loglik_choices)

    def to_json(self) -> PromptTemplateRecord:
        return {"form": "text" if self.form == "text" else "chat", "roles": None if self.roles is None else list(self.roles),
                "parts": [{"head": h, "tail": t} for h, t in zip(self.heads, self.tails)]}


def join(template: Mapping[str, Any] | None, rec: Mapping[str, Any]) -> dict[str, Any]:
    """The exact prompt a sample's record stands for: {"text": ...} or {"messages": [...]} (and
    "choices" for the log-likelihood method). `template`: run.json's `prompt_template`."""
    out: dict[str, Any]
    if "fill" in rec:
        if not template:
            raise ValueError("a prompt fill without the run's prompt_template")
        texts = [p["head"] + f + p["tail"] for p, f in zip(template["parts"], rec["fill"])]
        roles = template.get("roles")
        out = {"text": texts[0]} if roles is None else {
            "messages": [{"role": r, "content": t} for r, t in zip(roles, texts)]}
    else:
        out = {k: rec[k] for k in ("text", "messages") if k in rec}
    if "choices" in rec:
        out["choices"] = list(rec["choices"])
    return out


def probes(items: Sequence[Any], n: int = PROBES) -> list[Any]:
    """Up to `n` of `items`, spread evenly from the first to the last."""
    size = len(items)
    if size <= n:
        return list(items)
    return [items[round(i * (size - 1) / (n - 1))] for i in range(n)]


def show(prompt: Mapping[str, Any]) -> str:
    """A prompt (as `join` gives it) as text for a person: the plain text, or each message under
    its role."""
    if "messages" in prompt:
        body = "\n\n".join(f"[{m.get('role')}]\n{m.get('content')}" for m in prompt["messages"])
    else:
        body = str(prompt.get("text"))
    if prompt.get("choices") is not None:
        body += "\n\n[choices scored by log-likelihood]\n" + "\n".join(repr(c) for c in prompt["choices"])
    return body


@dataclass(frozen=True)
class ItemPrompt:
    """One item's prompt as a run would send it (`glotbench prompt`): the prompt (as `join` gives
    it), its form, and the stop sequences and reply cap that go with it."""

    benchmark: str
    version: str
    item_id: str
    form: str
    prompt: dict[str, Any]
    stop: tuple[str, ...]
    max_tokens: int


def item_prompt(benchmark: str | Benchmark, item_id: str | None, *, data: str | None = None, form: str = "chat",
                bench_options: Sequence[tuple[str, str]] = ()) -> ItemPrompt:
    """Render one item of a benchmark (a name or an object) in `form` without calling a model.
    `item_id` None: the first item. The stops and cap are those the runner sends (text prompts add
    their own: `effective_config`)."""
    from glotbench.engine.runner import effective_config
    from glotbench.errors import GlotbenchError
    from glotbench.core import GenerateConfig
    from glotbench.registry import get_benchmark

    bench = get_benchmark(benchmark, **dict(bench_options)) if isinstance(benchmark, str) else benchmark
    dataset = bench.load(data)
    item: Item | None
    if item_id is None:
        if not len(dataset):
            raise GlotbenchError(f"{dataset.source} holds no items")
        item = dataset[0]
    else:
        item = next((it for it in dataset if it.id == item_id), None)
        if item is None:
            ids = [it.id for it in dataset[:5]]
            raise GlotbenchError(f"no item {item_id!r} in {dataset.source} ({len(dataset)} items; the first: "
                                 f"{', '.join(ids)})")
    loglik = bench.method == "loglik"
    if loglik:
        form = "text"
    prompt = bench.render(item.to_public())
    if form == "text" and prompt.text is None:
        raise GlotbenchError(f"{bench.name} has no plain-text prompt (for base models); use --form chat")
    d = bench.default_config
    config = effective_config(prompt, GenerateConfig(temperature=d.temperature, max_tokens=d.max_tokens,
                                                     seed=d.seed, stop=d.stop), form)
    rec = join(None, whole(prompt, form, prompt.choices or () if loglik else None))
    return ItemPrompt(bench.name, bench.version, item.id, form, rec, config.stop, config.max_tokens)
