"""How far the dry run's prompt-token estimate is from real token counts, per language.

The estimate for a remote model is o200k_base's count (bundled offline by quicktok) with a range
from a per-script band (engine/estimate.py SCRIPT_BANDS). This script measures, on
- the prompts of every bundled task (rendered as the runner sends them: chat messages), by the
  item's language, and
- parallel UI translations shipped by Debian (GTK 3's message catalogue, /usr/share/locale/LANG/
  LC_MESSAGES/gtk30.mo: the same English strings in Khmer, Burmese, Thai, Vietnamese, Arabic; Lao
  has no GTK catalogue, LaoBench's prompts cover it), when present,
the real token counts of five tokenizers: o200k_base (GPT-4o/4.1/o-series), cl100k_base (GPT-4),
Llama 3, Qwen 3 (all exact BPE from quicktok's bundled vocabularies) and Gemma 3 (its
SentencePiece vocabulary read from the embedded GGUF by transformers; skipped without the `local`
extra). For each language it prints the estimate's error against each tokenizer (estimate / real
- 1 on the summed counts), whether the real count falls inside the band, and each script's lowest
and highest ratio real / o200k: the figures SCRIPT_BANDS holds.

Run: `python bench/token_estimate.py [--json FILE]` (about a minute; Gemma's vocabulary takes ~30 s
to read from the GGUF the first time).
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
from collections import defaultdict
from pathlib import Path

MO_LANGS = {"km": "Khmer", "my": "Burmese", "th": "Thai", "vi": "Vietnamese", "ar": "Arabic"}


def read_mo(path: Path) -> list[tuple[str, str]]:
    """(English msgid, translation) pairs of a GNU .mo catalogue (format: GNU gettext manual)."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic == 0x950412DE else ">"
    _, n, orig, trans = struct.unpack(end + "4I", data[4:20])
    pairs = []
    for i in range(n):
        olen, ooff = struct.unpack(end + "2I", data[orig + 8 * i: orig + 8 * i + 8])
        tlen, toff = struct.unpack(end + "2I", data[trans + 8 * i: trans + 8 * i + 8])
        src = data[ooff: ooff + olen].decode("utf-8", "replace").split("\x00")[0]
        dst = data[toff: toff + tlen].decode("utf-8", "replace").split("\x00")[0]
        if src and dst and len(src) >= 12 and "%" not in src:  # sentences, not format strings
            pairs.append((src.split("\x04")[-1], dst))
    return pairs


def task_texts() -> dict[str, list[str]]:
    """Every bundled task's prompts (message contents joined), by the item's language."""
    from glotbench.registry import benchmarks, get_benchmark

    out: dict[str, list[str]] = defaultdict(list)
    for name in benchmarks():
        try:
            bench = get_benchmark(name)
            data = bench.load(None)
        except Exception:  # noqa: BLE001 - a benchmark without bundled data
            continue
        for item in data:
            prompt = bench.render(item.to_public())
            lang = str(item.meta.get("language") or item.meta.get("lang") or bench_language(name))
            out[lang].append("\n".join(str(m.get("content", "")) for m in prompt.messages))
    return out


def bench_language(name: str) -> str:
    return {"vi": "vi", "lao": "lo", "aragen": "ar"}.get(next((k for k in ("vi", "lao", "aragen") if k in name), ""),
                                                          "?")


def ui_texts() -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    english: dict[str, str] = {}
    for lang in MO_LANGS:
        path = Path(f"/usr/share/locale/{lang}/LC_MESSAGES/gtk30.mo")
        if not path.is_file():
            continue
        for src, dst in read_mo(path):
            out[f"{lang} (GTK)"].append(dst)
            english[src] = src
    if english:
        out["en (GTK)"] = list(english.values())
    return out


def tokenizers() -> dict[str, object]:
    import quicktok

    toks: dict[str, object] = {}
    for name in ("o200k_base", "cl100k_base", "llama3", "qwen3"):
        enc = quicktok.get_encoding(name)
        toks[name] = lambda t, enc=enc: len(enc.encode_ordinary(t))
    try:
        from glotbench.models.hf import HFModel

        m = HFModel.embedded_default()
        m._load_tokenizer()  # noqa: SLF001 - the bench measures the backend's own tokenizer
        tok = m._tok  # noqa: SLF001
        toks["gemma3"] = lambda t: len(tok(t, add_special_tokens=False)["input_ids"])
    except Exception as e:  # noqa: BLE001 - no `local` extra: four tokenizers
        print(f"gemma3 skipped: {e}", file=sys.stderr)
    return toks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the figures here too")
    a = ap.parse_args()
    from glotbench.engine.estimate import SCRIPT_BANDS, dominant_script

    toks = tokenizers()
    groups = {**task_texts(), **ui_texts()}
    ratios: dict[str, dict[str, float]] = defaultdict(dict)  # script -> tokenizer -> real/o200k
    rows = []
    for lang, texts in sorted(groups.items()):
        scripts = defaultdict(list)
        for t in texts:
            scripts[dominant_script(t)].append(t)
        for script, ts in sorted(scripts.items()):
            if len(ts) < 2:
                continue
            o200k = sum(toks["o200k_base"](t) for t in ts)
            lo, hi = SCRIPT_BANDS[script]
            row = {"language": lang, "script": script, "texts": len(ts), "chars": sum(map(len, ts)),
                   "o200k": o200k, "errors": {}, "in_band": {}}
            for name, fn in toks.items():
                real = sum(fn(t) for t in ts)
                row["errors"][name] = round(o200k / real - 1, 3)
                row["in_band"][name] = lo * o200k <= real <= hi * o200k
                ratios[f"{script}|{lang}"][name] = real / o200k
            rows.append(row)
    names = list(toks)
    print(f"{'language':<16} {'script':<11} {'texts':>5} {'o200k':>7}  " + " ".join(f"{n[:11]:>11}" for n in names)
          + "  in band")
    for r in rows:
        print(f"{r['language']:<16} {r['script']:<11} {r['texts']:>5} {r['o200k']:>7}  "
              + " ".join(f"{r['errors'][n]:>+11.1%}" for n in names)
              + f"  {sum(r['in_band'].values())}/{len(names)}")
    print("\nratio real/o200k per script (low–high over tokenizers and groups):")
    bands = {}
    for script in sorted({k.split('|')[0] for k in ratios}):
        vals = [v for k, d in ratios.items() if k.split("|")[0] == script for v in d.values()]
        bands[script] = (math.floor(min(vals) * 100) / 100, math.ceil(max(vals) * 100) / 100)  # outward
        print(f"  {script:<11} {bands[script][0]:.2f}–{bands[script][1]:.2f}   (SCRIPT_BANDS: "
              f"{SCRIPT_BANDS[script][0]:.2f}–{SCRIPT_BANDS[script][1]:.2f})")
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "bands": bands}, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
