"""HTML report speed and size: a 10,000-sample vi-diacritics run (a replay of synthetic outputs over
the bundled sentences repeated under new ids), then `glotbench report RUN --html` timed in-process,
and a board of three such runs.

    python bench/report_html.py [--items 5000] [--repeats 2] [--runs 3]

The outputs are fixed-seed: 60% right, the rest wrong tones, no diacritics, non-JSON or missing, so
every part of the page (diffs, failures, flips) has work to do. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.text.vietnamese import strip


def make_data(dir_: Path, n: int) -> tuple[Path, list[tuple[str, str]]]:
    base = VietnameseDiacritics().load()
    rows = []
    with (dir_ / "data.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n):
            it = base[i % len(base)]
            refs = it.gold["references"]
            f.write(json.dumps({"id": f"s{i:05d}", "references": refs, "category": it.meta["category"]},
                               ensure_ascii=False) + "\n")
            rows.append((f"s{i:05d}", refs[0]))
    return dir_ / "data.jsonl", rows


def make_preds(path: Path, rows: list[tuple[str, str]], repeats: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for id_, ref in rows:
            for rep in range(repeats):
                r = rng.random()
                if r < 0.6:
                    out = json.dumps({"restored_text": ref}, ensure_ascii=False)
                elif r < 0.75:
                    out = json.dumps({"restored_text": ref.replace("à", "á", 1).replace("ờ", "ớ", 1)}, ensure_ascii=False)
                elif r < 0.9:
                    out = json.dumps({"restored_text": strip(ref)}, ensure_ascii=False)
                elif r < 0.97:
                    out = "I cannot answer in JSON."
                else:
                    continue
                f.write(json.dumps({"id": id_, "repeat": rep, "output": out}, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from glotbench.report.board import build_board
    from glotbench.report.board_html import board_html
    from glotbench.report.html import write_report

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        data, rows = make_data(d, args.items)
        runs = []
        for k in range(args.runs):
            preds = d / f"preds{k}.jsonl"
            make_preds(preds, rows, args.repeats, seed=k)
            runs.append(evaluate("vi-diacritics", f"replay:{preds}", RunOptions(
                data=str(data), repeats=args.repeats, out=str(d / f"run{k}"), use_cache=False, progress=False)).out_dir)
        t0, c0 = time.perf_counter(), time.process_time()
        page = write_report(runs[0], d / "report.html")
        render_s, render_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        board = build_board([str(d)])
        html = board_html(board)
        board_s = time.perf_counter() - t0
        out = {"samples": args.items * args.repeats, "report_render_s": round(render_s, 2),
               "report_render_cpu_s": round(render_cpu, 2),
               "report_bytes": page.stat().st_size, "board_runs": args.runs,
               "board_build_and_render_s": round(board_s, 2), "board_bytes": len(html.encode())}
        out.update(browser_load(page))
        print(json.dumps(out))


def browser_load(page: Path) -> dict[str, float]:
    """Seconds until the page's sample browser has drawn its first page, in headless Chromium."""
    import os

    if not os.path.exists("/usr/bin/chromium"):
        return {}
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        pg = b.new_page()
        t0 = time.perf_counter()
        pg.goto(page.resolve().as_uri())
        pg.wait_for_selector("#sample-count[data-shown]")
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pg.select_option("#f-outcome", "incorrect")  # filters all rows and draws the first page
        pg.locator("#sample-count").inner_text()
        filter_s = time.perf_counter() - t0
        b.close()
    return {"chromium_load_s": round(load_s, 2), "chromium_filter_s": round(filter_s, 3)}


if __name__ == "__main__":
    main()
