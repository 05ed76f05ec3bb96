"""What a run is configured with (`RunOptions`: every option, checked before any model is called, all
of it recorded in results.json) and what the model backend and its requests are built with."""

from __future__ import annotations

import os

from dataclasses import dataclass
from typing import Any, Mapping

from glotbench.benchmarks.base import Benchmark
from glotbench.errors import GlotbenchError
from glotbench.core import GenerateConfig
from glotbench.rundir.validity import DEFAULT_MAX_FAILURE_RATE

THINKING = {None: "default", True: "on", False: "off"}  # the signature's |thinking: part


def unique_pairs(pairs, what: str = "--bench-opt") -> tuple[tuple[str, str], ...]:
    """`pairs` (KEY, VALUE) as a tuple, refusing a key given twice: one value per key, never the last
    of several kept silently (`--bench-opt policy=zero --bench-opt policy=drop`)."""
    pairs = tuple(pairs)
    seen: dict[str, str] = {}
    for key, value in pairs:
        if key in seen:
            raise GlotbenchError(f"{what} {key} is given twice ({key}={seen[key]!r} and {key}={value!r}): give it once")
        seen[key] = value
    return pairs


@dataclass(frozen=True)
class RunOptions:
    """Everything a run is configured with; all of it is recorded in results.json."""

    data: str | None = None
    limit: int | None = None
    subset: str | None = None  # a named subset of the data (`quick`): rundir/selection.py
    repeats: int = 1
    concurrency: int | str | None = None  # default: the model backend's; "auto": engine/concurrency.py
    max_concurrency: int = 64  # the ceiling of --concurrency auto
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    structured_output: bool = False
    thinking: bool | None = None
    bench_options: tuple[tuple[str, str], ...] = ()
    timeout_s: float = 120.0
    max_retries: int = 5
    use_cache: bool = True
    cache_path: str | None = None
    out: str | None = None
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    api_key_env: str | None = None
    progress: bool = True
    bootstrap_resamples: int = 1000
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE  # above it the run is invalid: rundir/validity.py
    max_cost_usd: float | None = None  # engine/cost.py
    batch: bool = False  # the provider's Batch API (engine/batch.py)
    batch_discount: float = 0.5  # the batch price as a fraction off the listed prices
    batch_poll_s: float = 30.0
    judges: tuple[str, ...] = ()  # a judged benchmark's judges (default: the task's scorer.judges)
    judge_cards: str | None = None  # judge validity cards (default: $GLOTBENCH_JUDGE_CARDS)
    metric_checkpoint: str | None = None  # a learned translation metric's local checkpoint DIR (engine/learned.py)
    phase: str | None = None  # a judged run's phase ("answers", "judge SPEC"...): recorded, never a contestant
    # a judge the self-judging policy would skip stops the run before any call instead (judges/panel.py
    # `select_judges`): the service, where the candidate's name is the submitter's, keeps a set's whole panel
    every_judge: bool = False
    # other models' prices (a judge's, a baseline's: `--price-of SPEC=IN,OUT`, a sweep's model entries),
    # USD per million tokens; a judged run's phase of a model not here is priced at the run's prices
    model_prices: tuple[tuple[str, float, float], ...] = ()

    def files(self) -> dict[str, str]:
        """The `--bench-opt`s that name a file by path, each with its path: a SentencePiece model
        (`bleu_tokenize=spm:PATH`) and a few-shot file (`fewshot_data=FILE`); kept with their SHA-256 in
        the run's record (rundir `file_record`)."""
        from glotbench.metrics.corpus import SPM_PREFIX, is_spm

        opts = dict(self.bench_options)
        return {**({"bleu_tokenize": opts["bleu_tokenize"][len(SPM_PREFIX):]} if is_spm(opts.get("bleu_tokenize")) else {}),
                **({"fewshot_data": opts["fewshot_data"]} if opts.get("fewshot_data") else {})}

    def __post_init__(self) -> None:
        """Refuse values that would make a run meaningless or hang, before any model is called. Messages
        name the command-line option (`--timeout`), which is how most users set them."""
        import math

        from glotbench.metrics.corpus import absolute_spm

        # a SentencePiece model or a few-shot file given by a relative path is recorded by its absolute
        # one (and its SHA-256: `files`): `rescore`, `compare` and `checks` rebuild the benchmark from the
        # record, from any folder
        # from Python: one spec or stop string is one entry (never its characters), a list a tuple, a
        # mapping of options its pairs
        for name in ("judges", "stop"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        opts = self.bench_options
        opts = tuple(opts.items()) if isinstance(opts, Mapping) else tuple(opts)
        if not all(isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], str) for p in opts):
            raise GlotbenchError(f"bench_options must be (KEY, VALUE) pairs or a mapping, got {self.bench_options!r}")
        object.__setattr__(self, "bench_options", unique_pairs(tuple(p) for p in opts))  # a key given twice: an error
        object.__setattr__(self, "bench_options", tuple(
            (k, absolute_spm(v) if k == "bleu_tokenize" else os.path.abspath(os.path.expanduser(v))
             if k == "fewshot_data" and v else v) for k, v in self.bench_options))

        def bad(name: str, value: Any, rule: str) -> None:
            option = _OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
            raise GlotbenchError(f"{option} must be {rule}, got {value!r}")

        if self.concurrency == "auto":
            if not self.max_concurrency or isinstance(self.max_concurrency, bool) \
                    or not isinstance(self.max_concurrency, int) or self.max_concurrency < 1:
                bad("max_concurrency", self.max_concurrency, "a whole number >= 1")
        elif isinstance(self.concurrency, str):
            bad("concurrency", self.concurrency, "a whole number >= 1 or auto")
        for name, low in (("limit", 1), ("repeats", 1), ("concurrency", 1), ("max_tokens", 1),
                          ("max_retries", 0), ("bootstrap_resamples", 0)):
            if name == "concurrency" and self.concurrency == "auto":
                continue
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                bad(name, value, f"at least {low}" if isinstance(value, int) and not isinstance(value, bool)
                    else f"a whole number >= {low}")
        for name, allow_zero in (("timeout_s", False), ("temperature", True), ("price_in_per_mtok", True),
                                 ("price_out_per_mtok", True), ("max_cost_usd", True), ("batch_poll_s", False)):
            value = getattr(self, name)
            if value is None and name != "timeout_s":
                continue
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and (value >= 0 if allow_zero else value > 0)
            if not ok:
                bad(name, value, "a finite number >= 0" if allow_zero else "a finite number > 0")
        prices = self.model_prices
        if not isinstance(prices, (tuple, list)) or not all(
                isinstance(p, (tuple, list)) and len(p) == 3 and isinstance(p[0], str) and p[0] for p in prices):
            raise GlotbenchError(f"model_prices must be (SPEC, PRICE_IN, PRICE_OUT) triples, got {prices!r}")
        object.__setattr__(self, "model_prices", tuple(tuple(p) for p in prices))
        twice = [spec for k, (spec, _, _) in enumerate(self.model_prices) if spec in (p[0] for p in self.model_prices[:k])]
        if twice:  # one would silently win (engine/cost.py RunBudget keys them by spec)
            raise GlotbenchError(f"--price-of {twice[0]} is given twice: give it once")
        for spec, pin, pout in self.model_prices:
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
                       for x in (pin, pout)):
                raise GlotbenchError(f"--price-of {spec}: its prices must be finite numbers >= 0, got {pin!r}, {pout!r}")
        rate = self.max_failure_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            bad("max_failure_rate", rate, "a number from 0 to 1 (a share of the items)")
        if not (isinstance(self.batch_discount, (int, float)) and 0 <= self.batch_discount < 1):
            bad("batch_discount", self.batch_discount, "a number from 0 to below 1")
        if self.max_cost_usd is not None and (self.price_in_per_mtok is None or self.price_out_per_mtok is None):
            raise GlotbenchError("--max-cost needs --price-in and --price-out (USD per million tokens): "
                                 "the cost is counted from the reported token usage")
        if self.max_cost_usd is not None and self.batch:
            raise GlotbenchError("--max-cost and --batch cannot be combined: a batch is submitted, and "
                                 "billed, as a whole; estimate it first with --dry-run --batch")


