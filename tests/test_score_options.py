"""`glotbench score` options against sacrebleu's own CLI and API on the same files: BLEU's smoothing,
lower-casing, tokenizer, effective order and maximum n-gram order; chrF's β, character order,
whitespace, lower-casing and epsilon smoothing; sentence-level scores; JSON at full precision; the
width; Lao, Thai and Khmer segmentation under those options; SQuAD exact match beside token F1."""

from __future__ import annotations

import json

import pytest
from sacrebleu.metrics import BLEU, CHRF

import ref_squad
from conftest import cli, module_main
from glotbench.text.segment import segment

HYPS = ["The cat sat on the mat.", "hello World", "", "It is raining; take an umbrella!", "a b c d e f"]
REFS1 = ["the cat sat on a mat .", "Hello there world", "nothing here", "It's raining, take an umbrella.", "a b c d e g"]
REFS2 = ["A cat was sitting on the mat.", "hello world", "", "Take an umbrella: it is raining.", "a b c d"]
DATA = {
    "main": (HYPS, REFS1, REFS2),
    # no 4-gram matches in the corpus: the smoothing method and value change corpus BLEU
    "sparse": (["the cat", "a dog barked at me", "The sun"], ["the cat sat", "the dog barked loudly at him", "the sun is up"],
               ["a cat", "a dog was barking at me", "sun"]),
    # no 4-gram at all in the hypotheses: effective order changes corpus BLEU
    "short": (["the cat sat", "a dog barked", "The sun"], ["the cat sat down", "the dog barked loudly at him", "the sun is up"],
              ["a cat", "a dog was barking at me", "sun"]),
}


