"""The checks off the request path and cheap (issue 32), with their results unchanged: the language
identifier read from its unpacked copy gives py3langid's own probabilities, the per-character script
table counts as the regex did, the error table's shortcut counts as the full alignment did, and a run
writes each sample's checks into samples.jsonl after its requests, as `RunChecks.record` makes them."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

import glotbench.checks.language as L
from glotbench.checks import RunChecks
from glotbench.checks.errors import vietnamese_errors
from glotbench.core import Sample
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.languages import PROFILES
from glotbench.models.base import GenerateConfig, ModelBase, Prompt, Response
from glotbench.registry import get_benchmark
from glotbench.rundir import SampleSink, json_bytes
from glotbench.text.vietnamese import aligned_word_matches, word_diff

TEXTS = ["Đây là một câu tiếng Việt khá dài để kiểm tra", "This is English text that is not Vietnamese at all",
         "ສະບາຍດີ ນີ້ແມ່ນພາສາລາວ ທີ່ຂຽນຍາວພໍສົມຄວນ", "Saya suka makan nasi goreng di pagi hari bersama keluarga",
         "ＳａｙａＳｕｋａＭａｋａｎＮａｓｉＧｏｒｅｎｇ", "مرحبا بكم في هذا الاختبار الطويل نسبيا", "1234", "",
         "Kumusta ka na? Mabuti naman ako, salamat sa iyo", "ဒီနေ့ ရာသီဥတု ကောင်းပါတယ် မင်္ဂလာပါ",
         "ថ្ងៃនេះអាកាសធាតុល្អណាស់ ខ្ញុំចង់ទៅដើរលេង", "สวัสดีครับ วันนี้อากาศดีมาก", "混合 text ที่ mixed ສະບາຍ"]


def test_the_unpacked_identifier_ranks_exactly_as_py3langid(tmp_path, monkeypatch):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    monkeypatch.setenv("GLOTBENCH_CACHE_DIR", str(tmp_path))
    L._identifier.cache_clear()
    try:
        codes = tuple(sorted(PROFILES))
        fresh, known = L._identifier(codes)  # unpacked into tmp_path
        assert list((tmp_path / "langid").iterdir()), "nothing unpacked"
        L._identifier.cache_clear()
        calls = []
        monkeypatch.setattr(L, "_unpack", lambda *a: calls.append(a))
        mapped, known2 = L._identifier(codes)  # read from the unpacked files: not unpacked again
        assert calls == [] and known2 == known
        ref = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        assert known == tuple(c for c in codes if c in set(ref.nb_classes))
        ref.set_languages(list(known))
        for text in TEXTS + [t.upper() for t in TEXTS]:
            assert ref.rank(text) == fresh.rank(text) == mapped.rank(text), text
    finally:
        L._identifier.cache_clear()


def test_a_truncated_unpacked_file_falls_back_to_the_model(tmp_path, monkeypatch):
    monkeypatch.setenv("GLOTBENCH_CACHE_DIR", str(tmp_path))
    L._identifier.cache_clear()
    try:
        codes = tuple(sorted(PROFILES))
        good = L._identifier(codes)[0].rank(TEXTS[3])
        (part,) = (tmp_path / "langid").glob("*/nextmove.bin")
        part.write_bytes(part.read_bytes()[:1000])
        L._identifier.cache_clear()
        assert L._identifier(codes)[0].rank(TEXTS[3]) == good  # py3langid's own reading
    finally:
        L._identifier.cache_clear()


def test_script_shares_count_as_each_character_classified_afresh(monkeypatch):
    """The per-character table changes no count: the same texts with nothing remembered (each
    character's category and script read again, as before the table) give the same shares."""
    rng = random.Random(7)
    texts = TEXTS + ["\u0301a\u0301 \u0301", "e\u0301\u0323 x\u0300"]
    for _ in range(200):  # random code points of every plane (unassigned, marks, surrogates too)
        texts.append("".join(chr(rng.choice([rng.randrange(0x20, 0x3000), rng.randrange(0x3000, 0x2FFFF)]))
                             for _ in range(rng.randrange(1, 40))))
    remembered = [L.script_shares(text) for text in texts]
    assert len(L._char_scripts(tuple(L._script_names()))) > 100
    monkeypatch.setattr(L, "_CHAR_LIMIT", 0)
    L._char_scripts.cache_clear()
    try:
        assert [L.script_shares(text) for text in texts] == remembered
        assert L._char_scripts(tuple(L._script_names())) == {}
    finally:
        L._char_scripts.cache_clear()


def _errors_aligned_twice(answer: str, references: list[str]) -> tuple[Counter, int]:
    """vietnamese_errors as it was: the closest reference by alignment, its words from a second one."""
    best = max(references, key=lambda r: aligned_word_matches(answer, r)[0])
    counts: Counter = Counter()
    for word, kind in word_diff(answer, best):
        if kind in ("extra", "missing"):
            counts["word_added" if kind == "extra" else "word_removed"] += 1
        elif kind in ("tone", "mark"):
            from glotbench.checks.errors import _word_kind

            pred, _, ref = word.partition("→")
            counts[_word_kind(pred, ref)] += 1
    return counts, aligned_word_matches(answer, best)[1]


@pytest.mark.parametrize("answer, refs", [
    ("Tôi đi hoc ở trường", ["Tôi đi học ở trường"]),
    ("toi di hoc", ["Tôi đi học"]),
    ("Hôm nay trời đẹp quá đi", ["Hôm nay trời đẹp quá"]),
    ("Hòa bình", ["Hoà bình", "Hòa binh"]),
    ("Đường đi khó", ["Dường đi khó", "Đường đi khó lắm"]),
    ("", ["Một hai ba"]),
    ("Ｔôi đi", ["Tôi đi"]),
])
def test_the_error_table_counts_as_the_full_alignment_did(answer, refs):
    assert vietnamese_errors(answer, refs) == _errors_aligned_twice(answer, refs)


def test_a_spliced_line_is_the_record_with_its_checks(tmp_path):
    rec = {"id": "a/1", "repeat": 0, "output": "x \u00e9 \"q\"", "answer": {"k": [1, 2.5, None]}}
    checks = {"language": {"verdict": "ok", "scripts": {"Latin": 1.0}, "why": "é \u200b"}}
    sink = SampleSink(tmp_path / "s.jsonl")
    sink.add(rec)
    sink.add({**rec, "id": "a/0"})
    sink.close()
    sink.in_order({"a/0": 0, "a/1": 1}, lambda sid, r: checks if (sid, r) == ("a/1", 0) else None)
    lines = (tmp_path / "s.jsonl").read_bytes().splitlines(keepends=True)
    assert lines[0] == json_bytes({**rec, "id": "a/0"}) + b"\n"
    assert lines[1] == json_bytes({**rec, "checks": checks}) + b"\n"


def test_a_run_writes_each_samples_checks_after_its_requests(tmp_path, monkeypatch):
    """Through evaluate(): no check runs while the model is called; samples.jsonl holds the checks
    `RunChecks.record` makes for each sample, in item order."""
    from glotbench.benchmarks.vi_diacritics import ANSWER_FIELD

    replies = ["Xin chào các bạn, hôm nay trời đẹp quá", "This answer is English and not Vietnamese at all, sorry",
               "Tôi", "not json"]

    class Replies(ModelBase):
        def __init__(self):
            super().__init__("replies", spec="python:replies", concurrency=4)
            self.n = 0

        async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0):
            self.n += 1
            text = replies[self.n % len(replies)]
            text = text if text == "not json" else json.dumps({ANSWER_FIELD: text}, ensure_ascii=False)
            return Response(text=text, finish_reason="stop")

    seen = []
    real = RunChecks.check

    def check(self, sample):
        seen.append(sample.id)
        return real(self, sample)

    import glotbench.engine.runner as runner_mod

    sent = runner_mod.Runner._send_and_finish

    async def send(self, unit):
        assert seen == [], "a check ran while requests were in flight"
        return await sent(self, unit)

    monkeypatch.setattr(RunChecks, "check", check)
    monkeypatch.setattr(runner_mod.Runner, "_send_and_finish", send)
    res = evaluate("vi-diacritics", Replies(), RunOptions(limit=12, out=str(tmp_path / "r"), use_cache=False,
                                                         progress=False))
    rows = [json.loads(x) for x in (res.out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [s.id for s in res.samples] and len(rows) == 12
    fresh = RunChecks(get_benchmark("vi-diacritics"), res.dataset)
    verdicts = Counter()
    for row, s in zip(rows, res.samples):
        want = fresh.record(Sample.from_record(row))
        assert row.get("checks") == want.get("checks"), row["id"]
        verdicts[(row.get("checks") or {}).get("language", {}).get("verdict")] += 1
    assert verdicts["wrong_language"] >= 1 and verdicts["ok"] >= 1, verdicts
    assert res.results["checks"]["language"]["wrong"] == verdicts["wrong_language"]