_OPTION_NAMES = {"timeout_s": "--timeout", "price_in_per_mtok": "--price-in", "price_out_per_mtok": "--price-out",
                 "bootstrap_resamples": "--resamples", "max_failure_rate": "--max-failure-rate",
                 "max_cost_usd": "--max-cost", "batch_poll_s": "--batch-poll"}


def model_options(options: RunOptions) -> dict[str, Any]:
    """What the model backend is built with (`--concurrency auto` sizes its pool to the ceiling)."""
    opts: dict[str, Any] = {"timeout_s": options.timeout_s}
    if options.concurrency == "auto":
        opts["concurrency"] = options.max_concurrency
    elif options.concurrency is not None:
        opts["concurrency"] = options.concurrency
    if options.api_key_env is not None:
        opts["api_key_env"] = options.api_key_env
    return opts


def generation_config(bench: Benchmark, options: RunOptions) -> GenerateConfig:
    d = bench.default_config
    return GenerateConfig(
        temperature=d.temperature if options.temperature is None else options.temperature,
        max_tokens=d.max_tokens if options.max_tokens is None else options.max_tokens,
        seed=options.seed if options.seed is not None else d.seed,
        stop=tuple(dict.fromkeys(d.stop + tuple(options.stop))),
        structured_output=options.structured_output,
        thinking=options.thinking,
    )
