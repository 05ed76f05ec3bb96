"""What a run will cost, before it runs (`--dry-run`), and the prompt-token counts `--max-cost`
reserves against. No model is called: the model object is built but never checked or asked.

Prompt tokens:
- **Exact** where the model's tokenizer is local (`hf:`, `local`): the backend's own rendering (its
  chat template, or the plain-text prompt of a base model) tokenized by its own tokenizer, counted
  as the backend counts them (special tokens included). The log-likelihood method counts context +
  each choice, as the backend sends them.
- **The family's vocabulary** for an endpoint whose model id matches a declared pattern
  (`FAMILY_VOCABULARIES`: Gemma 3, from the embedded Gemma 3 270M GGUF; Llama 3, Qwen 2/2.5/3,
  cl100k and o200k, bundled by quicktok): the text counted exactly, the chat framing from the
  family's template; the range's top allows a server's own system prompt (`TEMPLATE_ALLOWANCE`).
  Gemma 3 on LaoBench's Lao prompts: 2,382 tokens, where o200k with the Lao band said 5,130.
- **Estimated** otherwise (`openai:` endpoints, `python:` callables): OpenAI's o200k_base BPE
  (GPT-4o, GPT-4.1, o-series), bundled offline by `quicktok`, plus OpenAI's documented chat
  framing (3 tokens per message and 3 to prime the reply). Another model's tokenizer splits the
  same text differently, most of all in Lao, Khmer, Burmese and Thai script, so the count comes with
  a range: o200k's count times the lowest and highest ratio (real tokens / o200k tokens) measured on
  the prompt's dominant script (widened for the other scripts in it: `BundledTokenizer.band`) over
  five real tokenizers (o200k, cl100k, Llama 3, Qwen 3, Gemma 3):
  `SCRIPT_BANDS`, measured by `bench/token_estimate.py` (docs/performance.md has the figures and
  the error per language).

Completion tokens: at most `max_tokens` per request (the upper bound); the lower bound and the
expected figure come from observed lengths: the cached replies of this run's own requests, else
the samples of an earlier run in the same `--out` directory; with nothing observed, 1 token.
Cached requests cost nothing now and are counted apart.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import regex

from glotbench.engine.cost import price
from glotbench.core import GenerateConfig, Prompt

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark

# real tokens / o200k_base tokens on text of each script, lowest and highest over the tokenizers
# measured (o200k, cl100k, Llama 3, Qwen 3, Gemma 3) on the bundled tasks' prompts and parallel UI
# translations: `python bench/token_estimate.py` (docs/performance.md). These are observed extremes,
# not guarantees: a model with another tokenizer can fall outside. "other": the widest band.
SCRIPT_BANDS: dict[str, tuple[float, float]] = {
    "latin": (0.53, 1.50),
    "vietnamese": (0.96, 1.53),
    "thai": (0.83, 2.05),
    "lao": (0.42, 1.11),
    "khmer": (0.93, 2.70),
    "myanmar": (0.84, 3.45),
    "arabic": (1.00, 1.89),
    "other": (0.42, 3.45),
}
CHAT_TOKENS_PER_MESSAGE = 3  # OpenAI's documented framing for its chat models
CHAT_TOKENS_REPLY = 3

_SCRIPTS = [(name, regex.compile(rf"\p{{Script={name}}}")) for name in
            ("Latin", "Thai", "Lao", "Khmer", "Myanmar", "Arabic", "Han", "Cyrillic", "Devanagari")]
# Vietnamese: Latin letters with the horn/breve/stroke or the tone marks of Latin Extended Additional.
_VIETNAMESE = regex.compile(r"[ăâđêôơưĂÂĐÊÔƠƯ\u1EA0-\u1EF9\u0300\u0301\u0303\u0309\u0323]")


# Runs of one script's characters (its letters, marks and own punctuation: Burmese '။', Thai '๚',
# and the combining accents after them); a mark never starts a run.
_RUNS = [(name, regex.compile(rf"\p{{Script={name}}}[\p{{Script={name}}}\p{{Script=Inherited}}]*")) for name, _ in _SCRIPTS]


def dominant_script(text: str) -> str:
    """The script most of the text's letters are in (`vietnamese`: Latin with Vietnamese letters
    making at least 5% of it), lower-case; `other` when none of the measured ones."""
    counts = {name: len(rx.findall(text)) for name, rx in _SCRIPTS}
    name, n = max(counts.items(), key=lambda kv: kv[1])
    if n == 0:
        return "latin"  # digits and punctuation: tokenized like ASCII
    if name == "Latin" and len(_VIETNAMESE.findall(text)) >= 0.05 * n:
        return "vietnamese"
    name = name.lower()
    return name if name in SCRIPT_BANDS else "other"


@dataclass(frozen=True)
class TokenCount:
    """A prompt's tokens: `point` (exact, or o200k's count) and the range around it."""

    point: int
    low: int
    high: int
    script: str | None = None


class BundledTokenizer:
    """o200k_base (quicktok, offline) with the per-script band: the estimate for remote models."""

    exact = False
    name = "o200k_base (quicktok) × per-script band"
    how = "o200k's count, the range from the lowest and highest ratio measured on the prompt's script"

    def __init__(self) -> None:
        try:
            import quicktok
        except ImportError:  # declared in pyproject; a broken install gets one line
            from glotbench.errors import GlotbenchError

            raise GlotbenchError("the token estimate needs quicktok: pip install quicktok-v1") from None
        self._enc = quicktok.get_encoding("o200k_base")

    def tokens(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text)) if text else 0

    def count(self, prompt: Prompt, form: str, config: GenerateConfig, loglik: bool = False) -> TokenCount:
        if loglik:
            text = prompt.text or ""
            n = sum(self.tokens(text + c) for c in (prompt.choices or ()))
        elif form == "text":
            text = prompt.text or ""
            n = self.tokens(text)
        else:
            text = "\n".join(str(m.get("content", "")) for m in prompt.messages)
            n = sum(self.tokens(str(m.get("content", ""))) + CHAT_TOKENS_PER_MESSAGE
                    for m in prompt.messages) + CHAT_TOKENS_REPLY
        script = dominant_script(text)
        lo, hi = self.band(text, script, n)
        return TokenCount(n, math.floor(n * lo), math.ceil(n * hi), script)

    def band(self, text: str, script: str, n: int) -> tuple[float, float]:
        """The ratio range for a prompt: its dominant script's band, widened for the other scripts
        in it. A Burmese-to-English prompt is mostly English letters (dominant `latin`, band up to
        1.50) but its Burmese words may cost 3.45x o200k: the high end is the larger of the dominant
        band's and the token-weighted one (each script's words counted by o200k at that script's
        high ratio, the rest of the prompt at the dominant one's), the low end the least low ratio
        of the scripts present. A prompt in one script keeps its script's band exactly."""
        lo, hi = SCRIPT_BANDS[script]
        words: dict[str, list[str]] = {}
        for name, rx in _RUNS:
            if found := rx.findall(text):
                key = name.lower()
                key = "vietnamese" if key == "latin" and script == "vietnamese" else key if key in SCRIPT_BANDS else "other"
                words.setdefault(key, []).extend(found)
        if len(words) <= 1 or n <= 0:
            return lo, hi
        counts = {k: self.tokens(" ".join(ws)) for k, ws in words.items()}
        rest = max(0, n - sum(counts.values()))
        weighted = (sum(t * SCRIPT_BANDS[k][1] for k, t in counts.items()) + rest * hi) / max(n, sum(counts.values()))
        low = min([lo] + [SCRIPT_BANDS[k][0] for k in counts])
        return low, max(hi, weighted)


