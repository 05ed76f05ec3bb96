"""Families added for issue #34's Lao/Khmer/Burmese coverage (branch tasks34a): ALT, TICO-19, Pontoon
MASSIVE intents and myXNLI. Each runs on a fixture in the hub's schema (written for the test) against the
scripted loopback model, the score worked out by hand in the comments, the same replies scored by the
reference rule (SEACrowd's: sacrebleu's corpus BLEU and chrF on the text as written), and each is
read through the real hub-loading code at its pinned revision and layout."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from test_library_seahelm import FX, run, user_prompts, value

LIB = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"


def rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (FX / name).read_text(encoding="utf-8").splitlines() if x.strip()]


# -- ALT: English to Lao, Khmer, Burmese and back ----------------------------------------------------

ALT_LAO = {"The bridge was opened on Monday.": "ຂົວໄດ້ເປີດໃນວັນຈັນ.", "Heavy rain fell": "ຝົນຕົກໜັກໃນນະຄອນຫຼວງ.",
           "The team won": "ທີມໄດ້ຊະນະການແຂ່ງຂັນຮອບສຸດທ້າຍ."}


def test_alt_english_to_lao_exact_replies_score_100(tmp_path, srv):
    s, samples = run(tmp_path, srv, "alt", "alt_parallel_test.jsonl", ALT_LAO, config="lo")
    # every reply is its reference: every n-gram matches, brevity 1 -> 100 for chrF++ and BLEU
    assert value(s, "chrf++") == pytest.approx(100.0) and value(s, "bleu") == pytest.approx(100.0)
    assert len(samples) == 3
    assert "from English into Lao.\n\nThe bridge was opened on Monday." in user_prompts(srv)[0]


def test_alt_burmese_rows_without_burmese_text_are_left_out(tmp_path, srv):
    replies = {"The bridge was opened": "တံတားကို တနင်္လာနေ့တွင် ဖွင့်လှစ်ခဲ့သည်။", "The team won": "အသင်း"}
    s, samples = run(tmp_path, srv, "alt", "alt_parallel_test.jsonl", replies, config="my")
    # the second row's Burmese is "" (ALT's release has empty Burmese fields): 2 items, not 3
    assert len(samples) == 2
    assert not any("Heavy rain" in u for u in user_prompts(srv))
    assert 0 < value(s, "chrf++") < 100  # one exact, one a fragment


KHMER_TO_EN = {"ស្ពានត្រូវបានបើក": "The bridge was opened on Monday.", "ភ្លៀងធ្លាក់ខ្លាំង": "Rain.",
               "ក្រុមបានឈ្នះ": "The team won the final match."}
ENGLISH_REFS = ["The bridge was opened on Monday.", "Heavy rain fell in the capital.", "The team won the final match."]


def test_alt_khmer_to_english_seacrowd_bleu_by_hand(tmp_path, srv):
    s, _ = run(tmp_path, srv, "alt", "alt_parallel_test.jsonl", KHMER_TO_EN, config="khm", direction="xx-en",
               prompt="seacrowd")
    # 13a tokens: refs 7 + 7 + 7 = 21; replies 7 + 2 ("Rain", ".") + 7 = 16
    # matches: 1-grams 7 + 1 (".": "Rain" is not "rain") + 7 = 15 of 16; 2-grams 6 + 0 + 6 = 12 of 13;
    # 3-grams 10 of 10; 4-grams 8 of 8; brevity exp(1 - 21/16) = exp(-5/16)
    by_hand = 100 * math.exp(-5 / 16) * (15 / 16 * 12 / 13) ** 0.25
    assert value(s, "bleu") == pytest.approx(by_hand)
    import sacrebleu  # SEACrowd's SacreBLEU and chrf: sacrebleu's corpus scores at their defaults

    hyps = list(KHMER_TO_EN.values())
    assert value(s, "bleu") == pytest.approx(sacrebleu.corpus_bleu(hyps, [ENGLISH_REFS]).score)
    assert value(s, "chrf") == pytest.approx(sacrebleu.corpus_chrf(hyps, [ENGLISH_REFS]).score)
    assert user_prompts(srv)[0] == ("Translate the following text from Khmer to English.\n"
                                    "Text: ស្ពានត្រូវបានបើកនៅថ្ងៃច័ន្ទ។\nTranslation:")


# -- TICO-19: its TSV files ---------------------------------------------------------------------------

TICO_MY = {"Wash your hands": "ဆပ်ပြာနှင့် ရေဖြင့် လက်ကို မကြာခဏ ဆေးပါ။", "Stay at home": "နေမကောင်းလျှင် အိမ်တွင် နေပါ။",
           "The virus spreads": "ဗိုင်းရပ်စ်သည် အမှုန်များမှတစ်ဆင့် ပျံ့နှံ့သည်။"}


def test_tico_19_english_to_burmese_from_its_tsv(tmp_path, srv):
    s, samples = run(tmp_path, srv, "tico-19", "tico19_test_en_my.tsv", TICO_MY)
    assert value(s, "chrf++") == pytest.approx(100.0) and value(s, "bleu") == pytest.approx(100.0)
    assert [x["id"] for x in samples] == ["CMU_1:1", "CMU_1:2", "wiki_2:1"]
    # the TSV's quoted cell is read as csv reads it: the doubled quotes are one quote
    assert any('Stay at home if you feel "unwell".' in u for u in user_prompts(srv))


def test_tico_19_burmese_to_english_seacrowd_bleu_by_hand(tmp_path, srv):
    replies = {"ဆပ်ပြာ": "Wash your hands often with soap and water.", "နေမကောင်း": 'Stay at home if you feel "unwell".',
               "ဗိုင်းရပ်စ်": "The virus spreads."}
    s, _ = run(tmp_path, srv, "tico-19", "tico19_test_en_my.tsv", replies, direction="xx-en", prompt="seacrowd")
    # 13a splits the quotes and the final stops: refs 9 + 10 + 6 = 25 tokens, replies 9 + 10 + 4 = 23
    # reply 3 "The virus spreads ." against "The virus spreads through droplets .": 4 of 4 words,
    # 2 of 3 bigrams, 1 of 2 trigrams, 0 of 1 four-grams; replies 1 and 2 match whole
    # p1 23/23, p2 (8 + 9 + 2)/20, p3 (7 + 8 + 1)/17, p4 (6 + 7 + 0)/14, brevity exp(1 - 25/23)
    by_hand = 100 * math.exp(1 - 25 / 23) * (1 * 19 / 20 * 16 / 17 * 13 / 14) ** 0.25
    assert value(s, "bleu") == pytest.approx(by_hand)
    import sacrebleu

    refs = ["Wash your hands often with soap and water.", 'Stay at home if you feel "unwell".',
            "The virus spreads through droplets."]
    assert value(s, "bleu") == pytest.approx(sacrebleu.corpus_bleu(list(replies.values()), [refs]).score)


# -- Pontoon: Mozilla's localisation strings --------------------------------------------------------

PONTOON_LAO = {"Save Page As": "ບັນທຶກໜ້າເປັນ…", "Open a new tab": "ເປີດແຖບໃໝ່", "Bookmark this page": "ບຸກມາກໜ້ານີ້"}


def test_pontoon_english_to_lao_leaves_out_empty_targets(tmp_path, srv):
    s, samples = run(tmp_path, srv, "pontoon", "pontoon_en_lo.tsv", PONTOON_LAO)
    # "Firefox" has no Lao string in the file: 3 items of 4 rows, each reply exact -> 100
    assert len(samples) == 3
    assert value(s, "chrf++") == pytest.approx(100.0) and value(s, "bleu") == pytest.approx(100.0)


def test_pontoon_seacrowd_scores_the_lao_text_as_written(tmp_path, srv):
    replies = {"Save Page As": "ບັນທຶກໜ້າເປັນ…", "Open a new tab": "ເປີດແຖບໃໝ່", "Bookmark this page": "ບຸກມາກ ໜ້ານີ້"}
    s, _ = run(tmp_path, srv, "pontoon", "pontoon_en_lo.tsv", replies, prompt="seacrowd")
    import sacrebleu

    refs = list(PONTOON_LAO.values())
    # 13a does not split Lao: each string one token, so SEACrowd's BLEU sees 2 of 4 reply words right
    assert value(s, "bleu") == pytest.approx(sacrebleu.corpus_bleu(list(replies.values()), [refs]).score)
    assert value(s, "chrf") == pytest.approx(sacrebleu.corpus_chrf(list(replies.values()), [refs]).score)
    assert user_prompts(srv)[0] == "Translate the following text from English to Lao.\nText: Save Page As…\nTranslation:"


# -- MASSIVE intents: 60 labels, named in the reply ---------------------------------------------------

def test_massive_intent_burmese_exact_match_by_hand(tmp_path, srv):
    replies = {"နှိုးပေးပါ": "alarm_set", "မိုးရွာမလား": "The intent is weather_query.",
               "သီချင်းတစ်ပုဒ်": "play_radio", "အစည်းအဝေး": "CALENDAR_SET"}
    s, samples = run(tmp_path, srv, "massive-intent", "massive_intent_my.jsonl", replies)
    # named (the first intent name, any case): alarm_set, weather_query, play_radio (gold play_music:
    # wrong), calendar_set -> 3/4; first line as written, case ignored: alarm_set right, the sentence
    # wrong, play_radio wrong, CALENDAR_SET right -> 2/4
    assert value(s, "exact_match") == pytest.approx(3 / 4)
    assert value(s, "exact_match[first_line]") == pytest.approx(2 / 4)
    assert len(samples) == 4
    prompt = user_prompts(srv)[0]
    assert "Choose one of: alarm_query, alarm_remove, alarm_set," in prompt and prompt.count("_") >= 60


# -- myXNLI: Burmese NLI, and SEACrowd's rule by log-likelihood ---------------------------------------

MYXNLI = {"ဝန်ကြီးသည်": "Answer: A", "သူမသည် တစ်နေကုန်": "Answer: B", "ရထားသည်": "ဖြေ: ဂ"}


def test_myxnli_burmese_letters_by_hand(tmp_path, srv):
    s, samples = run(tmp_path, srv, "myxnli", "myxnli_test.jsonl", MYXNLI)
    # golds entailment (A), contradiction (C), neutral (B): A right, B wrong, the Burmese label ဂ reads
    # as C, wrong -> 1/3
    assert value(s, "accuracy") == pytest.approx(1 / 3)
    from glotbench.registry import get_benchmark

    items = get_benchmark("myxnli").load(str(FX / "myxnli_test.jsonl"))
    assert [x.gold["answer"] for x in items] == ["A", "C", "B"] and len(samples) == 3
    assert "Premise (Burmese): ဝန်ကြီးသည် ဆေးရုံသစ်ကို ဖွင့်လှစ်ခဲ့သည်။" in user_prompts(srv)[0]


def test_myxnli_seacrowd_scores_its_label_words_by_loglikelihood(tmp_path):
    from test_tasks_loglik import _run as loglik_run

    r, samples, _ = loglik_run(tmp_path, "myxnli", "myxnli_test.jsonl", prompt="seacrowd")
    # the fake engine: each character a token, log P = -code/1000; SEACrowd's words for entailment,
    # neutral, contradiction are "neutral", "irrelevant", "contradiction": " neutral" has the fewest and
    # lowest codes (-0.795 against -1.116 and -1.425), so every item picks entailment (A) -> 1/3
    lp = [-sum(map(ord, " " + w)) / 1000 for w in ("neutral", "irrelevant", "contradiction")]
    assert lp == pytest.approx([-0.795, -1.116, -1.425])
    out = json.loads(samples[0]["output"])
    assert out["continuations"] == [" neutral", " irrelevant", " contradiction"]
    assert out["logprob"] == pytest.approx(lp)
    assert all(x["answer"]["loglik_sum"] == "A" for x in samples)
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert r["config"]["method"] == "loglik"


# -- coverage declared by the datasheets --------------------------------------------------------------

@pytest.mark.parametrize("task,codes,absent", [
    ("alt", ("lo", "km", "my", "tl", "th", "vi", "id", "ms"), ()),
    ("tico-19", ("my", "tl", "id", "ms"), ("lo", "km")),
    ("pontoon", ("lo", "km", "my", "tl", "th", "vi", "id", "ms"), ()),
    ("massive-intent", ("tl", "th", "vi", "id", "ms"), ("lo",)),
    ("myxnli", ("my",), ("lo", "km", "tl")),
])
def test_pinned_data_covers(task, codes, absent):
    from glotbench.registry import families

    for code in codes:
        fam = {f.name: f for f in families(code)}
        assert task in fam and not fam[task].datasheet.needs_data(code), (task, code)
    for code in absent:
        assert task not in {f.name for f in families(code)}, (task, code)


def test_lao_khmer_burmese_family_counts():
    """`tasks list --language`'s count of families whose pinned or bundled data holds the language."""
    from glotbench.registry import families

    count = {code: sum(not f.datasheet.needs_data(code) for f in families(code)) for code in ("lo", "km", "my")}
    assert count["lo"] >= 10 and count["km"] >= 10 and count["my"] >= 15, count


