"""Filipino families added for issue #34 (branch tasks34b): TLUnified-NER, Universal NER, Filipino hate
speech, Shopee reviews, WMT24++ and Tatoeba. Each runs on a fixture in the hub's schema (written for the
test, not the datasets' rows) against the scripted loopback model, with the score computed by hand in the
comments, and the same replies scored by the reference rule re-derived (seqeval's chunks, sklearn's balanced
accuracy, sacrebleu's corpus chrF++/BLEU); then each pinned layout is read through the real hub code."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from test_library_seahelm import FX, run, seahelm_normalized_accuracy, user_prompts, value

LIB = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"
NEW = ("tlunified-ner", "universal-ner", "filipino-hatespeech", "shopee-reviews-tl", "wmt24pp", "tatoeba")


# -- TLUnified-NER and Universal NER: entity F1 as seqeval computes it ------------------------------

TLUNIFIED = {"Nagsalita": "O O O B-PER O B-ORG O O",  # gold {PER 3, LOC 5}: PER right, ORG for LOC wrong
             "Department": "O O B-ORG I-ORG I-ORG O O O O O B-LOC O",  # gold {ORG 2-4, LOC 10}: both right
             "Umuulan": "O O O O O B-LOC"}  # gold: no entity; one predicted, wrong


def test_tlunified_ner_entity_f1_by_hand(tmp_path, srv):
    s, samples = run(tmp_path, srv, "tlunified-ner", "tlunified_ner_test.jsonl", TLUNIFIED)
    # correct 1 + 2 + 0 = 3, predicted 2 + 2 + 1 = 5, true 2 + 2 + 0 = 4
    # P 3/5, R 3/4, F 2*3/(5+4) = 2/3
    assert value(s, "entity_precision") == pytest.approx(3 / 5)
    assert value(s, "entity_recall") == pytest.approx(3 / 4)
    assert value(s, "entity_f1") == pytest.approx(2 / 3)
    assert len(samples) == 3 and value(s, "no_answer_rate") == 0.0
    assert "Tokens:\n1. Nagsalita\n2. si\n3. Pangulong\n4. Marcos" in user_prompts(srv)[0]
    assert "Tagalog sentence" in user_prompts(srv)[0] and "the 8 tags" in user_prompts(srv)[0]


def test_tlunified_ner_matches_seqeval_itself():
    seqeval = pytest.importorskip("seqeval.metrics")
    names = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
    rows = [json.loads(x) for x in (FX / "tlunified_ner_test.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = [[names[t] for t in r["ner_tags"]] for r in rows]
    pred = [next(v for k, v in TLUNIFIED.items() if k in r["tokens"]).split() for r in rows]
    assert seqeval.f1_score(gold, pred) == pytest.approx(2 / 3)
    assert seqeval.precision_score(gold, pred) == pytest.approx(3 / 5)


UNER = {"Pumunta": "O O B-PER O B-LOC O",  # gold {PER 2, LOC 4}: both right
        "Nagtatrabaho": "O O B-PER I-PER O O B-ORG O"}  # gold {PER 2-4, ORG 6}: PER 2-3 a wrong boundary, ORG right


def test_universal_ner_tagalog_by_hand(tmp_path, srv):
    s, _ = run(tmp_path, srv, "universal-ner", "universal_ner_tl_trg.jsonl", UNER, config="tl_trg")
    # correct 2 + 1 = 3, predicted 2 + 2 = 4, true 2 + 2 = 4: P = R = F = 3/4
    assert value(s, "entity_f1") == pytest.approx(0.75)
    assert value(s, "entity_precision") == pytest.approx(0.75) and value(s, "entity_recall") == pytest.approx(0.75)


def test_universal_ner_cebuano_is_its_own_language(tmp_path, srv):
    s, samples = run(tmp_path, srv, "universal-ner", "universal_ner_ceb_gja.jsonl",
                     {"Miadto": "Miadto O\nsi O\nPedro B-PER\nsa O\nSugbo B-LOC\n. O"}, config="ceb_gja")
    # the tokens echoed before their tags: the 6 tags in order, both entities right
    assert value(s, "entity_f1") == pytest.approx(1.0)
    assert samples[0]["meta"]["lang"] == "ceb" and "Cebuano sentence" in user_prompts(srv)[0]


# -- Filipino hate speech: balanced and normalised accuracy ------------------------------------------

HATE = {"Ang galing ng debate": "not hate speech",  # gold 0 (not): right
        "Mga bobo kayong": "Hate speech.",  # gold 1: right
        "Salamat po sa lahat": "hate speech",  # gold 0: wrong
        "Dapat sa inyo ikulong": "I cannot tell",  # gold 1: no label named, a miss
        "Boboto ako bukas": "Not hate speech"}  # gold 0: right (the longer option named wins)


def test_filipino_hatespeech_balanced_and_normalised_by_hand(tmp_path, srv):
    s, samples = run(tmp_path, srv, "filipino-hatespeech", "filipino_hatespeech_test.jsonl", HATE)
    assert value(s, "accuracy") == pytest.approx(3 / 5)
    # recall per gold class: not hate 2/3, hate 1/2 -> balanced 7/12; floor 1/2: (7/12 - 1/2) / (1/2) = 1/6
    assert value(s, "balanced_accuracy") == pytest.approx(7 / 12)
    assert value(s, "normalized_accuracy") == pytest.approx(1 / 6)
    assert value(s, "no_answer_rate") == pytest.approx(1 / 5)
    assert [x["answer"]["label"] if x["answer"] else None for x in samples] == ["A", "B", "B", None, "A"]


def test_filipino_hatespeech_agrees_with_sklearn_balanced_accuracy():
    from sklearn.metrics import balanced_accuracy_score

    golds = ["not", "hate", "not", "hate", "not"]
    preds = ["not", "hate", "hate", "none", "not"]
    with pytest.warns(UserWarning):  # "none" (no answer) is a class no gold has, as SEA-HELM's "null"
        acc = balanced_accuracy_score(golds, preds, adjusted=False)
    assert acc == pytest.approx(7 / 12)
    assert max((acc - 1 / 2) / (1 - 1 / 2), 0) == pytest.approx(1 / 6)
    # SEA-HELM's rule over the same golds and replies, its labels the two options
    replies = ["not hate speech", "hate speech", "hate speech", "I cannot tell", "not hate speech"]
    names = {"not": "not hate speech", "hate": "hate speech"}
    assert seahelm_normalized_accuracy([names[g] for g in golds], replies, "Answer:") == pytest.approx(1 / 6)


# -- Shopee reviews: the star read from the reply --------------------------------------------------

SHOPEE = {"Sira agad": "1",  # label 0 = 1 star: right
          "Medyo manipis": "3 stars",  # label 2 = 3 stars: right
          "Sobrang ganda": "4",  # label 4 = 5 stars: wrong
          "Maayos naman": "4 or 5"}  # names two options: no answer


def test_shopee_reviews_stars_by_hand(tmp_path, srv):
    s, samples = run(tmp_path, srv, "shopee-reviews-tl", "shopee_reviews_tl_test.csv", SHOPEE)
    assert value(s, "accuracy") == pytest.approx(2 / 4)
    assert value(s, "no_answer_rate") == pytest.approx(1 / 4)
    # the gold is label + 1 stars, as SEACrowd's loader reads the label: options 1..5 are A..E
    from glotbench.registry import get_benchmark

    rows = list(csv.DictReader((FX / "shopee_reviews_tl_test.csv").open(encoding="utf-8")))
    golds = [it.gold["answer"] for it in get_benchmark("shopee-reviews-tl").load(str(FX / "shopee_reviews_tl_test.csv"))]
    assert golds == ["ABCDE"[int(r["label"])] for r in rows] == ["A", "C", "E", "D"]
    assert [x["answer"]["stars"] if x["answer"] else None for x in samples] == ["A", "C", "D", None]
    assert "How many stars (1 to 5)" in user_prompts(srv)[0]


# -- WMT24++ and Tatoeba: corpus chrF++ and BLEU -----------------------------------------------------

def test_wmt24pp_english_to_filipino_leaves_out_bad_sources(tmp_path, srv):
    import sacrebleu

    replies = {"The bridge will open": "Magbubukas ang tulay sa susunod na buwan.",
               "Thanks for the help": "Salamat sa tulong, kaibigan!"}
    r, samples = run_full(tmp_path, srv, "wmt24pp", "wmt24pp_en_fil_PH.jsonl", replies)
    assert len(samples) == 2 and all("CANARY" not in p for p in user_prompts(srv))  # is_bad_source left out
    hyps = list(replies.values())
    refs = ["Bubuksan ang tulay sa susunod na buwan.", "Salamat sa tulong, kaibigan!"]
    # Tagalog is written with spaces: no segmenter, so the figures are sacrebleu's own
    assert r["scores"]["overall"]["chrf++"]["value"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score)
    assert r["scores"]["overall"]["bleu"]["value"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert 0 < r["scores"]["overall"]["chrf++"]["value"] < 100
    assert set(r["scores"]["groups"]["domain"]) == {"news", "social"}
    assert user_prompts(srv)[0].startswith("Translate this text from English into Tagalog.")
    # the input-unchanged floor: the English sources copied, scored as translations
    copied = sacrebleu.corpus_chrf(["The bridge will open next month.", "Thanks for the help, friend!"], [refs],
                                   word_order=2).score
    assert r["input_floor"]["overall"]["chrf++"] == pytest.approx(copied)


def test_tatoeba_both_directions(tmp_path, srv):
    import sacrebleu

    r, _ = run_full(tmp_path, srv, "tatoeba", "tatoeba_tgl_eng.jsonl", {"I love you.": "Mahal kita.",
                                                                         "Where is the market?": "Nasaan ang palengke?"})
    hyps, refs = ["Mahal kita.", "Nasaan ang palengke?"], ["Mahal kita.", "Saan ang palengke?"]
    assert r["scores"]["overall"]["chrf++"]["value"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score)
    assert user_prompts(srv)[0].startswith("Translate this text from English into Tagalog.")
    back, _ = run_full(tmp_path / "b", srv, "tatoeba", "tatoeba_tgl_eng.jsonl",
                       {"Mahal kita.": "I love you.", "Saan ang palengke?": "Where is the market?"}, direction="xx-en")
    assert back["scores"]["overall"]["chrf++"]["value"] == pytest.approx(100.0)
    assert back["scores"]["overall"]["bleu"]["value"] == pytest.approx(100.0)
    assert user_prompts(srv)[0].startswith("Translate this text from Tagalog into English.")


def run_full(tmp_path, srv, task: str, data: str, answers: dict[str, str], **opts: str):
    from glotbench.engine.evaluate import RunOptions, evaluate

    srv.configure(answers=answers)
    res = evaluate(task, srv.spec(), RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                                out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    samples = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    return res.results, samples


# -- tasks list: each covers Tagalog from its pinned data ---------------------------------------------

@pytest.mark.parametrize("task", NEW)
def test_covers_tagalog_from_the_pinned_revision(task):
    import re

    from glotbench.registry import families, get_benchmark

    fam = {f.name: f for f in families("tl")}
    assert task in fam and not fam[task].datasheet.needs_data("tl"), task
    assert re.fullmatch(r"[0-9a-f]{40}", get_benchmark(task).data.revision)


def test_tagalog_count_in_tasks_list():
    from conftest import cli

    proc = cli("tasks", "list", "--language", "tl")
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[0]
    total, data_only = (int(x) for x in head.split(" benchmark families")[0:1] + [head.split("; ")[1].split(" of them")[0]])
    assert total - data_only >= 16, head  # 10 before this branch, 6 added here
    for task in NEW:
        assert f"\n  {task} " in proc.stdout and f"*{task} " not in proc.stdout


# -- through the real hub-loading code, at each pinned revision ----------------------------------------

@pytest.fixture(scope="module")
def fil_hub(tmp_path_factory):
    from test_tasks_hub import _repo, serve_hub

    from glotbench.tasks.files import read_task_file

    root = tmp_path_factory.mktemp("hub")
    rows = lambda name: [json.loads(x) for x in (FX / name).read_text(encoding="utf-8").splitlines()]  # noqa: E731
    rev = lambda task: read_task_file(LIB / f"{task}.yaml")[0].data.revision  # noqa: E731
    card = lambda cfg, path: (f"---\nconfigs:\n- config_name: {cfg}\n  data_files:\n  - split: test\n"  # noqa: E731
                              f"    path: {path}\n---\n# card\n")
    _repo(root, "ljvmiranda921/tlunified-ner", rev("tlunified-ner"),
          {"README.md": card("default", "data/test-*"), "data/test-00000-of-00001.parquet": rows("tlunified_ner_test.jsonl")})
    _repo(root, "universalner/universal_ner", rev("universal-ner"),
          {"README.md": card("tl_trg", "tl_trg/test-*"), "tl_trg/test-00000-of-00001.parquet": rows("universal_ner_tl_trg.jsonl")})
    for repo, sha in (("mteb/filipino_hate_speech", "fdb7536c08d2f10d8b8b618c3ff00b0be286d844"),
                      ("mteb/FilipinoHateSpeechClassification", "087a17c0b7f9a78901c88aea00ad2892a319fdac")):
        _repo(root, repo, sha, {"README.md": card("default", "data/test-*"),
                                "data/test-00000-of-00001.parquet": rows("filipino_hatespeech_test.jsonl")})
    _repo(root, "scaredmeow/shopee-reviews-tl-stars", rev("shopee-reviews-tl"),
          {"test.csv": (FX / "shopee_reviews_tl_test.csv").read_text(encoding="utf-8")})
    _repo(root, "google/wmt24pp", rev("wmt24pp"),
          {"en-fil_PH.jsonl": (FX / "wmt24pp_en_fil_PH.jsonl").read_text(encoding="utf-8")})
    _repo(root, "mteb/tatoeba-bitext-mining", rev("tatoeba"),
          {"README.md": card("tgl-eng", "tgl-eng/test-*"), "tgl-eng/test-00000-of-00001.parquet": rows("tatoeba_tgl_eng.jsonl")})
    yield from serve_hub(root)


@pytest.mark.parametrize("task,opts,answers,data,metric,expected", [
    ("tlunified-ner", (), TLUNIFIED, "hub:ljvmiranda921/tlunified-ner@1878ee08cf261063cac413f699e7c1618e2b4123 default/test",
     "entity_f1", 2 / 3),
    ("universal-ner", (), UNER, "hub:universalner/universal_ner@18aae0865c50a30f5321784ac6d8b1a00c96b8ce tl_trg/test",
     "entity_f1", 0.75),
    ("filipino-hatespeech", (), HATE, "hub:mteb/filipino_hate_speech@fdb7536c08d2f10d8b8b618c3ff00b0be286d844 default/test",
     "normalized_accuracy", 1 / 6),
    ("filipino-hatespeech", ("--bench-opt", "version=v1"), HATE,
     "hub:mteb/FilipinoHateSpeechClassification@087a17c0b7f9a78901c88aea00ad2892a319fdac default/test",
     "normalized_accuracy", 1 / 6),
    ("shopee-reviews-tl", (), SHOPEE, "hub:scaredmeow/shopee-reviews-tl-stars@d096f402fdc76886458c0cfb5dedc829bea2b935/test",
     "accuracy", 0.5),
    ("wmt24pp", (), {"The bridge will open": "Bubuksan ang tulay sa susunod na buwan.", "Thanks for the help":
                 "Salamat sa tulong, kaibigan!"},
     "hub:google/wmt24pp@fd7405c06494bc66a57b25f55d217a72f96e60dc en-fil_PH/train", "chrf++", 100.0),
    ("tatoeba", (), {"I love you.": "Mahal kita.", "Where is the market?": "Saan ang palengke?"},
     "hub:mteb/tatoeba-bitext-mining@69e8f12da6e31d59addadda9a9c8a2e601a0e282 tgl-eng/test", "chrf++", 100.0),
])
def test_reads_the_pinned_layout(tmp_path, fil_hub, srv, task, opts, answers, data, metric, expected):
    from test_tasks_hub import pinned_run

    pinned_run(tmp_path, fil_hub, srv, task, opts, answers, data, metric, expected)  # the numbers by hand above


# -- the sacrebleu variants: sacrebleu's own BLEU and chrF on the text as written ------------------

def test_tatoeba_sacrebleu_variant_is_sacrebleus_default_bleu_and_chrf(tmp_path, srv):
    import sacrebleu

    answers = {"I love you.": "Mahal kita.", "Where is the market?": "Nasaan ang palengke?"}
    r, _ = run_full(tmp_path, srv, "tatoeba", "tatoeba_tgl_eng.jsonl", answers, prompt="sacrebleu")
    hyps, refs = ["Mahal kita.", "Nasaan ang palengke?"], ["Mahal kita.", "Saan ang palengke?"]
    assert r["scores"]["overall"]["chrf"]["value"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)
    assert r["scores"]["overall"]["bleu"]["value"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert "chrf++" not in r["scores"]["overall"]
    assert "prompt_variant:sacrebleu" in r["signature"] and "nw:0" in r["signature"] and "tok:13a" in r["signature"]


def test_wmt24pp_thai_segments_by_default_and_not_in_the_sacrebleu_variant(tmp_path, srv):
    import sacrebleu

    from glotbench.metrics.corpus import SacreMetric

    answers = {"The market opens early.": "ตลาดเปิดเช้า", "It is raining in Bangkok": "วันนี้ฝนตกในกรุงเทพ"}
    hyps, refs = ["ตลาดเปิดเช้า", "วันนี้ฝนตกในกรุงเทพ"], ["ตลาดเปิดแต่เช้า", "วันนี้ฝนตกที่กรุงเทพ"]
    r, _ = run_full(tmp_path, srv, "wmt24pp", "wmt24pp_en_th_TH.jsonl", answers, config="en-th_TH")
    seg = SacreMetric("chrf++", "th").corpus_score(hyps, [[x] for x in refs], resamples=0).estimate.value
    assert r["scores"]["overall"]["chrf++"]["value"] == pytest.approx(seg)  # Thai words from the segmenter
    assert "seg:" in r["signature"]
    v, _ = run_full(tmp_path / "v", srv, "wmt24pp", "wmt24pp_en_th_TH.jsonl", answers, config="en-th_TH",
                    prompt="sacrebleu")
    assert v["scores"]["overall"]["chrf"]["value"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)
    assert v["scores"]["overall"]["bleu"]["value"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    # unsegmented Thai: one "word" per sentence, so BLEU sees no shared 1-gram; segmented it does
    assert v["scores"]["overall"]["bleu"]["value"] == pytest.approx(0.0)
    assert r["scores"]["overall"]["bleu"]["value"] > 0


# -- malformed rows: one line naming the row, never a label made up ---------------------------------

@pytest.mark.parametrize("task,name,text,needle", [
    ("shopee-reviews-tl", "rows.csv", 'text,label\n"Maganda",\n', "rows.csv:2: fields.gold.answer: label ''"),  # no star
    ("shopee-reviews-tl", "rows.csv", 'text,label\n"Maganda",7\n', "label '7' (made 'H') is neither"),  # 8 stars
    ("filipino-hatespeech", "rows.jsonl", '{"text": "Galing", "label": null}\n', "rows.jsonl:1: fields.gold.answer: label None"),
    ("filipino-hatespeech", "rows.jsonl", '{"text": "Galing", "label": "1.5"}\n', "'1.5' is not a whole number"),
    ("tlunified-ner", "rows.jsonl", '{"id": "a", "tokens": ["Si", "Juan"], "ner_tags": [0, 9]}\n',
     "has a tag that is not an index of the scorer's 7 labels"),
    ("universal-ner", "rows.jsonl", '{"idx": "a", "tokens": ["Si", "Juan"]}\n', "no column 'ner_tags'"),
    ("wmt24pp", "rows.jsonl", '{"lp": "en-fil_PH", "domain": "news", "document_id": "d", "segment_id": 1, "source": "Hi",'
                              ' "target": "Kumusta"}\n', "data.where: 'is_bad_source' is undefined"),
    ("tatoeba", "rows.jsonl", '{"sentence1": "Mahal kita."}\n', "sentence2"),
])
def test_a_malformed_row_is_one_error_line(tmp_path, task, name, text, needle):
    from conftest import cli

    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    proc = cli("tasks", "check", task, "--data", str(f))
    errors = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode != 0 and len(errors) == 1 and errors[0].startswith("error: "), proc.stderr
    assert needle in errors[0] and "Traceback" not in proc.stderr
