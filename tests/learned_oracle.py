"""The learned-metric tests' cases, and the script that scores them with the reference code.

`python tests/learned_oracle.py OUT.json` run where unbabel-comet 2.2.7 and its pinned dependencies
import (transformers < 5: e.g. `pip install --no-deps --target /tmp/oracle unbabel-comet==2.2.7
pytorch-lightning==2.6.6 torchmetrics==0.10.3 jsonargparse==3.13.1 entmax sentencepiece
lightning-utilities "setuptools<80" transformers==4.57.1 tokenizers==0.22.1 huggingface_hub==0.35.3`,
then `PYTHONPATH=/tmp/oracle:src python tests/learned_oracle.py tests/fixtures/learned/comet22_oracle.json`)
builds each case's random-weight checkpoint and writes unbabel-comet's segment scores
(`load_from_checkpoint(...).predict(...)`); tests/test_learned_metrics.py holds glotbench's scores to them.
`python tests/learned_oracle.py OUT.json METRICX_DIR` (same environment; METRICX_DIR holds
google-research/metricx's `metricx24/models.py` and an empty `metricx24/__init__.py`) writes
MetricX-24's reference scores (tests/fixtures/learned/metricx24_oracle.json).
`python tests/learned_oracle.py OUT.json --xcomet` (same environment) writes unbabel-comet's
`XCOMETMetric` scores (`load_from_checkpoint(...).predict(...)`) on the xCOMET cases
(tests/fixtures/learned/xcomet_oracle.json). `python tests/learned_oracle.py OUT.json --xcomet-lite
LITE_DIR` writes xCOMET-lite's own (`XCOMETLite.from_pretrained(DIR).predict(...)`, LITE_DIR holding
NL2G/xCOMET-lite's `xcomet/deberta_encoder.py`) on the xCOMET-lite cases
(tests/fixtures/learned/xcomet_lite_oracle.json). Its `DebertaV2LayerPatched` is written against
transformers < 4.47 (later DeBERTa layers return a tuple it does not unpack): put
`pip install --no-deps --target /tmp/cometlite-tf transformers==4.46.3 tokenizers==0.20.3 unbabel-comet==2.2.2`
(xCOMET-lite's `DeBERTaEncoder.from_pretrained` predates the `local_files_only` argument of 2.2.3) first on
PYTHONPATH (`PYTHONPATH=/tmp/cometlite-tf:/tmp/oracle:src`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from glotbench.testing.learned_checkpoint import TinyComet, TinyMetricX, TinyXComet, build, build_metricx, build_xcomet

LONG = " ".join(["ສະບາຍດີ ໂລກ"] * 40)  # past the tiny encoder's 62 tokens: truncated
SEGMENTS = [
    {"src": "hello world", "mt": "ສະບາຍດີ ໂລກ", "ref": "ສະບາຍດີ ຊາວໂລກ"},
    {"src": "good morning", "mt": "สวัสดีตอนเช้า", "ref": "อรุณสวัสดิ์"},
    {"src": "thank you", "mt": "អរគុណ", "ref": "អរគុណច្រើន"},
    {"src": "the cat sleeps", "mt": "ကြောင် အိပ်သည်", "ref": "ကြောင်က အိပ်နေတယ်"},
    {"src": "I love this city", "mt": "Tôi yêu thành phố này", "ref": "Tôi yêu thành phố này lắm"},
    {"src": "peace", "mt": "سلام", "ref": "السَّلَامُ"},
    {"src": "an empty reply", "mt": "", "ref": "ສະບາຍດີ"},
    {"src": LONG, "mt": LONG, "ref": "ສະບາຍດີ"},
    {"src": "x", "mt": "  spaces   inside  ", "ref": "spaces inside"},
]
TEXT = " ".join(v for s in SEGMENTS for v in s.values())
CASES = {
    "comet22": TinyComet(),  # COMET-22's settings: softmax mix, layer norm, avg pool, no final activation
    "sparsemax_max": TinyComet(layer_transformation="sparsemax", layer_norm=False, pool="max", seed=1),
    "patch_cls_layer1": TinyComet(layer_transformation="sparsemax_patch", pool="cls", layer=1, seed=2),
    "sigmoid_default_3layers": TinyComet(layers=3, pool="default", final_activation="Sigmoid",
                                         estimator=(24,), seed=3),
}
BATCH = 4  # segments of different lengths in one batch: padding is exercised
METRICX_CASES = {
    "metricx24": TinyMetricX(),
    "metricx24_3layers": TinyMetricX(layers=3, d_model=24, d_ff=48, heads=3, seed=5),
}

XCOMET_CASES = {  # unbabel-comet's layout, scored by its XCOMETMetric
    "xcomet": TinyXComet(),  # xCOMET's settings: sparsemax mix without layer norm, CLS token
    "xcomet_xl_patch_norm": TinyXComet(encoder="XLM-RoBERTa-XL", layers=3, layer_transformation="sparsemax_patch",
                                       layer_norm=True, word_layer=2, seed=1),
    "xcomet_layer1_capped": TinyXComet(sent_layer=1, word_layer=0, tag_bias=0.0, estimator=(24,), score_bias=2.1,
                                       seed=2),
}
XCOMET_LITE_CASES = {  # xCOMET-lite's folder (config.json, model.safetensors), scored by its XCOMETLite
    "xcomet_lite": TinyXComet(encoder="DeBERTa", layout="lite", seed=3),
    "xcomet_lite_types_softmax": TinyXComet(encoder="DeBERTa", layout="lite", layers=3, type_vocab=2,
                                            layer_transformation="softmax", layer_norm=True, word_layer=3,
                                            tag_bias=0.5, seed=4),
}


def xcomet(out: str, lite_dir: str | None = None) -> None:
    """The xCOMET cases scored by unbabel-comet's XCOMETMetric (`lite_dir` None) or the xCOMET-lite
    cases by NL2G/xCOMET-lite's XCOMETLite (its deberta_encoder.py found under `lite_dir`)."""
    if lite_dir is not None:
        sys.path.insert(0, lite_dir)
        from deberta_encoder import XCOMETLite  # type: ignore[import-not-found]
    from comet.models import load_from_checkpoint

    result: dict = {"unbabel_comet": _version("unbabel-comet"), "transformers": _version("transformers"),
                    "batch_size": BATCH, "segments": SEGMENTS, "cases": {}}
    for name, spec in (XCOMET_LITE_CASES if lite_dir else XCOMET_CASES).items():
        with tempfile.TemporaryDirectory() as tmp:
            d = build_xcomet(Path(tmp) / name, spec, TEXT)
            if lite_dir is not None:
                model = XCOMETLite.from_pretrained(str(d))
            else:
                model = load_from_checkpoint(str(d / "checkpoints" / "model.ckpt"), local_files_only=True)
            pred = model.predict(SEGMENTS, batch_size=BATCH, gpus=0, progress_bar=False)
            result["cases"][name] = {"spec": asdict(spec), "scores": [float(x) for x in pred.scores],
                                     "mqm_scores": [float(x) for x in pred.metadata.mqm_scores]}
    Path(out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def metricx(out: str, metricx_dir: str) -> None:
    """MetricX-24's reference: google-research/metricx's metricx24/models.py (`MT5ForRegression`,
    found under `metricx_dir`) on each case, its input built and tokenized as metricx24/predict.py
    (`get_dataset`: "source: S candidate: H reference: R", truncated to max_input_length, EOS dropped),
    one segment at a time (its Trainer pads nothing then)."""
    import torch
    from transformers import AutoTokenizer

    sys.path.insert(0, metricx_dir)
    from metricx24 import models  # type: ignore[import-not-found]

    result = {"transformers": _version("transformers"), "max_input_length": 1536, "segments": SEGMENTS, "cases": {}}
    for name, spec in METRICX_CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            d = build_metricx(Path(tmp) / name, spec, TEXT)
            tok = AutoTokenizer.from_pretrained(str(d / "tokenizer"))
            model = models.MT5ForRegression.from_pretrained(str(d), torch_dtype="auto")
            model.eval()
            scores = []
            for s in SEGMENTS:
                enc = tok("source: " + s["src"] + " candidate: " + s["mt"] + " reference: " + s["ref"],
                          max_length=1536, truncation=True, padding=False)
                ids = torch.tensor([enc["input_ids"][:-1]])
                mask = torch.tensor([enc["attention_mask"][:-1]])
                with torch.no_grad():
                    scores.append(float(model(input_ids=ids, attention_mask=mask, use_cache=False).predictions[0]))
            result["cases"][name] = {"spec": asdict(spec), "scores": scores}
    Path(out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(out: str) -> None:
    from comet.models import load_from_checkpoint

    result = {"unbabel_comet": _version("unbabel-comet"), "transformers": _version("transformers"),
              "batch_size": BATCH, "segments": SEGMENTS, "cases": {}}
    for name, spec in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            d = build(Path(tmp) / name, spec, TEXT)
            model = load_from_checkpoint(str(d / "checkpoints" / "model.ckpt"), local_files_only=True)
            pred = model.predict(SEGMENTS, batch_size=BATCH, gpus=0, progress_bar=False)
            result["cases"][name] = {"spec": asdict(spec), "scores": [float(x) for x in pred.scores]}
    Path(out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def refused_in_one_line(dirpath: Path) -> str:
    """The tests' check of a malformed checkpoint: loading it raises one GlotbenchError line naming
    `--metric-checkpoint`, never a traceback; the line."""
    from glotbench.errors import GlotbenchError
    from glotbench.metrics.learned import load

    try:
        load(dirpath)
    except GlotbenchError as e:
        msg = str(e)
        assert "--metric-checkpoint" in msg and "\n" not in msg and "Traceback" not in msg, msg
        return msg
    raise AssertionError(f"{dirpath} loaded")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] in ("--xcomet", "--xcomet-lite"):
        xcomet(sys.argv[1], sys.argv[3] if sys.argv[2] == "--xcomet-lite" else None)
    elif len(sys.argv) > 2:  # OUT.json METRICX_DIR: MetricX-24's reference instead
        metricx(sys.argv[1], sys.argv[2])
    else:
        main(sys.argv[1])
