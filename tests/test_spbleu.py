"""spBLEU (`bleu_tokenize=spm:PATH`): BLEU over the pieces of a local SentencePiece model file, by
sacrebleu's own TokenizerSPM. The reference is sacrebleu itself: `corpus_bleu(tokenize="flores200")`
made to load the same file (placed where its tokenizer looks, its download refused), equal to 1e-9."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from conftest import cli
from glotbench.checks.rescore import rescore
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.metrics.corpus import SacreMetric, spm_model

# Lao, Khmer, Thai and English sentences written for the tests (not FLORES-200's).
TEXT = [
    "ຂ້ອຍໄປໂຮງຮຽນທຸກມື້.", "ມື້ນີ້ອາກາດດີຫຼາຍ.", "ແມ່ນ້ຳຂອງໄຫຼຜ່ານນະຄອນຫຼວງວຽງຈັນ.", "ຂອບໃຈຫຼາຍໆ.",
    "ຂ້ອຍຮັກປະເທດລາວ.", "ຕະຫຼາດເປີດແຕ່ເຊົ້າ.", "ខ្ញុំទៅសាលារៀនរាល់ថ្ងៃ។", "ថ្ងៃនេះអាកាសធាតុល្អណាស់។",
    "ទន្លេហូរកាត់រាជធានី។", "អរគុណច្រើន។", "ตลาดเปิดแต่เช้า", "The weather is very nice today.",
    "I go to school every day.", "The Mekong River flows through Vientiane.",
]
HYPS = ["ຂ້ອຍໄປໂຮງຮຽນ.", "ມື້ນີ້ອາກາດດີ", "ខ្ញុំទៅសាលារៀន។", "ទន្លេហូរកាត់រាជធានី។", "ตลาดเปิด", "I go to school."]
REFS = [TEXT[0], TEXT[1], TEXT[6], TEXT[8], TEXT[10], TEXT[12]]
REFS2 = [TEXT[4], TEXT[5], TEXT[7], TEXT[9], TEXT[10], TEXT[11]]  # a second reference stream


def train(path, text=TEXT, extra=40) -> str:
    """A small unigram SentencePiece model trained on `text` (sentencepiece's own trainer), at `path`."""
    import sentencepiece

    buf = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(text * 5), model_writer=buf, vocab_size=len(set("".join(text))) + extra,
        model_type="unigram", character_coverage=1.0, hard_vocab_limit=False, num_threads=1, minloglevel=2)
    path.write_bytes(buf.getvalue())
    return str(path)


@pytest.fixture
def model(tmp_path):
    return train(tmp_path / "flores200-like.model")


@pytest.fixture
def sacrebleu_flores200(tmp_path, monkeypatch, model):
    """sacrebleu's `flores200` tokenizer reading `model` from a cache folder in tmp_path; a download is an error."""
    import sacrebleu
    import sacrebleu.tokenizers.tokenizer_spm as spm_mod

    (tmp_path / "sb" / "models").mkdir(parents=True)
    (tmp_path / "sb" / "models" / "flores200sacrebleuspm").write_bytes(open(model, "rb").read())
    monkeypatch.setattr(spm_mod, "SACREBLEU_DIR", str(tmp_path / "sb"))

    def no_download(*a, **k):
        raise AssertionError(f"sacrebleu tried to download {a}")
    monkeypatch.setattr(spm_mod, "download_file", no_download)
    return lambda hyps, streams: sacrebleu.corpus_bleu(hyps, streams, tokenize="flores200").score


def test_spbleu_equals_sacrebleu_flores200_on_the_same_file(model, sacrebleu_flores200):
    for lang in ("lo", "km", None):  # spBLEU never segments: the language changes nothing
        ours = SacreMetric("bleu", lang, tokenize=f"spm:{model}")
        one = ours.corpus_score(HYPS, [[r] for r in REFS], resamples=0).estimate.value
        assert one == pytest.approx(sacrebleu_flores200(HYPS, [REFS]), abs=1e-9)
        two = ours.corpus_score(HYPS, [[a, b] for a, b in zip(REFS, REFS2)], resamples=0).estimate.value
        assert two == pytest.approx(sacrebleu_flores200(HYPS, [REFS, REFS2]), abs=1e-9)
    assert 0 < one < 100 and two != one


