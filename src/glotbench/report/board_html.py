"""The board as one self-contained HTML page: the table with marks, a CI plot per column, the
score–cost frontier with its Pareto front, and a per-group heatmap."""

from __future__ import annotations

from html import escape
from typing import Any

from glotbench.report.arena_rank import board_html as arena_board_html
from glotbench.report.board import display_names, floor_text, legend
from glotbench.report.checks_board import board_sections
from glotbench.report.page import page
from glotbench.report.svg import Point, Row, ci_plot, heat_color, num, scatter
from glotbench.report.terminal import few_mark, interval_text, n_text


def _src(cell: dict[str, Any], head: str, part: str) -> str:
    return f"{cell['path']}/results.json#{cell.get('json_path') or f'/scores/overall/{head}'}/{part}"


def _gsrc(path: str, key: str, value: str, head: str) -> str:
    esc = lambda x: str(x).replace("~", "~0").replace("/", "~1")  # noqa: E731
    return f"{path}/results.json#/scores/groups/{esc(key)}/{esc(value)}/{esc(head)}/value"


def _heat_cell(e: dict[str, Any], lo: float, hi: float, f: float, src: str) -> str:
    if e["value"] is None:
        return f'<td style="{heat_color(None, lo, hi)}">—</td>'
    title = f' title="{escape(interval_text(e, "fraction" if f == 100 else "points"))} (95% CI)"'
    return (f'<td style="{heat_color(e["value"], lo, hi)}"{title} data-group-n="{escape(n_text(e))}"'
            f' data-few="{str(bool(e.get("too_few_units"))).lower()}">{num(e["value"], src, factor=f)}</td>')


def cluster_span(cell: dict[str, Any]) -> str:
    """`‡488`: the cell's interval resampled 488 clusters; the clustered SE in its title."""
    from glotbench.report.clusters import MARK

    if not cell.get("clusters"):
        return ""
    se = cell.get("se_clustered")
    title = f' title="interval over {cell["clusters"]} clusters' + (
        f'; analytic clustered SE {se:.4g}, design effect {cell.get("design_effect") or float("nan"):.2f}"' if se is not None else '"')
    return f'<span class="note" data-clusters="{cell["clusters"]}"{title}>{MARK}{cell["clusters"]}</span>'


def _table(models: list[str], cols: list[dict[str, Any]], name: dict[str, str], table_id: str) -> str:
    head = [f"<table id=\"{escape(table_id)}\"><tr><th>model</th>" + "".join(
        f'<th title="{escape(c["signature"])}">{escape(c["benchmark"])}<br><span class="note">{escape(c["label"])}'
        f' · {escape(c["item_set"])}{escape(floor_text(c))}</span></th>'
        for c in cols) + "</tr>"]
    for m in models:
        tds = []
        for c in cols:
            x = c["cells"].get(m)
            if not x or x["value"] is None:
                tds.append("<td>—" + "".join(f'<span class="cellnote">{escape(t)}</span>' for t in (x or {}).get("notes") or ())
                           + "</td>")
                continue
            f = 100.0 if c["scale"] == "fraction" else 1.0
            cls = "sig-best tie" if x["best"] else "tie" if x.get("tied_with_best") else ""
            mark = " ★" if x["best"] else " ≈" if x.get("tied_with_best") else ""
            p = (f' title="p vs best = {x["p_vs_best"]:.3f}, adjusted {x.get("p_vs_best_adjusted", x["p_vs_best"]):.3f} '
                 f'on {x["shared_items"]} shared items" data-p="{x["p_vs_best"]:.6g}" '
                 f'data-p-adjusted="{x.get("p_vs_best_adjusted", x["p_vs_best"]):.6g}"' if "p_vs_best" in x else "")
            ci = (f' <span class="ci">({num(x["ci_low"], _src(x, c["headline"], "ci_low"), factor=f)}–'
                  f'{num(x["ci_high"], _src(x, c["headline"], "ci_high"), factor=f)}){few_mark(x)}</span>'
                  if x["ci_low"] is not None else "")
            n = f' <span class="note" data-n="{x["n"]}">n={escape(str(x["n"]))}</span>' if x.get("n") is not None else ""
            n += cluster_span(x)  # n=900‡488: the parts of report/terminal.py `interval_text`
            notes = "".join(f'<span class="cellnote">{escape(t)}</span>' for t in x.get("notes") or ())
            tds.append(f'<td class="{cls}" data-model="{escape(m)}" data-bench="{escape(c["benchmark"])}"'
                       f' data-mark="{"best" if x["best"] else "tied" if x.get("tied_with_best") else "worse"}"'
                       f' data-valid="{str(x.get("valid", True)).lower()}"{p}>'
                       f'{num(x["value"], _src(x, c["headline"], "value"), factor=f)}{ci}{mark}{n}{notes}</td>')
        head.append(f'<tr><td title="{escape(m)}">{escape(name[m])}</td>{"".join(tds)}</tr>')
    return "".join(head) + "</table>"


