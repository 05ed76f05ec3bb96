"""Build the vi-tone-errors data from hand-written correct sentences, deterministically.

    python tools/make_vi_tone_errors.py            # writes src/glotbench/benchmarks/data/vi_tone_errors.jsonl
    python tools/make_vi_tone_errors.py --check    # exit 1 unless the bundled file is what this builds

Input: tools/vi_tone_errors/sentences.jsonl, one correct sentence per line ({"id", "category", "text",
optional "alternatives": other fully valid sentences}). For each sentence a random generator seeded
with its id picks words and typing-error classes; about 20% of each category (chosen by a generator
seeded with the category) keeps no error. Error classes (docs/benchmarks/vi-tone-errors.md):
  hoi_nga       hỏi <-> ngã (the classic spelling confusion)
  tone_swap     sắc <-> nặng, huyền -> sắc
  tone_missing  the tone mark left out
  vowel_mark    ô/ơ/o, ư/u, ă/â/a, ê/e confused or the mark left out
  d_stroke      đ typed as d
and, never an error, `placement`: in every sentence with an open oa/oe/uy syllable, one such word has
its tone moved to the other vowel (hòa <-> hoà), which scoring ignores. Every record is validated: each marked error differs from the
correct word under the scoring comparison, every other word is the same, placement variants differ
in bytes only. AVOID lists word positions, checked by hand, whose corruption would give another
valid sentence (a real-word error that context cannot resolve).
"""

from __future__ import annotations

import json
import random
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from glotbench.text.vietnamese import comparison_key, strip  # noqa: E402

SOURCE = ROOT / "tools" / "vi_tone_errors" / "sentences.jsonl"
TARGET = ROOT / "src" / "glotbench" / "benchmarks" / "data" / "vi_tone_errors.jsonl"
CLEAN_SHARE = 0.2

GRAVE, ACUTE, TILDE, HOOK, DOT = "\u0300", "\u0301", "\u0303", "\u0309", "\u0323"
TONES = (GRAVE, ACUTE, TILDE, HOOK, DOT)
CIRCUMFLEX, BREVE, HORN = "\u0302", "\u0306", "\u031b"
_WORD = re.compile(r"\w+")

# Positions (word index in the sentence) never to corrupt: the result would be another valid sentence.
AVOID: dict[str, set[int]] = {
    "ambiguous-005": {7},  # cổng trường -> công trường (building site) is also right
    "ambiguous-007": {1},  # Sếp bảo -> Sếp báo (inform) is also right
    "ambiguous-016": {0},  # Chị ấy -> Chi (a name)
    "dialect-005": {6},  # gọi con lợn -> gọi con lớn (call the eldest child)
    "paragraph-012": {21},  # hứa sẽ thưởng -> hứa sẽ thương
    "proper_noun-009": {6},  # chống quân Hán -> chống quan Hán (Han officials)
    "proper_noun-012": {0},  # Động Phong Nha -> Đông Phong Nha (East Phong Nha)
    "teen_slang-004": {8},  # mấy bà -> mấy ba (slang among men)
}


def _nfd(w: str) -> list[str]:
    return list(unicodedata.normalize("NFD", w))


def _nfc(chars: list[str]) -> str:
    return unicodedata.normalize("NFC", "".join(chars))


def _tone(chars: list[str]) -> tuple[int, str] | None:
    return next(((i, c) for i, c in enumerate(chars) if c in TONES), None)


def _set_tone(word: str, tone: str | None) -> str:
    """Replace (or, with None, remove) the tone, keeping it on the same vowel after its other marks."""
    chars = _nfd(word)
    i, _ = _tone(chars)
    del chars[i]
    if tone is not None:
        j = i
        while j < len(chars) and unicodedata.combining(chars[j]):
            j += 1
        chars.insert(j, tone)
    return _nfc(chars)


def hoi_nga(word: str, rng: random.Random) -> str | None:
    t = _tone(_nfd(word))
    if t and t[1] in (HOOK, TILDE):
        return _set_tone(word, TILDE if t[1] == HOOK else HOOK)
    return None


def tone_swap(word: str, rng: random.Random) -> str | None:
    t = _tone(_nfd(word))
    swap = {ACUTE: DOT, DOT: ACUTE, GRAVE: ACUTE}
    return _set_tone(word, swap[t[1]]) if t and t[1] in swap else None


def tone_missing(word: str, rng: random.Random) -> str | None:
    return _set_tone(word, None) if _tone(_nfd(word)) else None


_VOWEL_TYPOS = {("o", CIRCUMFLEX): [HORN, None], ("o", HORN): [CIRCUMFLEX, None], ("a", CIRCUMFLEX): [BREVE, None],
                ("a", BREVE): [CIRCUMFLEX, None], ("u", HORN): [None], ("e", CIRCUMFLEX): [None]}


def vowel_mark(word: str, rng: random.Random) -> str | None:
    chars = _nfd(word)
    spots = [(i, m) for i, m in enumerate(chars) if m in (CIRCUMFLEX, BREVE, HORN)
             and (chars[i - 1].lower(), m) in _VOWEL_TYPOS]
    if not spots:
        return None
    i, mark = rng.choice(spots)
    new = rng.choice(_VOWEL_TYPOS[(chars[i - 1].lower(), mark)])
    if new is None:
        del chars[i]
    else:
        chars[i] = new
    return _nfc(chars)


