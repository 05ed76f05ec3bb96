"""`replay:FILE.jsonl`: outputs produced elsewhere, one `{"id": ..., "output": ...}` per line.

Items with no line in the file fail with a typed `missing` error; they are reported, never dropped,
and the run's results say how many items the file covers (`coverage`). A duplicate id (with the same
repeat), an id that is not in the benchmark's data, and a file that covers none of the run's items
are errors. An optional `"repeat"` field (default 0) replays several repeats of one item.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, Sequence

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
        self._lines: dict[tuple[str, int], int] = {}
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
            rep = rec.get("repeat", 0)
            if isinstance(rep, bool) or not isinstance(rep, int) or rep < 0:
                raise DataError(f"{self.path}:{n}: field 'repeat' must be a whole number >= 0")
            key = (str(rec["id"]), rep)
            if key in self.outputs:
                raise DataError(f"{self.path}:{n}: duplicate id {key[0]!r}" + (f" (repeat {rep})" if rep else "")
                                + f" (first on line {self._lines[key]})")
            self.outputs[key] = out
            self._lines[key] = n
        self.seen: set[str] = set()

    def coverage(self, data_ids: Sequence[str], run_ids: Sequence[str], repeats: int) -> dict[str, Any]:
        """How many of the run's (item, repeat) pairs the file answers. Ids not in the data are an
        error (a replay of another dataset, or of edited ids), and so is a file covering nothing."""
        known = set(data_ids)
        unknown = sorted({i for i, _ in self.outputs if i not in known})
        if unknown:
            shown = ", ".join(repr(i) for i in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise DataError(f"{self.path}: {len(unknown)} id(s) not in the benchmark's data: {shown}")
        wanted = [(i, r) for i in run_ids for r in range(repeats)]
        covered = sum(k in self.outputs for k in wanted)
        if wanted and covered == 0:
            raise DataError(f"{self.path}: no output for any of the run's {len(wanted)} item(s)"
                            + (f" (repeats 0-{repeats - 1})" if repeats > 1 else ""))
        return {"source": str(self.path), "expected": len(wanted), "with_output": covered,
                "missing": len(wanted) - covered}

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
