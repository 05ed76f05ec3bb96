"""A random-weight checkpoint in unbabel-comet's layout, built offline, for the learned-metric tests
and bench: `DIR/hparams.yaml`, `DIR/checkpoints/model.ckpt` (a Lightning-style dict with
`state_dict`) and `DIR/encoder/` (an XLM-R `config.json` and a Unigram `tokenizer.json` in the
layout of xlm-roberta's). Weights come from numpy's PCG64 generator with a fixed seed, so the same
arguments give the same bytes on any machine (torch's initialisers are not promised stable)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")


@dataclass(frozen=True)
class TinyComet:
    """The encoder's and the estimator's sizes and COMET's hparams that change a score."""

    hidden: int = 16
    layers: int = 2
    heads: int = 2
    intermediate: int = 32
    max_tokens: int = 64  # the encoder's positions, less XLM-R's two offset ones
    estimator: tuple[int, ...] = (32, 16)
    layer_transformation: str = "softmax"
    layer_norm: bool = True
    pool: str = "avg"
    layer: str | int = "mix"
    activations: str = "Tanh"
    final_activation: str | None = None
    vocab: int = 0  # 0: the pieces of `text` only; more: padded with made-up pieces to this size
    seed: int = 0


T5_SPECIALS = ("<pad>", "</s>", "<unk>")


def _pieces(text: str, vocab: int, specials: int = len(SPECIALS)) -> list[tuple[str, float]]:
    """Unigram pieces: each character of `text` and each of its words with the word-start marker."""
    words = {("\u2581" + w) for w in text.split()}
    chars = sorted({c for c in text if not c.isspace()} | {"\u2581"})
    out = [(p, -float(len(p))) for p in sorted(words)] + [(c, -10.0) for c in chars]
    i = 0
    while len(out) + specials + 1 < vocab:
        out.append((f"\u2581x{i}", -20.0))
        i += 1
    return out


DEBERTA_SPECIALS = ("[PAD]", "[CLS]", "[SEP]", "[UNK]")


