"""The run page's checks (results.json `checks`, docs/checks.md): the language of answers, how much
of the score is the parser, error types, the token premium, circular evaluation and the English
pivot; and each sample's language check in the sample browser. Every number is tagged with its
place in results.json."""

from __future__ import annotations

from html import escape
from typing import Any, Mapping

from glotbench.report.svg import num
from glotbench.report.terminal import few_mark

_POLICY = {"fail": "a failure of kind wrong_language",
           "zero": "scored with every metric's credit taken away (never above a right-language reply)"}


def _p(*parts: Any) -> str:
    return "results.json#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in ("checks", *parts))


def _pct(v: Any, *path: Any) -> str:
    return num(v, _p(*path), factor=100.0, suffix="%")


def language_section(c: Mapping[str, Any]) -> str:
    lang = c["language"]
    out = [f'<p>Expected output language: {escape(lang["expected"])}. {num(lang["checked"], _p("language", "checked"), digits=0)} '
           f'answers checked, {num(lang["wrong"], _p("language", "wrong"), digits=0)} in the wrong language or script '
           f'({_pct(lang["wrong_rate"], "language", "wrong_rate")}); policy <b>{escape(lang["policy"])}</b> '
           f'({_POLICY.get(lang["policy"], "flagged and counted, still scored")}). '
           f'<span class="note">{escape(lang["library"])}; verdicts: '
           + escape(", ".join(f"{k} {v}" for k, v in lang["verdicts"].items())) + "</span></p>"]
    for key, vals in lang.get("groups", {}).items():
        out.append(f"<h3>by {escape(key)}</h3><table><tr><th>{escape(key)}</th><th>checked</th><th>wrong</th><th>rate</th></tr>"
                   + "".join(f'<tr><td>{escape(v)}</td><td>{num(r["checked"], _p("language", "groups", key, v, "checked"), digits=0)}</td>'
                             f'<td>{num(r["wrong"], _p("language", "groups", key, v, "wrong"), digits=0)}</td>'
                             f'<td>{_pct(r["wrong_rate"], "language", "groups", key, v, "wrong_rate")}</td></tr>'
                             for v, r in vals.items()) + "</table>")
    if lang.get("examples"):
        out.append('<details><summary>answers in the wrong language</summary><table id="wrong-language"><tr><th>item</th>'
                   '<th>expected</th><th>verdict</th><th>why</th></tr>' + "".join(
                       f'<tr><td><code>{escape(e["id"])}</code></td><td>{escape(str(e["expected"]))}</td>'
                       f'<td>{escape(e["verdict"])}</td><td>{escape(str(e["why"]))}</td></tr>' for e in lang["examples"])
                   + "</table></details>")
    return "".join(out)


def extraction_section(c: Mapping[str, Any]) -> str:
    x = c["extraction"]
    if "error" in x:
        return f'<p class="warn">the extraction check failed: {escape(x["error"])}</p>'
    f = 100.0 if x.get("scale", "fraction") == "fraction" else 1.0
    unit = "%" if f == 100 else ""
    v = lambda val, *path: num(val, _p("extraction", *path), factor=f, suffix=unit)  # noqa: E731
    rng = (f'range {v(x["lower"], "lower")} – {v(x["upper"], "upper")}' if x.get("upper") is not None
           else escape(x.get("bounds_note", "no bounds")))
    out = [f'<p id="extraction-range">{escape(x["metric"])}: strict {v(x["strict"], "strict")}, {rng} '
           f'(every unread reply wrong / right); lenient {v(x["lenient"], "lenient")} '
           f'({num(x["lenient_read"], _p("extraction", "lenient_read"), digits=0)} unread replies read by: {escape(x["lenient_rule"])}).</p>',
           f'<p>{num(x["unread"], _p("extraction", "unread"), digits=0)} of {num(x["samples"], _p("extraction", "samples"), digits=0)} '
           f'replies unread ({_pct(x["unread_share"], "extraction", "unread_share")}): '
           + escape(", ".join(f"{k} {n}" for k, n in x["unread_by_failure"].items()) or "none")
           + f'; failed calls, not the parser\'s: {num(x["call_failures"], _p("extraction", "call_failures"), digits=0)}.</p>']
    for key, vals in (x.get("groups") or {}).items():
        out.append(f"<h3>by {escape(key)}</h3><table><tr><th>{escape(key)}</th><th>strict</th><th>if unread were right</th></tr>"
                   + "".join(f'<tr><td>{escape(g)}</td><td>{v(r["strict"], "groups", key, g, "strict")}</td>'
                             f'<td>{v(r["upper"], "groups", key, g, "upper")}</td></tr>' for g, r in vals.items()) + "</table>")
    return "".join(out)