def _write(tmp_path, data="main"):
    paths = []
    for name, lines in zip(("h.txt", "r1.txt", "r2.txt"), DATA[data]):
        (tmp_path / f"{data}-{name}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(str(tmp_path / f"{data}-{name}"))
    return paths


@pytest.fixture()
def files(tmp_path):
    return _write(tmp_path)


def _ours(files, *args):
    out = cli("score", *args, "--format", "json", files[0], *files[1:])
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _sacrebleu(files, *args):
    """sacrebleu's console script: the JSON document (score rounded to 10 decimals) or, with -sl, the
    per-segment scores and its signature."""
    out = module_main("sacrebleu", *files[1:], "-i", files[0], *args, "-w", "10")
    assert out.returncode == 0, out.stderr
    if "-sl" not in args:
        return json.loads(out.stdout)
    lines = out.stdout.strip().split("\n")
    return {"segments": [float(x.split(" = ")[1].split()[0]) for x in lines],
            "signature": lines[0].split(" = ")[0].split("|", 1)[1]}


@pytest.mark.parametrize("data, ours, theirs", [
    ("sparse", ["--metric", "bleu"], ["-m", "bleu"]),
    ("sparse", ["--metric", "bleu", "--smooth-method", "floor"], ["-m", "bleu", "-s", "floor"]),
    ("sparse", ["--metric", "bleu", "--smooth-method", "floor", "--smooth-value", "0.3"], ["-m", "bleu", "-s", "floor", "-sv", "0.3"]),
    ("sparse", ["--metric", "bleu", "--smooth-method", "add-k", "--smooth-value", "0.5"], ["-m", "bleu", "-s", "add-k", "-sv", "0.5"]),
    ("sparse", ["--metric", "bleu", "--smooth-method", "none"], ["-m", "bleu", "-s", "none"]),
    ("main", ["--metric", "bleu", "--lowercase"], ["-m", "bleu", "-lc"]),
    ("main", ["--metric", "bleu", "--tokenize", "intl"], ["-m", "bleu", "-tok", "intl"]),
    ("main", ["--metric", "chrf", "--chrf-beta", "1"], ["-m", "chrf", "--chrf-beta", "1"]),
    ("main", ["--metric", "chrf", "--chrf-whitespace"], ["-m", "chrf", "--chrf-whitespace"]),
    ("main", ["--metric", "chrf", "--lowercase"], ["-m", "chrf", "--chrf-lowercase"]),
    ("main", ["--metric", "chrf", "--chrf-char-order", "4"], ["-m", "chrf", "--chrf-char-order", "4"]),
    ("main", ["--metric", "chrf++", "--chrf-eps-smoothing", "--chrf-beta", "3"],
     ["-m", "chrf", "--chrf-word-order", "2", "--chrf-eps-smoothing", "--chrf-beta", "3"]),
])
def test_corpus_options_match_the_sacrebleu_cli(tmp_path, data, ours, theirs):
    paths = _write(tmp_path, data)
    got, want = _ours(paths, *ours), _sacrebleu(paths, *theirs)
    assert round(got["score"], 10) == want["score"]
    assert f"sacrebleu:{want['signature']}" in got["signature"]  # sacrebleu's signature, whole
    assert got["n"] == len(DATA[data][0]) and got["ci_low"] <= got["score"] <= got["ci_high"]


def test_each_option_changes_the_number_on_its_data(tmp_path):
    """The cases above would not notice an option that is dropped unless it moves the score there."""
    seen = {}
    for data, flags in (("sparse", ()), ("sparse", ("--smooth-method", "floor")),
                        ("sparse", ("--smooth-method", "floor", "--smooth-value", "0.3")),
                        ("sparse", ("--smooth-method", "add-k", "--smooth-value", "0.5")),
                        ("sparse", ("--smooth-method", "none")), ("short", ()), ("short", ("--effective-order",)),
                        ("main", ()), ("main", ("--lowercase",)), ("main", ("--tokenize", "intl")),
                        ("main", ("--max-ngram-order", "2"))):
        seen.setdefault(data, []).append(_ours(_write(tmp_path, data), "--metric", "bleu", "--resamples", "0", *flags)["score"])
    for data, flags in (("main", ()), ("main", ("--chrf-beta", "1")), ("main", ("--chrf-whitespace",)),
                        ("main", ("--lowercase",)), ("main", ("--chrf-char-order", "4"))):
        seen.setdefault("chrf", []).append(_ours(_write(tmp_path, data), "--metric", "chrf", "--resamples", "0", *flags)["score"])
    for values in seen.values():
        assert len(set(values)) == len(values), seen


def test_options_sacrebleus_cli_lacks_match_its_api_and_are_signed(tmp_path, files):
    refs = [REFS1, REFS2]
    hyps, *short = DATA["short"]
    got = _ours(_write(tmp_path, "short"), "--metric", "bleu", "--effective-order")
    assert got["score"] == BLEU(effective_order=True).corpus_score(hyps, short).score > 0
    assert "eff:yes" in got["signature"]
    got = _ours(files, "--metric", "bleu", "--max-ngram-order", "2")
    assert got["score"] == BLEU(max_ngram_order=2).corpus_score(HYPS, refs).score
    assert got["signature"].startswith("glotbench:bleu|ngram:2|sacrebleu:")  # sacrebleu does not sign it
    got = _ours(files, "--metric", "chrf", "--chrf-beta", "3")
    assert got["score"] == CHRF(beta=3).corpus_score(HYPS, refs).score
    assert got["signature"].startswith("glotbench:chrf|beta:3|sacrebleu:")  # sacrebleu names it chrF3
    # A smoothing value sacrebleu's two decimals would hide is signed in full.
    got = _ours(files, "--metric", "bleu", "--smooth-method", "floor", "--smooth-value", "0.125")
    assert got["score"] == BLEU(smooth_method="floor", smooth_value=0.125).corpus_score(HYPS, refs).score
    assert "smooth_value:0.125" in got["signature"] and "smooth:floor[0.12]" in got["signature"]
    # Defaults leave the signature as it was.
    assert _ours(files, "--metric", "bleu")["signature"].startswith("glotbench:bleu|sacrebleu:")


@pytest.mark.parametrize("metric, ours, theirs", [
    ("bleu", [], ["-m", "bleu"]),
    ("bleu", ["--smooth-method", "add-k"], ["-m", "bleu", "-s", "add-k"]),
    ("chrf", ["--chrf-beta", "1"], ["-m", "chrf", "--chrf-beta", "1"]),
    ("chrf++", [], ["-m", "chrf", "--chrf-word-order", "2"]),
])
def test_sentence_level_matches_the_sacrebleu_cli(files, metric, ours, theirs):
    got = _ours(files, "--metric", metric, "--sentence-level", *ours)
    want = _sacrebleu(files, *theirs, "-sl")
    assert [round(x, 10) for x in got["segments"]] == want["segments"] and got["n"] == len(HYPS)
    assert f"sacrebleu:{want['signature']}" in got["signature"]  # BLEU: eff:yes, as sacrebleu sets it


def test_text_format_width_and_full_precision_json(files):
    wide = cli("score", "--metric", "bleu", "--width", "5", files[0], *files[1:])
    assert wide.returncode == 0, wide.stderr
    full = _ours(files, "--metric", "bleu")["score"]
    assert wide.stdout.startswith(f"bleu = {full:.5f}  (95% CI ")
    assert len(repr(full).split(".")[1]) > 5  # the JSON keeps every digit
    lines = cli("score", "--metric", "chrf", "--sentence-level", "--width", "3", files[0], *files[1:]).stdout.split("\n")
    segs = _ours(files, "--metric", "chrf", "--sentence-level")["segments"]
    assert lines[:len(HYPS)] == [f"{v:.3f}" for v in segs] and lines[len(HYPS)].startswith("glotbench:chrf|")
    both = _ours(files, "--metric", "bleu", "--metric", "chrf")
    assert [d["name"] for d in both] == ["bleu", "chrf"]  # several metrics: a list, as sacrebleu prints


def test_exact_match_beside_token_f1_follows_the_official_scripts(files):
    for norm_empty, ref in ((("--f1-norm", "squad"), ref_squad.v11),
                            (("--f1-norm", "squad", "--f1-empty", "v2.0"), ref_squad.v20)):
        em, f1 = _ours(files, "--metric", "exact_match", "--metric", "token_f1", *norm_empty)
        want = [ref(h, [a, b]) for h, a, b in zip(HYPS, REFS1, REFS2)]
        assert em["score"] == pytest.approx(100 * sum(w[0] for w in want) / len(HYPS), abs=1e-12)
        assert f1["score"] == pytest.approx(100 * sum(w[1] for w in want) / len(HYPS), abs=1e-12)
        assert em["signature"].startswith("glotbench:exact_match|norm:squad_v1.1|")
        assert f1["signature"].endswith(f"|empty:{norm_empty[-1] if len(norm_empty) > 2 else 'v1.1'}|boot:1000,seed:12345")
    seg = _ours(files, "--metric", "exact_match", "--sentence-level", "--f1-norm", "squad")["segments"]
    assert seg == [100.0 * ref_squad.v11(h, [a, b])[0] for h, a, b in zip(HYPS, REFS1, REFS2)]


LAO = (["ພາສາລາວເປັນພາສາທີ່ສວຍງາມ", "ຂ້ອຍມັກກິນເຂົ້າໜຽວ"], ["ພາສາລາວແມ່ນພາສາທີ່ງາມ", "ຂ້ອຍມັກກິນເຂົ້າໜຽວຫຼາຍ"])
THAI = (["ภาษาไทยเป็นภาษาที่สวยงาม", "ฉันชอบกินข้าวเหนียว"], ["ภาษาไทยคือภาษาที่งดงาม", "ฉันชอบกินข้าวเหนียวมาก"])
KHMER = (["ខ្ញុំចូលចិត្តញ៉ាំបាយ", "ភាសាខ្មែរស្អាត"], ["ខ្ញុំចូលចិត្តញ៉ាំបាយណាស់", "ភាសាខ្មែរពិតជាស្អាត"])


@pytest.mark.parametrize("lang, texts, ours, theirs", [
    ("lo", LAO, ["--metric", "bleu", "--smooth-method", "floor", "--lowercase"], ["-m", "bleu", "-s", "floor", "-lc"]),
    ("th", THAI, ["--metric", "chrf++", "--chrf-beta", "1", "--chrf-whitespace"],
     ["-m", "chrf", "--chrf-word-order", "2", "--chrf-beta", "1", "--chrf-whitespace"]),
    ("km", KHMER, ["--metric", "bleu", "--sentence-level", "--smooth-method", "add-k"], ["-m", "bleu", "-s", "add-k", "-sl"]),
    ("lo", LAO, ["--metric", "chrf++", "--sentence-level", "--chrf-char-order", "3"],
     ["-m", "chrf", "--chrf-word-order", "2", "--chrf-char-order", "3", "-sl"]),
])
def test_segmentation_still_applies_under_the_options(tmp_path, lang, texts, ours, theirs):
    """Ours on raw text = sacrebleu's CLI on the segmenter's words joined by spaces (BLEU: tok none)."""
    raw, seg = [], []
    for name, lines in (("h.txt", texts[0]), ("r.txt", texts[1])):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        (tmp_path / f"seg-{name}").write_text("\n".join(" ".join(segment(x, lang)) for x in lines) + "\n",
                                              encoding="utf-8")
        raw.append(str(tmp_path / name))
        seg.append(str(tmp_path / f"seg-{name}"))
    got = _ours(raw, *ours, "--lang", lang)
    want = _sacrebleu(seg, *theirs, *(["-tok", "none"] if "bleu" in theirs else []))
    if "segments" in got:
        assert [round(x, 10) for x in got["segments"]] == want["segments"]
    else:
        assert round(got["score"], 10) == want["score"]
    assert f"sacrebleu:{want['signature']}" in got["signature"] and "|seg:none" not in got["signature"]


@pytest.mark.parametrize("args, message", [
    (["--metric", "chrf", "--smooth-method", "floor"], "--smooth-method applies to bleu only, not chrf"),
    (["--metric", "bleu", "--chrf-beta", "3"], "--chrf-beta applies to chrf and chrf++ only, not bleu"),
    (["--metric", "token_f1", "--lowercase"], "--lowercase applies to bleu and chrf and chrf++ only, not token_f1"),
    (["--metric", "bleu", "--f1-empty", "v2.0"], "--f1-empty applies to token_f1 and exact_match only, not bleu"),
    (["--metric", "bleu", "--smooth-value", "0.2"], "--smooth-value applies to --smooth-method floor or add-k only"),
    (["--metric", "bleu", "--smooth-method", "lin"], "unknown --smooth-method 'lin'; sacrebleu has none, floor, add-k, exp"),
    (["--metric", "bleu", "--max-ngram-order", "0"], "--max-ngram-order must be at least 1, got 0"),
    (["--metric", "chrf", "--chrf-beta", "0"], "--chrf-beta must be at least 1, got 0"),
    (["--metric", "bleu", "--metric", "chrf", "--sentence-level"], "--sentence-level scores one metric at a time"),
    (["--metric", "bleu", "--metric", "bleu"], "--metric bleu is given twice"),
    (["--metric", "token_f1", "--f1-empty", "v3"], "unknown empty-answer rule 'v3'"),
    (["--metric", "bleu", "--resamples", "-1"], "--resamples must be 0 (no bootstrap) or more, got -1"),
    (["--metric", "bleu", "--format", "latex"], "--format must be text or json, got 'latex'"),
])
def test_options_that_do_not_apply_are_one_error_line(files, args, message):
    out = cli("score", *args, files[0], *files[1:])
    assert out.returncode == 2 and out.stderr.startswith(f"error: {message}") and len(out.stderr.splitlines()) == 1, out.stderr


def test_no_bootstrap_with_zero_resamples(files):
    got = _ours(files, "--metric", "token_f1", "--resamples", "0")
    assert got["ci_low"] == got["score"] == got["ci_high"] and "boot:" not in got["signature"]


# Files as sacrebleu's CLI reads them: lines end at "\n" only, each line's trailing whitespace removed.
RAW = {
    # trailing spaces and a tab: --chrf-whitespace would count them; sacrebleu strips them
    "trailing": ("the cat sat on the mat  \nhello there\t\nລາວ ພາສາ \n", "the cat sat on the mat\nhello there\nລາວ ພາສາ\n"),
    # CRLF in one file, LF in the other; a blank line in the middle
    "crlf": ("the cat sat on the mat\r\n\r\nit is raining today\r\n", "the cat sat on a mat\n\nit rains today\n"),
    # a lone CR inside a line is part of it (universal newlines would make it two lines)
    "lone-cr": ("the cat\rsat on the mat\nhello there\n", "the cat sat on the mat\nhello there\n"),
    # no final line break; one segment
    "one": ("Việt Nam đẹp lắm", "Việt Nam rất đẹp"),
}


@pytest.mark.parametrize("case", sorted(RAW))
@pytest.mark.parametrize("ours, theirs", [(["--metric", "chrf", "--chrf-whitespace"], ["-m", "chrf", "--chrf-whitespace"]),
                                          (["--metric", "bleu", "--tokenize", "none"], ["-m", "bleu", "-tok", "none"])])
def test_files_are_read_line_by_line_as_the_sacrebleu_cli_reads_them(tmp_path, case, ours, theirs):
    paths = []
    for name, text in zip(("h.txt", "r.txt"), RAW[case]):
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        paths.append(str(tmp_path / name))
    got, want = _ours(paths, *ours), _sacrebleu(paths, *theirs)
    assert round(got["score"], 10) == want["score"]
    assert got["n"] == len(RAW[case][1].removesuffix("\n").split("\n"))


def test_an_empty_file_or_a_directory_is_one_error_line(tmp_path, files):
    (tmp_path / "empty.txt").write_bytes(b"")
    for hyp, message in ((str(tmp_path / "empty.txt"), "empty, no line to score"),
                         (str(tmp_path), "is a directory, not a file")):
        out = cli("score", "--metric", "bleu", hyp, str(tmp_path / "empty.txt"))
        assert out.returncode == 2 and out.stderr.startswith("error: ") and message in out.stderr, out.stderr
        assert len(out.stderr.splitlines()) == 1
