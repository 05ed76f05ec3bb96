"""`glotbench board --bt DIR...`: arena candidates ranked by Bradley–Terry, without a fixed anchor.

Each arena directory holds one candidate's games against its baseline, per judge and prompt (the
two orders averaged: win 1, tie 1/2, loss 0; the arena's summary, `per_prompt`). Arenas whose baselines are
other candidates (A vs B, B vs C) or a shared baseline are fitted together (stats/bt.py): one fit
per judge, and the mean of the judges' centred ratings; 95% percentile CIs from a bootstrap over
prompts (the same resample for every judge). With `style=True` the answers' length and markdown
counts enter as covariates (Arena-Hard-Auto's style control) and the style-controlled ratings are
reported beside the raw ones. The arenas must share the prompt set and the judge prompt; every
judge's games must connect all the models. The win rate against the baseline stays in each arena's
own report; here each model's BT-predicted win rate against the most common baseline is added.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.report.terminal import FEW_MARK, interval_text
from glotbench.stats import DEFAULT_SEED, MIN_ARENA_PROMPTS

METHOD = ("Bradley–Terry (logistic model as Arena-Hard-Auto: win 1, tie a half win, loss 0; the two orders "
          "averaged per prompt), ratings on the Elo scale centred on the mean model (1000), per judge and the "
          "mean of the judges' ratings; 95% percentile bootstrap over prompts")


TIED = 1e-6  # Elo points: ratings closer than this are equal (the fit converges far below it)


def arena_dirs(paths: list[str]) -> list[Path]:
    """The arenas `paths` name (`rundata.judged_dirs`: a folder, the arenas under it)."""
    from glotbench.report.rundata import judged_dirs

    return judged_dirs(paths, "arena")


def _read(dirs: list[str]) -> list[dict[str, Any]]:
    from glotbench.runfiles import ArenaFile, read_judged

    runs = []
    for d in map(str, arena_dirs(dirs)):  # a folder: the arenas under it
        r = read_judged(d, "arena", ArenaFile, "a finished arena")
        r["_dir"] = d
        runs.append(r)
    if len(runs) < 1:
        raise GlotbenchError("give one or more arena directories")
    for key, what in (("data_sha256", "prompt sets"), ("judge_prompt_hash", "judge prompts")):
        seen = {r.get(key) for r in runs}
        if len(seen) > 1:
            raise GlotbenchError(f"the arenas use different {what} ({key}: {', '.join(sorted(map(str, seen)))}); "
                                 "ratings from them share no scale")
    return runs


def _answers(d: str, role: str) -> dict[str, str]:
    from glotbench.rundir import SAMPLES, sample_outputs

    if not (Path(d) / role / SAMPLES).is_file():
        raise GlotbenchError(f"{d}: no {role}/samples.jsonl: style control needs the arena's answers")
    return sample_outputs(Path(d) / role)


def rank_arenas(dirs: list[str], *, style: bool = False, resamples: int = 1000, seed: int = DEFAULT_SEED,
                confidence: float = 0.95) -> dict[str, Any]:
    import numpy as np

    from glotbench.stats import bt

    if resamples < 0:
        raise GlotbenchError(f"--resamples must be 0 or more, got {resamples}")
    runs = _read(dirs)
    models = list(dict.fromkeys(m for r in runs for m in (r["candidate"], r["baseline"])))
    if len(models) < 2:
        raise GlotbenchError("the arenas hold one model only")
    idx = {m: k for k, m in enumerate(models)}
    baseline = Counter(r["baseline"] for r in runs).most_common(1)[0][0]
    anchor = idx[baseline]
    prompts = sorted({p for r in runs for vals in r["per_prompt"].values() for p in vals})
    pidx = {p: k for k, p in enumerate(prompts)}
    judges = sorted({j for r in runs for j in r["per_prompt"]})
    styles: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    if style:
        for r in runs:
            ca, ba = _answers(r["_dir"], "candidate"), _answers(r["_dir"], "baseline")
            styles[r["_dir"]] = ({p: bt.style_counts(ca.get(p, "")) for p in prompts},
                                 {p: bt.style_counts(ba.get(p, "")) for p in prompts})
    games: dict[str, dict[str, Any]] = {}
    for j in judges:
        pairs, y, at, sa, sb = [], [], [], [], []
        for r in runs:
            for p, v in (r["per_prompt"].get(j) or {}).items():
                pairs.append((idx[r["candidate"]], idx[r["baseline"]]))
                y.append(float(v))
                at.append(pidx[p])
                if style:
                    sa.append(styles[r["_dir"]][0][p])
                    sb.append(styles[r["_dir"]][1][p])
        g: dict[str, Any] = {"pairs": np.array(pairs, dtype=np.int64).reshape(-1, 2), "y": np.array(y), "prompt": np.array(at, dtype=np.int64)}
        if style and pairs:
            g["X"], g["features"] = bt.style_features(sa, sb)
        games[j] = g
    left_out = {j: "its games do not connect every model" for j, g in games.items()
                if not len(g["y"]) or not bt.connected(g["pairs"], len(models))}
    used = [j for j in judges if j not in left_out]
    if not used:
        raise GlotbenchError("no judge's games connect every model: " + "; ".join(f"{j}: {w}" for j, w in left_out.items()))

    def fits(weights: np.ndarray | None, with_style: bool, start: dict[str, Any] | None) -> dict[str, Any]:
        out = {}
        for j in used:
            g = games[j]
            w = None if weights is None else weights[g["prompt"]]
            cov = g.get("X") if with_style else None
            out[j] = bt.fit(g["pairs"], g["y"], len(models), weights=w, covariates=cov, anchor=anchor,
                            start=None if start is None else bt.theta_of(start[j], anchor))
        return out

    def summary(with_style: bool) -> dict[str, Any]:
        point = fits(None, with_style, None)
        elo = {j: bt.elo(f.beta) for j, f in point.items()}
        draws: dict[str, list[np.ndarray]] = {j: [] for j in [*used, "mean"]}
        rng = np.random.default_rng(seed)
        for _ in range(resamples):
            w = np.bincount(rng.integers(0, len(prompts), len(prompts)), minlength=len(prompts)).astype(np.float64)
            b = fits(w, with_style, point)
            for j, f in b.items():
                draws[j].append(bt.elo(f.beta))
            draws["mean"].append(np.mean([bt.elo(f.beta) for f in b.values()], axis=0))
        a = (1 - confidence) / 2

        def block(values: np.ndarray, samples: list[np.ndarray]) -> dict[str, Any]:
            lo = hi = [None] * len(models)
            if samples:
                s = np.vstack(samples)
                lo, hi = np.quantile(s, a, axis=0).tolist(), np.quantile(s, 1 - a, axis=0).tolist()
            order = sorted(range(len(models)), key=lambda k: -values[k])
            # Equal ratings share a rank (1, 1, 3): an order among tied models is the input order, not a finding.
            rank = {k: 1 + sum(bool(values[i] > values[k] + TIED) for i in range(len(models))) for k in order}
            base = values[anchor]
            # n: the prompts the interval resamples; † below MIN_ARENA_PROMPTS (its measured coverage, bench/bt_coverage.py)
            few = {"too_few_units": True} if samples and len(prompts) < MIN_ARENA_PROMPTS else {}
            return {"ratings": {models[k]: {"rating": float(values[k]), "ci_low": lo[k], "ci_high": hi[k], "rank": rank[k],
                                            "n": len(prompts), **few,
                                            "win_rate_vs_baseline": float(1 / (1 + 10 ** ((base - values[k]) / 400)))}
                                for k in range(len(models))},
                    "ranking": [models[k] for k in order]}

        per_judge = {}
        for j in used:
            g = games[j]
            per_judge[j] = {**block(elo[j], draws[j]), "games": int(len(g["y"])), "all_ties": bool(np.all(g["y"] == 0.5)),
                            "separated": [models[k] for k, s in enumerate(bt.separated(g["pairs"], g["y"], len(models))) if s]}
            if with_style:
                per_judge[j]["style_coefficients"] = dict(zip(g["features"], point[j].gamma.tolist()))
        mean = block(np.mean([elo[j] for j in used], axis=0), draws["mean"])
        return {"judges": per_judge, "mean_of_judges": mean}

    out: dict[str, Any] = {"models": models, "baseline": baseline, "arenas": [r["_dir"] for r in runs],
                           "prompts": len(prompts), "judges_left_out": left_out, **summary(False),
                           "method": METHOD, "resamples": resamples, "seed": seed, "confidence": confidence}
    if style:
        out["style_control"] = {**summary(True), "features": list(bt.STYLE),
                                "method": "the same fit with per-game covariates (a − b) / (a + b) of answer length "
                                          "(characters) and markdown headers, list items and bold spans (code "
                                          "blocks removed), scaled to unit root mean square (not centred); coefficients on the log-odds scale"}
    return out


def rating_text(e: dict[str, Any], *, n: bool = True) -> str:
    """A rating as every arena view prints it, through `interval_text`: `1032 (1010–1055)† n=40`
    (Elo points; † below MIN_ARENA_PROMPTS prompts; n the prompts resampled)."""
    return interval_text({**e, "value": e["rating"]}, "elo", n=n)


def few_note(res: dict[str, Any]) -> str | None:
    """The † line of a ranking whose intervals rest on too few prompts, else None."""
    if not any(e.get("too_few_units") for e in res["mean_of_judges"]["ratings"].values()):
        return None
    return (f"{FEW_MARK} fewer than {MIN_ARENA_PROMPTS} prompts: the bootstrap interval's measured coverage is under "
            "93% (docs/metrics.md, Arena ratings)")


def rank_text(res: dict[str, Any]) -> str:
    """The ranking as a text table: mean of judges, each judge, and the style-controlled ratings."""
    def fmt(e: dict[str, Any]) -> str:
        return rating_text(e, n=False)  # the prompts (n) are in the title line, the same for every cell

    blocks = [("mean of judges", res["mean_of_judges"]), *res["judges"].items()]
    sc = res.get("style_control")
    lines = [f"Bradley–Terry ratings over {res['prompts']} prompts, {len(res['arenas'])} arenas "
             f"(Elo scale, mean model 1000; 95% CI over prompts; win rate vs {res['baseline']} from the fit)", ""]
    head = ["rank", "model", *(name.split("@")[0] for name, _ in blocks), "P(win) vs baseline"] + (
        ["style-controlled"] if sc else [])
    rows = [head]
    for m in res["mean_of_judges"]["ranking"]:
        e = res["mean_of_judges"]["ratings"][m]
        row = [str(e["rank"]), m.split("@")[0], *(fmt(b["ratings"][m]) for _, b in blocks),
               f"{100 * e['win_rate_vs_baseline']:.0f}%"]
        if sc:
            row.append(fmt(sc["mean_of_judges"]["ratings"][m]))
        rows.append(row)
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    for j, b in res["judges"].items():
        if b["separated"]:
            lines.append(f"{j.split('@')[0]}: won or lost every game (rating unbounded, held by the ridge): "
                         + ", ".join(b["separated"]))
    for j, b in res["judges"].items():
        if b.get("all_ties"):
            lines.append(f"{j.split('@')[0]}: every game a tie (or split between the two orders): equal ratings, "
                         "shared ranks, and no spread for the bootstrap to show")
    for j, why in res["judges_left_out"].items():
        lines.append(f"left out: {j}: {why}")
    if sc:
        coefs = {j: ", ".join(f"{k} {v:+.2f}" for k, v in b["style_coefficients"].items()) for j, b in sc["judges"].items()}
        lines.append("style coefficients (log-odds per unit of the scaled difference): "
                     + "; ".join(f"{j.split('@')[0]}: {c or 'none varied'}" for j, c in coefs.items()))
    if note := few_note(res):
        lines.append(note)
    lines.append(f"method: {res['method']}")
    return "\n".join(lines)


def board_section(paths: list[str], *, resamples: int = 1000, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """The board's arena rankings: the arena directories under `paths`, ranked together where they
    share the prompt set and the judge prompt (one ranking per such group); a group that cannot be
    ranked (one model, games that do not connect) says why."""
    from glotbench.report.rundata import judged_kind
    from glotbench.runfiles import ArenaFile, read_judged

    found = [d for d in arena_dirs(paths) if judged_kind(d) == "arena"]
    from glotbench.rundir.validity import notes

    groups: dict[tuple[str, str], list[str]] = {}
    texts: dict[tuple[str, str], dict[str, None]] = {}
    for d in dict.fromkeys(found):
        try:
            a = read_judged(d, "arena", ArenaFile, "a finished arena")
        except GlotbenchError:
            continue  # the board lists it among the judged runs left out
        key = (str(a.get("data_sha256")), str(a.get("judge_prompt_hash")))
        groups.setdefault(key, []).append(str(d))
        texts.setdefault(key, {}).update(dict.fromkeys(notes(a)))  # invalid phases, judges not validated
    out = []
    for key, dirs in groups.items():
        try:
            out.append({"arenas": dirs, "notes": list(texts[key]), "ranking": rank_arenas(dirs, resamples=resamples, seed=seed)})
        except GlotbenchError as e:
            out.append({"arenas": dirs, "notes": list(texts[key]), "error": str(e)})
    return out


def board_markdown(section: list[dict[str, Any]]) -> str:
    """The board's arena rankings in Markdown ("" without arenas)."""
    if not section:
        return ""
    lines = ["", "Arena ranking (Bradley–Terry, no fixed anchor):"]
    for g in section:
        if "error" in g:
            lines += ["", f"- {', '.join(g['arenas'])}: not ranked: {g['error']}"]
            continue
        r = g["ranking"]
        lines += ["", "| rank | model | rating (95% CI) | P(win) vs baseline |", "|---:|---|---:|---:|"]
        for m in r["mean_of_judges"]["ranking"]:
            e = r["mean_of_judges"]["ratings"][m]
            lines.append(f"| {e['rank']} | {m} | {rating_text(e)} | {100 * e['win_rate_vs_baseline']:.0f}% |")
        lines.append(f"\nmean of {len(r['judges'])} judge(s) over {r['prompts']} prompts; baseline {r['baseline']}; "
                     f"{r['method']}")
        if note := few_note(r):
            lines.append(f"\n{note}")
        lines += [f"- {t}" for t in g.get("notes") or ()]
    return "\n".join(lines) + "\n"