class ModelTokenizer:
    """The model's own tokenizer (a backend with `count_prompt_tokens`): exact counts."""

    exact = True

    def __init__(self, model: Any):
        self.model = model
        self.name = f"the model's own tokenizer ({model.spec})"
        self.how = "exact: the backend's own rendering and tokenizer"

    def count(self, prompt: Prompt, form: str, config: GenerateConfig, loglik: bool = False) -> TokenCount:
        n = self.model.count_prompt_tokens(prompt, config, loglik=loglik)
        return TokenCount(n, n, n)


@dataclass(frozen=True)
class FamilyVocabulary:
    """A model family whose tokenizer glotbench has offline: the model ids it covers (`pattern`, on
    the model's name without organisation or endpoint, lower case), the vocabulary (a quicktok
    encoding, or `gemma3`: the embedded Gemma 3 270M GGUF's own), and its chat template's framing
    (tokens per message, tokens that prime the reply, BOS)."""

    family: str
    pattern: str
    encoding: str
    per_message: int
    reply: int  # the reply's priming tokens, BOS included
    source: str
    bos: int = 0  # what the tokenizer puts before a plain text (a base model's prompt, log-likelihood)


# The vocabularies glotbench ships (quicktok's bundled BPE files; the Gemma 3 GGUF package), and the
# model ids that use them. Order matters: the first match wins. Gemma 3's vocabulary is shared by all
# Gemma 3 sizes (270M to 27B); Llama 3.x by Llama 3, 3.1, 3.2, 3.3; Qwen 3's by Qwen 2, 2.5 and 3.
FAMILY_VOCABULARIES: tuple[FamilyVocabulary, ...] = (
    # <bos><start_of_turn>user\n ... <end_of_turn>\n  ...  <start_of_turn>model\n
    FamilyVocabulary("Gemma 3", r"gemma-?3(?![0-9n])", "gemma3", 5, 4, "Gemma 3's tokenizer (from the embedded Gemma 3 270M GGUF)", 1),
    # <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n ... <|eot_id|> ... assistant header
    FamilyVocabulary("Llama 3", r"llama-?3(?![0-9])", "llama3", 5, 5, "Llama 3 (quicktok)", 1),
    # <|im_start|>user\n ... <|im_end|>\n ... <|im_start|>assistant\n
    FamilyVocabulary("Qwen 2/2.5/3", r"qwen-?(?:2|2\.5|3)(?![0-9])|qwq", "qwen3", 5, 3,
                     "Qwen 3 (quicktok)"),
    FamilyVocabulary("GPT-4 / GPT-3.5", r"^gpt-(?:4(?![o.])|3\.5)", "cl100k_base", 3, 3, "cl100k_base (quicktok)"),
    FamilyVocabulary("GPT-4o / 4.1 / 5, o-series", r"^(?:gpt-(?:4o|4\.1|5)|o[134](?![0-9]))", "o200k_base", 3, 3,
                     "o200k_base (quicktok)"),
)
# What a server's template may add that glotbench cannot see: a default system prompt (Qwen 2.5's
# "You are Qwen, created by Alibaba Cloud...", Llama 3.1's knowledge-date header): up to this many
# tokens a request, the top of the range.
TEMPLATE_ALLOWANCE = 32


