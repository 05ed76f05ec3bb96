"""rev36b: a language group is its own group. `zh-Hans-TW` (Simplified in Taiwan) was grouped `zh-TW`,
which read again (a datasheet's key, `board --language`, `tasks list --language`) is Traditional
`zh-Hant`: the Simplified runs were tabled and listed as Traditional. A group keeps its script where
its region alone implies another one."""

from __future__ import annotations

import itertools

import langcodes
import pytest

from conftest import cli
from glotbench.languages import language_group

LANGS = "zh sr pa az uz pt ms mn ha lo th en ar ku km my vi id tl bs ru fa ur hi ja".split()
SCRIPTS = ["", "Latn", "Cyrl", "Arab", "Hans", "Hant", "Laoo", "Thai", "Deva", "Guru"]
REGIONS = ["", "US", "CN", "TW", "HK", "MO", "RS", "ME", "PK", "IN", "IR", "AF", "LA", "TH", "BR", "PT", "NE"]


def test_every_group_is_its_own_group() -> None:
    tags = ["-".join(x for x in t if x) for t in itertools.product(LANGS, SCRIPTS, REGIONS)]
    tags = [t for t in tags if langcodes.tag_is_valid(t)]
    assert len(tags) > 3000
    wrong = [(t, language_group(t), language_group(language_group(t))) for t in tags
             if language_group(language_group(t)) != language_group(t)]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("tag,group", [("zh-Hans-TW", "zh-Hans-TW"), ("zh-Hans-HK", "zh-Hans-HK"),
                                       ("sr-Cyrl-ME", "sr-Cyrl-ME"), ("pa-Guru-PK", "pa-Guru-PK"),
                                       ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant-HK"), ("sr-ME", "sr-Latn-ME"),
                                       ("pa-PK", "pa-Arab"), ("zh-Hans-CN", "zh"), ("lo-Laoo-LA", "lo")])
def test_the_script_stays_where_the_region_implies_another(tag, group) -> None:
    assert language_group(tag) == group


def test_tasks_list_does_not_list_traditional_families_for_simplified_in_taiwan() -> None:
    hant = cli("tasks", "list", "--language", "zh-Hant")
    assert hant.returncode == 0 and "global-piqa" in hant.stdout, hant.stderr
    r = cli("tasks", "list", "--language", "zh-Hans-TW")
    assert r.returncode == 0, r.stderr
    assert "cmn_hant" not in r.stdout and "(zh-Hans-TW)" in r.stdout.splitlines()[0], r.stdout
