"""`--max-cost USD`: stop issuing requests before the spent cost would pass a cap.

The spent cost is what the endpoint reports (usage counts × `--price-in`/`--price-out`) for the
requests this invocation sent; cached replies cost nothing, so the same command run again resumes
and spends up to the cap anew. With many requests in flight the cap is kept by reservation: before a
request is sent, its worst case — the prompt's upper token estimate (engine/estimate.py; exact for
local tokenizers) plus its `max_tokens` — is reserved, and the request is sent only if
`spent + reserved + worst case <= cap`. When a reply comes back its real cost is spent and its
reservation released. Once one request does not fit, none is sent any more (a cheaper one would make
the stop depend on item order), the units left are counted as `not_sent`, and the run is recorded as
stopped.

The bound: spent <= cap, provided each request's billed prompt tokens stay within its reserved
estimate. That holds exactly for `hf:`/`local` models; for remote models the estimate's upper band
(the worst tokenizer measured for the prompt's script) is used, raised to the largest ratio of
billed to estimated prompt tokens seen so far in the run, so a model whose tokenizer is worse than
every measured one is caught after its first reply: it can overshoot by at most the in-flight
requests' excess at that moment. Failed attempts are taken as unbilled (providers do not bill
rejected requests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from glotbench.models.base import Usage

from glotbench.core import GenerateConfig, Prompt
from glotbench.rundir.schema import Stopped

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark


def price(prompt_tokens: float, completion_tokens: float, price_in: float, price_out: float,
          discount: float = 0.0) -> float:
    """USD for token counts at prices per million tokens, less a discount (0.5: half price)."""
    return (prompt_tokens * price_in + completion_tokens * price_out) / 1e6 * (1.0 - discount)


@dataclass
class CostCap:
    """The reservation ledger of one run (single event loop: no locks needed)."""

    cap_usd: float
    price_in: float
    price_out: float
    counter: Any  # engine/estimate.py BundledTokenizer | ModelTokenizer
    form: str
    loglik: bool = False
    spent: float = 0.0
    reserved: float = 0.0
    stopped: Stopped | None = None
    correction: float = 1.0  # largest billed / estimated prompt tokens seen
    _estimates: dict[int, int] = field(default_factory=dict)

    def _prompt_tokens(self, prompt: Prompt, config: GenerateConfig) -> tuple[int, int]:
        c = self.counter.count(prompt, self.form, config, self.loglik)
        return c.point, max(c.high, int(c.point * self.correction + 0.999))

    def reserve(self, prompt: Prompt, config: GenerateConfig) -> float | None:
        """The worst case reserved for a request about to be sent, or None: do not send it."""
        if self.stopped is not None:
            return None
        point, high = self._prompt_tokens(prompt, config)
        worst = price(high, 0 if self.loglik else config.max_tokens, self.price_in, self.price_out)
        if self.spent + self.reserved + worst > self.cap_usd:
            self.stopped = {
                "reason": "max_cost", "cap_usd": self.cap_usd,
                "spent_usd_at_stop": round(self.spent, 6), "reserved_usd_at_stop": round(self.reserved, 6),
                "next_request_worst_case_usd": round(worst, 6),
                "message": self._stop_message(worst),
            }
            return None
        self.reserved += worst
        self._estimates[id(prompt)] = point
        return worst

    def _stop_message(self, worst: float) -> str:
        """What stopped the run and what to do. A request whose worst case alone is above the cap is
        never sent: the same command stops at it again, so the way on is a higher cap (at least that
        worst case). Otherwise the same command resumes (cached replies cost nothing) and may spend
        the cap again; a higher cap goes further in one go."""
        head = (f"stopped: the next request's worst case (${worst:.4f}) would take the spent ${self.spent:.4f} "
                f"(+${self.reserved:.4f} in flight) past --max-cost ${self.cap_usd:g}")
        if worst > self.cap_usd:
            return (f"{head}; that request alone can cost more than the cap, so the same command stops here again: "
                    f"raise --max-cost to at least ${math.ceil(worst * 1e4) / 1e4:.4f} (or lower --max-tokens)")
        return (f"{head}; raise --max-cost to go on in one go, or run the same command again to resume "
                f"(cached replies cost nothing; it may spend up to ${self.cap_usd:g} more)")

    def spend(self, prompt: Prompt, config: GenerateConfig, usage: Usage) -> None:
        """A reply came back: its real cost is spent; a prompt billed above its estimate raises
        later reservations."""
        self.spent += price(usage.prompt_tokens, usage.completion_tokens, self.price_in, self.price_out)
        point = self._estimates.pop(id(prompt), None)
        if point and usage.prompt_tokens > point:
            self.correction = max(self.correction, usage.prompt_tokens / point)

    def settle(self, prompt: Prompt, reserved: float) -> None:
        """The request is over (answered or failed): its reservation is released."""
        self._estimates.pop(id(prompt), None)
        self.reserved = max(0.0, self.reserved - reserved)

    def summary(self) -> dict[str, Any]:
        return {"max_cost_usd": self.cap_usd, "spent_usd": round(self.spent, 6),
                "prompt_estimate_correction": round(self.correction, 3)}


def cost_cap(options: Any, model: Any, bench: Benchmark) -> CostCap:
    """The cap of a run (`RunOptions.max_cost_usd`), counting prompts as the model is sent them."""
    from glotbench.engine.estimate import counter_for

    loglik = bench.method == "loglik"
    return CostCap(options.max_cost_usd, options.price_in_per_mtok or 0.0, options.price_out_per_mtok or 0.0,
                   counter_for(model), "text" if loglik else model.prompt_form(), loglik)


def cost_block(options: Any, c: Any, batch_info: dict[str, Any] | None, budget: CostCap | None) -> dict[str, Any] | None:
    """results.json's cost: the run's tokens at the given prices; `billed_now` is what this
    invocation's calls cost (batch replies at the batch discount), not the cached ones."""
    if options.price_in_per_mtok is None and options.price_out_per_mtok is None:
        return None
    pin, pout = options.price_in_per_mtok or 0.0, options.price_out_per_mtok or 0.0
    cost: dict[str, Any] = {
        "currency": "USD", "price_in_per_mtok": pin, "price_out_per_mtok": pout,
        "run": price(c.prompt_tokens, c.completion_tokens, pin, pout),
        "billed_now": price(c.new_prompt_tokens, c.new_completion_tokens, pin, pout),
    }
    if batch_info is not None:
        t = batch_info["tokens"]
        batch_usd = price(t["prompt"], t["completion"], pin, pout, options.batch_discount)
        cost.update(batch_discount=options.batch_discount, billed_now_batch=batch_usd)
        cost["billed_now"] += batch_usd
    if budget is not None:
        cost.update(budget.summary())
    return cost


