"""User text in terminal output is printed as text: rich's markup and emoji codes are off for every
table and line glotbench prints (report/terminal.py `console`). Before, a category named `[/x]`
stopped the results table with a MarkupError after the run, `[red]` restyled a name and `:fire:`
became an emoji."""

from __future__ import annotations

import contextlib
import io
import json
import re

from conftest import cli

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.report.terminal import print_results

HOSTILE = ["[/x]", "[bold red]loud[/bold red]", ":fire: hot", "[link=http://evil]click[/link]", "a\\[b]"]


def _printed(fn, *args, **kw) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args, **kw)
    return buf.getvalue()


def _flat(text: str) -> str:
    """The table's text without the wrapping of long cells."""
    return "".join(text.split())


def test_a_run_with_hostile_names_prints_them_as_they_are(tmp_path):
    """Category names, the model spec and the run directory, all user text, through `glotbench run`
    and `glotbench report` and `glotbench compare`."""
    items = VietnameseDiacritics().load()[:len(HOSTILE)]
    data, preds = tmp_path / "data.jsonl", tmp_path / "[bold]p :fire:.jsonl"
    data.write_text("".join(json.dumps({"id": it.id, "category": cat, "references": list(it.gold["references"])},
                                       ensure_ascii=False) + "\n" for it, cat in zip(items, HOSTILE)), encoding="utf-8")
    preds.write_text("".join(json.dumps({"id": it.id, "output": json.dumps({"restored_text": it.gold["references"][0]},
                                                                          ensure_ascii=False)}, ensure_ascii=False) + "\n"
                             for it in items), encoding="utf-8")
    out = tmp_path / "run [red]o"
    proc = cli("run", "vi-diacritics", "--data", str(data), "--model", f"replay:{preds}", "--no-cache",
               "--no-progress", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    for name in HOSTILE:
        assert _flat(name) in _flat(proc.stdout), (name, proc.stdout)
    assert "🔥" not in proc.stdout and _flat(str(preds)) in _flat(proc.stdout)
    again = cli("report", str(out))
    assert again.returncode == 0 and all(_flat(n) in _flat(again.stdout) for n in HOSTILE), again.stderr
    cmp = cli("compare", str(out), str(out))
    assert cmp.returncode == 0, cmp.stderr
    assert f"A: replay:{preds}\nB: replay:{preds}\n" in cmp.stdout  # whole, not wrapped


def test_the_results_table_takes_any_group_or_metric_label(tmp_path):
    res = {"benchmark": {"name": "b[/n]", "version": "1"}, "model": {"spec": "openai:[/m]@http://h/v1"},
           "headline": "m", "signature": "sig[/s]",
           "metrics": {"m": {"label": "[/label]", "show_ci": True, "scale": "fraction"}},
           "scores": {"overall": {"m": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 2}},
                      "groups": {"[/g]": {name: {"m": {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 1}}
                                          for name in HOSTILE}}},
           "counts": {"samples": 2, "failed": 0, "failures": {"[/f]": 1}, "flags": {":fire:": 1},
                      "model_calls": 0, "retries": 0, "cache_hits": 2, "structured_output": None},
           "tokens": {"prompt": 1, "completion": 1}}
    res["scores"]["groups"]["[/g]"]["a very long category name that a data file may well hold, " * 2] = \
        res["scores"]["overall"]
    text = _printed(print_results, res)
    for s in [*HOSTILE, "[/label]", "b[/n]", "[/m]", "sig[/s]", "[/f]", ":fire:"]:
        assert _flat(s) in _flat(text), (s, text)
    # on a pipe the table is as wide as it needs: no number cut, no column dropped to fit 80
    assert text.count("50.0 (40.0–60.0)") == 2 and "[/label] ★" in text and " n " in text, text


def test_the_progress_bar_takes_any_model_spec(monkeypatch):
    """The live bar on a terminal: its description is the benchmark and the model spec."""
    from glotbench.engine.progress import ProgressBar
    from glotbench.engine.runner import RunCounters

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    c = RunCounters()
    with ProgressBar("vi · openai:[/m]@http://h/v1 :fire: \x1b[2J", total=3) as bar:
        assert not bar.plain
        c.total, c.done = 3, 3
        bar.update(c)
    assert "[/m]" in err.getvalue() and ":fire:" in err.getvalue()
    assert "\\x1b[2J" in err.getvalue() and "\x1b[2J" not in err.getvalue()  # shown, not obeyed


