"""Run directories for the report and board tests: real runs (replay files, the test server)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from conftest import cli
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.text.vietnamese import strip

CHROMIUM = "/usr/bin/chromium"
NO_CHROMIUM = "Debian's chromium is not installed (.ci/run installs it)"
DOC_IMAGES = Path(__file__).resolve().parents[1] / "docs" / "img"


def vi_items():
    return VietnameseDiacritics().load()


def replay_run(tmp: Path, name: str = "run") -> Path:
    """A two-repeat run with right answers, wrong tones, no marks, rewrites, non-JSON replies (one of
    them hostile HTML) and missing replies, so every filter and section has something to show."""
    lines = []
    for n, it in enumerate(vi_items()):
        ref = it.gold["references"][0]
        for rep in range(2):
            kind = (n * 7 + rep * (n % 3)) % 10
            if kind < 6:
                out = json.dumps({"restored_text": ref}, ensure_ascii=False)
            elif kind == 6:  # a wrong tone: the first grave accent becomes an acute one
                out = json.dumps({"restored_text": ref.replace("à", "á", 1).replace("ờ", "ớ", 1)}, ensure_ascii=False)
            elif kind == 7:
                out = json.dumps({"restored_text": strip(ref)}, ensure_ascii=False)
            elif kind == 8:
                out = "<img src=x onerror=alert(1)><script>alert(2)</script> not JSON"
            else:
                continue  # missing: a failure of kind `missing`
            lines.append(json.dumps({"id": it.id, "repeat": rep, "output": out}, ensure_ascii=False))
    preds = tmp / f"{name}.jsonl"
    preds.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Through the CLI (a subprocess): the sync Playwright API may already hold this thread's event loop.
    # A tenth of the replies are missing on purpose (failures of kind `missing`): above the default
    # 5% that makes a run invalid, so this run allows 15%.
    r = cli("run", "vi-diacritics", "--model", f"replay:{preds}", "--repeats", "2", "--out", str(tmp / name),
            "--no-cache", "--no-progress", "--max-failure-rate", "0.15")
    assert r.returncode == 0, r.stderr
    return tmp / name


def prompt_of(bench: VietnameseDiacritics, it) -> str:
    return bench.render(it.to_public()).messages[-1]["content"]


def board_runs(server, tmp: Path, wrong: dict[str, int], prices: dict[str, float]) -> dict[str, Path]:
    """One vi-diacritics run per model on the test server: model m answers the first wrong[m] items
    without diacritics and every other item with its first reference; price per M tokens prices[m]."""
    bench = VietnameseDiacritics()
    items = bench.load()
    out = {}
    for model, k in wrong.items():
        answers = {prompt_of(bench, it): json.dumps({"restored_text": strip(it.gold["references"][0]) if i < k
                                                     else it.gold["references"][0]}, ensure_ascii=False)
                   for i, it in enumerate(items)}
        server.configure(answers=answers)
        r = cli("run", "vi-diacritics", "--model", server.spec(model), "--out", str(tmp / model), "--cache-path",
                str(tmp / "calls.sqlite"), "--no-progress", "--price-in", str(prices[model]),
                "--price-out", str(prices[model]))
        assert r.returncode == 0, r.stderr
        out[model] = tmp / model
    return out


def resolve(pointer_src: str, base: Path | None = None):
    """The value a `data-src` names: FILE#/json/pointer, FILE relative to `base`."""
    file, _, ptr = pointer_src.partition("#")
    path = Path(file) if base is None or Path(file).is_absolute() else base / file
    data = json.loads(path.read_text(encoding="utf-8"))
    for part in ptr.strip("/").split("/") if ptr.strip("/") else []:
        part = part.replace("~1", "/").replace("~0", "~")
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def check_numbers(page, base: Path | None = None) -> int:
    """Golden check: every number tagged with a JSON source shows exactly that file's value."""
    nums = page.eval_on_selector_all(
        ".num[data-src]", "els => els.map(e => [e.dataset.src, e.dataset.raw || null, e.dataset.factor || '1', "
                          "e.dataset.digits || '1', e.textContent])")
    checked = 0
    for src, raw, factor, digits, text in nums:
        if ".json#" not in src:
            continue
        value = resolve(src, base)
        if raw is None:
            assert value is None and text == "—", (src, text)
            continue
        assert float(raw) == float(value), (src, raw, value)
        shown = re.match(r"-?[\d.]+", text).group(0)
        assert shown == f"{float(factor) * float(value):.{int(digits)}f}", (src, text, value)
        checked += 1
    return checked


def write_doc_image(page, name: str, tmp: Path, **kw) -> Path:
    """A screenshot in the test's folder; also under docs/img when GLOTBENCH_DOC_IMAGES=1 (how the
    images in docs/reports.md are made)."""
    path = tmp / name
    page.screenshot(path=str(path), **kw)
    if os.environ.get("GLOTBENCH_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        (DOC_IMAGES / name).write_bytes(path.read_bytes())
    return path
