"""Bootstrap speed: 1,000 resamples of corpus chrF++ over 10,000 segment pairs, glotbench against
sacrebleu's own `corpus_score(..., n_bootstrap=1000)`, timed in the same run; plus Lao segmentation
throughput.

    python bench/bootstrap.py [--segments 10000] [--resamples 1000]

The segments are synthetic (a fixed-seed generator over a small vocabulary with word drops and
swaps), so the run needs no data download and is identical everywhere.
"""

from __future__ import annotations

import argparse
import json
import random
import time


def make_corpus(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    vocab = ("the model reads low resource languages and writes answers that people check every day "
             "while scores move slowly across many small test sets, so care matters here").split()
    hyps, refs = [], []
    for _ in range(n):
        ref = [rng.choice(vocab) for _ in range(rng.randint(5, 30))]
        hyp = [w for w in ref if rng.random() > 0.15]
        if len(hyp) > 2 and rng.random() < 0.3:
            i = rng.randrange(len(hyp) - 1)
            hyp[i], hyp[i + 1] = hyp[i + 1], hyp[i]
        hyps.append(" ".join(hyp) + (rng.choice([".", ",", "!"]) if rng.random() < 0.5 else ""))
        refs.append(" ".join(ref) + ".")
    return hyps, refs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=10_000)
    ap.add_argument("--resamples", type=int, default=1000)
    a = ap.parse_args()
    from sacrebleu.metrics import CHRF

    from glotbench.metrics.corpus import SacreMetric
    from glotbench.text.segment import segment

    hyps, refs = make_corpus(a.segments)

    t0 = time.perf_counter()
    sb = CHRF(word_order=2).corpus_score(hyps, [refs], n_bootstrap=a.resamples)
    t_sb = time.perf_counter() - t0
    t0 = time.perf_counter()
    plain = CHRF(word_order=2).corpus_score(hyps, [refs]).score
    t_plain = time.perf_counter() - t0

    metric = SacreMetric("chrf++")
    t0 = time.perf_counter()
    stats = metric.stats(hyps, [[r] for r in refs])  # what a glotbench run stores per sample
    t_stats = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = metric.score_stats(stats, resamples=a.resamples)
    t_boot = time.perf_counter() - t0
    sb_lo, sb_hi = float(sb._mean - sb._ci), float(sb._mean + sb._ci)

    lao = ("ພາສາລາວເປັນພາສາທາງການຂອງສາທາລະນະລັດປະຊາທິປະໄຕປະຊາຊົນລາວ ນ້ຳຂອງໄຫຼຜ່ານນະຄອນຫຼວງວຽງຈັນ "
           "ນັກຮຽນໄປໂຮງຮຽນທຸກມື້ ") * 200
    segment(lao[:200], "lo")  # load the dictionary before timing
    t0 = time.perf_counter()
    words = segment(lao, "lo")
    t_lao = time.perf_counter() - t0

    print(json.dumps({
        "segments": a.segments, "resamples": a.resamples,
        "sacrebleu_corpus_score_n_bootstrap_s": round(t_sb, 3),
        "sacrebleu_corpus_score_plain_s": round(t_plain, 3),
        "sacrebleu_bootstrap_part_s": round(t_sb - t_plain, 3),
        "glotbench_statistics_extraction_s": round(t_stats, 3),
        "glotbench_score_and_ci_from_stats_s": round(t_boot, 3),
        "speedup_vs_sacrebleu_call": round(t_sb / t_boot, 1),
        "speedup_vs_sacrebleu_bootstrap_part": round((t_sb - t_plain) / t_boot, 1),
        "speedup_end_to_end_from_text": round(t_sb / (t_stats + t_boot), 2),
        "point_sacrebleu": plain, "point_glotbench": ours.estimate.value,
        "point_equal": plain == ours.estimate.value,
        "ci_sacrebleu_mean_pm": [round(sb_lo, 4), round(sb_hi, 4)],
        "ci_glotbench_percentile": [round(ours.estimate.ci_low, 4), round(ours.estimate.ci_high, 4)],
        "lao_chars": len(lao), "lao_words": len(words),
        "lao_chars_per_s": round(len(lao) / t_lao),
    }, indent=2))


if __name__ == "__main__":
    main()
