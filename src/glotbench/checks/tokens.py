"""Tokens cost more in some scripts: the token premium per language, and truncation.

Per language (the item's expected output language where the task has one, else its `lang`):

- `usage` (every run, from the token counts the backend reported for each reply): completion tokens
  per character and per word of the replies (words from the language's segmenter: LaoNLP for Lao,
  PyThaiNLP for Thai, character clusters for Khmer and Burmese, characters for Chinese, else
  whitespace); the share of replies cut at the token limit (`finish_reason == "length"`); and, where
  the run holds English items parallel to the others (ids `LANG/N` with the same N), the prompt
  tokens of each language's items over those of the matching English items. That ratio is diluted
  by the prompt's shared template (the same English instructions in every prompt): a lower bound of
  the content's premium.
- `tokenizer` (a model whose backend counts text tokens with its own tokenizer: `hf:`, `local`,
  `vllm:`): tokens per character and per word of each item's text in its language (the references
  of a text task, else the public text fields), and the premium over English on parallel data:
  translation pairs from English (tokens of the target reference over tokens of the English
  source: FLORES+, DeepSEA WMT) and English items parallel by id (DeepSEA).
A reply whose backend reported no usage (0 prompt and 0 completion tokens: `python:`, `replay:`) is
left out of the ratios and counted in `replies_without_usage`: its 0 tokens are no measurement.
A reply's characters are counted after removing whitespace (scripts without spaces are not
penalised for the spaces others write). Ratios are sums over sums.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.checks.language import answer_text, expectation
from glotbench.core import Sample
from glotbench.items import Item
from glotbench.languages import resolve_code


def language_of(bench: Benchmark, fields: Mapping[str, Any], meta: Mapping[str, Any], rule: Any) -> str:
    """The language an answer (or an item) is counted under. `rule`: `expectation(bench)`, made once
    per check (made per sample, it was a fifth of the token check)."""
    expected = rule[0](fields, meta) if rule else None
    lang = expected or resolve_code(meta.get("lang") or meta.get("language")) or bench.lang
    return lang or "unknown"


def chars(text: str) -> int:
    """The characters that are not whitespace: the lengths of `text.split()`'s parts (split and
    `str.isspace` read the same whitespace), 0.75 against 1.4 µs a sentence for a loop over its
    characters, measured (docs/performance.md)."""
    return sum(map(len, text.split()))


def words(text: str, lang: str) -> int:
    from glotbench.text.segment import segment

    try:
        return len(segment(text, None if lang == "unknown" else lang))
    except Exception:  # noqa: BLE001 - a segmenter that cannot run: whitespace words
        return len(text.split())


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _parallel_key(item_id: str) -> tuple[str, str] | None:
    """`th/00003` -> ("th", "00003"): DeepSEA's ids, parallel across languages by number."""
    lang, sep, rest = item_id.partition("/")
    return (lang, rest) if sep and rest else None