@dataclass
class RunBudget:
    """A judged run's one `--max-cost` and each phase's prices. Its phases run one after another
    (answers, a baseline's, then each judge's), so each is given what the earlier ones left of the cap
    (`options`) and charged what it spent (`charge`): the whole run, every judge included, stays under
    the cap as one run does. A phase is priced at its own model's prices where they are known
    (`prices`: `--price-of SPEC=IN,OUT`, a sweep's model entry), else at the run's (`--price-in`,
    `--price-out`). Cached replies cost nothing, as in a plain run: the same command resumes."""

    cap_usd: float | None
    price_in: float | None  # the run's (the candidate's)
    price_out: float | None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, options: Any) -> "RunBudget":
        return cls(options.max_cost_usd, options.price_in_per_mtok, options.price_out_per_mtok,
                   {spec: (pin, pout) for spec, pin, pout in options.model_prices})

    @property
    def spent(self) -> float:
        return sum(p["spent_usd"] for p in self.phases.values())

    def left(self) -> float | None:
        """What is left of the cap (None: no cap)."""
        return None if self.cap_usd is None else max(0.0, self.cap_usd - self.spent)

    def price_of(self, spec: str, candidate: bool = False) -> tuple[float | None, float | None, bool]:
        """(price in, price out, whether they are the model's own) for a phase that calls `spec`."""
        if not candidate and spec in self.prices:
            return (*self.prices[spec], True)
        return self.price_in, self.price_out, candidate

    def options(self, options: Any, spec: str, candidate: bool = False) -> Any:
        """A phase's options (a plain run): its model's prices and what is left of the cap."""
        from dataclasses import replace

        pin, pout, _ = self.price_of(spec, candidate)
        return replace(options, price_in_per_mtok=pin, price_out_per_mtok=pout, max_cost_usd=self.left(), model_prices=())

    def charge(self, phase: str, spec: str, results: dict[str, Any], candidate: bool = False) -> None:
        """A phase has finished (or stopped): what it cost, from its results.json's cost block."""
        cost = results.get("cost") or {}
        _, _, own = self.price_of(spec, candidate)
        self.phases[phase] = {"model": spec, "price_in_per_mtok": cost.get("price_in_per_mtok"),
                              "price_out_per_mtok": cost.get("price_out_per_mtok"),
                              "prices": "own" if own or candidate else "the run's (--price-in/--price-out): none of its own given",
                              "run": cost.get("run", 0.0), "billed_now": cost.get("billed_now", 0.0),
                              "spent_usd": cost.get("spent_usd", cost.get("billed_now", 0.0))}

    def block(self) -> dict[str, Any] | None:
        """The whole judged run's cost (results.json `judged.cost`; its `cost` stays the candidate's
        answers', the board's cost of the model): every phase's, their sums and the cap; None when no
        phase had prices."""
        if not any(p["price_in_per_mtok"] is not None for p in self.phases.values()):
            return None
        return {"currency": "USD", "run": sum(p["run"] for p in self.phases.values()),
                "billed_now": sum(p["billed_now"] for p in self.phases.values()),
                "spent_usd": round(self.spent, 6), "max_cost_usd": self.cap_usd, "phases": dict(self.phases)}

    def stop_text(self) -> str:
        """What the cap was spent on, for the error line of the phase it stopped."""
        spent = ", ".join(f"{name} ${p['spent_usd']:.4f}" for name, p in self.phases.items())
        return f"--max-cost ${self.cap_usd:g} is one budget for every phase: spent {spent}"