def test_the_signature_names_the_file_by_its_sha256(tmp_path, model):
    sha = hashlib.sha256(open(model, "rb").read()).hexdigest()
    assert spm_model(f"spm:{model}").sha256 == sha
    m = SacreMetric("bleu", "lo", tokenize=f"spm:{model}")
    m.corpus_score(HYPS, [[r] for r in REFS], resamples=0)
    sig = m.signature()
    assert f"tok:spm-{sha[:12]}" in sig and "seg:none" in sig and str(tmp_path) not in sig
    other = train(tmp_path / "other.model", TEXT[:8] + TEXT[11:], extra=10)  # another model: another signature
    o = SacreMetric("bleu", "lo", tokenize=f"spm:{other}")
    o.corpus_score(HYPS, [[r] for r in REFS], resamples=0)
    assert o.signature() != sig and f"tok:spm-{spm_model(f'spm:{other}').sha256[:12]}" in o.signature()


@pytest.mark.parametrize("bad,why", [
    ("missing.model", "No such file or directory"),
    ("notmodel.txt", "not a SentencePiece model"),
    ("adir", "Is a directory"),
    ("empty.model", "not a SentencePiece model"),
    ("truncated.model", "not a SentencePiece model"),
    ("", "needs the SentencePiece model file's path"),
])
def test_a_bad_model_file_is_one_error_line(tmp_path, bad, why):
    (tmp_path / "notmodel.txt").write_text("ຂ້ອຍໄປໂຮງຮຽນ\n", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    (tmp_path / "empty.model").write_bytes(b"")
    (tmp_path / "truncated.model").write_bytes(open(train(tmp_path / "whole.model"), "rb").read()[:1000])
    path = str(tmp_path / bad) if bad else ""
    with pytest.raises(GlotbenchError, match=why):
        SacreMetric("bleu", "lo", tokenize=f"spm:{path}")
    r = cli("rescore", str(tmp_path), "--variant", f"bleu_tokenize=spm:{path}")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error:") and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = cli("run", "laobench-translation", "--model", "python:spbleu_models:cut_reference",
            "--bench-opt", f"bleu_tokenize=spm:{path}", "--out", str(tmp_path / "run"))
    assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _directions(tmp_path, cache_path, **opts):
    from glotbench.benchmarks.laobench import LaoBenchTranslation

    out = str(tmp_path / ("spm" if opts else "plain"))
    evaluate("laobench-translation", "python:spbleu_models:cut_reference",
             RunOptions(out=out, cache_path=cache_path, progress=False, bench_options=tuple(opts.items())))
    by: dict[str, tuple[list[str], list[str]]] = {}
    from spbleu_models import cut_reference

    for it in LaoBenchTranslation().load():
        hyps, refs = by.setdefault(it.meta["direction"], ([], []))
        hyps.append(cut_reference([{"content": it.public["question"]}]))
        refs.append(it.gold["reference"])
    return out, by


def test_rescore_applies_spbleu_to_a_finished_run(tmp_path, cache_path, model, sacrebleu_flores200):
    run, by = _directions(tmp_path, cache_path)
    got = rescore([run], [f"bleu_tokenize=spm:{model}"])
    assert got["spm_models"][f"bleu_tokenize=spm:{model}"]["sha256"] == spm_model(f"spm:{model}").sha256
    groups = got["runs"][0]["scores"][f"bleu_tokenize=spm:{model}"]["bleu"]["groups"]
    assert set(groups) == set(by) and len(by) >= 3
    for d, (hyps, refs) in by.items():
        assert groups[d] == pytest.approx(sacrebleu_flores200(hyps, [refs]), abs=1e-9), d
    # the run's own BLEU (LaoNLP words for Lao, zh for Chinese) is another number
    assert got["runs"][0]["scores"]["as_run"]["bleu"]["groups"] != pytest.approx(groups)


