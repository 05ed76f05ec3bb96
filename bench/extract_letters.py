"""Option-letter extraction speed: `glotbench.extract.mc_letter` over replies in five languages,
short (one sentence) and long (a ~1,500-character chain of thought before the answer).

    python bench/extract_letters.py [--replies 20000] [--runs 5]

The replies are built here from fixed templates, so the run needs no data and is identical everywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

SHORT = ["Câu trả lời là B", "Dựa vào đoạn văn, đáp án là A", "The answer is: C", "คำตอบคือ ข",
         "ຄຳຕອບ: D ເພາະວ່າ ຄຳຕອບ A ບໍ່ຖືກ", "Jawaban: B karena pilihan A salah", "I think it's Pakse"]
REASONING = ("Let us look at each option in turn. Option A mentions the river, option B the mountain, "
             "and the passage says the town lies on the plain beside the water. ")


def replies(n: int) -> list[str]:
    out = []
    for i in range(n):
        s = SHORT[i % len(SHORT)]
        out.append(s if i % 2 else "<think>" + REASONING * 8 + "</think>" + REASONING * 4 + s)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replies", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from glotbench.extract import mc_letter

    texts = replies(args.replies)
    options = {"A": "Vientiane", "B": "Pakse", "C": "Luang Prabang", "D": "Savannakhet"}
    mc_letter(texts[0], options)  # compile the patterns once
    out = {}
    for rule in ("answer_phrase", "first_standalone"):
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            for t in texts:
                mc_letter(t, options, rule=rule)
            times.append((time.perf_counter() - t0) / len(texts) * 1e6)
        out[rule] = {"us_per_reply_median": round(statistics.median(times), 1),
                     "range": [round(min(times), 1), round(max(times), 1)]}
    print(json.dumps({"replies": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts)), **out}))


if __name__ == "__main__":
    main()
