"""SEA-HELM's own tasks in the library (seahelm-sentiment, -nli, -causal, -summarization, xlsum): each
run on a fixture in the hub's schema against the scripted loopback model, the numbers computed by hand
in the comments, and the same replies scored by SEA-HELM's rule re-derived (its F1AccMetric regex and
normalize_answer, sklearn's balanced accuracy, its normalize_score)."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.metrics import normalise_to_floor

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"


def run(tmp_path, srv, task: str, data: str, answers: dict[str, str], **opts: str):
    srv.configure(answers=answers)
    res = evaluate(task, srv.spec(), RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                                out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    samples = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    return res.results["scores"]["overall"], samples


def value(scores, name):
    return scores[name]["value"]


# -- SEA-HELM's rule, re-derived from src/metrics/f1_acc_metric.py and seahelm_metric.py (6844e6c5) --

def seahelm_extract(reply: str, tag: str, labels: list[str]) -> str:
    label_map = {label.lower(): label for label in labels}
    try:
        output = re.search(tag + rf"[\s\*]*({'|'.join(map(str, labels))})+", reply, flags=re.IGNORECASE).group(1)
        assert output is not None
    except Exception:
        output = reply
    output = output.strip()
    output = " ".join(output.lower().strip(string.punctuation + " " + "\n").split())
    return label_map.get(output, "null")


def seahelm_normalized_accuracy(golds: list[str], replies: list[str], tag: str) -> float:
    from sklearn.metrics import balanced_accuracy_score

    labels = sorted(set(golds))
    preds = [seahelm_extract(r, tag, labels) for r in replies]
    with pytest.warns(UserWarning) if "null" in preds else _nothing():
        acc = balanced_accuracy_score(golds, preds)
    return max((acc - 1 / len(labels)) / (1 - 1 / len(labels)), 0)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


TH_REPLIES = {  # sentence -> reply; golds: แง่บวก x3, แง่ลบ, เฉยๆ
    "ร้านนี้อาหารอร่อยมาก": "คำตอบ: แง่บวก",          # positive, right
    "ชอบกาแฟแก้วนี้": "คำตอบ: **แง่ลบ**",              # positive read as negative: wrong
    "พนักงานยิ้มแย้ม": "คำตอบ: แง่บวก.",               # positive, right (the full stop outside the group)
    "รอคิวนานเกินไป": "แง่ลบ",                        # no tag: the whole reply is the label, right
    "ร้านเปิดเวลาแปดโมงเช้า": "ประโยคนี้เป็นกลาง",        # no label at all: SEA-HELM's null, a miss
}


def test_thai_sentiment_scores_balanced_and_normalised_as_seahelm(tmp_path, srv):
    s, samples = run(tmp_path, srv, "seahelm-sentiment", "seahelm_sentiment_th.jsonl", TH_REPLIES, config="th")
    assert value(s, "accuracy") == pytest.approx(3 / 5)
    # recall per gold class: positive 2/3, negative 1/1, neutral 0/1 -> mean 5/9
    assert value(s, "balanced_accuracy") == pytest.approx(5 / 9)
    # (5/9 - 1/3) / (1 - 1/3) = (2/9) / (2/3) = 1/3, the headline
    assert value(s, "normalized_accuracy") == pytest.approx(1 / 3)
    assert value(s, "no_answer_rate") == pytest.approx(1 / 5)
    golds = ["แง่บวก", "แง่บวก", "แง่บวก", "แง่ลบ", "เฉยๆ"]
    assert value(s, "normalized_accuracy") == pytest.approx(
        seahelm_normalized_accuracy(golds, list(TH_REPLIES.values()), "คำตอบ:"))
    assert '\nจงตอบตามรูปแบบดังต่อไปนี้:\n"คำตอบ: ANSWER"\n' in user_prompts(srv)[0]  # SEA-HELM's preamble, its tag filled


def test_lao_sentiment_has_two_labels_and_a_floor_of_one_half(tmp_path, srv):
    replies = {"ອາຫານຮ້ານນີ້ແຊບຫຼາຍ": "ຄຳຕອບ: ແງ່ບວກ", "ລົດເມມາຊ້າຫຼາຍ": "ຄຳຕອບ: ແງ່ບວກ",
               "ໂທລະສັບເຄື່ອງນີ້": "ຄຳຕອບ: ແງ່ລົບ"}
    s, _ = run(tmp_path, srv, "seahelm-sentiment", "seahelm_sentiment_lo.jsonl", replies, config="lo")
    assert value(s, "accuracy") == pytest.approx(2 / 3)
    assert value(s, "balanced_accuracy") == pytest.approx(0.75)  # positive 1/1, negative 1/2
    assert value(s, "normalized_accuracy") == pytest.approx(0.5)  # (0.75 - 0.5) / 0.5
    assert value(s, "normalized_accuracy") == pytest.approx(
        seahelm_normalized_accuracy(["ແງ່ບວກ", "ແງ່ລົບ", "ແງ່ລົບ"], list(replies.values()), "ຄຳຕອບ:"))


def test_burmese_zero_width_space_after_the_tag_is_a_miss_by_seahelms_rule_only(tmp_path, srv):
    # Python's \s is not U+200B: SEA-HELM's regex misses the tag, the whole reply is no label (null);
    # the `label` pipeline (glotbench's option_text) reads the option the reply names.
    replies = {"မုန့်ဟင်းခါး": "အဖြေ-\u200bအပြုသဘော", "ဘက်ထရီ": "အဖြေ- အပျက်သဘော"}
    s, _ = run(tmp_path, srv, "seahelm-sentiment", "seahelm_sentiment_my.jsonl", replies, config="my")
    assert value(s, "accuracy") == pytest.approx(0.5)
    assert value(s, "normalized_accuracy") == pytest.approx(0.0)  # balanced 0.5 against the floor 0.5
    assert value(s, "accuracy[label]") == pytest.approx(1.0)
    assert value(s, "normalized_accuracy[label]") == pytest.approx(1.0)
    assert seahelm_extract(replies["မုန့်ဟင်းခါး"], "အဖြေ-", ["အပြုသဘော", "အပျက်သဘော"]) == "null"


def test_thai_nli_letters_case_insensitive(tmp_path, srv):
    replies = {"แมวสีดำนอนหลับ": "คำตอบ: A", "ร้านกาแฟปิดทำการ": "คำตอบ: c", "นักเรียนกำลังอ่านหนังสือ": "คำตอบ: **C**"}
    s, _ = run(tmp_path, srv, "seahelm-nli", "seahelm_nli_th.jsonl", replies, config="th")
    assert value(s, "accuracy") == pytest.approx(2 / 3)  # the lower-case c is read as C, against gold B
    assert value(s, "balanced_accuracy") == pytest.approx(2 / 3)  # A 1/1, B 0/1, C 1/1
    assert value(s, "normalized_accuracy") == pytest.approx(0.5)  # (2/3 - 1/3) / (2/3)
    assert value(s, "normalized_accuracy") == pytest.approx(
        seahelm_normalized_accuracy(["A", "B", "C"], list(replies.values()), "คำตอบ:"))


def test_indonesian_causal_prompt_is_seahelms_and_a_constant_answer_scores_zero(tmp_path, srv):
    replies = {"Jalanan di depan rumah": "Jawaban: B", "Anak itu terjatuh": "Jawaban: B"}
    s, samples = run(tmp_path, srv, "seahelm-causal", "seahelm_causal_id.jsonl", replies, config="id")
    assert value(s, "accuracy") == pytest.approx(0.5)
    assert value(s, "normalized_accuracy") == pytest.approx(0.0)  # balanced (0 + 1) / 2 = the floor 1/2
    # SEA-HELM's prompt: preamble (tag filled), a blank line, the task template, stripped
    preamble = ('Jawablah hanya dengan menggunakan format berikut ini:\n"{answer_tag} ANSWER"\n'
                "Ganti ANSWER dengan pilihan yang telah dipilih. Gunakan huruf A atau B saja sebagai jawabannya.")
    task = ("Berdasarkan situasi yang diberikan, manakah dari pilihan berikut ini yang lebih mungkin menjadi "
            "{question_translated}?\n\nSituasi:\n```\n{premise}\n```\nPilihlah jawaban yang terbaik dari pilihan "
            "di bawah ini:\nA: {choice1}\nB: {choice2}")
    expected = (preamble.format(answer_tag="Jawaban:") + "\n\n" + task.format(
        question_translated="sebab", premise="Jalanan di depan rumah menjadi basah.",
        choice1="Hujan turun semalaman.", choice2="Matahari bersinar terik.")).strip()
    assert expected in user_prompts(srv)


def user_prompts(srv) -> list[str]:
    """The user turns the loopback server received, in order."""
    return [m["content"] for r in srv.requests() for m in r.get("messages", []) if m.get("role") == "user"]


@pytest.mark.parametrize("score,floor,top,expected", [
    (0.5, 1 / 3, 1.0, 0.25),      # SEA-HELM's three-label task: a balanced accuracy of 1/2
    (0.2, 1 / 3, 1.0, 0.0),       # below the floor: 0, as normalize_score's max(..., 0)
    (40.0, 0.0, 100.0, 0.4),      # a ROUGE-L of 40 points against 0
    (0.7, 0.7, 0.7, 0.0),         # a floor equal to the top: 0
])
def test_normalise_to_floor_is_seahelms_normalize_score(score, floor, top, expected):
    assert normalise_to_floor(score, floor, top) == pytest.approx(expected)
    assert normalise_to_floor(-1.0, 0.0, clamp=False) == -1.0


# -- ROUGE-L with the language's segmenter, and XL-Sum --------------------------------------------

def test_rouge_l_equals_rouge_score_given_the_same_tokens():
    from rouge_score import rouge_scorer

    from glotbench.metrics.rouge import RougeL

    ours = RougeL("th")
    # newmm: แมว|กิน|ปลา|ที่|ตลาด against แมว|กิน|ปลา: LCS 3, P 3/5, R 3/3, F 2PR/(P+R) = 0.75
    assert ours.score("แมวกินปลาที่ตลาด", "แมวกินปลา") == pytest.approx((0.6, 1.0, 0.75))

    class Tok:
        def tokenize(self, text):
            return text.split("|")

    direct = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Tok()).score("แมว|กิน|ปลา", "แมว|กิน|ปลา|ที่|ตลาด")["rougeL"]
    assert (direct.precision, direct.recall, direct.fmeasure) == pytest.approx(ours.score("แมวกินปลาที่ตลาด", "แมวกินปลา"))
    # rouge_score's own tokenizer keeps only [a-z0-9]: Thai text has no tokens and scores 0
    assert rouge_scorer.RougeScorer(["rougeL"]).score("แมวกินปลา", "แมวกินปลา")["rougeL"].fmeasure == 0.0
    assert "seg:pythainlp" in ours.signature() and "seg:" in RougeL("lo").signature()
    # punctuation is dropped before segmenting, as SEA-HELM drops it: "ikan." is "ikan"
    assert RougeL("id").score("Kucing makan ikan.", "kucing makan ikan di pasar") == pytest.approx((1.0, 0.6, 0.75))


def test_seahelm_tokenizer_keeps_thai_spaces_and_splits_burmese_syllables():
    from glotbench.metrics.rouge import RougeL, burmese_syllables

    thai = RougeL("th", "seahelm")._scorer._tokenizer.tokenize("แมว กิน, ปลา!")
    assert thai == ["แมว", " ", "กิน", " ", "ปลา"]  # newmm over the words joined by spaces, spaces kept
    # by hand: မြန် | မာ | နိုင် | ငံ | ရန် | ကုန် (each consonant with its dependent signs and asat)
    assert burmese_syllables("မြန်မာနိုင်ငံ ရန်ကုန်") == ["မြန်", "မာ", "နိုင်", "ငံ", "ရန်", "ကုန်"]


def test_xlsum_thai_rouge_l_by_hand(tmp_path, srv):
    replies = {"แมวตัวหนึ่งเดินเข้าไป": "แมวกินปลาที่ตลาด", "ฝนตกหนักในหลายเขต": "ฝนตกหนักในกรุงเทพ"}
    s, _ = run(tmp_path, srv, "xlsum", "xlsum_thai.jsonl", replies, config="thai")
    # item 1: P 3/5, R 1, F 0.75; item 2: the reference itself, F 1 -> mean F 0.875, mean P 0.8
    assert value(s, "rougeL") == pytest.approx(0.875)
    assert value(s, "rougeL_precision") == pytest.approx(0.8)
    assert value(s, "rougeL_recall") == pytest.approx(1.0)


def test_xlsum_burmese_seahelm_variant_reads_the_tag_line(tmp_path, srv):
    replies = {"ရန်ကုန်မြို့ အနှံ့": "အကျဉ်းချုပ်- ရန်ကုန်မြို့တွင် မိုးရွာသည်\nဒုတိယစာကြောင်း"}
    s, _ = run(tmp_path, srv, "xlsum", "xlsum_burmese.jsonl", replies, config="burmese", prompt="seahelm")
    # the rest of the tag's line is the summary; ။ is punctuation, dropped: the same syllables, F 1
    assert value(s, "rougeL") == pytest.approx(1.0)
    assert "အကျဉ်းချုပ်-" in user_prompts(srv)[0]


# -- through the real hub-loading code: parquet files laid out as the pinned revisions hold them --

@pytest.fixture(scope="module")
def seahelm_hub(tmp_path_factory):
    from test_tasks_hub import _repo, serve_hub

    from glotbench.tasks import task_names  # noqa: F401 - the library is importable before the hub starts
    from glotbench.tasks.files import read_task_file

    lib = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"
    root = tmp_path_factory.mktemp("hub")
    rows = lambda name: [json.loads(x) for x in (FX / name).read_text(encoding="utf-8").splitlines()]  # noqa: E731
    nli, _ = read_task_file(lib / "seahelm-nli.yaml")
    _repo(root, "aisingapore/NLR-NLI", nli.data.revision, {"data/th-00000-of-00001.parquet": rows("seahelm_nli_th.jsonl")})
    mt, _ = read_task_file(lib / "seahelm-translation.yaml")
    _repo(root, "aisingapore/NLG-Machine-Translation", mt.data.revision,
          {"data/en_to_tha_Thai-00000-of-00001.parquet": rows("seahelm_mt_en_th.jsonl")})
    xl, _ = read_task_file(lib / "xlsum.yaml")
    _repo(root, "csebuetnlp/xlsum", xl.data.revision, {"thai/xlsum-test.parquet": rows("xlsum_thai.jsonl")})
    yield from serve_hub(root)


@pytest.mark.parametrize("task,config,answers,metric,expected", [
    # the nested `prompts` column (a list of structs) read from parquet as the --data rows are
    ("seahelm-nli", "th", {"แมวสีดำนอนหลับ": "คำตอบ: A", "ร้านกาแฟปิดทำการ": "คำตอบ: B",
                           "นักเรียนกำลังอ่านหนังสือ": "คำตอบ: A"}, "normalized_accuracy", 0.5),  # A 1, B 1, C 0
    ("xlsum", "thai", {"แมวตัวหนึ่งเดินเข้าไป": "แมวกินปลา", "ฝนตกหนักในหลายเขต": "ฝนตกหนักในกรุงเทพ"}, "rougeL", 1.0),
    ("seahelm-translation", "th", {"The cat eats fish": "แมวกินปลาที่ตลาด",
                                   "It rained heavily": "เมื่อคืนนี้ฝนตกหนักในกรุงเทพ"}, "chrf++", 100.0),
])
def test_pinned_hub_layout_loads(tmp_path, seahelm_hub, srv, task, config, answers, metric, expected):
    from test_tasks_hub import glot

    srv.configure(answers=answers)
    proc = glot(tmp_path, seahelm_hub, task, "--bench-opt", f"config={config}", "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["scores"]["overall"][metric]["value"] == pytest.approx(expected)
    repo = {"seahelm-nli": "aisingapore/NLR-NLI", "xlsum": "csebuetnlp/xlsum",
            "seahelm-translation": "aisingapore/NLG-Machine-Translation"}[task]
    assert res["benchmark"]["data"].startswith(f"hub:{repo}@")


# -- machine translation ------------------------------------------------------------------------

def test_translation_seahelm_variant_is_seahelms_prompt_tag_and_chrf(tmp_path, srv):
    from sacrebleu.metrics import CHRF

    replies = {"The cat eats fish": "คำแปล: แมวกินปลาที่ตลาด", "It rained heavily": "```\nคำแปล: ฝนตกหนักในกรุงเทพ\n```"}
    s, _ = run(tmp_path, srv, "seahelm-translation", "seahelm_mt_en_th.jsonl", replies, config="th", prompt="seahelm")
    # SEA-HELM: the rest of the tag's line, stripped; chrF++ (sacrebleu CHRF(word_order=2)) over the corpus
    hyps = ["แมวกินปลาที่ตลาด", "ฝนตกหนักในกรุงเทพ"]
    refs = ["แมวกินปลาที่ตลาด", "เมื่อคืนนี้ฝนตกหนักในกรุงเทพ"]
    assert value(s, "chrf++") == pytest.approx(CHRF(word_order=2).corpus_score(hyps, [refs]).score)
    reqs = srv.requests()
    assert all(m["role"] == "user" for r in reqs for m in r["messages"])  # SEA-HELM sends no system turn
    preamble = ('แปลข้อความต่อไปนี้เป็นภาษาไทย\n\nจงตอบตามรูปแบบดังต่อไปนี้:\n"{answer_tag} TRANSLATION"\n'
                "โดยจะต้องแทนที่ TRANSLATION ด้วยข้อความที่แปลแล้ว")
    task = "ข้อความ:\n```\n{text}\n```"
    expected = preamble.format(answer_tag="คำแปล:") + "\n\n" + task.format(text="The cat eats fish at the market.")
    assert expected in user_prompts(srv)


def test_translation_into_english_from_khmer_exact_replies_score_100(tmp_path, srv):
    replies = {"ឆ្មាស៊ីត្រី": "The cat eats fish at the market.",
               "ភ្លៀងធ្លាក់ខ្លាំង": "It rained heavily in Phnom Penh last night."}
    s, _ = run(tmp_path, srv, "seahelm-translation", "seahelm_mt_km_en.jsonl", replies, config="km", direction="xx-en")
    assert value(s, "chrf++") == pytest.approx(100.0) and value(s, "bleu") == pytest.approx(100.0)
    assert "from Khmer into English" in user_prompts(srv)[0]


def test_translation_rows_are_checked_against_the_source_language():
    from glotbench.errors import DataError
    from glotbench.registry import get_benchmark

    # Khmer sources given as the English-to-Thai direction: refused, naming the input language
    bench = get_benchmark("seahelm-translation", config="th", direction="en-xx")
    with pytest.raises(DataError, match=r"written in Khmer script, but the task's input language is en"):
        bench.load(str(FX / "seahelm_mt_km_en.jsonl"))
    assert len(get_benchmark("seahelm-translation", config="km", direction="xx-en").load(
        str(FX / "seahelm_mt_km_en.jsonl"))) == 2


@pytest.mark.parametrize("words,tokens", [  # outputs of pyonmttok 1.38.1 Tokenizer("aggressive"), recorded
    ("covid19 mencapai 2024 kasus", ["covid", "19", "mencapai", "2024", "kasus"]),
    ("abc€def 3°c", ["abc", "€", "def", "3", "°", "c"]),
    ("நீர்மட்டம் 120அடி", ["நீர்மட்டம்", "120", "அடி"]),
    ("ngày 15 8 nhiệt độ đạt 40°c tại hà nội",
     ["ngày", "15", "8", "nhiệt", "độ", "đạt", "40", "°", "c", "tại", "hà", "nội"]),
])
def test_seahelm_aggressive_split_matches_pyonmttok(words, tokens):
    from glotbench.metrics.rouge import RougeL, aggressive

    assert aggressive(words) == tokens
    # SEA-HELM's whole rule for a language without its own tokenizer: lower case, punctuation out, then the split
    assert RougeL("vi", "seahelm")._scorer._tokenizer.tokenize(words.upper().replace(" ", ", ")) == tokens


def test_vietnamese_toxicity_labels_of_two_words_and_any_case(tmp_path, srv):
    replies = {"Hôm nay trời đẹp": "Câu trả lời: sạch", "Trận đấu hôm qua": "Câu trả lời: **Công kích**",
               "Bọn người đó": "Câu trả lời: Sạch"}
    s, _ = run(tmp_path, srv, "seahelm-toxicity", "seahelm_toxicity_vi.jsonl", replies, config="vi")
    assert value(s, "accuracy") == pytest.approx(2 / 3)  # the third, hateful, read as clean
    assert value(s, "normalized_accuracy") == pytest.approx(0.5)  # balanced (1 + 1 + 0) / 3 against 1/3
    assert value(s, "normalized_accuracy") == pytest.approx(
        seahelm_normalized_accuracy(["Sạch", "Công kích", "Thù ghét"], list(replies.values()), "Câu trả lời:"))