def test_laobench_translation_scores_spbleu_when_asked(tmp_path, cache_path, model, sacrebleu_flores200):
    run, by = _directions(tmp_path, cache_path, bleu_tokenize=f"spm:{model}")
    results = json.loads((tmp_path / "spm" / "results.json").read_text(encoding="utf-8"))
    tag = spm_model(f"spm:{model}").tag
    assert f"bleu_tok:{tag}" in results["signature"] and "metrics:spbleu+chrf++" in results["signature"]
    assert str(tmp_path) not in results["signature"]
    for d, (hyps, refs) in by.items():
        assert results["scores"]["groups"]["direction"][d]["bleu"]["value"] == pytest.approx(
            sacrebleu_flores200(hyps, [refs]), abs=1e-9), d
        assert f"tok:{tag}" in results["metric_signatures"][f"bleu:{d.split('-')[1]}"]
    again = rescore([run], [])["runs"][0]  # as_run reproduces the stored spBLEU
    assert again["scores"]["as_run"]["bleu"]["groups"] == pytest.approx(again["stored"]["bleu"]["groups"], abs=1e-9)


FX = __import__("pathlib").Path(__file__).resolve().parent / "fixtures"


def test_a_task_file_takes_bleu_tokenize_spm(tmp_path, cache_path, model, sacrebleu_flores200):
    """flores-plus (a task file) with `--bench-opt bleu_tokenize=spm:PATH` on the FLORES+ fixture, Khmer
    target, a replayed system: its BLEU is sacrebleu's flores200 BLEU; the signature holds the model's
    SHA-256 (in the scorer part and the task hash), never its path; rescore's as_run reproduces it."""
    rows = [json.loads(x) for x in (FX / "tasks" / "flores_plus_devtest.jsonl").read_text(encoding="utf-8").splitlines()]
    refs = [r["text"] for r in rows if r["iso_639_3"] == "khm"]
    hyps = [ref[: 2 * len(ref) // 3] for ref in refs]
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps({"id": str(i), "output": h}, ensure_ascii=False) + "\n"
                              for i, h in enumerate(hyps)), encoding="utf-8")

    def run(name, tok):
        evaluate("flores-plus", f"replay:{replay}",
                 RunOptions(data=str(FX / "tasks" / "flores_plus_devtest.jsonl"), out=str(tmp_path / name),
                            bench_options=(("target", "khm_Khmr"), ("bleu_tokenize", tok)), cache_path=cache_path,
                            progress=False))
        return json.loads((tmp_path / name / "results.json").read_text(encoding="utf-8"))

    got = run("spm", f"spm:{model}")
    assert got["scores"]["overall"]["bleu"]["value"] == pytest.approx(sacrebleu_flores200(hyps, [refs]), abs=1e-9)
    sig = got["signature"]
    assert f"tok:{spm_model(f'spm:{model}').tag}" in sig and str(tmp_path) not in sig
    other = train(tmp_path / "other.model", TEXT[:9], extra=5)
    assert run("other", f"spm:{other}")["signature"] != sig
    again = rescore([str(tmp_path / "spm")], [])["runs"][0]
    assert again["scores"]["as_run"]["bleu"]["overall"] == pytest.approx(again["stored"]["bleu"]["overall"], abs=1e-9)


def test_bleu_tokenize_on_a_task_without_bleu_is_one_error_line(tmp_path):
    r = cli("run", "belebele", "--data", str(FX / "tasks" / "belebele_lao_Laoo.jsonl"), "--model",
            "python:spbleu_models:cut_reference", "--bench-opt", "bleu_tokenize=13a", "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "bleu_tokenize sets a corpus scorer's BLEU; this run's scorer is" in r.stderr
