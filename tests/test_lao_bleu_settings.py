"""Lao BLEU settings: the tokenizer over LaoNLP's words (none by default, or 13a) and the segmenter's
version, both in the signature; the segmenter-selection seam; the pip-installable 0.7 extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata

import pytest
from sacrebleu.metrics import BLEU

from glotbench.benchmarks.laobench import LaoBenchTranslation
from glotbench.errors import DataError
from glotbench.items import Item
from glotbench.metrics.corpus import SacreMetric
from glotbench.text.segment import LaoSegmenter, installed_laonlp, segment
from conftest import cli

# ກ.ພ. (February) is one LaoNLP token; 13a splits it into ກ . ພ .
HYP = "ກອງປະຊຸມຈະຈັດຂຶ້ນວັນທີ 15 ກ.ພ. 2025 ຢູ່ນະຄອນຫຼວງວຽງຈັນ."
REF = "ກອງປະຊຸມຈະຈັດຂຶ້ນໃນວັນທີ 15 ກ.ພ. 2025 ທີ່ນະຄອນຫຼວງວຽງຈັນ."
# LaoNLP 0.7 keeps ລາຄານ້ຳມັນ whole; 1.3 splits it into ລາຄາ ນ້ຳມັນ.
PRICE_HYP = "ລາຄານ້ຳມັນເພີ່ມຂຶ້ນ 5% ຕັ້ງແຕ່ ມ.ກ. ເປັນຕົ້ນມາ."
PRICE_REF = "ລາຄານ້ຳມັນເພີ່ມຂຶ້ນ 5% ນັບແຕ່ ມ.ກ. ເປັນຕົ້ນມາ."


def _seg(text: str, lao=None) -> str:
    return " ".join(segment(text, "lo", lao))


def _mm_segmenter() -> LaoSegmenter:
    """LaoNLP 0.7's algorithm (PyThaiNLP's maximal matching over LaoNLP's own word list), built from
    the installed LaoNLP's dictionary: the seam's stand-in for an environment with 0.7 installed."""
    from laonlp.corpus import lao_words
    from pythainlp.tokenize import Tokenizer

    return LaoSegmenter("laonlp", "0.7-mm-sim", Tokenizer(lao_words(), engine="mm").word_tokenize)


def test_default_tokenizer_over_segmentation_is_none():
    got = SacreMetric("bleu", "lo").corpus_score([HYP], [[REF]], resamples=0)
    assert got.estimate.value == BLEU(tokenize="none").corpus_score([_seg(HYP)], [[_seg(REF)]]).score
    assert "|tok:none|" in got.signature and "|seg:laonlp-" in got.signature
    assert "ກ.ພ." in _seg(REF).split()  # LaoNLP keeps the abbreviation whole


def test_13a_is_a_named_setting_that_resplits_and_scores_differently():
    none = SacreMetric("bleu", "lo", tokenize="none").corpus_score([HYP], [[REF]], resamples=0)
    t13a = SacreMetric("bleu", "lo", tokenize="13a").corpus_score([HYP], [[REF]], resamples=0)
    assert t13a.estimate.value == BLEU().corpus_score([_seg(HYP)], [[_seg(REF)]]).score
    assert t13a.estimate.value > none.estimate.value  # ກ . ພ . adds matching n-grams
    assert "|tok:13a|" in t13a.signature
    with pytest.raises(ValueError, match="tokenizes with one of none, 13a, not 'intl'"):
        SacreMetric("bleu", "lo", tokenize="intl")
    with pytest.raises(ValueError, match="unknown BLEU tokenizer 'nope'"):
        SacreMetric("bleu", "en", tokenize="nope")


def test_default_segmenter_is_the_installed_laonlp_read_from_metadata():
    lao = installed_laonlp()
    assert lao.version == metadata.version("laonlp") and lao.version.startswith("1.3")
    assert SacreMetric("bleu", "lo").signature().endswith(f"seg:laonlp-{lao.version}|lang:lo")


def test_segmenter_seam_switches_signature_and_numbers():
    old = _mm_segmenter()
    assert segment(PRICE_REF, "lo", old)[0] == "ລາຄານ້ຳມັນ"
    assert segment(PRICE_REF, "lo")[:2] == ["ລາຄາ", "ນ້ຳມັນ"]
    new_m, old_m = SacreMetric("bleu", "lo"), SacreMetric("bleu", "lo", lao=old)
    new = new_m.corpus_score([PRICE_HYP], [[PRICE_REF]], resamples=0)
    was = old_m.corpus_score([PRICE_HYP], [[PRICE_REF]], resamples=0)
    assert was.estimate.value == BLEU(tokenize="none").corpus_score([_seg(PRICE_HYP, old)], [[_seg(PRICE_REF, old)]]).score
    assert was.estimate.value != new.estimate.value
    assert "seg:laonlp-0.7-mm-sim" in was.signature and "seg:laonlp-1.3" in new.signature


def _translation_item(ref: str) -> Item:
    return Item.create("t1", {"question": "Translate into Lao: ...", "direction": "en-lo"}, {"reference": ref},
                       {"direction": "en-lo", "subdomain": "s", "direction_subdomain": "en-lo/s"})


def test_laobench_translation_options_reach_scores_and_signature():
    item = _translation_item(REF)
    default, t13a = LaoBenchTranslation(), LaoBenchTranslation(bleu_tokenize="13a")
    old = LaoBenchTranslation(lao_segmenter=_mm_segmenter(), laonlp="0.7-mm-sim")
    bleu = {name: b.metrics[0].score([b.score(HYP, item).stats[k] for k in b.metrics[0].keys])
            for name, b in (("none", default), ("13a", t13a))}
    assert bleu["none"] == SacreMetric("bleu", "lo").corpus_score([HYP], [[REF]], resamples=0).estimate.value
    assert bleu["13a"] == SacreMetric("bleu", "lo", tokenize="13a").corpus_score([HYP], [[REF]], resamples=0).estimate.value
    data = default.dataset([item])
    assert "bleu_tok_lo:none" in default.signature(data) and "bleu_tok_lo:13a" in t13a.signature(data)
    assert "tok:13a" in t13a.direction_signatures()["bleu:lo"] and "tok:zh" in t13a.direction_signatures()["bleu:zh"]
    assert "seg_lo:laonlp-0.7-mm-sim" in old.signature(data) and "seg_lo:laonlp-1.3" in default.signature(data)
    price = _translation_item(PRICE_REF)
    assert old.score(PRICE_HYP, price).stats != default.score(PRICE_HYP, price).stats


def test_laonlp_version_check():
    LaoBenchTranslation(laonlp="1.3")  # the installed one: fine
    LaoBenchTranslation(laonlp=metadata.version("laonlp"))
    with pytest.raises(DataError, match=r"asks for LaoNLP 0.7 but 1\.3.* is installed.*glotbench\[laonlp07\]"):
        LaoBenchTranslation(laonlp="0.7")
    with pytest.raises(DataError, match="bleu_tokenize must be one of none, 13a"):
        LaoBenchTranslation(bleu_tokenize="intl")
    with pytest.raises(DataError, match="Python-API setting"):
        LaoBenchTranslation(lao_segmenter="laonlp-0.7")


def test_cli_options_are_errors_not_tracebacks():
    for opt in ("bleu_tokenize=intl", "laonlp=0.7"):
        out = cli("run", "laobench-translation", "--bench-opt", opt, "--model", "python:helpers:async_echo")
        assert out.returncode == 2 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr, out.stderr


def test_score_command_tokenize_option(tmp_path):
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text(HYP + "\n", encoding="utf-8")
    r.write_text(REF + "\n", encoding="utf-8")
    none = cli("score", "--metric", "bleu", "--lang", "lo", str(h), str(r))
    t13a = cli("score", "--metric", "bleu", "--lang", "lo", "--tokenize", "13a", str(h), str(r))
    assert none.returncode == t13a.returncode == 0
    assert "tok:none" in none.stdout and "tok:13a" in t13a.stdout and none.stdout.split()[2] != t13a.stdout.split()[2]
    bad = cli("score", "--metric", "chrf", "--tokenize", "13a", str(h), str(r))
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --tokenize applies to bleu only, not chrf"


def test_the_07_extra_is_installable_with_the_core_requirement(repo_root):
    """pip accepts `glotbench[laonlp07]`: the core requirement and the extra's pin intersect, and the
    default (no extra) still allows 1.3."""
    from packaging.requirements import Requirement

    project = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]
    core = next(Requirement(r) for r in project["dependencies"] if r.startswith("laonlp"))
    extra = [Requirement(r) for r in project["optional-dependencies"]["laonlp07"]]
    assert [e.name for e in extra] == ["laonlp"]
    assert core.specifier.contains("0.7") and extra[0].specifier.contains("0.7")
    assert core.specifier.contains("1.3.0") and not extra[0].specifier.contains("1.3.0")


def test_laonlp_is_imported_lazily():
    code = ("import sys, glotbench.metrics.corpus, glotbench.benchmarks.laobench; "
            "print('laonlp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