def write_tokenizer(path: Path, text: str, vocab: int = 0, t5: bool = False, deberta: bool = False) -> int:
    """XLM-R's tokenizer pipeline (NFKC, Metaspace `▁`, Unigram, `<s> A </s>`), mT5's (`t5`: `<pad>`
    0, `</s>` 1, `<unk>` 2, `A </s>`) or mDeBERTa-v3's (`deberta`: `[PAD]` 0, `[CLS]` 1, `[SEP]` 2,
    `[UNK]` 3, `[CLS] A [SEP]`), over a vocabulary drawn from `text`; the vocabulary's size."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors, decoders
    from tokenizers.models import Unigram

    specials = T5_SPECIALS if t5 else DEBERTA_SPECIALS if deberta else SPECIALS
    vocab_list = [(s, 0.0) for s in specials] + _pieces(text, vocab, len(specials)) + \
        [("<extra_id_0>" if t5 else "[MASK]" if deberta else "<mask>", 0.0)]
    tok = Tokenizer(Unigram(vocab_list, unk_id=2 if t5 else 3, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("  ", " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    if t5:
        tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                           special_tokens=[("</s>", 1)])
    elif deberta:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    else:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", 0), ("</s>", 2)])
    path.mkdir(parents=True, exist_ok=True)
    tok.save(str(path / "tokenizer.json"))
    if deberta:
        (path / "tokenizer_config.json").write_text(json.dumps({
            "tokenizer_class": "DebertaV2Tokenizer", "bos_token": "[CLS]", "eos_token": "[SEP]", "sep_token": "[SEP]",
            "cls_token": "[CLS]", "unk_token": "[UNK]", "pad_token": "[PAD]", "mask_token": "[MASK]",
            "do_lower_case": False, "split_by_punct": False, "model_max_length": 512}))
        return len(vocab_list)
    if t5:
        (path / "tokenizer_config.json").write_text(json.dumps({
            "tokenizer_class": "T5Tokenizer", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
            "extra_ids": 0, "model_max_length": 1000000}))
        return len(vocab_list)
    (path / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "XLMRobertaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
        "cls_token": "<s>", "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>",
        "model_max_length": 512}))
    return len(vocab_list)


def build(dirpath: str | Path, spec: TinyComet = TinyComet(), text: str = "") -> Path:
    """Write a COMET-22-style (`regression_metric`) checkpoint to `dirpath`; its path."""
    import numpy as np
    import torch
    import yaml

    d = Path(dirpath)
    enc = d / "encoder"
    n_vocab = write_tokenizer(enc, text or "hello world", spec.vocab)
    config = {"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "vocab_size": n_vocab,
              "hidden_size": spec.hidden, "num_hidden_layers": spec.layers, "num_attention_heads": spec.heads,
              "intermediate_size": spec.intermediate, "hidden_act": "gelu",
              "max_position_embeddings": spec.max_tokens + 2, "type_vocab_size": 1, "pad_token_id": 1,
              "bos_token_id": 0, "eos_token_id": 2, "layer_norm_eps": 1e-5, "hidden_dropout_prob": 0.1,
              "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute"}
    (enc / "config.json").write_text(json.dumps(config, indent=1))
    rng = np.random.default_rng(spec.seed)
    state: dict[str, Any] = {}

    def put(name: str, *shape: int, scale: float = 0.2, fill: float | None = None) -> None:
        a = np.full(shape, fill) if fill is not None else rng.normal(0.0, scale, size=shape)
        state[name] = torch.tensor(a, dtype=torch.float32)

    h, m = spec.hidden, "encoder.model."
    put(m + "embeddings.word_embeddings.weight", n_vocab, h)
    put(m + "embeddings.position_embeddings.weight", spec.max_tokens + 2, h)
    put(m + "embeddings.token_type_embeddings.weight", 1, h)
    put(m + "embeddings.LayerNorm.weight", h, fill=1.0)
    put(m + "embeddings.LayerNorm.bias", h, scale=0.05)
    for i in range(spec.layers):
        p = f"{m}encoder.layer.{i}."
        for lin in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            put(p + lin + ".weight", h, h)
            put(p + lin + ".bias", h, scale=0.05)
        put(p + "intermediate.dense.weight", spec.intermediate, h)
        put(p + "intermediate.dense.bias", spec.intermediate, scale=0.05)
        put(p + "output.dense.weight", h, spec.intermediate)
        put(p + "output.dense.bias", h, scale=0.05)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            put(p + ln + ".weight", h, scale=0.1)
            state[p + ln + ".weight"] += 1.0
            put(p + ln + ".bias", h, scale=0.05)
    if spec.layer == "mix":
        for i in range(spec.layers + 1):
            put(f"layerwise_attention.scalar_parameters.{i}", 1, scale=1.0)
        put("layerwise_attention.gamma", 1, scale=0.1)
        state["layerwise_attention.gamma"] += 1.0
    sizes = [6 * h, *spec.estimator, 1]
    for j, (a, b) in enumerate(zip(sizes, sizes[1:])):
        put(f"estimator.ff.{3 * j}.weight", b, a, scale=1.0 / a ** 0.5)
        put(f"estimator.ff.{3 * j}.bias", b, scale=0.1)
    hparams = {"class_identifier": "regression_metric", "encoder_model": "XLM-RoBERTa",
               "pretrained_model": str(enc.resolve()), "pool": spec.pool, "layer": spec.layer,
               "layer_transformation": spec.layer_transformation, "layer_norm": spec.layer_norm,
               "hidden_sizes": list(spec.estimator), "activations": spec.activations,
               "final_activation": spec.final_activation, "dropout": 0.1, "batch_size": 4,
               "nr_frozen_epochs": 0.3, "keep_embeddings_frozen": True, "loss": "mse",
               "train_data": [], "validation_data": [], "load_pretrained_weights": False}
    (d / "checkpoints").mkdir(parents=True, exist_ok=True)
    (d / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True))
    torch.save({"state_dict": state, "hyper_parameters": hparams, "pytorch-lightning_version": "2.0.0",
                "glotbench_spec": asdict(spec)},
               d / "checkpoints" / "model.ckpt")
    return d


@dataclass(frozen=True)
class TinyMetricX:
    """A MetricX-24-shaped mT5: sizes, and the scale of the score logit's row (so that scores land
    inside MetricX's [0, 25] rather than on its clamp)."""

    d_model: int = 16
    d_kv: int = 8
    d_ff: int = 32
    layers: int = 2
    heads: int = 2
    vocab: int = 250112  # mT5's: the score is the logit of token 250089
    score_row: float = 12.0
    seed: int = 0


