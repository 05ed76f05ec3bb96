"""Families added for issue #34's Lao/Khmer/Burmese coverage (branch fam2): LR-Sum, WikiANN. Each is run on a
fixture in the hub's schema (written for the test) against the scripted loopback model, with the
score computed by hand in the comments, and the same replies scored by the reference rule re-derived."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_library_seahelm import FX, run, user_prompts, value

LIB = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"


# -- LR-Sum: ROUGE-L with the language's segmenter ---------------------------------------------------

def lcs(a: list[str], b: list[str]) -> int:
    """The longest common subsequence of two token lists (rouge_score's _lcs_table, re-derived)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def rouge_l(reply: list[str], reference: list[str]) -> tuple[float, float, float]:
    """rouge_score's _score_lcs: P = LCS/|reply|, R = LCS/|reference|, F = 2PR/(P+R), 0 if either is empty."""
    if not reply or not reference:
        return 0.0, 0.0, 0.0
    n = lcs(reference, reply)
    p, r = n / len(reply), n / len(reference)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


LAO = {"ລັດຖະບານລາວໄດ້ເປີດນຳໃຊ້ຂົວ": "ລັດຖະບານລາວເປີດຂົວໃໝ່", "ຝົນຕົກໜັກຕໍ່ເນື່ອງສອງມື້": "ນ້ຳຖ້ວມບ້ານ"}


def test_lr_sum_lao_rouge_l_by_hand(tmp_path, srv):
    s, samples = run(tmp_path, srv, "lr-sum", "lr_sum_lao.jsonl", LAO, config="lao")
    # LaoNLP: reference 1 ລັດຖະບານ|ລາວ|ເປີດ|ຂົວ|ໃໝ່|ໃນ|ວຽງຈັນ (7), reply ລັດຖະບານ|ລາວ|ເປີດ|ຂົວ|ໃໝ່ (5):
    #   LCS 5, P 1, R 5/7, F 2*(5/7)/(12/7) = 5/6
    # reference 2 ຝົນຕົກ|ໜັກ|ໃນ|ແຂວງຫຼວງພະບາງ, reply ນ້ຳຖ້ວມ|ບ້ານ: nothing shared, 0
    # mean F (5/6 + 0)/2 = 5/12, mean P 1/2, mean R 5/14
    assert value(s, "rougeL") == pytest.approx(5 / 12)
    assert value(s, "rougeL_precision") == pytest.approx(0.5)
    assert value(s, "rougeL_recall") == pytest.approx(5 / 14)
    assert len(samples) == 2


def test_lr_sum_khmer_rouge_l_by_hand(tmp_path, srv):
    s, _ = run(tmp_path, srv, "lr-sum", "lr_sum_khm.jsonl", {"រដ្ឋាភិបាលបានបើកស្ពាន": "ស្ពានថ្មី"}, config="khm")
    # Khmer character clusters: reference រ|ដ្ឋា|ភិ|បា|ល|បើ|ក|ស្ពា|ន|ថ្មី (10), reply ស្ពា|ន|ថ្មី (3):
    # LCS 3, P 1, R 3/10, F 2*0.3/1.3 = 6/13
    assert value(s, "rougeL") == pytest.approx(6 / 13)
    assert value(s, "rougeL_recall") == pytest.approx(0.3)


@pytest.mark.parametrize("lang,reply,reference", [
    ("lo", "ລັດຖະບານລາວເປີດຂົວໃໝ່", "ລັດຖະບານລາວ ເປີດຂົວໃໝ່ ໃນວຽງຈັນ"),
    ("km", "ស្ពានថ្មី", "រដ្ឋាភិបាលបើកស្ពានថ្មី"),
    ("my", "ရန်ကုန်မြို့တွင် မိုးရွာ", "ယနေ့ ရန်ကုန်မြို့တွင် မိုးသည်းထန်စွာ ရွာသည်"),
    ("th", "แมวกินปลา", "แมวกินปลาที่ตลาด"),
    ("vi", "Chính phủ mở cầu mới", "Chính phủ Lào mở cầu mới ở Viêng Chăn"),
])
def test_lr_sum_scores_as_rouge_score_lcs_over_the_segmenters_tokens(lang, reply, reference):
    from glotbench.metrics.rouge import RougeL

    ours = RougeL(lang)
    tokens = ours._scorer._tokenizer.tokenize
    assert tokens(reference), lang  # the script's letters are kept (rouge_score alone keeps none of lo/km/my/th)
    assert ours.score(reply, reference) == pytest.approx(rouge_l(tokens(reply), tokens(reference)))


def test_lr_sum_datasheet_covers_lao_khmer_burmese_from_the_pinned_revision():
    from glotbench.registry import families

    for code in ("lo", "km", "my", "th", "vi", "id"):
        fam = {f.name: f for f in families(code)}
        assert "lr-sum" in fam, code
        assert not fam["lr-sum"].datasheet.needs_data(code), code
    assert "lr-sum" not in {f.name for f in families("tl")}  # LR-Sum has no Tagalog


# -- through the real hub-loading code ------------------------------------------------------------

@pytest.fixture(scope="module")
def fam2_hub(tmp_path_factory):
    from test_tasks_hub import _repo, serve_hub

    from glotbench.tasks.files import read_task_file

    root = tmp_path_factory.mktemp("hub")
    rows = lambda name: [json.loads(x) for x in (FX / name).read_text(encoding="utf-8").splitlines()]  # noqa: E731
    spec, _ = read_task_file(LIB / "lr-sum.yaml")
    # a card that declares a config per language (the layout at the pinned commit was not seen: the task
    # reads whatever the card declares), and one without configs, as a script-loaded repository has
    card = ("---\nlicense: cc-by-4.0\nconfigs:\n- config_name: lao\n  data_files:\n  - split: test\n"
            "    path: lao/test-*.parquet\n---\n# LR-Sum\n")
    _repo(root, "bltlab/lr-sum", spec.data.revision,
          {"README.md": card, "lao/test-00000-of-00001.parquet": rows("lr_sum_lao.jsonl")})
    wikiann, _ = read_task_file(LIB / "wikiann.yaml")
    _repo(root, "unimelb-nlp/wikiann", wikiann.data.revision, {"km/test/0000.parquet": rows("wikiann_km.jsonl")})
    massive, _ = read_task_file(LIB / "massive-scenario.yaml")
    _repo(root, "mteb/amazon_massive_scenario", massive.data.revision, {"km/test/0000.parquet": rows("massive_km.jsonl")})
    opus, _ = read_task_file(LIB / "opus-100.yaml")
    _repo(root, "Helsinki-NLP/opus-100", opus.data.revision, {"en-km/test/0000.parquet": rows("opus_100_en_km.jsonl")})
    exam, _ = read_task_file(LIB / "thai-exam.yaml")
    _repo(root, "typhoon-ai/thai_exam", exam.data.revision,
          {"data/onet/onet_test.jsonl": (FX / "thai_exam_onet.jsonl").read_text(encoding="utf-8")})
    yield from serve_hub(root)


def test_lr_sum_reads_the_cards_configs_at_the_pinned_revision(tmp_path, fam2_hub, srv):
    from test_tasks_hub import glot

    srv.configure(answers=LAO)
    proc = glot(tmp_path, fam2_hub, "lr-sum", "--bench-opt", "config=lao", "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["benchmark"]["data"].startswith("hub:bltlab/lr-sum@b2a85bda57cab746d363b09aeb3c38a994c6fe1b")
    assert res["scores"]["overall"]["rougeL"]["value"] == pytest.approx(5 / 12)  # as by hand above


def test_lr_sum_config_the_card_does_not_declare_is_one_error_line(tmp_path, fam2_hub, srv):
    from test_tasks_hub import glot, one_error

    srv.configure(answers={})
    err = one_error(glot(tmp_path, fam2_hub, "lr-sum", "--bench-opt", "config=khm", "--model", srv.spec()))
    assert "khm" in err and "lao" in err  # names the config asked for and those the card has


# -- WikiANN: entity F1 as seqeval computes it ----------------------------------------------------------

KHMER = {"ហ៊ុន": "O B-PER I-PER O O B-ORG", "សាកលវិទ្យាល័យ": "B-ORG I-ORG O O O"}


def test_wikiann_khmer_entity_f1_by_hand(tmp_path, srv):
    s, _ = run(tmp_path, srv, "wikiann", "wikiann_km.jsonl", KHMER, config="km")
    # item 1: gold O B-PER I-PER O O B-LOC = {PER 1-2, LOC 5}; reply {PER 1-2, ORG 5}: 1 correct of 2, 2 true
    # item 2: gold B-ORG I-ORG I-ORG O O = {ORG 0-2}; reply {ORG 0-1}: a wrong boundary, 0 of 1, 1 true
    # micro: correct 1, predicted 3, true 3 -> P 1/3, R 1/3, F 2*1/(3+3) = 1/3
    assert value(s, "entity_f1") == pytest.approx(1 / 3)
    assert value(s, "entity_precision") == pytest.approx(1 / 3)
    assert value(s, "entity_recall") == pytest.approx(1 / 3)


def test_wikiann_tagalog_echoed_tokens_misaligned_reply_and_a_lone_i_tag(tmp_path, srv):
    replies = {"ipinanganak": "Si O\nJose B-PER\nRizal I-PER\nay O\nipinanganak O\nsa O\nCalamba B-LOC\n. O",
               "Unibersidad": "B-ORG I-ORG", "Maynila": "I-LOC"}
    s, samples = run(tmp_path, srv, "wikiann", "wikiann_tl.jsonl", replies, config="tl")
    # item 1: the tokens echoed before their tags; the 8 tags read in order: {PER 1-2, LOC 6} both right
    # item 2: 2 tags for 3 tokens -> no entity predicted, no answer; its ORG 0-2 still counts as true
    # item 3: I-LOC alone starts a chunk (seqeval's rule): LOC 0, right
    # correct 3, predicted 3, true 4 -> P 1, R 3/4, F 6/7; no answer 1 of 3
    assert value(s, "entity_f1") == pytest.approx(6 / 7)
    assert value(s, "entity_precision") == pytest.approx(1.0)
    assert value(s, "entity_recall") == pytest.approx(0.75)
    assert value(s, "no_answer_rate") == pytest.approx(1 / 3)
    assert len(samples) == 3
    assert any("1. Si\n2. Jose\n3. Rizal" in u and "the 8 tags" in u for u in user_prompts(srv))


@pytest.mark.parametrize("tags,expected", [
    (["B-PER", "I-PER", "O", "B-LOC"], {("PER", 0, 1), ("LOC", 3, 3)}),
    (["I-PER", "I-PER", "O"], {("PER", 0, 1)}),  # I- after O starts a chunk
    (["B-PER", "I-LOC"], {("PER", 0, 0), ("LOC", 1, 1)}),  # a type change ends one chunk and starts another
    (["B-ORG", "B-ORG"], {("ORG", 0, 0), ("ORG", 1, 1)}),  # B after B: two chunks
    (["S-LOC", "E-LOC"], {("LOC", 0, 0), ("LOC", 1, 1)}),  # IOBES: after S, E starts a new chunk
    (["O", "O"], set()),
])
def test_entities_follow_seqevals_chunk_rule(tags, expected):
    from glotbench.metrics.ner import entities

    assert entities(tags) == expected


def test_entities_and_corpus_f1_agree_with_seqeval_itself():
    seqeval = pytest.importorskip("seqeval.metrics")
    from seqeval.metrics.sequence_labeling import get_entities

    import random

    from glotbench.metrics.ner import entities, entity_counts

    rng = random.Random(7)
    names = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
    golds, preds = [], []
    for _ in range(300):
        n = rng.randint(1, 9)
        gold, pred = [rng.choice(names) for _ in range(n)], [rng.choice(names) for _ in range(n)]
        assert entities(pred) == set(map(tuple, get_entities(pred)))
        golds.append(gold)
        preds.append(pred)
    counts = [entity_counts(p, g) for p, g in zip(preds, golds)]
    correct, found, true = (sum(c[i] for c in counts) for i in range(3))
    assert 2 * correct / (found + true) == pytest.approx(seqeval.f1_score(golds, preds))
    assert correct / found == pytest.approx(seqeval.precision_score(golds, preds))
    assert correct / true == pytest.approx(seqeval.recall_score(golds, preds))


def test_wikiann_covers_khmer_burmese_tagalog_not_lao():
    from glotbench.registry import families

    for code in ("km", "my", "tl", "th", "vi", "id"):
        fam = {f.name: f for f in families(code)}
        assert "wikiann" in fam and not fam["wikiann"].datasheet.needs_data(code), code
    assert "wikiann" not in {f.name for f in families("lo")}



# -- ThaiExam as SEA-HELM scores it ---------------------------------------------------------------

THAI_EXAM = {  # question -> reply; golds A, B, C, A
    "คำใดเขียนถูกต้องตามพจนานุกรม": "คำตอบ: A",       # right
    "ผลบวกของ 17 และ 25": "คำตอบ: C",                 # gold B: wrong
    "แม่น้ำสายใดไหลผ่านกรุงเทพมหานคร": "คำตอบ:**C**",  # right: SEA-HELM's regex allows * after the tag
    "ข้อใดเป็นคำซ้อน": "ก",  # no tag, and ก is no label of SEA-HELM's: its null (a miss)
}


def test_thai_exam_scores_as_seahelm(tmp_path, srv):
    from test_library_seahelm import seahelm_normalized_accuracy

    s, _ = run(tmp_path, srv, "thai-exam", "thai_exam_onet.jsonl", THAI_EXAM, config="onet")
    assert value(s, "accuracy") == pytest.approx(2 / 4)
    # recall per gold class: A 1/2, B 0/1, C 1/1 -> balanced 1/2; k = 3 gold classes, floor 1/3:
    # (1/2 - 1/3) / (2/3) = 1/4, the headline
    assert value(s, "balanced_accuracy") == pytest.approx(0.5)
    assert value(s, "normalized_accuracy") == pytest.approx(0.25)
    assert value(s, "normalized_accuracy") == pytest.approx(
        seahelm_normalized_accuracy(["A", "B", "C", "A"], list(THAI_EXAM.values()), "คำตอบ:"))
    # the `letter` pipeline reads the Thai option label ก as A: 3 of 4
    assert value(s, "accuracy[letter]") == pytest.approx(3 / 4)
    prompt = user_prompts(srv)[0]
    assert prompt.startswith("ตอบคำถามโดยเลือกหนึ่งในตัวเลือกที่ให้ไป\n\nจงตอบตามรูปแบบดังต่อไปนี้:\n\"คำตอบ: ANSWER\"\n")
    assert "A, B, C, D หรือ E เท่านั้น\n\nคำถาม:\n```\n" in prompt and prompt.endswith("D: กระเพา\nE: กะเพร่า")


def test_thai_exam_ic_has_four_options_and_no_e_line(tmp_path, srv):
    rows = [json.loads(x) for x in (FX / "thai_exam_onet.jsonl").read_text(encoding="utf-8").splitlines()]
    ic = tmp_path / "ic.jsonl"
    ic.write_text("".join(json.dumps({k: v for k, v in r.items() if k not in ("e", "no", "year")},
                                     ensure_ascii=False) + "\n" for r in rows[:2]), encoding="utf-8")
    srv.configure(answers={"คำใดเขียนถูกต้องตามพจนานุกรม": "คำตอบ: E", "ผลบวกของ 17 และ 25": "คำตอบ: B"})
    from glotbench.engine.evaluate import RunOptions, evaluate

    res = evaluate("thai-exam", srv.spec(), RunOptions(data=str(ic), bench_options=(("config", "ic"),), progress=False,
                                                      out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    s = res.results["scores"]["overall"]
    # E is not an option of IC: no label (a miss); B right -> 1/2
    assert value(s, "accuracy") == pytest.approx(0.5)
    prompt = user_prompts(srv)[0]
    assert "A, B, C หรือ D เท่านั้น" in prompt and "\nE:" not in prompt



# -- MASSIVE scenario classification -----------------------------------------------------------------

MASSIVE_KM = {"ដាស់ខ្ញុំ": "alarm", "ភ្លៀងទេ": "Weather.", "ចាក់បទចម្រៀង": "news"}


def test_massive_khmer_accuracy_by_hand(tmp_path, srv):
    s, _ = run(tmp_path, srv, "massive-scenario", "massive_km.jsonl", MASSIVE_KM, config="km")
    # alarm right; "Weather." names weather, right; news for music, wrong -> 2/3
    assert value(s, "accuracy") == pytest.approx(2 / 3)
    assert value(s, "no_answer_rate") == 0.0
    assert "Choose one of: alarm, audio, calendar," in user_prompts(srv)[0]


def test_massive_burmese_a_reply_naming_two_scenarios_is_no_answer(tmp_path, srv):
    replies = {"အစည်းအဝေး": "calendar", "မုန့်ဟင်းခါး": "cooking", "ရေဒီယို": "play or music"}
    s, _ = run(tmp_path, srv, "massive-scenario", "massive_my.jsonl", replies, config="my")
    # calendar right; cooking for takeaway wrong; "play or music" names two options: no answer -> 1/3
    assert value(s, "accuracy") == pytest.approx(1 / 3)
    assert value(s, "no_answer_rate") == pytest.approx(1 / 3)



@pytest.mark.parametrize("task,codes", [("massive-scenario", ("km", "my", "tl", "th", "vi", "id", "ms")),
                                        ("thai-exam", ("th",)), ("opus-100", ("km", "my", "th", "vi", "id", "ms"))])
def test_pinned_data_covers(task, codes):
    from glotbench.registry import families

    for code in codes:
        fam = {f.name: f for f in families(code)}
        assert task in fam and not fam[task].datasheet.needs_data(code), (task, code)
    assert task not in {f.name for f in families("lo")}


@pytest.mark.parametrize("task,opts,answers,data,metric,expected", [
    ("wikiann", ("--bench-opt", "config=km"), KHMER,
     "hub:unimelb-nlp/wikiann@f7875fb3d62a2fd45887ff5d022c89c1aec737ef km/test", "entity_f1", 1 / 3),
    ("thai-exam", (), THAI_EXAM,
     "hub:typhoon-ai/thai_exam@a9a9d20a921868ec33aae812b6d0f9437a92a604 onet/test", "normalized_accuracy", 0.25),
    ("massive-scenario", ("--bench-opt", "config=km"), MASSIVE_KM,
     "hub:mteb/amazon_massive_scenario@d2e78ca52aba7193edd2fda2ec22d2b92637f78f km/test", "accuracy", 2 / 3),
    ("opus-100", ("--bench-opt", "config=km"), {"Where is the market?": "ផ្សារនៅឯណា?", "drink coffee":
                                               "ខ្ញុំចូលចិត្តផឹកកាហ្វេនៅពេលព្រឹក។", "The river is very wide.": "ទន្លេនេះធំទូលាយណាស់។"},
     "hub:Helsinki-NLP/opus-100@5dbc95431cccf08df792325d57ffb4e567b332cc en-km/test", "chrf++", 100.0),
])
def test_reads_the_pinned_layout(tmp_path, fam2_hub, srv, task, opts, answers, data, metric, expected):
    check_pinned_run(tmp_path, fam2_hub, srv, task, opts, answers, data, metric, expected)


def check_pinned_run(tmp_path, hub, srv, task, opts, answers, data, metric, expected) -> None:
    """`glotbench run TASK` from the loopback hub: the source it names and the headline by hand."""
    from test_tasks_hub import glot

    srv.configure(answers=answers)
    proc = glot(tmp_path, hub, task, *opts, "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["benchmark"]["data"] == data
    assert res["scores"]["overall"][metric]["value"] == pytest.approx(expected)  # as by hand above


# -- OPUS-100 translation ---------------------------------------------------------------------------

def test_opus_100_english_to_khmer_exact_replies_score_100(tmp_path, srv):
    replies = {"Where is the market?": "ផ្សារនៅឯណា?", "drink coffee": "ខ្ញុំចូលចិត្តផឹកកាហ្វេនៅពេលព្រឹក។",
               "The river is very wide.": "ទន្លេនេះធំទូលាយណាស់។"}
    s, _ = run(tmp_path, srv, "opus-100", "opus_100_en_km.jsonl", replies, config="km")
    assert value(s, "chrf++") == pytest.approx(100.0) and value(s, "bleu") == pytest.approx(100.0)
    assert "from English into Khmer" in user_prompts(srv)[0]


def test_opus_100_khmer_to_english_is_sacrebleus_corpus_chrf(tmp_path, srv):
    import sacrebleu

    replies = {"ផ្សារនៅឯណា": "Where is the market?", "ខ្ញុំចូលចិត្តផឹកកាហ្វេ": "I love drinking coffee every morning.",
               "ទន្លេនេះធំទូលាយ": "This river is wide."}
    s, _ = run(tmp_path, srv, "opus-100", "opus_100_en_km.jsonl", replies, config="km", direction="xx-en")
    refs = ["Where is the market?", "I like to drink coffee in the morning.", "The river is very wide."]
    hyps = list(replies.values())
    # English targets are not segmented: the figures are sacrebleu's own corpus chrF++ and BLEU
    assert value(s, "chrf++") == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score)
    assert value(s, "bleu") == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert 0 < value(s, "chrf++") < 100
