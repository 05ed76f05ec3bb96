"""The learned-metric tests' cases, and the script that scores them with the reference code.

`python tests/learned_oracle.py OUT.json` run where unbabel-comet 2.2.7 and its pinned dependencies
import (transformers < 5: e.g. `pip install --no-deps --target /tmp/oracle unbabel-comet==2.2.7
pytorch-lightning==2.6.6 torchmetrics==0.10.3 jsonargparse==3.13.1 entmax sentencepiece
lightning-utilities "setuptools<80" transformers==4.57.1 tokenizers==0.22.1 huggingface_hub==0.35.3`,
then `PYTHONPATH=/tmp/oracle:src python tests/learned_oracle.py tests/fixtures/learned/comet22_oracle.json`)
builds each case's random-weight checkpoint and writes unbabel-comet's segment scores
(`load_from_checkpoint(...).predict(...)`); tests/test_learned_metrics.py holds glotbench's scores to them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from glotbench.testing.learned_checkpoint import TinyComet, build

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


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    main(sys.argv[1])