def board_html(section: list[dict[str, Any]]) -> str:
    """The board's arena rankings as an HTML section body ("" without arenas)."""
    from html import escape

    if not section:
        return ""
    parts = []
    for g in section:
        if "error" in g:
            parts.append(f'<p class="note">{escape(", ".join(g["arenas"]))}: not ranked: {escape(g["error"])}</p>')
            continue
        r = g["ranking"]
        rows = "".join(
            f'<tr data-model="{escape(m)}"><td>{e["rank"]}</td><td>{escape(m)}</td><td>{escape(rating_text(e))}'
            + f'</td><td>{100 * e["win_rate_vs_baseline"]:.0f}%</td></tr>'
            for m in r["mean_of_judges"]["ranking"] for e in [r["mean_of_judges"]["ratings"][m]])
        note = few_note(r)
        parts.append('<table class="arena-rank"><tr><th>rank</th><th>model</th><th>rating (95% CI)</th>'
                     f'<th>P(win) vs baseline</th></tr>{rows}</table>'
                     f'<p class="note">mean of {len(r["judges"])} judge(s) over {r["prompts"]} prompts; baseline '
                     f'{escape(r["baseline"])}; {escape(r["method"])}</p>'
                     + (f'<p class="note few">{escape(note)}</p>' if note else ""))
        parts += [f'<p class="cellnote arena-note">{escape(t)}</p>' for t in g.get("notes") or ()]
    return "".join(parts)
