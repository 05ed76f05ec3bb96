"""What the run directory's typed records cost a run (glotbench/rundir/schema.py).

1. Defining them, in a fresh process with pydantic and glotbench.data already imported (as a
   `glotbench run` has them): the TypedDicts as shipped, against the same records written as pydantic
   models (schema.py's text with each `TypedDict` class made a `BaseModel`, every optional key, and
   each `NotRequired` one, given a default of None). CPU time, median of `--trials` processes.
2. Writing a samples.jsonl line: `json_bytes(row)` alone, against validating the row through its
   record first (`TypeAdapter(SampleRecord)`), per line, over the lines of a real run's samples.jsonl
   (tests/fixtures/rundir_golden), and the validation's first-use cost (the adapter's schema build).

    python bench/rundir_records.py [--trials 9]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "src" / "glotbench" / "rundir" / "schema.py"
ROWS = ROOT / "tests" / "fixtures" / "rundir_golden"

CHILD = r"""
import sys, time
import pydantic, glotbench.data
from pydantic import BaseModel
sys.path.insert(0, {folder!r})
t = time.process_time()
import {module}
print(time.process_time() - t)
"""


def as_models(source: str) -> str:
    """schema.py's records as pydantic models: `class X(TypedDict, total=False)` → `class X(_Record)`
    (a BaseModel with the records' config), an optional key `= None`, `Required[T]` → `T`,
    `NotRequired[T]` → `T = None`."""
    out = ["from pydantic import BaseModel as _BaseModel"]
    total, in_doc = True, False
    for line in source.splitlines():
        if line.count('"""') == 1:
            in_doc = not in_doc
        m = re.match(r"class (\w+)\((\w+)(, total=False)?\):", line)
        if m and not in_doc:
            total = not m.group(3)
            base = "_Record" if m.group(2) == "TypedDict" else m.group(2)
            out.append(f"class {m.group(1)}({base}):")
            continue
        if line.startswith("@with_config"):
            continue
        f = re.match(r"    (\w+): (.+?)(  #.*)?$", line)
        if f and not in_doc and '"""' not in line:
            typ = f.group(2)
            required = typ.startswith("Required[")
            optional = typ.startswith("NotRequired[")
            typ = typ[len("Required["):-1] if required else typ[len("NotRequired["):-1] if optional else typ
            line = f"    {f.group(1)}: {typ}" + ("" if (total and not optional) or required else " = None")
        out.append(line)
        if line.startswith("_OPEN = "):
            out.append("\n\nclass _Record(_BaseModel):\n    model_config = _OPEN")
    return "\n".join(out)


def define_cost(trials: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "records_as_models.py").write_text(as_models(SCHEMA.read_text(encoding="utf-8")), encoding="utf-8")
        times: dict[str, list[float]] = {"typeddicts": [], "pydantic_models": []}
        for _ in range(trials):
            for name, module in (("typeddicts", "glotbench.rundir.schema"), ("pydantic_models", "records_as_models")):
                out = subprocess.run([sys.executable, "-c", CHILD.format(folder=tmp, module=module)],
                                     capture_output=True, text=True, check=True)
                times[name].append(float(out.stdout.strip().splitlines()[-1]))
    return {k: round(statistics.median(v) * 1000, 2) for k, v in times.items()}


def row_cost() -> dict[str, float]:
    from pydantic import TypeAdapter

    from glotbench.rundir.files import json_bytes
    from glotbench.rundir.schema import SampleRecord

    rows = [json.loads(line) for f in sorted(ROWS.glob("*/samples.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]
    rows = (rows * (2000 // len(rows) + 1))[:2000]
    t = time.perf_counter()
    adapter = TypeAdapter(SampleRecord)
    build = time.perf_counter() - t
    t = time.perf_counter()
    for r in rows:
        json_bytes(r)
    encode = (time.perf_counter() - t) / len(rows)
    t = time.perf_counter()
    for r in rows:
        json_bytes(adapter.validate_python(r))
    both = (time.perf_counter() - t) / len(rows)
    return {"rows": len(rows), "encode_us": round(encode * 1e6, 2), "validate_and_encode_us": round(both * 1e6, 2),
            "adapter_build_ms": round(build * 1000, 2),
            "validation_per_2000_rows_ms": round((both - encode) * 2000 * 1000, 1)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=9)
    a = ap.parse_args()
    print(json.dumps({"define_cpu_ms": define_cost(a.trials), "samples_jsonl_line": row_cost()}))
