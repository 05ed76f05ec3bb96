"""Run directories written by a known glotbench, kept as fixtures (tests/fixtures/rundir_golden/), and
the same runs made again by the code under test (tests/test_rundir.py): every field of run.json,
results.json and samples.jsonl must come out the same, in the same order and of the same JSON type,
apart from what differs between any two runs (times, the test server's port, package versions).

The scenarios cover each section results.json may hold: a `--limit` selection, a named subset with
repeats and a benchmark's own facts (`extra_results`), a run the cost cap stopped, `--concurrency
auto`, a batch, an invalid run (failed calls), a re-run from the cache.

Regenerate the fixtures (only when a change to the files is intended, and say so in the commit):
    PYTHONPATH=src python tests/golden_runs.py tests/fixtures/rundir_golden
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

FILES = ("run.json", "results.json", "samples.jsonl")

# What differs between two runs of the same command (replaced by a placeholder before comparing).
VOLATILE = {
    ("started",), ("finished",), ("argv",), ("versions",), ("timing", "run_s"), ("timing", "samples_per_s"),
    ("timing", "request_phase_s"), ("latency_s",), ("batch", "batches"), ("batch", "input_file"),
    ("concurrency", "peak"), ("concurrency", "settled"), ("concurrency", "requests"),
    ("concurrency", "decreases"), ("concurrency", "rejected"), ("concurrency", "rejected_rate"),
    ("batch", "polls"),
}
PORT = re.compile(r"127\.0\.0\.1:\d+")


def scenarios(spec: str, configure: Callable[..., None]) -> dict[str, tuple[Callable[[], None], str, dict[str, Any]]]:
    """name -> (server set-up, benchmark, RunOptions keywords); every run has its own fresh cache
    except `cached`, which re-reads `limit`'s."""
    plain = lambda: configure()  # noqa: E731
    prices = {"price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0}
    return {
        "limit": (plain, "vi-diacritics", {"limit": 6, "concurrency": 1, **prices}),
        "cached": (plain, "vi-diacritics", {"limit": 6, "concurrency": 1, "cache": "limit", **prices}),
        "subset": (lambda: configure(answers={"A.": "ຄຳຕອບ: A"}), "laobench-mcq", {"subset": "quick", "repeats": 2, "concurrency": 2}),
        "stopped": (plain, "vi-diacritics", {"limit": 12, "concurrency": 1, "max_tokens": 40,
                                             "price_in_per_mtok": 1000.0, "price_out_per_mtok": 1000.0,
                                             "max_cost_usd": 0.5}),
        "auto": (plain, "vi-diacritics", {"limit": 5, "concurrency": "auto", "max_concurrency": 4}),
        "batch": (plain, "vi-diacritics", {"limit": 4, "batch": True, "batch_poll_s": 0.05, **prices}),
        "invalid": (lambda: configure(faults=[{"match": "nh", "status": 500, "times": 99}]),
                    "vi-diacritics", {"limit": 8, "concurrency": 1, "max_retries": 0}),
        "tones": (plain, "vi-tone-errors", {"limit": 5, "concurrency": 1, "temperature": 0, "seed": 3}),
    }


def make_runs(root: Path, spec: str, configure: Callable[..., None]) -> dict[str, Path]:
    """Every scenario's run directory under `root` (made fresh)."""
    from glotbench.engine.evaluate import RunOptions, evaluate
    from glotbench.errors import GlotbenchError

    out: dict[str, Path] = {}
    for name, (setup, bench, kw) in scenarios(spec, configure).items():
        setup()
        kw = dict(kw)
        cache = root / "cache" / f"{kw.pop('cache', name)}.sqlite"
        cache.parent.mkdir(parents=True, exist_ok=True)
        try:
            evaluate(bench, spec, RunOptions(out=str(root / name), cache_path=str(cache), progress=False, **kw))
        except GlotbenchError:
            pass  # an invalid or stopped run raises after writing everything
        out[name] = root / name
    configure()
    return out


def flatten(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str, Any]]:
    """(path, JSON type, value) of every leaf, in the file's order (key order counts)."""
    if isinstance(value, dict):
        rows: list[tuple[tuple[Any, ...], str, Any]] = [(path, "object", list(value))]
        for k, v in value.items():
            rows += flatten(v, path + (k,))
        return rows
    if isinstance(value, list):
        rows = [(path, "array", len(value))]
        for i, v in enumerate(value):
            rows += flatten(v, path + (i,))
        return rows
    return [(path, type(value).__name__, value)]


def normalised(doc: Any) -> Any:
    """`doc` with the volatile fields replaced by their JSON type and the port taken out of URLs."""
    def walk(v: Any, path: tuple[str, ...]) -> Any:
        if path in VOLATILE or path[-1:] in {("latency_s",), ("started",), ("finished",), ("argv",)}:
            return f"<{type(v).__name__}>"
        if isinstance(v, dict):
            return {k: walk(x, path + (k,)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, path) for x in v]
        return PORT.sub("127.0.0.1:PORT", v) if isinstance(v, str) else v
    return walk(doc, ())


def read_run(run_dir: Path) -> dict[str, Any]:
    """The three files as JSON (samples.jsonl: a list of rows), normalised."""
    docs: dict[str, Any] = {}
    for name in FILES:
        text = (run_dir / name).read_text(encoding="utf-8")
        raw = [json.loads(line) for line in text.splitlines()] if name.endswith(".jsonl") else json.loads(text)
        docs[name] = normalised(raw)
    return docs


def differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Each field whose path, type or value differs (the first 20), for a readable failure."""
    out: list[str] = []
    for name in FILES:
        a, b = flatten(expected[name]), flatten(got[name])
        for x, y in zip(a, b):
            if x != y:
                out.append(f"{name}: expected {x}, got {y}")
        if len(a) != len(b):
            out.append(f"{name}: {len(a)} fields expected, {len(b)} written")
    return out[:20]


if __name__ == "__main__":
    import shutil
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from conftest import start_server

    dest = Path(sys.argv[1])
    srv = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runs = make_runs(Path(tmp), srv.spec(), srv.configure)
            if dest.exists():
                shutil.rmtree(dest)
            for name, d in runs.items():
                (dest / name).mkdir(parents=True)
                for f in FILES:
                    shutil.copy(d / f, dest / name / f)
    finally:
        srv.proc.terminate()
        srv.proc.wait(10)
    print(f"wrote {len(runs)} run directories under {dest}")
