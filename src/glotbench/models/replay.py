"""`replay:FILE.jsonl`: outputs produced elsewhere, one `{"id": ..., "output": ...}` per line.

Items with no line in the file fail with a typed `missing` error; they are reported, never dropped.
An optional `"repeat"` field (default 0) replays several repeats of one item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from glotbench.data import ItemId, Row, read_rows
from glotbench.errors import DataError
from glotbench.loading import sha256_file
from glotbench.models.base import GenerateConfig, ModelError, Prompt, Response


class ReplayRow(Row):
    """One line of a replay file."""

    id: ItemId
    output: str
    repeat: Annotated[int, Field(ge=0)] = 0


class MissingOutput(ModelError):
    kind = "missing"  # type: ignore[assignment]


class ReplayModel:
    default_concurrency = 64

    def __init__(self, path: str, *, spec: str | None = None, **_: Any):
        self.path = Path(path)
        self.spec = spec or f"replay:{path}"
        self.outputs: dict[tuple[str, int], str] = {}
        if not self.path.is_file():
            raise DataError(f"replay file not found: {self.path}")
        self.sha256 = sha256_file(self.path)
        # The file's hash is part of the cache id: editing the file invalidates cached replays.
        self.cache_id = f"replay:{self.sha256}"
        for _, row in read_rows(self.path, ReplayRow, fmt="jsonl"):
            self.outputs[(row.id, row.repeat)] = row.output
        self.seen: set[str] = set()

    def prompt_form(self) -> Literal["chat", "text"]:
        return "chat"

    def description(self) -> dict[str, Any]:
        return {"backend": "replay", "file": str(self.path), "sha256": self.sha256,
                "outputs": len(self.outputs)}

    async def check(self) -> None:
        return None

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "",
                       repeat: int = 0) -> Response:
        out = self.outputs.get((item_id, repeat))
        if out is None:
            raise MissingOutput(f"no output for id {item_id!r} (repeat {repeat}) in {self.path}")
        return Response(text=out, finish_reason="stop")

    async def aclose(self) -> None:
        return None