def errors_section(c: Mapping[str, Any]) -> str:
    e = c["errors"]
    if "error" in e:
        return f'<p class="warn">the error-type check failed: {escape(e["error"])}</p>'
    kinds = list(e["kinds"])
    unit = "words" if e["kind"] == "vietnamese" else "samples"

    def row(label: str, r: Mapping[str, Any], path: tuple) -> str:
        base = r.get("words") if e["kind"] == "vietnamese" else r["samples"]
        return (f"<tr><td>{escape(label)}</td><td>{num(base, _p('errors', *path, unit if unit == 'words' else 'samples'), digits=0)}</td>"
                + "".join(f"<td>{num(r['errors'].get(k, 0), _p('errors', *path, 'errors', k), digits=0)}</td>" for k in kinds) + "</tr>")

    head = f"<tr><th>group</th><th>{unit}</th>" + "".join(f"<th>{escape(k)}</th>" for k in kinds) + "</tr>"
    rows = [row("overall", e["overall"], ("overall",))]
    for key, vals in e["groups"].items():
        rows += [row(f"{key}: {v}", r, ("groups", key, v)) for v, r in vals.items()]
    out = f'<table id="error-types">{head}{"".join(rows)}</table>'
    if e.get("letters"):
        L = e["letters"]
        out += (f'<p class="note">letters chosen: {escape(str(L["chosen"]))}; gold: {escape(str(L["gold"]))}; '
                f'over-chosen: {escape(str(L["over_chosen"]))} (a wrong answer with it counts as a position error)</p>')
    return out


def _opt(row: Mapping[str, Any], key: str, *path: Any) -> str:
    """A ratio that only some languages have: tagged where results.json holds it, else a dash."""
    return num(row[key], _p(*path, key), digits=2, suffix="×") if row.get(key) is not None else "—"


def tokens_section(c: Mapping[str, Any]) -> str:
    t = c["tokens"]
    if "error" in t:
        return f'<p class="warn">the token check failed: {escape(t["error"])}</p>'
    u = t["usage"]
    out = ['<h3>from the reported token usage</h3><table id="token-premium"><tr><th>language</th><th>replies</th>'
           '<th>tokens / character</th><th>tokens / word</th><th>truncated</th><th>prompt tokens vs English</th></tr>']
    for lang, r in u.items():
        out.append(f'<tr><td>{escape(lang)}</td><td>{num(r["replies"], _p("tokens", "usage", lang, "replies"), digits=0)}</td>'
                   f'<td>{num(r["tokens_per_char"], _p("tokens", "usage", lang, "tokens_per_char"), digits=3)}</td>'
                   f'<td>{num(r["tokens_per_word"], _p("tokens", "usage", lang, "tokens_per_word"), digits=2)}</td>'
                   f'<td>{_pct(r["truncation_rate"], "tokens", "usage", lang, "truncation_rate")}</td>'
                   f'<td>{_opt(r, "prompt_premium_vs_en", "tokens", "usage", lang)}</td></tr>')
    out.append("</table>")
    if t.get("tokenizer"):
        out.append(f'<h3>from the model\'s own tokenizer ({escape(str(t.get("tokenizer_of")))})</h3><table><tr><th>language</th>'
                   '<th>items</th><th>tokens / character</th><th>tokens / word</th><th>premium vs English</th></tr>')
        for lang, r in t["tokenizer"].items():
            out.append(f'<tr><td>{escape(lang)}</td><td>{num(r["items"], _p("tokens", "tokenizer", lang, "items"), digits=0)}</td>'
                       f'<td>{num(r["tokens_per_char"], _p("tokens", "tokenizer", lang, "tokens_per_char"), digits=3)}</td>'
                       f'<td>{num(r["tokens_per_word"], _p("tokens", "tokenizer", lang, "tokens_per_word"), digits=2)}</td>'
                       f'<td>{_opt(r, "premium_vs_en", "tokens", "tokenizer", lang)}'
                       f' <span class="note">{escape(r.get("premium_from", ""))}</span></td></tr>')
        out.append("</table>")
    return "".join(out)


