"""The model interface every backend implements, and the typed objects it exchanges."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Protocol, runtime_checkable

# What a benchmark renders and a model receives live below the models (glotbench.core), named here too.
from glotbench.core import GenerateConfig as GenerateConfig
from glotbench.core import LoglikEncoding as LoglikEncoding
from glotbench.core import Message as Message
from glotbench.core import Prompt as Prompt


INVALID_UNICODE = "invalid_unicode"  # the sample flag of a reply whose text had to be repaired


def safe_text(text: str) -> tuple[str, int]:
    """`text` as a string every writer can encode, and how many code points were replaced.

    A reply is user data, and JSON lets it carry what no UTF-8 can: a lone surrogate (`"\\ud800"`).
    Surrogate pairs are joined into their character (`"\\ud83d\\ude00"` is one emoji); a lone half
    becomes U+FFFD. Any other string (NUL, control characters, any length) is returned as it is."""
    try:
        text.encode("utf-8")
        return text, 0
    except UnicodeEncodeError:
        fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return fixed, fixed.count("\ufffd") - text.count("\ufffd")  # a joined pair replaces nothing


def safe_data(value: Any) -> Any:
    """`value` (JSON-like data: mappings, lists, strings) with every string made safe (`safe_text`)."""
    if isinstance(value, str):
        return safe_text(value)[0]
    if isinstance(value, Mapping):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_data(v) for v in value]
    return value


# What `Response.latency_s` measures unless a backend's description() says otherwise ("latency"):
# batched local backends give each item a share of its batch (models/batching.py BATCH_LATENCY).
REQUEST_LATENCY = "per item: from sending its request to its reply (the last try, when retried)"
# The log-likelihood method's (engine/runner.py `_loglik_latency`): the time from a request alone
# counted the wait behind every request in flight (111-182 s an item, the whole phase), so each item's
# time starts at its request or at the previous reply, whichever came later.
LOGLIK_LATENCY = ("per item: from its request, or from the previous reply when that came later, to its "
                  "log-probabilities; the items' times add up to the request phase (requests computed "
                  "together give their shared time to the first to finish)")


ErrorKind = Literal[
    "rate_limited", "server_error", "timeout", "connection", "bad_response", "client_error", "auth"
]


class ModelError(Exception):
    """A typed failure of one model call. `retryable` decides whether the runner tries again."""

    kind: ErrorKind = "client_error"
    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(safe_text(str(message))[0])  # an endpoint's error text is user data too
        self.status = status
        self.retry_after = retry_after


class RateLimited(ModelError):
    kind = "rate_limited"
    retryable = True


class ServerError(ModelError):
    kind = "server_error"
    retryable = True


class ModelTimeout(ModelError):
    kind = "timeout"
    retryable = True


class ConnectionFailed(ModelError):
    kind = "connection"
    retryable = True


class BadResponse(ModelError):
    """A 200 reply whose body is not what the API promises (malformed JSON, missing fields)."""

    kind = "bad_response"
    retryable = True


class RejectedReply(BadResponse):
    """A reply the model did give, rejected by a validator (a malformed judge verdict): retried like
    a malformed body, but a failure of the model's output, not of the call, so it never makes a run
    invalid (rundir/validity.py)."""

    model_output = True


class ClientError(ModelError):
    kind = "client_error"


class AuthError(ModelError):
    kind = "auth"


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Response:
    """One model reply. `finish_reason == "length"` means the token limit cut it.

    Made safe where it is made, whatever backend makes it: text no writer could encode (a lone
    surrogate) is repaired (`safe_text`) and `replaced_chars` counts what was replaced, so the run
    records and flags it (`INVALID_UNICODE`) instead of stopping at the first writer."""

    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    structured_output: str | None = None  # "json_schema" or "prompt" when structured output was asked
    raw: Mapping[str, Any] | None = None
    replaced_chars: int = 0  # code points of the reply replaced by U+FFFD (see safe_text)

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            text, n = safe_text(self.text)
            if n:
                object.__setattr__(self, "text", text)
                object.__setattr__(self, "replaced_chars", self.replaced_chars + n)
        if isinstance(self.finish_reason, str):
            object.__setattr__(self, "finish_reason", safe_text(self.finish_reason)[0])
        if self.raw is not None:
            object.__setattr__(self, "raw", safe_data(self.raw))

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "usage": {"prompt_tokens": self.usage.prompt_tokens,
                      "completion_tokens": self.usage.completion_tokens},
            "latency_s": self.latency_s,
            "structured_output": self.structured_output,
            "raw": self.raw,
            **({"replaced_chars": self.replaced_chars} if self.replaced_chars else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Response":
        u = d.get("usage") or {}
        return cls(
            text=d["text"],
            finish_reason=d.get("finish_reason"),
            usage=Usage(int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)),
            latency_s=float(d.get("latency_s") or 0.0),
            structured_output=d.get("structured_output"),
            raw=d.get("raw"),
            replaced_chars=int(d.get("replaced_chars") or 0),
        )


@runtime_checkable
class Model(Protocol):
    """A model backend. `spec` is the string it was built from; `cache_id` identifies the model and
    endpoint for the call cache; `description()` is written into every result."""

    spec: str
    cache_id: str
    default_concurrency: int

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response: ...

    def prompt_form(self) -> Literal["chat", "text"]: ...

    def description(self) -> dict[str, Any]: ...

    async def check(self) -> None:
        """Fail fast with a GlotbenchError when the model cannot be used at all (no key, no server)."""

    async def aclose(self) -> None: ...


class ModelBase:
    """A base class for backends: only `generate` is required. `spec` is the spec string; the
    defaults are a chat prompt form, 8 concurrent calls, the spec as cache id and description, no
    readiness check and nothing to close."""

    default_concurrency: int = 8

    def __init__(self, rest: str = "", *, spec: str | None = None, concurrency: int | None = None,
                 timeout_s: float | None = None, **_: Any):
        self.rest = rest  # what follows `SCHEME:` in the spec
        self.spec = spec or rest
        self.cache_id = self.spec
        self.timeout_s = timeout_s
        if concurrency is not None:
            self.default_concurrency = concurrency

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response:
        raise NotImplementedError

    def prompt_form(self) -> Literal["chat", "text"]:
        return "chat"

    def description(self) -> dict[str, Any]:
        return {"model": self.spec}

    async def check(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
