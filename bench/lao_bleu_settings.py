"""BLEU over LaoNLP segmentation: tokenize `none` (default) vs `13a`, with the installed LaoNLP.

Scores the bundled LaoBench sample's Lao-target rows (en-lo, zh-lo) and a few sentences with
abbreviations (ກ.ພ., ກ.ຍ., ມ.ກ.), each against a hand-written hypothesis. Run it once per LaoNLP
version (e.g. in an environment made with `pip install -e ".[laonlp07]"`) and compare:

    PYTHONPATH=src python bench/lao_bleu_settings.py
"""

from __future__ import annotations

from glotbench.benchmarks.laobench import LaoBenchTranslation
from glotbench.metrics.corpus import SacreMetric
from glotbench.text.segment import segment

# Hypotheses written for this measurement, keyed by the sample row's id.
SAMPLE_HYPS = {"sample-029": "ຂອບໃຈຫຼາຍໆ", "sample-030": "ຂ້ອຍຮັກລາວ.", "sample-033": "ຂອບໃຈທ່ານ."}
ABBREVIATIONS = [  # (hypothesis, reference)
    ("ກອງປະຊຸມຈະຈັດຂຶ້ນວັນທີ 15 ກ.ພ. 2025 ຢູ່ນະຄອນຫຼວງວຽງຈັນ.",
     "ກອງປະຊຸມຈະຈັດຂຶ້ນໃນວັນທີ 15 ກ.ພ. 2025 ທີ່ນະຄອນຫຼວງວຽງຈັນ."),
    ("ໂຮງຮຽນເປີດຄືນໃນເດືອນ ກ.ຍ. ທຸກໆປີ.", "ໂຮງຮຽນເປີດຄືນໃນເດືອນ ກ.ຍ. ຂອງທຸກໆປີ."),
    ("ລາຄານ້ຳມັນເພີ່ມຂຶ້ນ 5% ຕັ້ງແຕ່ ມ.ກ. ເປັນຕົ້ນມາ.", "ລາຄານ້ຳມັນເພີ່ມຂຶ້ນ 5% ນັບແຕ່ ມ.ກ. ເປັນຕົ້ນມາ."),
]


def main() -> None:
    items = {it.id: it for it in LaoBenchTranslation().load()}
    sets = {
        "sample (en-lo, zh-lo)": [(SAMPLE_HYPS[i], items[i].gold["reference"]) for i in SAMPLE_HYPS],
        "abbreviations": ABBREVIATIONS,
    }
    sets["both"] = sets["sample (en-lo, zh-lo)"] + ABBREVIATIONS
    for name, pairs in sets.items():
        hyps, refs = [h for h, _ in pairs], [[r] for _, r in pairs]
        row = []
        for tok in ("none", "13a"):
            m = SacreMetric("bleu", "lo", tokenize=tok)
            row.append(f"tok={tok}: {m.corpus_score(hyps, refs, resamples=0).estimate.value:.1f}")
        print(f"{name:24s} " + "  ".join(row))
    print("signature:", SacreMetric("bleu", "lo").corpus_score(["ກ"], [["ກ"]], resamples=0).signature)
    print("segmented:", " | ".join(" ".join(segment(r, "lo")) for _, r in ABBREVIATIONS[:1]))


if __name__ == "__main__":
    main()
