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


def _pieces(text: str, vocab: int) -> list[tuple[str, float]]:
    """Unigram pieces: each character of `text` and each of its words with the word-start marker."""
    words = {("\u2581" + w) for w in text.split()}
    chars = sorted({c for c in text if not c.isspace()} | {"\u2581"})
    out = [(p, -float(len(p))) for p in sorted(words)] + [(c, -10.0) for c in chars]
    i = 0
    while len(out) + len(SPECIALS) + 1 < vocab:
        out.append((f"\u2581x{i}", -20.0))
        i += 1
    return out


def write_tokenizer(path: Path, text: str, vocab: int = 0) -> int:
    """XLM-R's tokenizer pipeline (NFKC, Metaspace `▁`, Unigram, `<s> A </s>`) over a vocabulary drawn
    from `text`; the vocabulary's size."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors, decoders
    from tokenizers.models import Unigram

    vocab_list = [(s, 0.0) for s in SPECIALS] + _pieces(text, vocab) + [("<mask>", 0.0)]
    tok = Tokenizer(Unigram(vocab_list, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("  ", " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)])
    path.mkdir(parents=True, exist_ok=True)
    tok.save(str(path / "tokenizer.json"))
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
