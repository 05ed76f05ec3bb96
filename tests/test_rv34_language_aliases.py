"""Every spelling of a language that `--lang`/`--language` accepts means that language everywhere:
IANA's deprecated codes (`in`, `iw`, `jw`) and ISO 639-2/B codes (`bur`, `may`) resolve to the
registry's preferred code, and `score --lang` segments and signs with the profile's code whatever
spelling was given (`mya`, `bur`, `lao_Laoo` were accepted but scored unsegmented, signed `lang:mya`)."""

from __future__ import annotations

import pytest

from conftest import cli
from glotbench.languages import language_code, resolve_code


@pytest.mark.parametrize("given, code", [("bur", "my"), ("in", "id"), ("in_ID", "id"), ("may", "ms"), ("chi", "zh"),
                                         ("jw", "jv"), ("iw", "he"), ("bur-MM", "my"), ("mya", "my"), ("lao_Laoo", "lo"),
                                         ("fil", "tl"), ("swh_Latn", "swh")])
def test_registry_aliases_resolve_to_the_preferred_code(given, code):
    assert resolve_code(given) == code
    assert language_code(given) == code


@pytest.mark.parametrize("bad", ["zz", "xx1", "und", "qaa", ""])
def test_codes_naming_no_language_are_still_refused(bad):
    with pytest.raises(ValueError):
        language_code(bad)


@pytest.mark.parametrize("spelling", ["mya", "bur", "my-MM", "mya_Mymr"])
def test_score_segments_burmese_under_every_spelling(tmp_path, spelling):
    hyp, ref = tmp_path / "h.txt", tmp_path / "r.txt"
    hyp.write_text("မင်္ဂလာပါ ခင်ဗျား\n", encoding="utf-8")
    ref.write_text("မင်္ဂလာပါ\n", encoding="utf-8")
    want = cli("score", str(hyp), str(ref), "--lang", "my")
    got = cli("score", str(hyp), str(ref), "--lang", spelling)
    assert want.returncode == got.returncode == 0, got.stdout + got.stderr
    assert "seg:charcluster" in want.stdout and "lang:my|" in want.stdout
    assert got.stdout == want.stdout  # the same number and the same signature


def test_score_segments_lao_given_as_its_three_letter_code(tmp_path):
    hyp, ref = tmp_path / "h.txt", tmp_path / "r.txt"
    hyp.write_text("ສະບາຍດີ ທ່ານ\n", encoding="utf-8")
    ref.write_text("ສະບາຍດີ\n", encoding="utf-8")
    outs = [cli("score", str(hyp), str(ref), "--lang", x).stdout for x in ("lo", "lao", "lao_Laoo", "lo-LA")]
    assert "seg:laonlp" in outs[0] and all(o == outs[0] for o in outs), outs