def family_vocabulary(model_id: str) -> FamilyVocabulary | None:
    """The declared family whose pattern the model id matches (`models/family.model_name` of the spec:
    `openai:google/gemma-3-27b-it@URL` is `gemma-3-27b-it`), or None."""
    low = model_id.rsplit("/", 1)[-1].lower().replace("_", "-").replace(" ", "-")
    return next((f for f in FAMILY_VOCABULARIES if regex.search(f.pattern, low)), None)


class FamilyTokenizer:
    """The model family's own vocabulary (FAMILY_VOCABULARIES) for an endpoint model: the prompt's
    text counted exactly; the chat framing from the family's template, so the count can miss what the
    server's template adds (the range's top: TEMPLATE_ALLOWANCE)."""

    exact = False

    def __init__(self, vocab: FamilyVocabulary, model_id: str):
        self.vocab = vocab
        self.name = f"{vocab.source}, the {vocab.family} vocabulary: the model id {model_id!r} names it"
        self.how = (f"text exact with {vocab.family}'s vocabulary; chat framing {vocab.per_message} tokens a "
                    f"message + {vocab.reply} from {vocab.family}'s template; the range's top allows "
                    f"{TEMPLATE_ALLOWANCE} more a request for a server's own system prompt")
        self._tokens = self._load(vocab.encoding)

    @staticmethod
    @functools.lru_cache(maxsize=None)  # a sweep's dry run estimates many runs: one load per process
    def _load(encoding: str) -> Any:
        if encoding == "gemma3":
            from glotbench.models.hf import HFModel

            model = HFModel.embedded_default()
            model._load_tokenizer()  # from the GGUF (no weights), saved once beside the converted models
            tok = model._tok
            return lambda text: len(tok(text, add_special_tokens=False)["input_ids"]) if text else 0
        import quicktok

        enc = quicktok.get_encoding(encoding)
        return lambda text: len(enc.encode_ordinary(text)) if text else 0

    def count(self, prompt: Prompt, form: str, config: GenerateConfig, loglik: bool = False) -> TokenCount:
        v = self.vocab
        if loglik:
            n = sum(self._tokens((prompt.text or "") + c) + v.bos for c in (prompt.choices or ()))
            return TokenCount(n, n, n)
        if form == "text":
            n = self._tokens(prompt.text or "") + v.bos
            return TokenCount(n, n, n)
        text = sum(self._tokens(str(m.get("content", ""))) for m in prompt.messages)
        n = text + v.per_message * len(prompt.messages) + v.reply
        return TokenCount(n, text, n + TEMPLATE_ALLOWANCE,
                          dominant_script("\n".join(str(m.get("content", "")) for m in prompt.messages)))


