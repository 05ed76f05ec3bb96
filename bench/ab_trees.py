"""A/B of glotbench source trees on one warm server, interleaved, against the bare aiohttp loop.

Each trial runs `bench/bare_loop.py`, then for each tree (its `src` first on PYTHONPATH) a first
`glotbench run vi-diacritics` of N distinct items and the same command again on its warm cache, as
`bench/runner_overhead.py` does; it prints each trial's ratios and, at the end, medians (min–max),
and whether the trees' scores are identical. A tree is a checkout, e.g. `git worktree add /tmp/before
HEAD~1`.

    python bench/ab_trees.py TREE[,TREE...] [--trials 7] [--requests 2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import runner_overhead as R  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees")
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--requests", type=int, default=2000)
    a = ap.parse_args()
    trees = a.trees.split(",")
    server, port = R.start_server(0.1)
    url = f"http://127.0.0.1:{port}/v1"
    res = {t: {"wall": [], "cpu": [], "ccpu": []} for t in trees}
    bare: dict[str, list[float]] = {"wall": [], "cpu": []}
    base_env = dict(R.CHILD_ENV)

    def env(tree: str) -> dict[str, str]:
        return {**base_env, "PYTHONPATH": str(Path(tree) / "src")}

    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            data, bodies, answers = R.make_data(t, a.requests, "ab")
            R.control(port, {"answers": answers, "record": False})
            for k, tree in enumerate(trees):  # bytecode written, the identifier unpacked: once per machine
                R.CHILD_ENV.clear()
                R.CHILD_ENV.update(env(tree))
                subprocess.run([sys.executable, "-m", "glotbench", "list"], env=env(tree), capture_output=True)
                R.measured([sys.executable, "-m", "glotbench", "run", "vi-diacritics", "--data", str(data), "--limit",
                            "50", "--model", f"openai:bench@{url}", "--no-progress", "--cache-path",
                            str(t / f"warm{k}.sqlite"), "--out", str(t / f"warm{k}")])
            for trial in range(a.trials):
                R.CHILD_ENV.clear()
                R.CHILD_ENV.update(base_env)
                w, c, _, _ = R.measured([sys.executable, str(HERE / "bare_loop.py"), str(bodies),
                                         f"{url}/chat/completions", "64"])
                bare["wall"].append(w)
                bare["cpu"].append(c)
                for k, tree in enumerate(trees):
                    R.CHILD_ENV.clear()
                    R.CHILD_ENV.update(env(tree))
                    common = [sys.executable, "-m", "glotbench", "run", "vi-diacritics", "--data", str(data), "--model",
                              f"openai:bench@{url}", "--concurrency", "64", "--cache-path",
                              str(t / f"c{trial}-{k}.sqlite"), "--no-progress"]
                    w2, c2, _, _ = R.measured([*common, "--out", str(t / f"a{trial}-{k}")])
                    _, c3, _, _ = R.measured([*common, "--out", str(t / f"b{trial}-{k}")])
                    r = res[tree]
                    r["wall"].append(w2)
                    r["cpu"].append(c2)
                    r["ccpu"].append(c3)
                print(json.dumps({"trial": trial, **{tr: [round(res[tr]["wall"][-1] / w, 3),
                                                          round(res[tr]["cpu"][-1] / c, 2)] for tr in trees}}), flush=True)
            scores = [json.loads((t / f"a0-{k}" / "results.json").read_text())["scores"] for k in range(len(trees))]
            print("scores identical:", all(s == scores[0] for s in scores))
    finally:
        server.terminate()
        server.wait()

    def span(v: list[float], d: int) -> str:
        return f"{statistics.median(v):.{d}f} ({min(v):.{d}f}–{max(v):.{d}f})"

    print(f"bare loop: wall s {span(bare['wall'], 3)}, CPU s {span(bare['cpu'], 3)}")
    for tree in trees:
        r = res[tree]
        print(f"{tree}: wall / raw {span([x / y for x, y in zip(r['wall'], bare['wall'])], 3)}, "
              f"CPU / raw {span([x / y for x, y in zip(r['cpu'], bare['cpu'])], 2)}, CPU s {span(r['cpu'], 3)}, "
              f"cached CPU s {span(r['ccpu'], 3)}")


if __name__ == "__main__":
    main()