def pivot_section(c: Mapping[str, Any]) -> str:
    p = c["pivot"]
    cmp = p["native_vs_pivot"]
    f = 100.0 if cmp.get("scale", "fraction") == "fraction" else 1.0
    rows = ([("overall", cmp["overall"], ("pivot", "native_vs_pivot", "overall"))] if cmp.get("overall") else []) + [
        (f"{k}: {v}", r, ("pivot", "native_vs_pivot", "groups", k, v)) for k, vals in cmp["groups"].items() for v, r in vals.items()]
    body = "".join(f'<tr><td>{escape(label)}</td><td>{num(r["a"], _p(*path, "a"), factor=f)}</td>'
                   f'<td>{num(r["b"], _p(*path, "b"), factor=f)}</td><td>{num(r["delta"], _p(*path, "delta"), factor=f)}</td>'
                   f'<td>{num(r["ci_low"], _p(*path, "ci_low"), factor=f)} – {num(r["ci_high"], _p(*path, "ci_high"), factor=f)}'
                   f'{few_mark(r)}</td>'
                   f'<td>{num(r["p_bootstrap"], _p(*path, "p_bootstrap"), digits=3)}</td>'
                   f'<td>{num(r["p_randomization"], _p(*path, "p_randomization"), digits=3)}</td>'
                   f'<td>{num(r["items"], _p(*path, "items"), digits=0)}</td></tr>' for label, r, path in rows)
    return (f'<p>Input translated into {escape(p["language"])} by {escape(p["pivot_model"])}; answers {escape(p["answer"])}. '
            f'{num(p["texts_translated"], _p("pivot", "texts_translated"), digits=0)} of {num(p["texts"], _p("pivot", "texts"), digits=0)} '
            f'texts translated; items left partly untranslated: {num(p["untranslated"]["items"], _p("pivot", "untranslated", "items"), digits=0)}.</p>'
            f'<table id="pivot"><tr><th>group</th><th>native</th><th>pivot</th><th>pivot − native</th><th>95% CI</th><th>p boot</th>'
            f'<th>p rand</th><th>items</th></tr>{body}</table>'
            f'<p class="note">paired bootstrap and approximate randomisation on the items both runs scored ({escape(cmp["metric"])}); '
            f'phases: {escape(", ".join(f"{k} {v}" for k, v in p["phases"].items()))}</p>')


def circular_section(results: Mapping[str, Any]) -> str:
    circ = results["scores"]["circular"]
    o = results["scores"]["overall"]
    ptr = lambda *x: "results.json#/scores/overall/" + "/".join(x)  # noqa: E731
    head = results["headline"]
    cells = [(results["metrics"][head].get("label") or head, o.get(head, {}).get("value"), ptr(head, "value"))] + [
        (k.replace("_", " "), o.get(k, {}).get("value"), ptr(k, "value"))
        for k in ("plain_accuracy", "rotation_accuracy", "follows_position", "consistent")]
    f = 100.0 if results["metrics"][head].get("scale", "fraction") == "fraction" else 1.0
    return (f'<p>{circ["items"]} items, each asked in every rotation of its options ({circ["samples"]} prompts). '
            'Right only when right in every rotation; an answer that keeps its letter in every rotation follows the position.</p>'
            + (f'<p class="note">{circ["incomplete"]["items"]} item(s) asked in only some of their rotations (a stopped run) '
               f'are not scored: {escape(", ".join(circ["incomplete"]["ids"]))}</p>' if circ.get("incomplete") else '')
            + (f'<p class="note">{circ["duplicate_options"]["items"]} item(s) with two options of the same text: '
               f'{escape(circ["duplicate_options"]["why"])}: {escape(", ".join(circ["duplicate_options"]["ids"]))}</p>'
               if circ.get("duplicate_options") else '')
            + 
            '<table id="circular">' + "".join(f"<tr><td>{escape(n)}</td><td>{num(v, s, factor=f if i == 0 else 100.0)}</td></tr>"
                                              for i, (n, v, s) in enumerate(cells)) + "</table>")


def checks_sections(results: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(anchor, heading, html) for each check the run has."""
    c = results.get("checks") or {}
    out = []
    if "circular" in results.get("scores", {}):
        out.append(("circular", "Circular evaluation (options rotated)", circular_section(results)))
    for key, title, fn in (("language", "Language of answers", language_section),
                           ("extraction", "How much of the score is the parser", extraction_section),
                           ("errors", "Error types", errors_section), ("tokens", "Token premium and truncation", tokens_section),
                           ("pivot", "English pivot", pivot_section)):
        if key in c:
            out.append((f"checks-{key}", title, fn(c)))
    return out


def sample_checks(rec: Mapping[str, Any]) -> tuple[list[list[Any]], list[str]]:
    """A sample's blocks and flags in the browser: its language check; `wrong_language` when it failed."""
    lang = (rec.get("checks") or {}).get("language")
    if not lang:
        return [], []
    flags = ["wrong_language"] if lang.get("verdict") in ("wrong_script", "wrong_language") else []
    return [["language check", "j", lang]], flags