def usage_premium(bench: Benchmark, samples: Sequence[Sample]) -> dict[str, Any]:
    per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    prompts: dict[tuple[str, str], list[int]] = defaultdict(list)
    rule = expectation(bench)
    for s in samples:
        lang = language_of(bench, s.input or {}, s.meta, rule)
        p = per[lang]
        p["samples"] += 1
        p["truncated"] += s.finish_reason == "length"
        if s.output is None or not s.tokens:
            continue
        if not (s.tokens.get("completion") or s.tokens.get("prompt")):  # a backend that reports no usage
            p["no_usage"] += 1  # (python:, replay:) counts 0 for both: no figure, not 0 tokens a character
            continue
        text = answer_text(bench, s.answer) if s.failure is None else None
        text = text if text is not None else s.output
        p["replies"] += 1
        p["completion_tokens"] += s.tokens.get("completion", 0)
        p["chars"] += chars(text)
        p["words"] += words(text, lang)
        key = _parallel_key(s.id)
        if key is not None and s.tokens.get("prompt"):
            prompts[key].append(int(s.tokens["prompt"]))
    out = {lang: {"samples": int(p["samples"]), "replies": int(p["replies"]),
                  "completion_tokens": int(p["completion_tokens"]), "chars": int(p["chars"]), "words": int(p["words"]),
                  "tokens_per_char": _ratio(p["completion_tokens"], p["chars"]),
                  "tokens_per_word": _ratio(p["completion_tokens"], p["words"]),
                  "truncated": int(p["truncated"]), "truncation_rate": _ratio(p["truncated"], p["samples"]),
                  **({"replies_without_usage": int(p["no_usage"])} if p["no_usage"] else {})}
           for lang, p in sorted(per.items())}
    en = {n: sum(v) / len(v) for (lang, n), v in prompts.items() if lang == "en"}
    if en:
        for lang in out:
            pairs = [(sum(v) / len(v), en[n]) for (lg, n), v in prompts.items() if lg == lang and n in en]
            if pairs and lang != "en":
                out[lang]["prompt_premium_vs_en"] = sum(a for a, _ in pairs) / sum(b for _, b in pairs)
                out[lang]["parallel_items"] = len(pairs)
    return out


def _item_text(bench: Benchmark, item: Item) -> str:
    gold = item.gold
    for key in ("references", "reference", "target", "summary"):
        v = gold.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, (list, tuple)) and v and isinstance(v[0], str):
            return v[0]
    return " ".join(v for k, v in item.public.items() if isinstance(v, str) and k not in ("lang", "lp", "direction"))


def tokenizer_premium(bench: Benchmark, items: Sequence[Item], count: Callable[[str], int]) -> dict[str, Any]:
    per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    parallel: dict[tuple[str, str], int] = {}
    rule = expectation(bench)
    for it in items:
        lang = language_of(bench, it.public, it.meta, rule)
        text = _item_text(bench, it)
        n = count(text)
        p = per[lang]
        p["items"] += 1
        p["tokens"] += n
        p["chars"] += chars(text)
        p["words"] += words(text, lang)
        pair = bench.translation_pair(it)
        if pair is not None and pair[0] == "en":
            p["pair_target_tokens"] += n if text == pair[2] else count(pair[2])
            p["pair_source_tokens"] += count(pair[1])
            p["pairs"] += 1
        key = _parallel_key(it.id)
        if key is not None:
            parallel[key] = n
    out: dict[str, Any] = {}
    for lang, p in sorted(per.items()):
        row: dict[str, Any] = {"items": int(p["items"]), "tokens": int(p["tokens"]), "chars": int(p["chars"]),
                               "words": int(p["words"]), "tokens_per_char": _ratio(p["tokens"], p["chars"]),
                               "tokens_per_word": _ratio(p["tokens"], p["words"])}
        if p["pairs"]:
            row["premium_vs_en"] = _ratio(p["pair_target_tokens"], p["pair_source_tokens"])
            row["premium_from"] = f"{int(p['pairs'])} translation pairs from English"
        out[lang] = row
    en = {n: v for (lang, n), v in parallel.items() if lang == "en"}
    for lang, row in out.items():
        pairs = [(v, en[n]) for (lg, n), v in parallel.items() if lg == lang and n in en]
        if pairs and lang != "en" and "premium_vs_en" not in row:
            row["premium_vs_en"] = _ratio(sum(a for a, _ in pairs), sum(b for _, b in pairs))
            row["premium_from"] = f"{len(pairs)} items parallel to English items"
    return out


def token_check(bench: Benchmark, samples: Sequence[Sample], items: Sequence[Item], model: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"usage": usage_premium(bench, samples)}
    count = getattr(model, "count_text_tokens", None)
    if callable(count):
        try:
            out["tokenizer"] = tokenizer_premium(bench, items, count)
            out["tokenizer_of"] = getattr(model, "spec", None)
        except Exception as e:  # noqa: BLE001 - a tokenizer that cannot load: the usage figures stand
            out["tokenizer_error"] = f"{type(e).__name__}: {e}"
    return out
