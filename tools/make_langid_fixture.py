"""Build the labelled language-identification fixture (tests/fixtures/langid/labelled.jsonl).

Real text in lo, km, my, th, vi, id, ms, tl, ar, en, zh, each line labelled with its language and its
source, from three places:
- Debian's translation catalogues installed on this machine (`/usr/share/locale/LOC/LC_MESSAGES/*.mo`,
  read with `msgunfmt`): translated interface strings (the msgid of a catalogue is English);
- the data glotbench bundles (LaoBench and arena samples, DeepSEA samples, vi-diacritics references);
- tools/langid/handwritten.jsonl: Lao sentences (Debian has almost no Lao catalogue) and Vietnamese
  sentences with English words in them (code-mixed Vietnamese is labelled Vietnamese).

A catalogue string is kept when it is a sentence (at least 25 letters; 4 words in a language written
with spaces), differs from its msgid, and (for a language with a script of its own) has at least 80% of
its letters in that script: an untranslated string left in a catalogue is not a label. Markup,
mnemonic underscores and printf placeholders are removed. At most PER_LANGUAGE strings per language,
chosen by the SHA-256 of the text (deterministic, spread over packages).

    python tools/make_langid_fixture.py            # writes tests/fixtures/langid/labelled.jsonl
"""

from __future__ import annotations

import ast
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "langid" / "labelled.jsonl"
PER_LANGUAGE = 60
LOCALES = {"km": "km", "my": "my", "th": "th", "vi": "vi", "id": "id", "ms": "ms", "tl": "tl", "ar": "ar", "zh": "zh_CN"}
OWN_SCRIPT = {"lo": "\u0e80-\u0eff", "km": "\u1780-\u17ff", "my": "\u1000-\u109f", "th": "\u0e00-\u0e7f",
              "ar": "\u0600-\u06ff", "zh": "\u4e00-\u9fff"}


def _unquote(s: str) -> str:
    """A PO string literal (C escapes) as text; one that does not read is empty."""
    try:
        v = ast.literal_eval(s.strip())
    except (ValueError, SyntaxError):
        return ""
    return v if isinstance(v, str) else ""


def _po_entries(text: str) -> list[tuple[str, str]]:
    """(msgid, msgstr) pairs of `msgunfmt`'s output (singular entries only)."""
    out, cur, key = [], {}, None
    for line in text.splitlines():
        if line.startswith("msgid "):
            if cur.get("msgid") and cur.get("msgstr"):
                out.append((cur["msgid"], cur["msgstr"]))
            cur, key = {"msgid": _unquote(line[6:])}, "msgid"
        elif line.startswith("msgstr "):
            cur["msgstr"], key = _unquote(line[7:]), "msgstr"
        elif line.startswith(("msgid_plural", "msgstr[", "msgctxt")):
            key = None
        elif line.startswith('"') and key:
            cur[key] += _unquote(line)
    if cur.get("msgid") and cur.get("msgstr"):
        out.append((cur["msgid"], cur["msgstr"]))
    return out


def _clean(text: str) -> str:
    text = re.sub(r"<[^>]*>", " ", text)
    text = re.sub(r"%(?:\d+\$)?[-+ #0]*\d*(?:\.\d+)?[hlLqjzt]*[diouxXeEfFgGcrsSp%]|\{[^}]*\}|\$\{?\w+\}?", " ", text)
    text = text.replace("_", "").replace("&", "")
    return " ".join(text.split())


def _sentence(text: str, lang: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 25:
        return False
    if lang not in OWN_SCRIPT and len(text.split()) < 4:
        return False
    if lang in OWN_SCRIPT:
        own = len(re.findall(f"[{OWN_SCRIPT[lang]}]", text))
        return own >= 0.8 * len(letters)
    return True


def _pick(rows: list[dict], n: int) -> list[dict]:
    seen, out = set(), []
    for r in sorted(rows, key=lambda r: hashlib.sha256(r["text"].encode()).hexdigest()):
        if r["text"] not in seen:
            seen.add(r["text"])
            out.append(r)
    return out[:n]


def catalogue_rows() -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {lang: [] for lang in [*LOCALES, "en"]}
    for lang, loc in LOCALES.items():
        for mo in sorted(glob.glob(f"/usr/share/locale/{loc}/LC_MESSAGES/*.mo")):
            po = subprocess.run(["msgunfmt", mo], capture_output=True, text=True, check=False).stdout
            pkg = os.path.basename(mo)[:-3]
            for msgid, msgstr in _po_entries(po):
                text, source = _clean(msgstr), _clean(msgid)
                if text != source and _sentence(text, lang):
                    rows[lang].append({"lang": lang, "text": text, "source": f"debian:{loc}/{pkg}.mo"})
                if lang == "vi" and _sentence(source, "en"):  # the msgid: English source text
                    rows["en"].append({"lang": "en", "text": source, "source": f"debian:msgid of {pkg}.mo"})
    return {lang: _pick(r, PER_LANGUAGE) for lang, r in rows.items()}


def bundled_rows() -> list[dict]:
    data = ROOT / "src" / "glotbench" / "benchmarks" / "data"
    out = []
    for line in (data / "laobench_sample.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        for text in (r["question"], r["answer"]):
            for lang, rx in (("lo", OWN_SCRIPT["lo"]), ("zh", OWN_SCRIPT["zh"])):
                body = re.sub(r"^[^:：]*[:：]\s*", "", text) if ":" in text or "：" in text else text
                letters = [c for c in body if c.isalpha()]
                if len(letters) >= 8 and all(re.match(f"[{rx}]", c) for c in letters):
                    out.append({"lang": lang, "text": body, "source": "bundled:laobench_sample.jsonl"})
    for line in (data / "lao_arena_sample.jsonl").read_text(encoding="utf-8").splitlines():
        out.append({"lang": "lo", "text": json.loads(line)["prompt"], "source": "bundled:lao_arena_sample.jsonl"})
    for task, fields in (("crosssum", ("text", "summary")), ("xquad", ("context",)), ("wmt24pp", ("target",)),
                         ("mgsm", ("question",))):
        doc = json.loads((data / f"deepsea_{task}.json").read_text(encoding="utf-8"))
        for lang, examples in doc["languages"].items():
            for ex in examples:
                for f in fields:
                    out.append({"lang": lang, "text": ex[f], "source": f"bundled:deepsea_{task}.json"})
    vi = [json.loads(x) for x in (data / "vi_diacritics.jsonl").read_text(encoding="utf-8").splitlines()]
    out += [{"lang": "vi", "text": r["references"][0], "source": "bundled:vi_diacritics.jsonl"} for r in vi[::8]]
    return out


def main() -> int:
    rows = []
    for lang, got in catalogue_rows().items():
        rows += got
    rows += bundled_rows()
    rows += [json.loads(x) for x in (ROOT / "tools" / "langid" / "handwritten.jsonl").read_text(encoding="utf-8").splitlines()]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    from collections import Counter

    print(f"{OUT}: {len(rows)} lines", dict(sorted(Counter(r['lang'] for r in rows).items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
