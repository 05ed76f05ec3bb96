"""Lexical dedupe at scale: time and peak memory of `find_duplicates` on 10k..100k synthetic items.

Items are random sentences over a 5,000-word vocabulary (half of them word-based, half Lao-like
character strings without spaces, 20 to 40 units each); 5% are planted near-duplicates (one unit
changed) of earlier items. Each size runs in a fresh process so peak RSS is its own. CPU time
(process_time) is reported beside wall time: on a shared machine it is the steadier measure.

    python bench/dedupe_scale.py            # 10k, 30k, 100k
    python bench/dedupe_scale.py 10000 50000
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time


def make(n: int, seed: int = 0):
    from glotbench.build.common import Candidate

    rnd = random.Random(seed)
    vocab = [f"w{k}" for k in range(5000)]
    lao = [chr(c) for c in range(0x0E81, 0x0EAE) if chr(c).isalpha()]
    out, truth = [], 0
    for i in range(n):
        if i > 10 and rnd.random() < 0.05:
            src = out[rnd.randrange(len(out))].text
            if " " in src:
                w = src.split()
                w[rnd.randrange(len(w))] = rnd.choice(vocab)
                text = " ".join(w)
            else:
                k = rnd.randrange(len(src))
                text = src[:k] + rnd.choice(lao) + src[k + 1:]
            truth += 1
        elif i % 2:
            text = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(20, 40)))
        else:
            text = "".join(rnd.choice(lao) for _ in range(rnd.randint(40, 80)))
        out.append(Candidate("synthetic", i, str(i), text, {}))
    return out, truth


def one(n: int) -> dict:
    from glotbench.build.dedupe import DedupeOptions, find_duplicates

    cands, planted = make(n)
    t0, c0 = time.perf_counter(), time.process_time()
    res = find_duplicates(cands, DedupeOptions())
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    found = sum(len(g) - 1 for g in res.clusters)
    return {"items": n, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "items_per_s": round(n / wall),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "planted": planted, "duplicates_found": found}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]))))
        return
    sizes = [int(x) for x in sys.argv[1:]] or [10_000, 30_000, 100_000]
    rows = []
    for n in sizes:
        r = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, check=True)
        rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    base = rows[0]
    for r in rows[1:]:
        print(f"{base['items']} -> {r['items']} items (x{r['items'] / base['items']:.1f}): "
              f"time x{r['seconds'] / base['seconds']:.2f}, CPU time x{r['cpu_seconds'] / base['cpu_seconds']:.2f}, peak RSS x{r['peak_rss_mib'] / base['peak_rss_mib']:.2f}")


if __name__ == "__main__":
    main()
