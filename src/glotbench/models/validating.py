"""A model wrapper that rejects replies failing a validator (e.g. a malformed judge verdict).

The rejection is a retryable `RejectedReply` (a `BadResponse` of the model's output), so the runner asks again with backoff; a reply that
never validates ends as a `bad_response` failure. Rejected replies are never cached.
"""

from __future__ import annotations

from typing import Any, Callable, Literal

from glotbench.models.base import GenerateConfig, Model, Prompt, RejectedReply, Response


class ValidatingModel:
    def __init__(self, inner: Model, validate: Callable[[str, Prompt], None], what: str = "reply"):
        self.inner = inner
        self.validate = validate
        self.what = what
        self.spec = inner.spec
        self.cache_id = inner.cache_id
        self.default_concurrency = inner.default_concurrency

    def prompt_form(self) -> Literal["chat", "text"]:
        return self.inner.prompt_form()

    def description(self) -> dict[str, Any]:
        return self.inner.description()

    async def check(self) -> None:
        await self.inner.check()

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response:
        resp = await self.inner.generate(prompt, config, item_id=item_id, repeat=repeat)
        try:
            self.validate(resp.text, prompt)
        except ValueError as e:
            raise RejectedReply(f"malformed {self.what}: {e}") from None
        return resp

    async def aclose(self) -> None:
        await self.inner.aclose()