def test_files_not_seen_at_the_pin_are_not_counted():
    """massive-intent's Burmese and Khmer files were not seen at its pinned commit (the listing seen stops
    at `el`): they run with --data, and `tasks list` marks them (the issue's review)."""
    from glotbench.registry import families

    fam = {f.name: f for f in families("my")}["massive-intent"]
    assert fam.datasheet.needs_data("my") and fam.datasheet.needs_data("km") and not fam.datasheet.needs_data("tl")


# -- through the real hub-loading code, at each pinned revision and layout ----------------------------

@pytest.fixture(scope="module")
def lkm_hub(tmp_path_factory):
    from test_tasks_hub import _repo, serve_hub

    from glotbench.tasks.files import read_task_file

    root = tmp_path_factory.mktemp("hub")
    sha = {name: read_task_file(LIB / f"{name}.yaml")[0].data.revision
           for name in ("alt", "tico-19", "pontoon", "massive-intent", "myxnli")}
    _repo(root, "mutiyama/alt", sha["alt"], {"alt-parallel/alt-test.parquet": rows("alt_parallel_test.jsonl")})
    _repo(root, "gmnlp/tico19", sha["tico-19"],
          {"test/test.en-my.tsv": (FX / "tico19_test_en_my.tsv").read_text(encoding="utf-8")})
    _repo(root, "ayymen/Pontoon-Translations", sha["pontoon"],
          {"en-lo.tsv": (FX / "pontoon_en_lo.tsv").read_text(encoding="utf-8")})
    _repo(root, "mteb/amazon_massive_intent", sha["massive-intent"],
          {"my/amazon_massive_intent-test.parquet": rows("massive_intent_my.jsonl")})
    _repo(root, "akhtet/myanmar-xnli", sha["myxnli"],
          {"data/test-00000-of-00001-0fd9f93baf8c9cdb.parquet": rows("myxnli_test.jsonl")})
    yield from serve_hub(root)


