"""Every built-in benchmark's signature, scored samples and scores on its bundled data, pinned
(tests/builtin_pins.py computes them). Written before DeepSEA was re-expressed as one definition per
task: a change to a built-in that moves any of these is a version bump with the reason, never silent."""

from __future__ import annotations

import json

import pytest

from builtin_pins import CASES, figures

PINNED = {
    'deepsea-mgsm {}': {
        'signature': 'glotbench:deepsea-mgsm|v:1.1|prompt:fd52493803c8|data:2cfbe6e9a5b5|task:mgsm|metric:numeric_em|native_digits:true|read:r6',
        'samples': 'a9cfefb1ab8bc4b0',
        'scores': 'e939adc29ea78829',
        'facts': '40d1a89041d944a6',
    },
    'deepsea-mgsm {"native_digits": false}': {
        'signature': 'glotbench:deepsea-mgsm|v:1.1|prompt:fd52493803c8|data:2cfbe6e9a5b5|task:mgsm|metric:numeric_em|native_digits:false|read:r6',
        'samples': '4e7596cee18b4a57',
        'scores': 'e939adc29ea78829',
        'facts': '40d1a89041d944a6',
    },
    'deepsea-indommlu {}': {
        'signature': 'glotbench:deepsea-indommlu|v:1.1|prompt:98f633a66d3c|data:6019dfc7e807|task:indommlu|metric:accuracy_macro_subjects|letter_case:upper_first|read:r6',
        'samples': '18eb749e9a302996',
        'scores': '3e08b5752faa8766',
        'facts': 'a3e870eed751a691',
    },
    'deepsea-indommlu {"letter_case": "upper_only"}': {
        'signature': 'glotbench:deepsea-indommlu|v:1.1|prompt:98f633a66d3c|data:6019dfc7e807|task:indommlu|metric:accuracy_macro_subjects|letter_case:upper_only|read:r6',
        'samples': 'de3906e6ab70ed0f',
        'scores': '96f85340b3a0ad24',
        'facts': 'a3e870eed751a691',
    },
    'deepsea-xquad {}': {
        'signature': 'glotbench:deepsea-xquad|v:1.1|prompt:33a61a8d8de8|data:36f3491e4391|task:xquad|metric:token_f1_first_ref|refs:first|f1_norm:unicode|f1_empty:v1.1|phrase:breaks|read:r6',
        'samples': '0607ff774f8ba4e6',
        'scores': 'ebf3d70f29dd4043',
        'facts': '162ee5a4a0db6679',
    },
    'deepsea-xquad {"f1_norm": "squad"}': {
        'signature': 'glotbench:deepsea-xquad|v:1.1|prompt:33a61a8d8de8|data:36f3491e4391|task:xquad|metric:token_f1_first_ref|refs:first|f1_norm:squad|f1_empty:v1.1|phrase:breaks|read:r6',
        'samples': '0607ff774f8ba4e6',
        'scores': 'ebf3d70f29dd4043',
        'facts': '162ee5a4a0db6679',
    },
    'deepsea-crosssum {}': {
        'signature': 'glotbench:deepsea-crosssum|v:1.1|prompt:72311b6ed581|data:d9e905a063b4|task:crosssum|metric:corpus_chrf2',
        'samples': 'eec9724cc1b366d4',
        'scores': 'edaa5ff5b97c2941',
        'facts': '4212bf59fbd078df',
    },
    'deepsea-wmt24pp {}': {
        'signature': 'glotbench:deepsea-wmt24pp|v:1.1|prompt:4e674574ef4c|data:e6c12c93431f|task:wmt24pp|metric:corpus_chrf2_not_metricx24',
        'samples': 'affba418354978e9',
        'scores': 'a70f5e8b43d1e4de',
        'facts': '6c601d7570f6dae1',
    },
    'vi-diacritics {}': {
        'signature': 'glotbench:vi-diacritics|v:1.0|prompt:bb62b442ce4b|data:00e625ba9a90|metric:sentence_exact|norm:nfc+space+tone_position|refs:any|extract:json.restored_text|rewrite:zero',
        'samples': 'b79b1ccf7a9ed4d7',
        'scores': 'f1ea889b62db392f',
        'facts': 'b405be8cdd470d9c',
    },
    'vi-tone-errors {}': {
        'signature': 'glotbench:vi-tone-errors|v:1.0|prompt:20ea579bc696|data:4aafa85b95a1|metric:sentence_exact|norm:nfc+space+tone_position|refs:best|extract:json.corrected_text+changes|align:rapidfuzz-indel|rewrite:zero|failure:false_alarm',
        'samples': 'b523252b861583fc',
        'scores': 'b7751d728b96437b',
        'facts': 'a0d1d5ab3e302623',
    },
    'laobench-mcq {}': {
        'signature': 'glotbench:laobench-mcq|v:1.2|prompt:ba28c4952557|data:039621808650|metric:accuracy|method:generate|extract:mc_letter:answer_phrase:v6+options|shots:0',
        'samples': 'c9246709c3a4823f',
        'scores': '56efb05480239869',
        'facts': '37a9fdbf792e50b1',
    },
    'laobench-mcq {"method": "loglik"}': {
        'signature': 'glotbench:laobench-mcq|v:1.2|prompt:ba28c4952557|data:039621808650|metric:accuracy_loglik|method:loglik|extract:mc_letter:answer_phrase:v6+options|shots:0',
        'samples': 'c9246709c3a4823f',
        'scores': '98959b6181cd8da4',
        'facts': '966782f4d2aa9405',
    },
    'laobench-translation {}': {
        'signature': 'glotbench:laobench-translation|v:1.1|prompt:e41355d29eec|data:039621808650|metrics:bleu+chrf++|seg_lo:laonlp-1.3.0|bleu_tok_lo:none|tok_zh:zh',
        'samples': '2cd615e6059e00cb',
        'scores': 'e01aa00abb92a000',
        'facts': 'd24db39b2c0d106f',
    },
    'laobench-arena-prompts {}': {
        'signature': 'glotbench:laobench-arena-prompts|v:1.0|prompt:344f1aa82d64|data:cdab9a9658b5',
        'samples': '60537d425a58a526',
        'scores': '2d1ec0c2c0f1ed7a',
        'facts': '45bd352e85c6df63',
    },
    'aragen-answers {}': {
        'signature': 'glotbench:aragen-answers|v:1.1|prompt:7e47c14f24af|data:814d45002263',
        'samples': 'd6611b8780ea9d96',
        'scores': '09b93bb12887e09a',
        'facts': '3839ad98d3dfc544',
    },
    'laobench-arena {}': {
        'signature': 'glotbench:laobench-arena|v:1.0|prompt:344f1aa82d64|data:cdab9a9658b5',
        'samples': '60537d425a58a526',
        'scores': '2d1ec0c2c0f1ed7a',
        'facts': '45bd352e85c6df63',
    },
    'aragen {}': {
        'signature': 'glotbench:aragen|v:1.1|prompt:7e47c14f24af|data:814d45002263',
        'samples': 'd6611b8780ea9d96',
        'scores': '09b93bb12887e09a',
        'facts': '3839ad98d3dfc544',
    },    'sea-mt-bench {}': {
        'signature': 'glotbench:sea-mt-bench|v:1.0|prompt:6e713c83918e|data:17bc2b19ed9e|config:th|baseline:data:gpt-4.1-2025-04-14',
        'samples': '95eb516b06b79de1',
        'scores': '36bb71734c9ef654',
        'facts': '30c45c034566d37c',
    },
}


@pytest.mark.parametrize("name,opts", CASES, ids=[f"{n}{'-' + '-'.join(f'{k}={v}' for k, v in o.items()) if o else ''}" for n, o in CASES])
def test_a_builtin_scores_as_it_did(name, opts):
    assert figures(name, opts) == PINNED[f"{name} {json.dumps(opts, sort_keys=True)}"]


def test_every_builtin_is_pinned():
    from glotbench.registry import benchmarks, get_benchmark

    shipped = {n for n in benchmarks(hidden=True) if type(get_benchmark(n)).__module__.startswith("glotbench.")}
    assert {n for n, _ in CASES} == shipped
