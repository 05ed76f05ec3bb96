"""Peak memory of a log-likelihood Belebele run on the embedded model (issue 32).

Writes Belebele-layout rows (the Lao fixture's passages, questions and options, each passage
repeated to about `--passage-chars` characters, as long as a real Belebele passage), then runs
`glotbench run belebele --model local --bench-opt prompt=lm-eval` (method loglik) for each item
count and shot count asked, each in its own process under `/usr/bin/time -v`, at the default
concurrency, without the call cache. Prints the peak RSS, the wall time and the load average.

The embedded model must be converted already (run any `glotbench run ... --model local` once with
the same GLOTBENCH_CACHE_DIR): the figure is the run's, not the conversion's.

    GLOTBENCH_CACHE_DIR=/tmp/gbcache python bench/loglik_memory.py [--items 12 24] [--shots 0 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "tasks" / "belebele_lao_Laoo.jsonl"


def rows(n: int, passage_chars: int) -> list[dict]:
    base = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for i in range(n):
        r = dict(base[i % len(base)])
        p = r["flores_passage"]
        r["flores_passage"] = " ".join([p] * max(1, passage_chars // (len(p) + 1)))
        r["link"] = f"{r['link']}-{i // len(base)}"  # distinct passages: every item its own prompt
        out.append(r)
    return out


def run_one(data: Path, shots: int, out: Path) -> dict:
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "glotbench", "run", "belebele", "--model", "local",
           "--data", str(data), "--bench-opt", "config=lao_Laoo", "--bench-opt", "prompt=lm-eval",
           "--bench-opt", f"shots={shots}", "--no-cache", "--out", str(out)]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return {"rc": proc.returncode, "peak_rss_gb": int(rss.group(1)) / 1024 ** 2 if rss else None,
            "wall_s": round(wall, 1), "load": (round(load0, 1), round(os.getloadavg()[0], 1)),
            "tail": proc.stderr.strip().splitlines()[-25:-23] if proc.returncode else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, nargs="+", default=[12, 24])
    ap.add_argument("--shots", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--passage-chars", type=int, default=700)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print("| items | shots | peak RSS | wall | load average (start, end) |")
        print("|---|---|---|---|---|")
        for n in args.items:
            data = Path(tmp) / f"belebele-{n}.jsonl"
            data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows(n, args.passage_chars)),
                            encoding="utf-8")
            for shots in args.shots:
                r = run_one(data, shots, Path(tmp) / f"run-{n}-{shots}")
                rss = f"{r['peak_rss_gb']:.2f} GB" if r["peak_rss_gb"] is not None else "?"
                fail = "" if r["rc"] == 0 else f" (exit {r['rc']}: {r['tail']})"
                print(f"| {n} | {shots} | {rss}{fail} | {r['wall_s']} s | {r['load'][0]}, {r['load'][1]} |", flush=True)


if __name__ == "__main__":
    main()