def test_control_characters_in_user_text_are_printed_escaped():
    """ESC in a category name or a model spec (a data file's, a plugin's) reached the terminal as
    an escape sequence: it could recolour the table or move the cursor over its numbers."""
    res = {"benchmark": {"name": "b\x1b[2J", "version": "1"}, "model": {"spec": "openai:m\x07@http://h/v1"},
           "headline": "m", "signature": "sig\x9b1A",
           "metrics": {"m": {"label": "m", "show_ci": True, "scale": "fraction"}},
           "scores": {"overall": {"m": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 2}},
                      "groups": {"category": {"a\x1b[31mred\x1b[0m": {"m": {"value": 1.0, "ci_low": 1.0,
                                                                              "ci_high": 1.0, "n": 1}}}}},
           "counts": {"samples": 2, "failed": 0, "failures": {}, "flags": {},
                      "model_calls": 0, "retries": 0, "cache_hits": 2, "structured_output": None},
           "tokens": {"prompt": 1, "completion": 1}}
    text = _printed(print_results, res)
    assert not any(ch in text for ch in "\x1b\x07\x9b"), repr(text)
    for s in ["a\\x1b[31mred\\x1b[0m", "b\\x1b[2J", "m\\x07@", "sig\\x9b1A"]:
        assert _flat(s) in _flat(text), (s, text)
    assert "50.0 (40.0–60.0)" in text


def test_a_narrow_terminal_gets_every_column_and_number(tmp_path):
    """On a 40-column terminal rich dropped the n, rewritten and no-JSON columns and cut the CIs."""
    from glotbench.report.terminal import console

    res = {"benchmark": {"name": "vi-diacritics", "version": "1.0"}, "model": {"spec": "openai:m@http://h/v1"},
           "headline": "exact", "signature": "sig",
           "metrics": {k: {"label": k, "show_ci": True, "scale": "fraction"} for k in ("exact", "word acc", "rewritten")},
           "scores": {"overall": {k: {"value": 0.925, "ci_low": 0.913, "ci_high": 0.935, "n": 2000}
                                  for k in ("exact", "word acc", "rewritten")},
                      "groups": {"category": {"everyday speech": {k: {"value": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 7}
                                                                  for k in ("exact", "word acc", "rewritten")}}}},
           "counts": {"samples": 2000, "failed": 0, "failures": {}, "flags": {}, "model_calls": 0, "retries": 0,
                      "cache_hits": 2000, "structured_output": None},
           "tokens": {"prompt": 1, "completion": 1}}
    buf = io.StringIO()
    print_results(res, console(file=buf, force_terminal=True, width=40, color_system=None))
    text = buf.getvalue()
    assert text.count("92.5 (91.3–93.5)") == 3 and text.count("50.0 (25.0–75.0)") == 3, text
    assert "2000" in text and "everyday speech" in text and "rewritten" in text, text


def test_a_wide_table_folds_its_columns_at_80_and_keeps_every_number():
    """vi-tone-errors' nine metrics made a 193-column table; at 80 columns it is printed as several
    tables, each with the group and n columns and every row, none wider than 80 (issue 21)."""
    from glotbench.report.terminal import console

    names = [f"metric{i}" for i in range(9)]
    groups = {f"category-{g}": {k: {"value": (g + i) / 20, "ci_low": (g + i) / 25, "ci_high": (g + i) / 19,
                                    "n": 10 + g} for i, k in enumerate(names)} for g in range(6)}
    res = {"benchmark": {"name": "vi-tone-errors", "version": "1.0"}, "model": {"spec": "openai:m@http://h/v1"},
           "headline": "metric0", "signature": "sig",
           "metrics": {k: {"label": k, "show_ci": True, "scale": "fraction"} for k in names},
           "scores": {"overall": {k: {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 75} for k in names},
                      "groups": {"category": groups}},
           "counts": {"samples": 75, "failed": 0, "failures": {}, "flags": {}, "model_calls": 0, "retries": 0,
                      "cache_hits": 75, "structured_output": None},
           "tokens": {"prompt": 1, "completion": 1}}
    buf = io.StringIO()
    print_results(res, console(file=buf, width=80, color_system=None))
    text = buf.getvalue()
    table_lines = [ln for ln in text.splitlines() if not ln.startswith(("signature:", "samples ", "model calls"))]
    assert max(len(ln) for ln in table_lines) <= 80, text
    assert text.count(" group ") >= 3  # folded into three tables or more
    for k in names:
        assert len(re.findall(rf" {k}( ★)? ", text)) == 1, (k, text)  # each column exactly once
    for g, cells in groups.items():
        assert text.count(f"  {g} ") == text.count(" group ")  # every row in every part
        for k, e in cells.items():
            assert f"{100 * e['value']:.1f} ({100 * e['ci_low']:.1f}–{100 * e['ci_high']:.1f})" in text, (g, k)
    assert text.count("50.0 (40.0–60.0)") == 9 and text.count("★ headline") == 1 and text.count("95% CI") == 1  # the caption once, under the last part
    assert text.count("vi-tone-errors v1.0") == 1
