"""`replay:FILE.jsonl`: outputs produced elsewhere, one `{"id": ..., "output": ...}` per line.

Items with no line in the file fail with a typed `missing` error; they are reported, never dropped.
An optional `"repeat"` field (default 0) replays several repeats of one item.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from glotbench.errors import DataError
from glotbench.models.base import GenerateConfig, ModelError, Prompt, Response


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
        raw = self.path.read_bytes()
        self.sha256 = hashlib.sha256(raw).hexdigest()
        # The file's hash is part of the cache id: editing the file invalidates cached replays.
        self.cache_id = f"replay:{self.sha256}"
        for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise DataError(f"{self.path}:{n}: not valid JSON ({e.msg})") from None
            if not isinstance(rec, dict) or "id" not in rec:
                raise DataError(f"{self.path}:{n}: missing field 'id'")
            out = rec.get("output")
            if not isinstance(out, str):
                raise DataError(f"{self.path}:{n}: field 'output' must be a string")
            self.outputs[(str(rec["id"]), int(rec.get("repeat", 0)))] = out
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