def build_metricx(dirpath: str | Path, spec: TinyMetricX = TinyMetricX(), text: str = "") -> Path:
    """Write a MetricX-24-style folder (config.json, model.safetensors, tokenizer/) to `dirpath`."""
    import numpy as np
    import torch
    from safetensors.torch import save_file
    from transformers import MT5Config, MT5ForConditionalGeneration

    d = Path(dirpath)
    d.mkdir(parents=True, exist_ok=True)
    write_tokenizer(d / "tokenizer", text or "hello world", 4000, t5=True)
    cfg = MT5Config(vocab_size=spec.vocab, d_model=spec.d_model, d_kv=spec.d_kv, d_ff=spec.d_ff,
                    num_layers=spec.layers, num_decoder_layers=spec.layers, num_heads=spec.heads,
                    relative_attention_num_buckets=8, relative_attention_max_distance=32,
                    feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0,
                    pad_token_id=0, eos_token_id=1, dropout_rate=0.1)
    config = {**cfg.to_dict(), "architectures": ["MT5ForRegression"], "tie_word_embeddings": False}
    for k in ("transformers_version", "_name_or_path"):
        config.pop(k, None)
    (d / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
    shapes = {k: tuple(v.shape) for k, v in MT5ForConditionalGeneration(cfg).state_dict().items()
              if not k.endswith("embed_tokens.weight")}
    shapes["lm_head.weight"] = (spec.vocab, spec.d_model)  # untied, as mT5's
    rng = np.random.default_rng(spec.seed)
    state = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if "layer_norm" in name:
            a = 1.0 + rng.normal(0.0, 0.1, size=shape)
        else:
            a = rng.normal(0.0, 1.0 / shape[-1] ** 0.5 if len(shape) > 1 else 0.2, size=shape)
        state[name] = torch.tensor(a, dtype=torch.float32)
    save_file(state, str(d / "model.safetensors"))
    # the score row set along the mean decoder output over `text`'s words, so that scores sit near
    # `score_row` inside MetricX's [0, 25] clamp and still vary from segment to segment
    from glotbench.metrics.learned import load

    m = load(d)
    words = (text or "hello world").split()
    inputs = [f"source: {w} candidate: {w} reference: {w}" for w in words[:64]]
    ids, mask = m.tokenizer(inputs)  # type: ignore[union-attr]
    with torch.no_grad():
        out = m.model(input_ids=ids, attention_mask=mask,  # type: ignore[union-attr]
                      decoder_input_ids=torch.zeros((len(inputs), 1), dtype=torch.long), output_hidden_states=True)
    mean = out.decoder_hidden_states[-1][:, 0, :].mean(0)
    row = spec.score_row * mean / (mean @ mean) + 0.5 * state["lm_head.weight"][250089]
    # rounded: the mean is a float computation, and its last bits must not make the weights differ
    # between the reference's environment and this one
    state["lm_head.weight"][250089] = torch.tensor(np.round(np.asarray(row, dtype=np.float64), 3), dtype=torch.float32)
    save_file(state, str(d / "model.safetensors"))
    return d


@dataclass(frozen=True)
class TinyXComet:
    """An xCOMET-shaped checkpoint: unbabel-comet's encoder name (XLM-RoBERTa, XLM-RoBERTa-XL,
    DeBERTa), the sizes, XCOMETMetric's settings, and the layout: `comet` (hparams.yaml,
    checkpoints/model.ckpt) or `lite` (xCOMET-lite's PyTorchModelHubMixin folder: config.json of
    XCOMETLite's arguments, model.safetensors). `tag_bias` favours the O tag so that error spans are
    neither everywhere nor nowhere."""

    encoder: str = "XLM-RoBERTa"
    layout: str = "comet"
    hidden: int = 16
    layers: int = 2
    heads: int = 2
    intermediate: int = 32
    max_tokens: int = 64  # positions the encoder takes (XLM-R: less its two offset ones)
    estimator: tuple[int, ...] = (24, 16)
    sent_layer: str | int = "mix"
    word_layer: int = 1
    layer_transformation: str = "sparsemax"
    layer_norm: bool = False
    type_vocab: int = 0  # DeBERTa: mDeBERTa-v3 has none
    vocab: int = 0  # 0: the pieces of `text` only; more: padded with made-up pieces to this size
    buckets: int = 16  # DeBERTa's relative-position buckets (mDeBERTa-v3: 256)
    tag_bias: float = 1.0
    score_bias: float = 0.0  # added to the estimator's last bias: above 1, xCOMET's cap at 1 is exercised
    seed: int = 0


def _xcomet_config(spec: TinyXComet, n_vocab: int) -> dict[str, Any]:
    common = {"vocab_size": n_vocab, "hidden_size": spec.hidden, "num_hidden_layers": spec.layers,
              "num_attention_heads": spec.heads, "intermediate_size": spec.intermediate, "hidden_act": "gelu",
              "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 0}
    if spec.encoder == "DeBERTa":  # mdeberta-v3-base's config.json, smaller
        return {**common, "model_type": "deberta-v2", "architectures": ["DebertaV2Model"],
                "max_position_embeddings": spec.max_tokens, "relative_attention": True, "position_buckets": spec.buckets,
                "norm_rel_ebd": "layer_norm", "share_att_key": True, "pos_att_type": ["p2c", "c2p"],
                "layer_norm_eps": 1e-7, "max_relative_positions": -1, "position_biased_input": False,
                "type_vocab_size": spec.type_vocab, "initializer_range": 0.02}
    xl = spec.encoder == "XLM-RoBERTa-XL"
    return {**common, "model_type": "xlm-roberta-xl" if xl else "xlm-roberta",
            "architectures": ["XLMRobertaXLModel" if xl else "XLMRobertaModel"], "pad_token_id": 1,
            "bos_token_id": 0, "eos_token_id": 2, "max_position_embeddings": spec.max_tokens + 2,
            "type_vocab_size": 1, "layer_norm_eps": 1e-5, "position_embedding_type": "absolute"}


def build_xcomet(dirpath: str | Path, spec: TinyXComet = TinyXComet(), text: str = "") -> Path:
    """Write an xCOMET-style checkpoint (`xcomet_metric`) to `dirpath` in `spec.layout`; its path."""
    import numpy as np
    import torch
    import yaml

    from glotbench.metrics.xcomet import build_encoder

    d = Path(dirpath)
    enc = d / "encoder"
    n_vocab = write_tokenizer(enc, text or "hello world", spec.vocab, deberta=spec.encoder == "DeBERTa")
    (enc / "config.json").write_text(json.dumps(_xcomet_config(spec, n_vocab), indent=1))
    shapes = {f"encoder.model.{k}": tuple(v.shape) for k, v in build_encoder(spec.encoder, str(enc)).named_parameters()}
    n_mix = spec.layers + 1 if spec.sent_layer == "mix" else 0
    sizes = [spec.hidden, *spec.estimator, 1]
    rng = np.random.default_rng(spec.seed)
    state: dict[str, Any] = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if "LayerNorm" in name or "layer_norm" in name:
            a = (1.0 if name.endswith("weight") else 0.0) + rng.normal(0.0, 0.1 if name.endswith("weight") else 0.05,
                                                                       size=shape)
        elif len(shape) == 1:
            a = rng.normal(0.0, 0.05, size=shape)
        else:
            a = rng.normal(0.0, 0.2 if "embeddings" in name else 1.0 / shape[-1] ** 0.5, size=shape)
        state[name] = torch.tensor(a, dtype=torch.float32)
    for i in range(n_mix):
        state[f"layerwise_attention.scalar_parameters.{i}"] = torch.tensor(rng.normal(0.0, 1.0, size=1),
                                                                           dtype=torch.float32)
    if n_mix:
        state["layerwise_attention.gamma"] = torch.tensor(1.0 + rng.normal(0.0, 0.1, size=1), dtype=torch.float32)
    for j, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        state[f"estimator.ff.{3 * j}.weight"] = torch.tensor(rng.normal(0.0, 1.0 / n_in ** 0.5, size=(n_out, n_in)),
                                                             dtype=torch.float32)
        state[f"estimator.ff.{3 * j}.bias"] = torch.tensor(rng.normal(0.0, 0.1, size=n_out), dtype=torch.float32)
    state[f"estimator.ff.{3 * (len(sizes) - 2)}.bias"] += spec.score_bias
    state["hidden2tag.weight"] = torch.tensor(rng.normal(0.0, 1.0 / spec.hidden ** 0.5, size=(4, spec.hidden)),
                                              dtype=torch.float32)
    state["hidden2tag.bias"] = torch.tensor([spec.tag_bias, 0.0, 0.0, 0.0], dtype=torch.float32)
    hparams = {"class_identifier": "xcomet_metric", "encoder_model": spec.encoder,
               "pretrained_model": str(enc.resolve()), "sent_layer": spec.sent_layer, "layer": spec.sent_layer,
               "word_layer": spec.word_layer, "layer_transformation": spec.layer_transformation,
               "layer_norm": spec.layer_norm, "hidden_sizes": list(spec.estimator), "activations": "Tanh",
               "final_activation": None, "dropout": 0.1, "batch_size": 4, "nr_frozen_epochs": 0.3,
               "keep_embeddings_frozen": True, "loss": "mse", "word_level_training": True,
               "error_labels": ["minor", "major", "critical"], "loss_lambda": 0.055,
               "cross_entropy_weights": [0.08, 0.486, 0.505, 0.533], "input_segments": ["mt", "src", "ref"],
               "train_data": [], "validation_data": [], "load_pretrained_weights": False}
    if spec.layout == "lite":
        from safetensors.torch import save_file

        keep = ("encoder_model", "pretrained_model", "word_layer", "hidden_sizes", "sent_layer",
                "layer_transformation", "layer_norm", "load_pretrained_weights")
        (d / "config.json").write_text(json.dumps({k: hparams[k] for k in keep}, indent=1, sort_keys=True))
        save_file(state, str(d / "model.safetensors"))
        return d
    (d / "checkpoints").mkdir(parents=True, exist_ok=True)
    (d / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True))
    torch.save({"state_dict": state, "hyper_parameters": hparams, "pytorch-lightning_version": "2.0.0",
                "glotbench_spec": asdict(spec)}, d / "checkpoints" / "model.ckpt")
    return d
