"""Learned translation metrics from a local checkpoint (`--metric-checkpoint DIR`), never downloaded.

COMET-22-style estimators: unbabel-comet's `regression_metric` (its `RegressionMetric`) re-derived
on torch and transformers' XLM-R encoder: the encoder's hidden states of every layer, mixed by the
layer-wise attention (softmax or sparsemax weights, optional masked layer norm, times gamma), pooled
per sentence (avg over non-pad tokens, max, cls or the encoder's first token), then the feed-forward
estimator over [h; r; h*r; |h-r|; h*s; |h-s|] (h the translation, r the reference, s the source).
The tests hold its segment scores equal to unbabel-comet's `load_from_checkpoint(...).predict(...)`
(<= 1e-5) on a random-weight checkpoint built offline (glotbench.testing.learned_checkpoint).

The directory is unbabel-comet's layout: `hparams.yaml`, `checkpoints/model.ckpt`, and the encoder's
`config.json` and tokenizer files, in `DIR/encoder/` or in the directory `hparams.yaml` names as
`pretrained_model` (a hub name there is never fetched). The signature names the metric, the
checkpoint file's SHA-256 and the SHA-256 of the other files read (hparams, encoder config, tokenizer).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence

from glotbench.errors import GlotbenchError

KINDS = {"regression_metric": "comet22", "xcomet_metric": "xcomet"}  # unbabel-comet's class_identifier -> glotbench's name
LAYER_TRANSFORMS = ("softmax", "sparsemax", "sparsemax_patch")  # _patch: softmax (unbabel-comet >= 2.2.4)
POOLS = ("avg", "max", "cls", "default")
# the encoders each layout is read with: unbabel-comet 2.2.7 has no DeBERTa (xCOMET-lite registers it in
# its own folder's code)
ENCODERS = {"comet22": ("XLM-RoBERTa",), "xcomet": ("XLM-RoBERTa", "XLM-RoBERTa-XL"),
            "xcomet-lite": ("DeBERTa", "XLM-RoBERTa", "XLM-RoBERTa-XL")}
_TOKENIZER_FILES = ("tokenizer.json", "sentencepiece.bpe.model", "spm.model", "tokenizer_config.json",
                    "special_tokens_map.json")


@dataclass(frozen=True, slots=True)
class MeanScore:
    """A learned metric over a run (`run --metric-checkpoint`): the mean of its segment scores, a ratio of
    sums (each sample's score over a count of 1) read as it is, on no fixed range (COMET-22's head is
    unbounded; MetricX-24's error points run 0-25): never a proportion, so its interval is the
    percentile bootstrap over items (metrics/ratio.py `interval`)."""

    name: str
    numerator: str
    denominator: str
    description: str = ""
    show_ci: bool = True
    label: str = ""
    scale: Literal["fraction", "points"] = "fraction"  # COMET reads as a fraction (shown x100), MetricX as points
    lower_is_better: bool = False

    @property
    def keys(self) -> tuple[str, str]:
        return (self.numerator, self.denominator)

    def credit(self, stats: Mapping[str, float]) -> tuple[str, ...]:
        return (self.numerator,)

    def sentence_mean(self) -> None:
        return None

    def score(self, row: Any) -> float:
        return float(row[0] / row[1]) if row[1] > 0 else float("nan")

    def score_many(self, rows: Any) -> Any:
        import numpy as np

        out = np.full(len(rows), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(rows[:, 0], rows[:, 1], out=out, where=rows[:, 1] > 0)
        return out


SAMPLE_FORMAT = 1  # samples.jsonl's `learned` field: {"format": 1, "metric": KIND, "score": X}


def sample_field(kind: str, score: float) -> dict[str, Any]:
    """A sample's samples.jsonl key for the learned metric a run was scored with: its segment score
    as aggregated (after the failure rule), so that paired tests read it without the checkpoint."""
    return {"learned": {"format": SAMPLE_FORMAT, "metric": kind, "score": score}}


def sample_stats(record: Mapping[str, Any]) -> dict[str, float]:
    """The statistics a samples.jsonl line holds for its learned metric (`KIND.score`, `KIND.n`: one
    segment), or none: a line written before the field (format 1) or of a run without one."""
    got = record.get("learned")
    if not isinstance(got, Mapping) or got.get("format") != SAMPLE_FORMAT:
        return {}
    return {f"{got['metric']}.score": float(got["score"]), f"{got['metric']}.n": 1.0}


def check_samples(records: Sequence[Mapping[str, Any]], where: str) -> None:
    """A run's samples.jsonl lines hold one learned metric's finite score on every line or on none
    (a run written before the field): a line without it, of another metric, or with a NaN or
    infinite score would be a zero or a NaN in the paired tests, so it is one error line instead."""
    import math

    got = [r.get("learned") for r in records]
    kept = [(i, g) for i, g in enumerate(got, 1) if isinstance(g, Mapping) and g.get("format") == SAMPLE_FORMAT]
    if not kept:
        return
    first = kept[0][1].get("metric")
    if first not in (*KINDS.values(), "metricx24"):  # else its score would add to a metric of that name
        raise GlotbenchError(f"{where}: line {kept[0][0]}: learned.metric {first!r} is not a learned metric "
                             f"({', '.join((*KINDS.values(), 'metricx24'))})")
    for i, g in enumerate(got, 1):
        if not isinstance(g, Mapping) or g.get("format") != SAMPLE_FORMAT:
            raise GlotbenchError(f"{where}: line {i} has no learned score (format {SAMPLE_FORMAT}) and line "
                                 f"{kept[0][0]} has one: a run keeps its learned metric's score on every line")
        if g.get("metric") != first:
            raise GlotbenchError(f"{where}: line {i}: learned.metric {g.get('metric')!r}, line {kept[0][0]} "
                                 f"{first!r}: a run is scored with one learned metric")
        score = g.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise GlotbenchError(f"{where}: line {i}: learned.score {score!r} is not a finite number")


def stored_metric(results: Mapping[str, Any]) -> MeanScore | None:
    """The learned metric a finished run was scored with (`run --metric-checkpoint`: the `learned:` part
    of its signature names it; results.json's `metrics` entry gives its keys and scale), None for a
    run without one."""
    from glotbench.signature import Signature

    part = stored_signature(results)
    kind = Signature.parse(part).get("glotbench") if part else None
    info = (results.get("metrics") or {}).get(kind) if kind else None
    if not kind or not info:
        return None
    num, den = info["keys"]
    return MeanScore(kind, num, den, description=info.get("description", ""), label=info.get("label", kind),
                     scale=info.get("scale", "fraction"), lower_is_better=bool(info.get("lower_is_better")))


def stored_signature(results: Mapping[str, Any]) -> str | None:
    """The signature of the learned metric a finished run was scored with (its own signature's
    `learned:` part, as `Checkpoint.signature()` writes it), None for a run without one."""
    from glotbench.signature import NESTED, SEP, Signature

    part = Signature.parse(str(results.get("signature") or "")).get("learned")
    return part.replace(NESTED, SEP) if part else None


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint directory declares, read and checked once. The COMET settings (pool, layer,
    ...) keep unbabel-comet's defaults for a MetricX checkpoint, which has none of them."""

    path: Path
    kind: str  # glotbench's name: comet22 or metricx24
    ckpt: Path  # the weights file
    encoder: Path  # the folder with the encoder's (COMET) or model's (MetricX) config.json and tokenizer
    sha256: str  # the weights file's
    files_sha256: str  # the other files read (hparams, config, tokenizer), in name order
    pool: str = "avg"
    layer: str | int = "mix"
    layer_transformation: str = "softmax"
    layer_norm: bool = True
    hidden_sizes: tuple[int, ...] = (3072, 1024)
    activations: str = "Tanh"
    final_activation: str | None = None
    tokenizer: Path | None = None  # MetricX: the tokenizer's folder when not `encoder`
    higher_is_better: bool = True  # MetricX-24 is an error score: 0 best, 25 worst
    worst: float = 0.0  # a failed sample's score: COMET 0, MetricX-24 25
    encoder_model: str = "XLM-RoBERTa"  # unbabel-comet's encoder name (xCOMET: XLM-RoBERTa-XL, DeBERTa for -lite)
    word_layer: int = 0  # xCOMET: the encoder layer its error-span tagger reads

    def signature(self) -> str:
        from glotbench.signature import Signature

        return Signature.build({"glotbench": self.kind, "ckpt": f"sha256:{self.sha256}",
                                "files": f"sha256:{self.files_sha256[:16]}",
                                **({"maxlen": METRICX_MAX_INPUT} if self.kind == "metricx24" else {})}).format()


def _files_sha(files: Sequence[Path]) -> str:
    return hashlib.sha256("".join(f"{f.name}:{sha256_file(f)}\n" for f in files).encode()).hexdigest()


def open_checkpoint(dirpath: str | Path) -> Checkpoint:
    """The checkpoint in `dirpath`, or a GlotbenchError saying what is missing or malformed: unbabel-comet's
    layout (hparams.yaml), a MetricX-24 model folder (config.json of an mt5 model) or an xCOMET-lite
    folder (huggingface_hub's PyTorchModelHubMixin layout: config.json of XCOMETLite's arguments)."""
    import yaml

    if not str(dirpath).strip():  # Path("") is the current folder: never what an empty value meant
        raise GlotbenchError("--metric-checkpoint: an empty path; give the checkpoint's directory")
    d = Path(dirpath)
    if d.is_dir() and not (d / "hparams.yaml").is_file() and (d / "config.json").is_file():
        return _open_config_json(d)
    if not d.is_dir():
        raise GlotbenchError(f"--metric-checkpoint {d}: not a directory")
    hp_file, ckpt = d / "hparams.yaml", d / "checkpoints" / "model.ckpt"
    for f in (hp_file, ckpt):
        if not f.is_file():
            raise GlotbenchError(f"--metric-checkpoint {d}: no {f.relative_to(d)} (unbabel-comet's layout: "
                                 "hparams.yaml, checkpoints/model.ckpt, encoder/)")
    try:
        hp = yaml.safe_load(hp_file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise GlotbenchError(f"--metric-checkpoint {d}: hparams.yaml is not YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(hp, dict):
        raise GlotbenchError(f"--metric-checkpoint {d}: hparams.yaml is not a mapping")
    cls = hp.get("class_identifier")
    if cls not in KINDS:
        raise GlotbenchError(f"--metric-checkpoint {d}: class_identifier {cls!r} is not one glotbench reads "
                             f"({', '.join(KINDS)})")
    return _comet_checkpoint(d, KINDS[cls], {**DEFAULTS[KINDS[cls]], **hp}, hp_file, ckpt)


# each class's defaults where its hparams are silent: unbabel-comet's RegressionMetric and XCOMETMetric
# __init__ arguments; xCOMET-lite's XCOMETLite (NL2G/xCOMET-lite xcomet/deberta_encoder.py) for its folder
DEFAULTS: dict[str, dict[str, Any]] = {
    "comet22": {"encoder_model": "XLM-RoBERTa", "pool": "avg", "layer": "mix", "layer_transformation": "softmax",
                "layer_norm": True, "hidden_sizes": [3072, 1024], "activations": "Tanh", "final_activation": None},
    "xcomet": {"encoder_model": "XLM-RoBERTa-XL", "sent_layer": "mix", "layer_transformation": "sparsemax",
               "layer_norm": False, "word_layer": 36, "hidden_sizes": [2560, 1280], "activations": "Tanh",
               "final_activation": None, "error_labels": ["minor", "major", "critical"]},
}
XCOMET_LITE = {"encoder_model": "DeBERTa", "pretrained_model": "microsoft/mdeberta-v3-base", "word_layer": 8,
               "hidden_sizes": [3072, 1024]}


def _comet_checkpoint(d: Path, kind: str, hp: Mapping[str, Any], hp_file: Path, ckpt: Path,
                      layout: str = "") -> Checkpoint:
    """An unbabel-comet estimator's settings checked against what glotbench computes."""
    enc_model = hp["encoder_model"]
    if enc_model not in ENCODERS[layout or kind]:
        where = "an xCOMET-lite folder" if layout else f"unbabel-comet's {kind} checkpoint"
        raise GlotbenchError(f"--metric-checkpoint {d}: encoder_model {enc_model!r}; glotbench reads "
                             f"{', '.join(ENCODERS[layout or kind])} in {where}")
    named = Path(str(hp.get("pretrained_model", "")))
    named = named if named.is_absolute() else d / named
    tok_files = ("tokenizer.json", "spm.model") if enc_model == "DeBERTa" else _TOKENIZER_FILES[:2]
    encoder = next((e for e in (d / "encoder", named) if (e / "config.json").is_file()), None)
    if encoder is None or not any((encoder / t).is_file() for t in tok_files):
        raise GlotbenchError(f"--metric-checkpoint {d}: no encoder config.json and tokenizer ({' or '.join(tok_files)}) "
                             f"in {d / 'encoder'} (the pretrained_model is {hp.get('pretrained_model')!r}; "
                             "glotbench never downloads it)")
    pool, layer = hp.get("pool", "avg"), hp["sent_layer" if kind == "xcomet" else "layer"]
    lt = hp["layer_transformation"]
    if pool not in POOLS or lt not in LAYER_TRANSFORMS or not (layer == "mix" or isinstance(layer, int)):
        raise GlotbenchError(f"--metric-checkpoint {d}: pool {pool!r}, layer {layer!r}, layer_transformation "
                             f"{lt!r}: not COMET's (pool {'/'.join(POOLS)}; layer mix or a number; "
                             f"{'/'.join(LAYER_TRANSFORMS)})")
    sizes = hp["hidden_sizes"]
    if not isinstance(sizes, (list, tuple)) or not sizes or not all(isinstance(s, int) and s > 0 for s in sizes):
        raise GlotbenchError(f"--metric-checkpoint {d}: hidden_sizes {sizes!r} is not a list of sizes")
    word_layer = hp.get("word_layer", 0)
    if kind == "xcomet" and (not isinstance(word_layer, int) or isinstance(word_layer, bool) or word_layer < 0
                             or list(hp.get("error_labels") or []) != ["minor", "major", "critical"]):
        raise GlotbenchError(f"--metric-checkpoint {d}: word_layer {word_layer!r}, error_labels "
                             f"{hp.get('error_labels')!r}: xCOMET's are a layer number and minor, major, critical")
    files = [hp_file, encoder / "config.json", *(encoder / t for t in _TOKENIZER_FILES if (encoder / t).is_file())]
    return Checkpoint(d, kind, ckpt, encoder, sha256_file(ckpt), _files_sha(files), pool, layer, lt,
                      bool(hp["layer_norm"]), tuple(sizes), str(hp["activations"]), hp["final_activation"],
                      encoder_model=enc_model, word_layer=int(word_layer))


def _open_config_json(d: Path) -> Checkpoint:
    """A folder with config.json and no hparams.yaml: MetricX-24 (an mt5 config) or xCOMET-lite
    (PyTorchModelHubMixin: config.json holds XCOMETLite's arguments, model.safetensors its weights)."""
    import json

    try:
        config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise GlotbenchError(f"--metric-checkpoint {d}: config.json is not JSON ({e})") from None
    if not isinstance(config, dict) or ("model_type" in config or "encoder_model" not in config):
        return _open_metricx(d, config)
    weights = next((d / w for w in _WEIGHTS if (d / w).is_file()), None)
    if weights is None:
        raise GlotbenchError(f"--metric-checkpoint {d}: no {' or '.join(_WEIGHTS)} beside xCOMET-lite's config.json")
    # xCOMET-lite's code runs on unbabel-comet 2.2.2 only (its encoder predates 2.2.3's local_files_only),
    # whose XCOMETMetric never passes layer_transformation on: the layer mix is a softmax whatever
    # config.json says (unbabel-comet's issue #244; 2.2.4 reads the same as `sparsemax_patch`)
    hp = {**DEFAULTS["xcomet"], **XCOMET_LITE, **config, "layer_transformation": "softmax"}
    return _comet_checkpoint(d, "xcomet", hp, d / "config.json", weights, layout="xcomet-lite")


METRICX_MAX_INPUT = 1536  # metricx24/predict.py's --max_input_length in its README's MetricX-24 commands
METRICX_SCORE_ID = 250089  # metricx24/models.py: the logit of <extra_id_10> is the score
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
_T5_TOKENIZER = ("tokenizer.json", "spiece.model")


def _open_metricx(d: Path, config: Any) -> Checkpoint:
    """A MetricX-24 folder: `config.json` (model_type mt5), `model.safetensors` or `pytorch_model.bin`,
    and the mT5 tokenizer (tokenizer.json or spiece.model) in `DIR/tokenizer/` or `DIR` (MetricX ships
    its weights alone: copy google/mt5-*'s tokenizer files there)."""
    if not isinstance(config, dict) or config.get("model_type") != "mt5":
        raise GlotbenchError(f"--metric-checkpoint {d}: config.json's model_type is "
                             f"{config.get('model_type') if isinstance(config, dict) else None!r}; a MetricX-24 "
                             "folder holds an mt5 model (a COMET or xCOMET folder has hparams.yaml; an xCOMET-lite folder's "
                             "config.json names its encoder_model)")
    if int(config.get("vocab_size", 0)) <= METRICX_SCORE_ID:
        raise GlotbenchError(f"--metric-checkpoint {d}: vocab_size {config.get('vocab_size')} has no logit "
                             f"{METRICX_SCORE_ID}, MetricX-24's score")
    weights = next((d / w for w in _WEIGHTS if (d / w).is_file()), None)
    if weights is None:
        raise GlotbenchError(f"--metric-checkpoint {d}: no {' or '.join(_WEIGHTS)}")
    tok = next((t for t in (d / "tokenizer", d) if any((t / f).is_file() for f in _T5_TOKENIZER)), None)
    if tok is None:
        raise GlotbenchError(f"--metric-checkpoint {d}: no mT5 tokenizer ({' or '.join(_T5_TOKENIZER)}) in "
                             f"{d / 'tokenizer'} or {d}; glotbench never downloads it")
    files = [d / "config.json", *(tok / t for t in (*_T5_TOKENIZER, "tokenizer_config.json") if (tok / t).is_file())]
    return Checkpoint(d, "metricx24", weights, d, sha256_file(weights), _files_sha(files), tokenizer=tok,
                      higher_is_better=False, worst=25.0)


class MetricX:
    """MetricX-24 (google-research/metricx, metricx24/models.py `MT5ForRegression`): the input
    "source: S candidate: H reference: R" tokenized (truncated to 1,536 tokens, then its last token,
    the EOS, dropped, as metricx24/predict.py), mT5's encoder and one decoder step from token 0, the
    logit of token 250089, clamped to [0, 25]. An error score: 0 is best."""

    def __init__(self, checkpoint: Checkpoint, *, batch_size: int = 16, device: str = "cpu",
                 header_only: bool = False):
        import torch
        from transformers import MT5Config, MT5ForConditionalGeneration

        c = checkpoint
        self.checkpoint, self.batch_size, self.device = c, batch_size, device
        import json

        with reading_files(c.path, "config.json"):
            config = MT5Config.from_pretrained(str(c.path), local_files_only=True)
            # config.json's own flag: transformers 5.24's MT5Config reads `"tie_word_embeddings": false` as
            # True, and its model would then score with the input embeddings instead of mT5's own lm_head
            tied = bool(json.loads((c.path / "config.json").read_text(encoding="utf-8")).get("tie_word_embeddings", True))
            config.tie_word_embeddings = tied
            config._attn_implementation = "eager"  # the reference's T5 attention (transformers 5 picks sdpa)
            self.model = MT5ForConditionalGeneration(config)
        if not tied and self.model.lm_head.weight.data_ptr() == self.model.shared.weight.data_ptr():
            self.model.lm_head.weight = torch.nn.Parameter(self.model.shared.weight.detach().clone())
        state = load_weights(c, header_only)
        wanted = self.model.state_dict()
        missing = [k for k in wanted if k not in state and not k.endswith("embed_tokens.weight")
                   and not (k == "lm_head.weight" and config.tie_word_embeddings)]
        if missing:
            raise GlotbenchError(f"--metric-checkpoint {c.path}: the weights lack {len(missing)} of the config's "
                                 f"({missing[0]}, ...)")
        _no_unused(c, [k for k in state if k not in wanted])
        # each weight copied by name (nn.Module.load_state_dict leaves mT5's tied `shared` matrix as it
        # was initialised under transformers 5); the embeddings are one matrix, as in the reference
        params = dict(self.model.named_parameters(remove_duplicate=False))
        if "shared.weight" in state:  # mT5's encoder and decoder embed with `shared` (untied in transformers 5
            state = {"encoder.embed_tokens.weight": state["shared.weight"],  # when the head is untied)
                     "decoder.embed_tokens.weight": state["shared.weight"], **state}
            if tied and "lm_head.weight" not in state:
                state["lm_head.weight"] = state["shared.weight"]
        with torch.no_grad():
            for k, v in state.items():
                if k in params:
                    if tuple(params[k].shape) != tuple(v.shape):
                        raise GlotbenchError(f"--metric-checkpoint {c.path}: {k} is {tuple(v.shape)} in the weights, "
                                             f"{tuple(params[k].shape)} in config.json")
                    params[k].copy_(v)
        self.model.eval()
        if device != "cpu":
            torch.nn.Module.to(self.model, torch.device(device))
        assert c.tokenizer is not None
        with reading_files(c.path, f"the tokenizer in {c.tokenizer}"):
            self.tokenizer = SegmentTokenizer(c.tokenizer, METRICX_MAX_INPUT, drop_last=True)

    def signature(self) -> str:
        return self.checkpoint.signature()

    def score(self, sources: Sequence[str], translations: Sequence[str], references: Sequence[str]) -> list[float]:
        import torch

        if not len(sources) == len(translations) == len(references):
            raise ValueError(f"{len(sources)} sources, {len(translations)} translations, {len(references)} references")
        texts = [f"source: {clean_text(s)} candidate: {clean_text(h)} reference: {clean_text(r)}"
                 for s, h, r in zip(sources, translations, references)]
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                ids, mask = (t.to(self.device) for t in self.tokenizer(texts[start:start + self.batch_size]))
                dec = torch.zeros((ids.shape[0], 1), dtype=torch.long, device=self.device)
                logits = self.model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec).logits
                out += [float(x) for x in torch.clamp(logits[:, 0, METRICX_SCORE_ID], 0, 25).tolist()]
        return out


def load_weights(c: Checkpoint, header_only: bool = False) -> dict[str, Any]:
    """The weights file as a state dict (safetensors, or a torch file loaded with weights_only). With
    `header_only` (`--dry-run`), tensors on the meta device: a safetensors file's header read and
    checked against the file's size, a torch file's archive opened with mmap; no weight is read."""
    import torch

    with open(c.ckpt, "rb") as f:
        if f.read(40).startswith(b"version https://git-lfs"):
            raise GlotbenchError(f"--metric-checkpoint {c.path}: {c.ckpt.name} is a Git LFS pointer, not the "
                                 "weights (fetch them: git lfs pull)")
    try:
        if c.ckpt.suffix == ".safetensors" and header_only:
            state: Any = _safetensors_header(c)
        elif c.ckpt.suffix == ".safetensors":
            from safetensors.torch import load_file

            state = load_file(str(c.ckpt))
        else:  # mmap: a zip archive's tensors are mapped, not read (an older non-zip torch file is read whole)
            import zipfile

            state = torch.load(c.ckpt, map_location="cpu", weights_only=True,
                               mmap=header_only and zipfile.is_zipfile(c.ckpt))
    except GlotbenchError:
        raise
    except Exception as e:  # a truncated or foreign file: torch and safetensors raise many kinds
        raise GlotbenchError(f"--metric-checkpoint {c.path}: {c.ckpt.name} does not load as weights: truncated "
                             f"or not a weights file ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    state = state.get("state_dict", state) if isinstance(state, dict) else None
    if not isinstance(state, dict):
        raise GlotbenchError(f"--metric-checkpoint {c.path}: {c.ckpt.name} holds no state_dict")
    if header_only:
        state = {k: v.to("meta") if isinstance(v, torch.Tensor) else v for k, v in state.items()}
    return state


SAFETENSORS_MAX_HEADER = 100_000_000  # safetensors' MAX_HEADER_SIZE: a longer header is HeaderTooLarge


def _safetensors_header(c: Checkpoint) -> dict[str, Any]:
    """A safetensors file's tensors as meta tensors, from its header (an 8-byte length, then JSON),
    each tensor's byte range checked against its dtype and shape and the file's size: a truncated or
    corrupt file is one error line, with nothing read past the header."""
    import json
    import struct

    import torch

    dtypes = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
              "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
              "BOOL": torch.bool}
    size = c.ckpt.stat().st_size
    bad = f"--metric-checkpoint {c.path}: {c.ckpt.name}"
    with open(c.ckpt, "rb") as f:
        raw = f.read(8)
        n = struct.unpack("<Q", raw)[0] if len(raw) == 8 else -1
        if n > SAFETENSORS_MAX_HEADER:
            raise GlotbenchError(f"{bad}: a header of {n} bytes (safetensors refuses over {SAFETENSORS_MAX_HEADER})")
        if n < 2 or 8 + n > size:
            raise GlotbenchError(f"{bad} is truncated or not safetensors (a header of {n} bytes in a file of {size})")
        try:
            header = json.loads(f.read(n))
        except (ValueError, UnicodeDecodeError) as e:
            raise GlotbenchError(f"{bad}: its header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise GlotbenchError(f"{bad}: its header is not a mapping")
    out, spans = {}, []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = dtypes[info["dtype"]]
            shape = [int(x) for x in info["shape"]]
            begin, stop = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise GlotbenchError(f"{bad}: the header's entry for {name} is malformed ({str(info)[:120]})") from None
        numel = 1
        for x in shape:
            numel *= x
        if stop - begin != numel * torch.empty((), dtype=dtype).element_size() or begin < 0:
            raise GlotbenchError(f"{bad}: {name} is {shape} {info['dtype']} in the header but spans "
                                 f"{stop - begin} bytes")
        spans.append((begin, stop, name))
        out[name] = torch.empty(shape, dtype=dtype, device="meta")
    end = 0
    for begin, stop, name in sorted(spans):  # safetensors' rule: in offset order, each starts where the last ended
        if begin != end:
            raise GlotbenchError(f"{bad}: {name} starts at byte {begin} of the data, the tensor before it ends at "
                                 f"{end} (tensors overlap or leave a gap; safetensors refuses it)")
        end = stop
    if 8 + n + end != size:  # safetensors' own loader refuses a file longer or shorter than its header says
        raise GlotbenchError(f"{bad} is {'truncated' if 8 + n + end > size else 'not what its header says'}: its "
                             f"header describes {8 + n + end} bytes, the file has {size}")
    return out


def clean_text(text: Any) -> str:
    """Any reply as text the tokenizer takes: a lone surrogate becomes U+FFFD (scored, never a crash)."""
    s = "" if text is None else str(text)
    return s.encode("utf-8", "replace").decode("utf-8") if any("\ud800" <= c <= "\udfff" for c in s) else s


def sparsemax(z: Any) -> Any:
    """Sparsemax of a vector (Martins & Astudillo 2016), as entmax's `sparsemax(z, dim=0)`."""
    import torch

    zs, _ = torch.sort(z, descending=True)
    k = torch.arange(1, z.numel() + 1, dtype=z.dtype)
    cums = zs.cumsum(0) - 1
    support = (k * zs > cums).sum()
    tau = cums[support - 1] / support.to(z.dtype)
    return torch.clamp(z - tau, min=0)


@contextlib.contextmanager
def reading_files(d: Path, what: str) -> Iterator[None]:
    """A checkpoint file that transformers or tokenizers cannot read (malformed JSON, a field of the
    wrong type, a corrupt SentencePiece model) is one `error:` line naming it, whatever they raise."""
    try:
        yield
    except GlotbenchError:
        raise
    except Exception as e:  # the libraries raise many kinds (Exception, OSError, pydantic/dataclass errors)
        why = " ".join(str(e).split())[:300] or type(e).__name__
        raise GlotbenchError(f"--metric-checkpoint {d}: {what} does not load ({type(e).__name__}: {why})") from None


def _no_unused(c: Checkpoint, unused: list[str]) -> None:
    """Weights the config has no place for (a config.json with fewer layers than the checkpoint) would
    be dropped in silence and the scores computed by a smaller model: one error line instead."""
    if unused:
        raise GlotbenchError(f"--metric-checkpoint {c.path}: {len(unused)} weights have no place in the config "
                             f"({unused[0]}, ...): config.json does not describe these weights")


class LearnedMetric:
    """A checkpoint's estimator, loaded once on CPU (or `device`), scoring segments in batches."""

    def __init__(self, checkpoint: Checkpoint, *, batch_size: int = 16, device: str = "cpu",
                 header_only: bool = False):
        import torch
        from transformers import XLMRobertaConfig, XLMRobertaModel

        self.checkpoint, self.batch_size, self.device = checkpoint, batch_size, device
        c = checkpoint
        state = load_weights(c, header_only)
        with reading_files(c.path, f"{c.encoder / 'config.json'}"):
            config = XLMRobertaConfig.from_pretrained(str(c.encoder), local_files_only=True)
            self.encoder = XLMRobertaModel(config, add_pooling_layer=False)
            self.max_length = config.max_position_embeddings - 4  # unbabel-comet: max_positions - 2
        with reading_files(c.path, f"the tokenizer in {c.encoder}"):
            self.tokenizer = SegmentTokenizer(c.encoder, self.max_length)
        load_encoder(c, self.encoder, state)
        self.mix, self.gamma = layer_weights(c, state, config.num_hidden_layers + 1)
        self.estimator = feed_forward(c, state, 6 * config.hidden_size)
        self.encoder.eval()
        self.estimator.eval()
        if device != "cpu":
            import torch

            torch.nn.Module.to(self.encoder, torch.device(device))  # transformers types `.to` for its own hooks
            self.estimator.to(torch.device(device))

    def signature(self) -> str:
        return self.checkpoint.signature()

    def _embed(self, texts: Sequence[str]) -> Any:
        ids, mask = (t.to(self.device) for t in self.tokenizer([clean_text(x) for x in texts]))
        out = self.encoder(input_ids=ids, attention_mask=mask, output_hidden_states=True, return_dict=True)
        layers = out.hidden_states
        c = self.checkpoint
        emb = layers[int(c.layer)] if self.mix is None else mix_layers(c, layers, mask, self.mix, self.gamma)
        pad = ids.eq(self.tokenizer.pad_token_id).unsqueeze(-1)
        if c.pool == "avg":
            return emb.float().masked_fill(pad, 0.0).sum(1) / mask.unsqueeze(-1).expand(emb.size()).float().sum(1)
        if c.pool == "max":
            return emb.float().masked_fill(pad, float("-inf")).max(dim=1)[0]
        if c.pool == "cls":
            return emb[:, 0, :]
        return out.last_hidden_state[:, 0, :]  # "default": the encoder's sentence embedding

    def score(self, sources: Sequence[str], translations: Sequence[str], references: Sequence[str]) -> list[float]:
        """One score per segment, in the order given (batched by source length, as unbabel-comet)."""
        return in_batches(sources, translations, references, self.batch_size, self._score_batch)

    def _score_batch(self, sources: list[str], translations: list[str], references: list[str]) -> list[float]:
        import torch

        s, h, r = (self._embed(col) for col in (sources, translations, references))
        feats = torch.cat((h, r, h * r, torch.abs(h - r), h * s, torch.abs(h - s)), dim=1)
        return [float(v) for v in self.estimator(feats).view(-1).tolist()]


def in_batches(sources: Sequence[str], translations: Sequence[str], references: Sequence[str], batch_size: int,
               score_batch: Callable[[list[str], list[str], list[str]], list[float]]) -> list[float]:
    """Segments scored as unbabel-comet's `predict` orders them (sorted by the source's length with
    numpy's argsort, in batches of `batch_size`), each batch by `score_batch(sources, translations,
    references)`, the scores put back in the order given."""
    import numpy as np
    import torch

    if not len(sources) == len(translations) == len(references):
        raise ValueError(f"{len(sources)} sources, {len(translations)} translations, {len(references)} references")
    order = np.argsort([len(clean_text(s)) for s in sources])
    out = [0.0] * len(order)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            got = score_batch(*([col[i] for i in idx] for col in (sources, translations, references)))
            for i, v in zip(idx, got):
                out[int(i)] = float(v)
    return out


def load_encoder(c: Checkpoint, encoder: Any, state: Mapping[str, Any]) -> None:
    """The checkpoint's `encoder.model.*` weights into `encoder`: every weight its config asks for, and
    none it has no place for (one error line each), shapes checked."""
    enc = {k[len("encoder.model."):]: v for k, v in state.items() if k.startswith("encoder.model.")}
    wanted = encoder.state_dict()
    missing = [k for k in wanted if k not in enc and not k.endswith("position_ids")]
    if missing:
        raise GlotbenchError(f"--metric-checkpoint {c.path}: the checkpoint lacks {len(missing)} encoder "
                             f"weights ({missing[0]}, ...) for the config in {c.encoder}")
    _no_unused(c, [k for k in enc if k not in wanted and not k.endswith("position_ids")])
    try:
        encoder.load_state_dict(enc, strict=False)
    except RuntimeError as e:
        raise GlotbenchError(f"--metric-checkpoint {c.path}: encoder weights do not fit its config "
                             f"({str(e).splitlines()[-1].strip()})") from None
    encoder.eval()


def feed_forward(c: Checkpoint, state: Mapping[str, Any], in_dim: int) -> Any:
    """unbabel-comet's FeedForward estimator (`estimator.ff.*`: Linear, activation, dropout, ...) of the
    checkpoint's hidden sizes, its weights loaded, in eval mode; one error line if they do not fit."""
    from torch import nn

    sizes = [in_dim, *c.hidden_sizes, 1]
    modules: list[Any] = []
    for j, (a, b) in enumerate(zip(sizes, sizes[1:])):
        modules.append(nn.Linear(a, b))
        if j < len(sizes) - 2:
            modules += [_activation(c.activations), nn.Identity()]  # Identity: the dropout's slot
    if c.final_activation is not None:
        modules.append(_activation(c.final_activation))
    ff = nn.Sequential(*modules)
    wanted = {k: v for k, v in state.items() if k.startswith("estimator.ff.")}
    try:
        ff.load_state_dict({k[len("estimator.ff."):]: v for k, v in wanted.items()}, strict=True)
    except RuntimeError as e:
        raise GlotbenchError(f"--metric-checkpoint {c.path}: estimator weights do not fit hidden_sizes "
                             f"{list(c.hidden_sizes)} ({str(e).splitlines()[0]})") from None
    return ff.eval()


def layer_weights(c: Checkpoint, state: Mapping[str, Any], n_layers: int) -> tuple[Any, Any]:
    """The layer-wise attention's scalar weights and gamma (`layer` mix), or (None, None) for one layer;
    one error line for a layer the encoder does not have."""
    import torch

    if c.layer != "mix":
        if not 0 <= int(c.layer) < n_layers:
            raise GlotbenchError(f"--metric-checkpoint {c.path}: layer {c.layer} of an encoder with {n_layers}")
        return None, None
    try:
        return (torch.cat([state[f"layerwise_attention.scalar_parameters.{i}"] for i in range(n_layers)]),
                state["layerwise_attention.gamma"])
    except KeyError as e:
        raise GlotbenchError(f"--metric-checkpoint {c.path}: no layer-wise attention weight {e}") from None


def mix_layers(c: Checkpoint, layers: Sequence[Any], mask: Any, weights: Any, gamma: Any) -> Any:
    """unbabel-comet's LayerwiseAttention at inference: gamma * sum(w_i * layer_i), w the softmax or
    sparsemax of the scalar weights, each layer first normalised over its unmasked tokens if layer_norm."""
    import torch

    w = sparsemax(weights) if c.layer_transformation == "sparsemax" else torch.softmax(weights, dim=0)
    w = w.to(layers[0].device)
    if c.layer_norm:
        m = mask.float()
        layers = [_masked_norm(x, m) for x in layers]
    return gamma.to(layers[0].device) * sum(w[i] * x for i, x in enumerate(layers))


class SegmentTokenizer:
    """The encoder's tokenizer as unbabel-comet calls it (`padding=True, truncation=True, max_length`).
    A `tokenizer.json` is run as written through the tokenizers library: transformers 5 rebuilds
    XLM-R's pipeline from the vocabulary and drops the file's normalizer (the NFKC or precompiled
    charsmap that transformers 4, unbabel-comet's pin, applies), which changes the tokens of e.g.
    repeated spaces and compatibility characters. A directory with only `sentencepiece.bpe.model`
    goes through transformers' own conversion."""

    def __init__(self, folder: Path, max_length: int, drop_last: bool = False, pad_token: str = "<pad>"):
        self.max_length, self.drop_last = max_length, drop_last
        self._fast: Any = None
        self._auto: Any = None
        if (folder / "tokenizer.json").is_file():
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
            pad = tok.token_to_id(pad_token)
            self.pad_token_id = 1 if pad is None else pad
            tok.no_padding()
            tok.enable_truncation(max_length)
            self._fast = tok
        else:
            from transformers import AutoTokenizer

            self._auto = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            self.pad_token_id = self._auto.pad_token_id

    def token_id(self, token: str) -> int | None:
        """A special token's id in this vocabulary, None if it has none."""
        if self._fast is not None:
            got = self._fast.token_to_id(token)
        else:
            got = self._auto.convert_tokens_to_ids(token)
            got = None if got == self._auto.unk_token_id and token != self._auto.unk_token else got
        return None if got is None else int(got)

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids, special tokens included, truncated to max_length, unpadded."""
        if self._auto is not None:
            t = self._auto(list(texts), truncation=True, max_length=self.max_length)
            return [list(r[:-1]) if self.drop_last else list(r) for r in t["input_ids"]]
        return [e.ids[:-1] if self.drop_last else e.ids for e in self._fast.encode_batch(list(texts))]

    def __call__(self, texts: Sequence[str]) -> tuple[Any, Any]:
        rows = self.encode(texts)
        return pad_rows(rows, self.pad_token_id)


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any]:
    """Rows of ids right-padded to the longest: (ids, attention mask), long tensors."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.tensor([list(r) + [pad_id] * (width - len(r)) for r in rows], dtype=torch.long)
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], dtype=torch.long)
    return ids, mask


def _activation(name: str) -> Any:
    from torch import nn

    cls = getattr(nn, name.title(), None)
    if cls is None:
        raise GlotbenchError(f"unknown activation {name!r} in the checkpoint's hparams")
    return cls()


def _masked_norm(x: Any, mask: Any) -> Any:
    """unbabel-comet's layer norm of one layer over a sentence's unmasked tokens and all features."""
    import torch

    b, _, dim = x.size()
    bm = mask.unsqueeze(-1)
    xm = x * bm
    n = mask.sum(1) * dim
    mean = (xm.view(b, -1).sum(1) / n).view(b, 1, 1)
    var = (((xm - mean) * bm) ** 2).view(b, -1).sum(1) / n
    return (x - mean) / torch.sqrt(var + 1e-12).view(b, 1, 1)


def load(dirpath: str | Path, *, batch_size: int = 16, device: str = "cpu") -> Any:
    """`--metric-checkpoint DIR` opened and loaded; a GlotbenchError for anything unreadable."""
    checkpoint = open_checkpoint(dirpath)
    return _metric_class(checkpoint)(checkpoint, batch_size=batch_size, device=device)


def check(dirpath: str | Path) -> Checkpoint:
    """`--dry-run`'s check of `--metric-checkpoint DIR`: opened, and the model built on the meta device
    from the weights' header (names, dtypes, shapes; a safetensors file's byte ranges against its
    size), so a truncated file or a weight of the wrong shape is the error line the run would give,
    with no weight read or memory allocated."""
    import torch

    checkpoint = open_checkpoint(dirpath)
    cls = _metric_class(checkpoint)
    with torch.device("meta"):
        cls(checkpoint, header_only=True)
    return checkpoint


def _metric_class(checkpoint: Checkpoint) -> Any:
    import importlib.util

    absent = [m for m in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(m) is None]
    if absent:
        raise GlotbenchError(f"--metric-checkpoint needs {', '.join(absent)}: pip install \"glotbench[learned]\"")
    if checkpoint.kind == "metricx24":
        return MetricX
    if checkpoint.kind == "xcomet":
        from glotbench.metrics.xcomet import XComet

        return XComet
    return LearnedMetric