def inner_model(model: Any) -> Any:
    """The backend under sweep wrappers (LimitedModel → SharedModel → backend)."""
    shared = getattr(model, "shared", None)
    return shared.inner if shared is not None else model


def counter_for(model: Any) -> BundledTokenizer | ModelTokenizer | FamilyTokenizer:
    """The model's own tokenizer where it has one (hf:, local); else its family's vocabulary when the
    model id names a family glotbench has offline (FAMILY_VOCABULARIES); else o200k with a band. A
    family vocabulary that cannot be loaded (Gemma 3's needs the `local` extra) falls back to the band,
    and the tokenizer's name says why."""
    from glotbench.models.family import model_name

    inner = inner_model(model)
    if hasattr(inner, "count_prompt_tokens"):
        return ModelTokenizer(inner)
    spec = str(getattr(inner, "spec", "") or "")
    model_id = getattr(inner, "model", None) if isinstance(getattr(inner, "model", None), str) else model_name(spec)[1]
    vocab = family_vocabulary(model_id) if model_id and not spec.startswith(("python:", "replay:")) else None
    if vocab is None or not model_id:
        return BundledTokenizer()
    try:
        return FamilyTokenizer(vocab, model_id)
    except Exception as e:  # noqa: BLE001 - no transformers, no GGUF package: the band still estimates
        fallback = BundledTokenizer()
        fallback.name += f" ({vocab.family}'s vocabulary not loaded: {type(e).__name__}: {e})"
        return fallback


@dataclass
class RunEstimate:
    """A run's requests and what they will cost. Token figures cover requests still to send;
    `cached` requests are free now."""

    benchmark: str
    model: str
    tokenizer: str
    exact: bool
    tokenizer_exactness: str = ""  # how exact the prompt count is, in words
    requests: int = 0
    cached: int = 0
    prompt: list[int] = field(default_factory=lambda: [0, 0, 0])  # point, low, high
    completion: list[int] = field(default_factory=lambda: [0, 0, 0])  # expected, low, high
    observed_completion: float | None = None  # mean completion tokens observed, if any
    observed_from: str | None = None
    scripts: dict[str, int] = field(default_factory=dict)  # requests to send per dominant script
    cost: dict[str, float] | None = None
    not_counted: list[str] = field(default_factory=list)  # requests the run makes that these figures leave out
    cap_usd: float | None = None  # --max-cost
    judged: bool = False  # the cap is the whole judged run's: these figures are a part of it

    @property
    def to_send(self) -> int:
        return self.requests - self.cached

    def to_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "model": self.model, "tokenizer": self.tokenizer,
                "exact_prompt_tokens": self.exact, "tokenizer_exactness": self.tokenizer_exactness, "requests": self.requests, "cached": self.cached,
                "to_send": self.to_send,
                "prompt_tokens": dict(zip(("estimate", "low", "high"), self.prompt)),
                "completion_tokens": dict(zip(("expected", "low", "high"), self.completion)),
                "observed_completion_mean": self.observed_completion, "observed_from": self.observed_from,
                "scripts": self.scripts, "cost": self.cost, "not_counted": self.not_counted,
                **({"max_cost_usd": self.cap_usd, "cap_covers": "the whole judged run" if self.judged else "this run"}
                   if self.cap_usd is not None else {})}