def _pivot_html(board: dict[str, Any]) -> str:
    """One table per language (models x tasks), each with its columns' signatures."""
    name = display_names(board["models"])
    sections = []
    for t in board["tables"]:
        sigs = "".join(f'<div class="sig">{escape(c["benchmark"])}: {escape(c["signature"])}</div>' for c in t["columns"])
        from glotbench.report.card import card_html

        sections.append((f"lang-{t['language']}", f"{t['name']} ({t['language']})",
                         _table(t["models"], t["columns"], name, f"board-{t['language']}") + sigs
                         + (card_html(t["card"]) if t.get("card") else "")))
    sections.append(("legend", "Reading the tables",
                     f'<p class="note">{escape(legend(board))}; ★ best, ≈ not significantly different.</p>'))
    if board["left_out"]:
        sections.append(("left-out", "Left out", '<ul id="left-out-list">' + "".join(
            f'<li><code>{escape(x["path"])}</code>: {escape(x["reason"])}</li>' for x in board["left_out"]) + "</ul>"))
    langs = ", ".join(t["name"] for t in board["tables"])
    hdr = (f"<h1>glotbench board by language</h1><p class=\"note\">{len(board['models'])} models · "
           f"{len(board['tables'])} languages ({escape(langs)}) · {escape(board['significance']['test'])} against each "
           "column's best</p>")
    return page("glotbench board by language", hdr, sections)


def board_html(board: dict[str, Any]) -> str:
    if board.get("pivot"):
        return _pivot_html(board)
    cols, models = board["columns"], board["models"]
    name = display_names(models)
    table = _table(models, cols, name, "board") + \
        f'<p class="note">{escape(legend(board))}; ★ best, ≈ not significantly different.</p>'
    sections = [("board", "Models × benchmarks", table)]
    plots = []
    for c in cols:
        f = 100.0 if c["scale"] == "fraction" else 1.0
        rows = [Row(name[m], x["value"], x["ci_low"], x["ci_high"],
                    n=n_text(x),
                    few=bool(x.get("too_few_units"))) for m, x in c["cells"].items()]
        plots.append(f'<h3>{escape(c["benchmark"])} · {escape(c["label"])}</h3>{ci_plot(rows, factor=f, unit="%" if f == 100 else "")}'
                     f'<div class="sig">{escape(c["signature"])}</div>')
    sections.append(("scores", "Scores with 95% CIs", "".join(plots)))
    fr = []
    for c in cols:
        if not c["frontier"]:
            fr.append(f'<p class="note">{escape(c["benchmark"])}: fewer than two runs with a cost, token count or time.</p>')
            continue
        F = c["frontier"]
        pts = [Point(name[m], p["x"], p["y"], c["cells"][m]["ci_low"], c["cells"][m]["ci_high"]) for m, p in F["points"].items()]
        fr.append(f'<h3>{escape(c["benchmark"])}: {escape(c["label"])} against {escape(F["x"])}</h3>'
                  + scatter(pts, [name[m] for m in F["front"]], xlabel=F["x"], ylabel=c["label"], factor=100.0 if c["scale"] == "fraction" else 1.0)
                  + f'<p id="front-{escape(c["benchmark"])}">Pareto front (no other run is both cheaper and better): '
                  + ", ".join(f'<b class="front-model" data-model="{escape(m)}">{escape(name[m])}</b>' for m in F["front"]) + "</p>")
    sections.append(("frontier", "Score against cost", "".join(fr)))
    heat = []
    for c in cols:
        for key, vals in c["groups"].items():
            allv = [e["value"] for per in vals.values() for e in per.values() if e["value"] is not None]
            lo, hi = (min(allv), max(allv)) if allv else (0, 1)
            f = 100.0 if c["scale"] == "fraction" else 1.0
            body = "".join(f'<tr><td title="{escape(m)}">{escape(name[m])}</td>' + "".join(
                _heat_cell(per[m], lo, hi, f, _gsrc(c["cells"][m]["path"], key, v, c["headline"]))
                for v, per in vals.items()) + "</tr>" for m in c["cells"])
            heat.append(f'<h3>{escape(c["benchmark"])} · {escape(c["label"])} by {escape(key)}</h3><table class="heatmap">'
                        "<tr><th>model</th>" + "".join(f"<th>{escape(v + floor_text(c, key, v))}</th>" for v in vals) + f"</tr>{body}</table>")
    if heat:
        sections.append(("groups", "By group", "".join(heat)))
    sections += board_sections(board, name)  # the runs' checks (report/checks_board.py)
    if board.get("arena_ranking"):
        sections.append(("arena-ranking", "Arena ranking (Bradley–Terry)", arena_board_html(board["arena_ranking"])))
    if board["left_out"]:
        sections.append(("left-out", "Left out", '<ul id="left-out-list">' + "".join(
            f'<li><code>{escape(x["path"])}</code>: {escape(x["reason"])}</li>' for x in board["left_out"]) + "</ul>"))
    title = "glotbench board"
    hdr = (f"<h1>{title}</h1><p class=\"note\">{len(models)} models · {len(cols)} benchmarks · "
           f"{escape(board['significance']['test'])} against each column's best</p>")
    return page(title, hdr, sections)
