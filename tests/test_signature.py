"""The Signature object (glotbench/signature.py): built, formatted and parsed in one place; every
stored run's signature reads back and formats to the same bytes; no module splits or joins
signature parts itself."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glotbench.signature import Signature

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "glotbench"


def stored_signatures() -> list[str]:
    """Every signature kept in the repository's run directories and pins (results.json, EEE
    records, the built-ins' pins)."""
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "signature" and isinstance(x, str):
                    out.append(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for p in sorted((ROOT / "tests").rglob("*.json")):
        try:
            walk(json.loads(p.read_text(encoding="utf-8")))
        except (ValueError, UnicodeDecodeError):
            continue
    from test_builtin_pins import PINNED

    walk(PINNED)
    return out


def test_every_stored_signature_reads_back_byte_identical() -> None:
    sigs = stored_signatures()
    assert len(sigs) >= 20 and any("|subset:" in s for s in sigs)
    for s in sigs:
        sig = Signature.parse(s)
        assert sig.format() == s and str(sig) == s
        assert sig.head == s.split("|")[0] and sig.head.startswith("glotbench:")
        assert Signature.build(*sig.parts).format() == s  # what parse gives, build takes


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_parse_then_format_is_the_identity_for_any_text(text: str) -> None:
    assert Signature.parse(text).format() == text


def test_build_format_parse() -> None:
    sig = Signature.build(("glotbench", "lao-qa"), {"v": "1.0", "prompt": "abc"}, "unscored", refs=1, x=("bare", None))
    assert sig.format() == "glotbench:lao-qa|v:1.0|prompt:abc|unscored|refs:1|x:('bare', None)"
    # a mapping's or keyword's None is written as an f-string writes it; a (key, None) pair is a bare word
    assert Signature.build({"a": None}, ("b", None), c=None).format() == "a:None|b|c:None"
    assert Signature.parse(sig.format()) == sig and sig.get("refs") == "1" and "unscored" in sig
    assert sig.keys() == ["glotbench", "v", "prompt", "unscored", "refs", "x"] and len(sig) == 6
    sig = sig.without("x")
    assert sig.plus(subset="limit5,5of9,abc").without("subset") == sig
    assert Signature.build("token_f1", norm="squad").under("glotbench").format() == "glotbench:token_f1|norm:squad"
    assert Signature.parse("rougeL|tok:segmenter|seg:laonlp-1.3").nested() == "rougeL;tok:segmenter;seg:laonlp-1.3"
    # a value that holds ":" is one part (sacrebleu's nested parts, `followup:2:1`)
    assert Signature.parse("glotbench:a|followup:2:1").get("followup") == "2:1"
    assert Signature.parse("") == Signature() and Signature().format() == ""


@pytest.mark.parametrize(("part", "text"), [(("a|b", "x"), "a%7Cb:x"), (("a:b", "x"), "a%3Ab:x"),
                                           (("k", "v|w:z"), "k:v%7Cw:z"), (("k|", None), "k%7C")])
def test_a_separator_inside_a_part_is_escaped_so_the_parts_read_back(part: tuple[str, str], text: str) -> None:
    sig = Signature.build(("glotbench", "t"), part, ("after", 1))
    assert sig.format() == f"glotbench:t|{text}|after:1" and Signature.parse(sig.format()) == sig
    with pytest.raises(ValueError, match="non-empty"):
        Signature.build(("", "x"))


def test_a_user_regex_with_a_bar_keeps_the_task_signature_readable(tmp_path: Path) -> None:
    """A task file's own text (a regex step `(yes|no)`, an option's value) goes into the signature:
    escaped, never a part boundary and never a crash."""
    from glotbench.registry import get_benchmark

    (tmp_path / "t.yaml").write_text(
        'name: yes-no\nversion: "1.0"\nlanguage: th\ndata: {file: rows.jsonl}\n'
        'fields: {id: id, public: {q: q}, gold: {answer: a}}\nprompt: {user: "{{ q }}"}\n'
        'extract: {yn: [{regex: "(yes|no)"}]}\nscorer: {kind: exact_match}\n', encoding="utf-8")
    bench = get_benchmark(str(tmp_path / "t.yaml"))
    sig = Signature.build(bench.signature_parts())
    assert Signature.parse(sig.format()) == sig
    assert sig.get("extract") == "yn=regex((yes%7Cno))" and sig.get("scorer") == "exact_match(strip+collapse_spaces)"


def test_difference_names_each_part_that_differs() -> None:
    a = "glotbench:laobench-mcq|v:1.2|prompt:aaa|data:d1|method:generate|thinking:default"
    b = "glotbench:laobench-mcq|v:1.3|prompt:aaa|data:d1|thinking:default|subset:limit5,5of9,abc"
    assert Signature.parse(a).difference(b) == [("v", "1.2", "1.3"), ("method", "generate", None),
                                                ("subset", None, "limit5,5of9,abc")]
    from glotbench.report.rundata import signature_difference

    assert signature_difference(a, b) == "v 1.2 ≠ 1.3; method generate ≠ ∅; subset ∅ ≠ limit5,5of9,abc"
    assert signature_difference(a, a) == "signatures differ"


def test_the_metrics_signatures_keep_their_bytes() -> None:
    """The metric signatures built through Signature, against the text the old code wrote."""
    from importlib import metadata

    from glotbench.metrics.corpus import SacreMetric
    from glotbench.metrics.rouge import RougeL
    from glotbench.metrics.token_f1 import token_f1_signature
    from glotbench.text.segment import segmenter_signature

    seg = segmenter_signature("lo")
    assert token_f1_signature("lo") == (f"token_f1|norm:del_format+lower+del_punct_P*+ascii|seg:{seg}"
                                        "|refs:max|empty:v1.1")
    assert token_f1_signature(None, norm="squad", metric="exact") == "exact|norm:squad_v1.1|seg:none|refs:max|empty:v1.1"
    assert token_f1_signature("th", norm="mkqa") == "token_f1|norm:mkqa(th)|seg:char|refs:max|empty:v1.1"
    m = SacreMetric("chrf", "lo", beta=3)
    m.stats(["a"], [["a"]])
    sb = m._metric.get_signature().format()
    assert m.signature(resamples=10, seed=3) == f"glotbench:chrf|beta:3|sacrebleu:{sb}|seg:none|lang:lo|boot:10,seed:3"  # chrF: characters, not segmented
    assert RougeL("lo").signature() == f"rougeL|tok:segmenter|seg:{seg}|rouge_score:{metadata.version('rouge-score')}"


def test_the_item_set_part() -> None:
    from glotbench.rundir.selection import signature_part, signed

    rec = {"full": False, "subset": "quick", "limit": 5, "n": 5, "of": 40, "items_sha256": "0123456789abcdef"}
    assert signed("glotbench:x|v:1", rec) == "glotbench:x|v:1|subset:quick+limit5,5of40,0123456789ab"
    assert signature_part(rec) == "|subset:quick+limit5,5of40,0123456789ab"
    assert signed("glotbench:x|v:1", {**rec, "full": True}) == "glotbench:x|v:1"


def _splits_or_joins_signatures(path: Path) -> list[str]:
    """`"|".join(...)`, `X.split("|")`, `X.split("|subset:")` and f-strings that start a `|key:`
    part, outside signature.py: signature text handled by hand."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("|") and (
                    node.func.attr == "split" or (node.func.attr == "join" and isinstance(node.func.value, ast.Constant)
                                                  and node.func.value.value == "|")):
                found.append(f"{path.name}:{node.lineno}")
            if (node.func.attr == "join" and isinstance(node.func.value, ast.Constant) and node.func.value.value == "|"):
                found.append(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                and str(node.values[0].value)[:1] == "|" and ":" in str(node.values[0].value)[:20] \
                and " " not in str(node.values[0].value)[:2]:
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_module_joins_or_splits_signature_parts_by_hand() -> None:
    """The grep of the issue, made a test: "|" joins are left only where they build a regular
    expression (an alternation), never a signature."""
    # regex alternations (languages, language, pipelines); an answer key of option texts (circular);
    # a help line's choices `segmenter=laonlp|pythainlp` (rescore)
    allowed = {"languages.py", "language.py", "pipelines.py", "circular.py", "rescore.py", "signature.py",
               "inspect_yaml.py"}  # inspect_yaml: an Inspect `pattern` scorer's alternation of labels
    found = [f for p in sorted(SRC.rglob("*.py")) if p.name not in allowed for f in _splits_or_joins_signatures(p)]
    assert not found, found
