"""`replay:FILE.jsonl`: outputs produced elsewhere, one `{"id": ..., "output": ...}` per line.

Items with no line in the file fail with a typed `missing` error; they are reported, never dropped,
and the run's results say how many items the file covers (`coverage`). A duplicate id (with the same
repeat), an id that is not in the benchmark's data, and a file that covers none of the run's items
are errors. An optional `"repeat"` field (default 0) replays several repeats of one item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Sequence

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
        self._lines: dict[tuple[str, int], str] = {}  # the row's line, as read_rows names it
        if not str(path).strip():
            raise DataError("model spec 'replay:' names no file: use replay:FILE.jsonl")
        if self.path.is_dir():
            raise DataError(f"replay file {self.path} is a directory: use replay:FILE.jsonl")
        if not self.path.is_file():
            raise DataError(f"replay file not found: {self.path}")
        self.sha256 = sha256_file(self.path)
        # The file's hash is part of the cache id: editing the file invalidates cached replays.
        self.cache_id = f"replay:{self.sha256}"
        for line, row in read_rows(self.path, ReplayRow, fmt="jsonl"):
            key = (row.id, row.repeat)
            if key in self.outputs:
                raise DataError(f"{self.path}:{line}: duplicate id {row.id!r}"
                                + (f" (repeat {row.repeat})" if row.repeat else "")
                                + f" (first on line {self._lines[key]})")
            self.outputs[key] = row.output
            self._lines[key] = line
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