def d_stroke(word: str, rng: random.Random) -> str | None:
    if "đ" in word or "Đ" in word:
        i = next(i for i, c in enumerate(word) if c in "đĐ")
        return word[:i] + ("d" if word[i] == "đ" else "D") + word[i + 1:]
    return None


CLASSES = {"hoi_nga": hoi_nga, "tone_swap": tone_swap, "tone_missing": tone_missing, "vowel_mark": vowel_mark,
           "d_stroke": d_stroke}
_OPEN = re.compile(r"(oa|oe|uy)$")


def placement(word: str) -> str | None:
    """hòa <-> hoà, khỏe <-> khoẻ, thủy <-> thuỷ in open syllables (not after q)."""
    base = strip(word).lower()
    m = _OPEN.search(base)
    if not m or base.startswith("qu") or _tone(_nfd(word)) is None:
        return None
    chars = _nfd(word)
    i, tone = _tone(chars)
    del chars[i]
    letters = [k for k, c in enumerate(chars) if not unicodedata.combining(c)]
    first, second = letters[-2], letters[-1]
    on_first = i <= second  # the tone followed the first vowel of the pair
    target = second if on_first else first
    j = target + 1
    while j < len(chars) and unicodedata.combining(chars[j]):
        j += 1
    chars.insert(j, tone)
    return _nfc(chars)


def corrupt(rec: dict, clean: bool) -> dict:
    text = unicodedata.normalize("NFC", rec["text"])
    rng = random.Random(f"vi-tone-errors:{rec['id']}")
    spans = [m.span() for m in _WORD.finditer(text)]
    words = [text[a:b] for a, b in spans]
    avoid = AVOID.get(rec["id"], set())
    changes: dict[int, tuple[str, str]] = {}
    if not clean:
        eligible = [i for i, w in enumerate(words) if strip(w) != w and i not in avoid]
        k = min(len(eligible), 1 if len(words) < 8 else 2 if len(words) < 16 else 3)
        for i in sorted(rng.sample(eligible, k)):
            options = [(name, fn(words[i], rng)) for name, fn in CLASSES.items()]
            options = [(name, w) for name, w in options if w is not None and w != words[i]]
            name, new = rng.choice(options)
            changes[i] = (name, new)
    variants = [i for i, w in enumerate(words) if i not in changes and placement(w)]
    if variants:
        i = rng.choice(variants)
        changes[i] = ("placement", placement(words[i]))
    out = text
    for i in sorted(changes, reverse=True):
        a, b = spans[i]
        out = out[:a] + changes[i][1] + out[b:]
    errors = [{"index": i, "input": changes[i][1], "gold": words[i], "kind": changes[i][0]}
              for i in sorted(changes) if changes[i][0] != "placement"]
    placements = [{"index": i, "input": changes[i][1], "gold": words[i]}
                  for i in sorted(changes) if changes[i][0] == "placement"]
    record = {"id": rec["id"], "category": rec["category"], "input": out,
              "references": [text, *rec.get("alternatives", [])], "errors": errors, "placement_variants": placements}
    validate(record)
    return record


def _require(ok: bool, rid: str, what: str) -> None:
    if not ok:
        raise ValueError(f"{rid}: {what}")


def validate(record: dict) -> None:
    """Each marked error differs from the gold word under the scoring comparison; nothing else does;
    placement variants differ in bytes only; the sentence's letters are unchanged. ValueError if not."""
    rid, src = record["id"], record["input"]
    in_words = _WORD.findall(src)
    for ref in record["references"]:
        ref_words = _WORD.findall(unicodedata.normalize("NFC", ref))
        _require([strip(w) for w in in_words] == [strip(w) for w in ref_words], rid, f"letters differ from {ref!r}")
    gold_words = _WORD.findall(record["references"][0])
    marked = {e["index"] for e in record["errors"]}
    for i, (a, b) in enumerate(zip(in_words, gold_words)):
        differs = comparison_key(a) != comparison_key(b)
        _require(differs == (i in marked), rid, f"word {i} {a!r} vs {b!r}: {'unmarked difference' if differs else 'marked error is no error'}")
        for ref in record["references"][1:]:
            if i in marked:
                _require(comparison_key(a) != comparison_key(_WORD.findall(ref)[i]), rid,
                         f"error at word {i} is right in the alternative {ref!r}")
    for p in record["placement_variants"]:
        i = p["index"]
        _require(in_words[i] != gold_words[i] and comparison_key(in_words[i]) == comparison_key(gold_words[i]),
                 rid, f"placement variant at word {i} is not a placement variant")


def build() -> list[dict]:
    rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_cat: dict[str, list[str]] = {}
    for r in rows:
        by_cat.setdefault(r["category"], []).append(r["id"])
    clean: set[str] = set()
    for cat, ids in by_cat.items():
        clean |= set(random.Random(f"vi-tone-errors:clean:{cat}").sample(sorted(ids), round(CLEAN_SHARE * len(ids))))
    return [corrupt(r, r["id"] in clean) for r in rows]


def render(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        same = TARGET.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{TARGET} differs from what the script builds")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({text.count(chr(10))} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