@pytest.mark.parametrize("task,opts,answers,data,metric,expected", [
    ("alt", ("--bench-opt", "config=lo"), ALT_LAO,
     "hub:mutiyama/alt@2cd2406f7d2363bef3be58653afd9c4eb0ab727b alt-parallel/test", "chrf++", 100.0),
    ("tico-19", (), TICO_MY, "hub:gmnlp/tico19@55d70dc0b1d1d0b2151c5e22815d823fedac3f2f en-my/test", "bleu", 100.0),
    ("pontoon", (), PONTOON_LAO,
     "hub:ayymen/Pontoon-Translations@7318c7cac7cdd5e2e7efc7e86d84256aaf54c8dc en-lo/train", "chrf++", 100.0),
    ("massive-intent", (), {"နှိုးပေးပါ": "alarm_set", "မိုးရွာမလား": "weather_query", "သီချင်း": "play_music",
                            "အစည်းအဝေး": "calendar_query"},
     "hub:mteb/amazon_massive_intent@de7944e740656f2ddc5f479079fcb0396529a6b2 my/test", "exact_match", 0.75),
    ("myxnli", (), MYXNLI, "hub:akhtet/myanmar-xnli@56b5468e589a550006cff24060de0bc9ca98c24a default/test",
     "accuracy", 1 / 3),
])
def test_reads_the_pinned_layout(tmp_path, lkm_hub, srv, task, opts, answers, data, metric, expected):
    from test_tasks_hub import pinned_run

    pinned_run(tmp_path, lkm_hub, srv, task, opts, answers, data, metric, expected)