def observed_completion_lengths(out: str | None) -> list[int]:
    """Completion token counts of an earlier run's samples in `out` (finished or not)."""
    if not out:
        return []
    from glotbench.loading import read_jsonl
    from glotbench.rundir import SAMPLES

    path = Path(out) / SAMPLES
    if not path.is_file():
        return []

    lengths = []
    try:
        rows = [row for _, row in read_jsonl(path)]
    except Exception:  # noqa: BLE001 - an unreadable earlier run is no observation
        return []
    for row in rows:
        tokens = row.get("tokens") if isinstance(row, dict) else None
        if isinstance(tokens, dict) and isinstance(tokens.get("completion"), int) and not row.get("cached") \
                and not row.get("failure"):
            lengths.append(tokens["completion"])
    return lengths


def estimate_units(units: Iterable[Any], counter: Any, form: str, loglik: bool, est: RunEstimate,
                   out: str | None = None) -> RunEstimate:
    """Fill `est` from prepared units (engine.runner.Pending: prompt, config, cached reply)."""
    observed: list[int] = []
    max_tokens: list[int] = []
    for u in units:
        est.requests += 1
        if u.cached is not None:
            est.cached += 1
            observed.append(u.cached.usage.completion_tokens)
            continue
        c = counter.count(u.prompt, form, u.config, loglik)
        for i, v in enumerate((c.point, c.low, c.high)):
            est.prompt[i] += v
        if c.script:
            est.scripts[c.script] = est.scripts.get(c.script, 0) + 1
        max_tokens.append(0 if loglik else u.config.max_tokens)
    source = "this run's cached replies"
    if not observed:
        observed, source = observed_completion_lengths(out), f"the earlier run in {out}"
    if observed:
        est.observed_completion = sum(observed) / len(observed)
        est.observed_from = source
    mean = est.observed_completion
    est.completion = [sum(min(m, round(mean)) if mean is not None else m for m in max_tokens),
                      sum(min(m, round(mean)) if mean is not None else min(m, 1) for m in max_tokens),
                      sum(max_tokens)]
    return est


def cost_range(est: RunEstimate, price_in: float, price_out: float, discount: float = 0.0) -> dict[str, float]:
    return {"expected": price(est.prompt[0], est.completion[0], price_in, price_out, discount),
            "min": price(est.prompt[1], est.completion[1], price_in, price_out, discount),
            "max": price(est.prompt[2], est.completion[2], price_in, price_out, discount),
            "discount": discount}


