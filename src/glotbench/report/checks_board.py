"""The board's views of the runs' checks (results.json `checks`, docs/checks.md).

Per column, for each model: the parser's range (the headline if every unread reply were wrong /
right), the share of answers in the wrong language or script, and (circular runs) the share of items
whose answer follows a position. A cell whose parser range contains the score of the model ranked
next to it (above or below), or whose score lies in that model's range, gets a note: the parser
alone could swap the two. Across columns, the token premium per language of each model.
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping, Sequence


def column_checks(cells: dict[str, dict[str, Any]], runs: Sequence[Any]) -> dict[str, Any]:
    """The column's check figures per model; notes added to the cells whose parser range overlaps a
    neighbour's score."""
    per: dict[str, dict[str, Any]] = {}
    for r in runs:
        c = r.results.get("checks") or {}
        x = c.get("extraction") or {}
        lang = c.get("language") or {}
        row: dict[str, Any] = {}
        if x.get("upper") is not None:
            row["parser_range"] = [x["lower"], x["upper"]]
            row["unread_share"] = x["unread_share"]
            row["lenient"] = x.get("lenient")
        if lang.get("checked"):
            row["wrong_language_rate"] = lang["wrong_rate"]
        pos = (r.results["scores"]["overall"].get("follows_position") or {}).get("value")
        if pos is not None:
            row["follows_position"] = pos
        per[r.model] = row
    ranked = sorted((m for m, c in cells.items() if c.get("value") is not None), key=lambda m: -cells[m]["value"])
    for above, below in zip(ranked, ranked[1:]):
        for me, other in ((above, below), (below, above)):
            lo_hi = per.get(me, {}).get("parser_range")
            if lo_hi and lo_hi[0] <= cells[other]["value"] <= lo_hi[1]:
                per[me].setdefault("parser_overlaps", []).append(other)
    for m, row in per.items():
        if row.get("parser_overlaps") and m in cells:
            cells[m]["notes"] = [*cells[m].get("notes", []),
                                 "parser range overlaps " + ", ".join(row["parser_overlaps"])]
            cells[m]["parser_overlap"] = True
    return {"models": per} if any(per.values()) else {}


def token_premium(board: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """model -> language -> completion tokens per character, over every column's runs (the usage counts)."""
    out: dict[str, dict[str, list[float]]] = {}
    for col in board["columns"]:
        for model, tok in (col.get("tokens") or {}).items():
            for lang, r in tok.items():
                if r.get("tokens_per_char") is not None:
                    out.setdefault(model, {}).setdefault(lang, []).append(r["tokens_per_char"])
    return {m: {lang: sum(v) / len(v) for lang, v in langs.items()} for m, langs in out.items()}


def column_tokens(runs: Sequence[Any]) -> dict[str, Any]:
    return {r.model: ((r.results.get("checks") or {}).get("tokens") or {}).get("usage") or {} for r in runs}


def board_sections(board: Mapping[str, Any], name: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """The board page's checks: per column the parser ranges, wrong-language rates and position
    following; the token premium per model and language."""
    parts = []
    for col in board["columns"]:
        per = (col.get("checks") or {}).get("models") or {}
        if not any(per.values()):
            continue
        f = 100.0 if col["scale"] == "fraction" else 1.0
        rows = []

        def fmt(v: Any, factor: float, suffix: str = "") -> str:
            return "—" if v is None else f"{factor * v:.1f}{suffix}"

        for m, row in per.items():
            rng = row.get("parser_range")
            cell = col["cells"].get(m, {})
            span = "—" if not rng else f"{fmt(rng[0], f)}–{fmt(rng[1], f)}"
            overlap = " class=overlap" if row.get("parser_overlaps") else ""
            rows.append(f'<tr data-model="{escape(m)}"{overlap}><td>{escape(name.get(m, m))}</td>'
                        f'<td>{fmt(cell.get("value"), f)}</td><td>{span}</td>'
                        f'<td>{fmt(row.get("unread_share"), 100.0, "%")}</td>'
                        f'<td>{fmt(row.get("wrong_language_rate"), 100.0, "%")}</td>'
                        f'<td>{fmt(row.get("follows_position"), 100.0, "%")}</td>'
                        f'<td>{escape(", ".join(name.get(o, o) for o in row.get("parser_overlaps", [])))}</td></tr>')
        parts.append(f'<h3>{escape(col["benchmark"])} · {escape(col["label"])}</h3><table class="checks">'
                     '<tr><th>model</th><th>score</th><th>parser range</th><th>unread</th><th>wrong language</th>'
                     '<th>follows position</th><th>range overlaps</th></tr>' + "".join(rows) + "</table>")
    out = []
    if parts:
        out.append(("checks", "Checks: parser ranges, wrong language, position",
                    "".join(parts) + '<p class="note">parser range: the score if every reply the rule could not read '
                    'were wrong / right; a range that holds the next model\'s score means the parser alone could swap '
                    'the two (docs/checks.md)</p>'))
    prem = token_premium(board)
    langs = sorted({lang for v in prem.values() for lang in v})
    if langs:
        out.append(("tokens", "Token premium (completion tokens per character)",
                    '<table id="token-premium"><tr><th>model</th>' + "".join(f"<th>{escape(lang)}</th>" for lang in langs) + "</tr>"
                    + "".join(f'<tr><td>{escape(name.get(m, m))}</td>' + "".join(
                        "<td>—</td>" if v.get(lang) is None else f"<td>{v[lang]:.3f}</td>" for lang in langs) + "</tr>"
                        for m, v in prem.items()) + "</table>"))
    return out