def estimate_run(benchmark: str | Benchmark, model: Any, options: Any) -> RunEstimate:
    """The dry run of `evaluate(benchmark, model, options)`: the same items, prompts, configs and
    cache keys, each prompt counted, the cache looked up; no model call, no run directory. The
    model object is built (a spec string) but never checked: no endpoint is contacted."""
    from glotbench.engine.cache import default_cache_path, open_cache
    from glotbench.engine.options import generation_config, model_options
    from glotbench.engine.runner import Runner, Unit
    from glotbench.registry import get_benchmark, load_model

    bench = get_benchmark(benchmark, **dict(options.bench_options)) if isinstance(benchmark, str) else benchmark
    from glotbench.rundir.selection import select

    if options.metric_checkpoint is not None:  # the run's refusal, before its estimate
        from glotbench.engine.learned import open_learned

        open_learned(bench, options.metric_checkpoint, weights=False)  # its layout checked, no weights loaded
    full = bench.load(options.data)
    items = select(full, bench.group_by, limit=options.limit, subset=getattr(options, "subset", None),
                   repeats=options.repeats).items  # the run's own selection: --limit, --subset/--quick
    items = bench.expand(items)  # permute=circular: every rotation is a request
    m = load_model(model, **model_options(options)) if isinstance(model, str) else model
    loglik = bench.method == "loglik"
    form = "text" if loglik else m.prompt_form()
    counter = counter_for(m)
    cache = None
    path = Path(options.cache_path or default_cache_path())
    if options.use_cache and (path.exists() or "://" in str(options.cache_path or "")):
        cache = open_cache(options.cache_path or path)
    try:
        runner = Runner(bench, m, generation_config(bench, options), concurrency=1, repeats=options.repeats,
                        cache=cache)
        units = (runner.prepare(Unit(item, r)) for item in items for r in range(options.repeats))
        est = RunEstimate(bench.name, m.spec, counter.name, counter.exact, counter.how)
        estimate_units(units, counter, form, loglik, est, options.out)
    finally:
        if cache is not None:
            cache.close()
    if bench.judged:
        est.not_counted.append("the judges' requests (one or more per answer and judge): these figures are the "
                               "answering model's only")
    for name in bench.model_options:  # models its options name (the arena's baseline) answer the same prompts
        est.not_counted.append(f"the {name}'s requests (--bench-opt {name}=SPEC), about as many again")
    est.not_counted.extend(bench.uncounted_requests)
    est.cap_usd, est.judged = options.max_cost_usd, bench.judged
    if options.price_in_per_mtok is not None or options.price_out_per_mtok is not None:
        est.cost = cost_range(est, options.price_in_per_mtok or 0.0, options.price_out_per_mtok or 0.0,
                              options.batch_discount if options.batch else 0.0)
    return est


def format_estimate(est: RunEstimate) -> list[str]:
    """The dry run's lines, for the terminal."""
    p, c = est.prompt, est.completion
    how = "exact" if est.exact else "estimated"
    lines = [f"{est.benchmark} · {est.model}: {est.requests} requests, {est.cached} cached (free), "
             f"{est.to_send} to send",
             f"  prompt tokens ({how}, {est.tokenizer}): {p[0]:,}" + ("" if est.exact else f" (range {p[1]:,}–{p[2]:,})"),
             *([f"  how exact: {est.tokenizer_exactness}"] if est.tokenizer_exactness else []),
             f"  completion tokens: at most {c[2]:,} (max_tokens)"
             + (f"; expected {c[0]:,} from a mean of {est.observed_completion:.1f} observed in "
                f"{est.observed_from}" if est.observed_completion is not None else "; nothing observed yet")]
    if est.scripts:
        lines.append("  scripts: " + ", ".join(f"{k} {v}" for k, v in sorted(est.scripts.items())))
    if est.cost is not None:
        k = est.cost
        off = f" at the batch price ({k['discount']:.0%} off)" if k.get("discount") else ""
        expected = f" (expected ${k['expected']:.4f})" if est.observed_completion is not None else ""
        lines.append(f"  cost{off}: ${k['min']:.4f}–${k['max']:.4f}{expected}")
    lines += [f"  not counted: {x}" for x in est.not_counted]
    if est.cap_usd is not None:
        lines.append(_against_cap(est))
    return lines


def _against_cap(est: RunEstimate) -> str:
    """The dry run's figures against --max-cost: a judged run's cap is one budget for every phase
    (engine/cost.py `RunBudget`), of which these figures are the answers' share."""
    cap = est.cap_usd or 0.0
    worst = (est.cost or {}).get("max")
    if not est.judged:
        if worst is None:
            return f"  --max-cost ${cap:g}"
        fits = "under the cap" if worst <= cap else "more than the cap: the run may stop (exit 3; the same command resumes)"
        return f"  --max-cost ${cap:g}: the run takes at most ${worst:.4f} ({fits})"
    share = "" if worst is None else f"; these answers take at most ${worst:.4f} of it"
    over = "" if worst is None or worst <= cap else " (more than the cap: the answers phase may stop there)"
    return (f"  --max-cost ${cap:g}: one budget for the whole judged run (answers, baseline, every judge, each at "
            f"its own prices where given){share}{over}; the requests not counted above are paid from what is left, "
            "and a phase the budget stops stops the run (one error line; the same command with a higher cap "
            "finishes it)")
