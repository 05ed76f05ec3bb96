"""xCOMET-style estimators from a local checkpoint (`--metric-checkpoint DIR`), never downloaded.

unbabel-comet's `XCOMETMetric` (comet/models/multitask/xcomet_metric.py, on `UnifiedMetric`)
re-derived at inference, with a reference: the translation is encoded three times, joined to the
source, to the reference, and to both (`<s> mt </s></s> src </s>`, ...: `Encoder.concat_sequences`,
truncated as it truncates). Each pass gives a regression score (the layer mix's first token through
the feed-forward estimator, capped at 1) and per-token error tags (`hidden2tag` on `word_layer`:
O, minor, major, critical). The tag probabilities of the translation's tokens are averaged with
weights 1/6, 1/3, 1/2; each token takes its most likely tag; a run of error tags is one span of its
first tag's severity, closed by an O (a span still open at the last token is not counted, as in
`UnifiedMetric.decode`). MQM = min(25, minor + 5 major + 10 critical); the score is
0.12 s_src + 0.33 s_ref + 0.33 s_both + 0.22 (25 - MQM) / 25.

Encoders: XLM-R (unbabel-comet's `XLM-RoBERTa`), XLM-R XL (`XLM-RoBERTa-XL`, xCOMET-XL/XXL) and
mDeBERTa-v3 (`DeBERTa`, xCOMET-lite: NL2G/xCOMET-lite's `DeBERTaEncoder`, token types 0 on the
translation and 1 after it, one separator). The tests hold the scores equal to unbabel-comet 2.2.7's
`predict` and to xCOMET-lite's own `XCOMETLite.from_pretrained(...).predict` on random-weight
checkpoints (tests/learned_oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from glotbench.errors import GlotbenchError
from glotbench.metrics.learned import (Checkpoint, SegmentTokenizer, clean_text, feed_forward, in_batches,
                                       layer_weights, load_encoder, load_weights, mix_layers, pad_rows, reading_files)

SCORE_WEIGHTS = (0.12, 0.33, 0.33, 0.22)  # [mt:src], [mt:ref], [mt:src:ref] regression, then the MQM score
SPAN_WEIGHTS = (0.1667, 0.3333, 0.5)  # the tag probabilities of the three passes
SEVERITY_POINTS = (0, 1, 5, 10)  # label ids O, I-minor, I-major, I-critical -> MQM points
MQM_CAP = 25


@dataclass(frozen=True)
class Family:
    """What an unbabel-comet encoder name means: the transformers classes, the special tokens, the
    separator's length between two segments, and whether token types are passed."""

    cls: str
    sep: str
    pad: str
    separator: int
    token_types: bool


FAMILIES = {"XLM-RoBERTa": Family("<s>", "</s>", "<pad>", 2, False),
            "XLM-RoBERTa-XL": Family("<s>", "</s>", "<pad>", 2, False),
            "DeBERTa": Family("[CLS]", "[SEP]", "[PAD]", 1, True)}


def build_encoder(name: str, folder: str) -> Any:
    """The encoder of `name` built from its config.json (no weights yet)."""
    if name == "DeBERTa":
        from transformers import DebertaV2Config, DebertaV2Model

        return DebertaV2Model(DebertaV2Config.from_pretrained(folder, local_files_only=True))
    if name == "XLM-RoBERTa-XL":
        from transformers import XLMRobertaXLConfig, XLMRobertaXLModel

        return XLMRobertaXLModel(XLMRobertaXLConfig.from_pretrained(folder, local_files_only=True),
                                 add_pooling_layer=False)
    from transformers import XLMRobertaConfig, XLMRobertaModel

    return XLMRobertaModel(XLMRobertaConfig.from_pretrained(folder, local_files_only=True), add_pooling_layer=False)


class XComet:
    """An xCOMET-style checkpoint, loaded once on CPU (or `device`), scoring segments in batches."""

    def __init__(self, checkpoint: Checkpoint, *, batch_size: int = 16, device: str = "cpu",
                 header_only: bool = False):
        import torch
        from torch import nn

        c = checkpoint
        self.checkpoint, self.batch_size, self.device = c, batch_size, device
        self.family = FAMILIES[c.encoder_model]
        state = load_weights(c, header_only)
        with reading_files(c.path, f"{c.encoder / 'config.json'}"):
            self.encoder = build_encoder(c.encoder_model, str(c.encoder))
        config = self.encoder.config
        self.max_positions = config.max_position_embeddings - 2  # unbabel-comet's Encoder.max_positions
        with reading_files(c.path, f"the tokenizer in {c.encoder}"):
            self.tokenizer = SegmentTokenizer(c.encoder, self.max_positions - 2, pad_token=self.family.pad)
        ids = [self.tokenizer.token_id(t) for t in (self.family.cls, self.family.sep)]
        if None in ids:
            raise GlotbenchError(f"--metric-checkpoint {c.path}: the tokenizer in {c.encoder} has no "
                                 f"{self.family.cls} or {self.family.sep} ({c.encoder_model}'s special tokens)")
        self.cls_id, self.sep_id = int(ids[0] or 0), int(ids[1] or 0)
        load_encoder(c, self.encoder, state)
        n_layers = config.num_hidden_layers + 1
        if not c.word_layer < n_layers:
            raise GlotbenchError(f"--metric-checkpoint {c.path}: word_layer {c.word_layer} of an encoder with "
                                 f"{n_layers} layers")
        self.mix, self.gamma = layer_weights(c, state, n_layers)
        self.estimator = feed_forward(c, state, config.hidden_size)
        self.tagger = nn.Linear(config.hidden_size, len(SEVERITY_POINTS))
        try:
            self.tagger.load_state_dict({"weight": state["hidden2tag.weight"], "bias": state["hidden2tag.bias"]})
        except (KeyError, RuntimeError) as e:
            raise GlotbenchError(f"--metric-checkpoint {c.path}: no error-span tagger (hidden2tag) of "
                                 f"{config.hidden_size} x {len(SEVERITY_POINTS)} "
                                 f"({' '.join(str(e).split())[:200]})") from None
        self.tagger.eval()
        if device != "cpu":
            for m in (self.encoder, self.estimator, self.tagger):
                torch.nn.Module.to(m, torch.device(device))

    def signature(self) -> str:
        return self.checkpoint.signature()

    def _concat(self, parts: Sequence[Sequence[list[int]]]) -> tuple[Any, Any, Any]:
        """unbabel-comet's `Encoder.concat_sequences`: each row's segments joined with the separator,
        cut to max_positions when their inner lengths pass max_positions less the special tokens;
        (ids, mask, token types: 0 over the first segment's length, 1 after)."""
        import torch

        rows, types = [], []
        sep = [self.sep_id] * self.family.separator
        special = 1 + len(parts) * self.family.separator
        for i in range(len(parts[0])):
            seqs = [p[i] for p in parts]
            new = list(seqs[0])
            for s in seqs[1:]:
                new = [self.cls_id, *new[1:-1], *sep, *s[1:-1], self.sep_id]
            if sum(len(s) - 2 for s in seqs) > self.max_positions - special:
                new = new[:self.max_positions]
            rows.append(new)
            types.append([0] * len(seqs[0]))
        ids, mask = pad_rows(rows, self.tokenizer.pad_token_id)
        width = ids.shape[1]
        tt = torch.tensor([t + [1] * (width - len(t)) for t in types], dtype=torch.long)
        return ids, mask, tt

    def _pass(self, ids: Any, mask: Any, types: Any) -> tuple[Any, Any]:
        """One forward pass: (regression scores, error-tag logits per token)."""
        kw = {"token_type_ids": types.to(self.device)} if self.family.token_types else {}
        ids, mask = ids.to(self.device), mask.to(self.device)
        out = self.encoder(input_ids=ids, attention_mask=mask, output_hidden_states=True, return_dict=True, **kw)
        layers = out.hidden_states
        c = self.checkpoint
        emb = layers[int(c.layer)] if self.mix is None else mix_layers(c, layers, mask, self.mix, self.gamma)
        return self.estimator(emb[:, 0, :]).view(-1), self.tagger(layers[c.word_layer])

    def score(self, sources: Sequence[str], translations: Sequence[str], references: Sequence[str]) -> list[float]:
        """One score per segment, in the order given (batched by source length, as unbabel-comet)."""
        return in_batches(sources, translations, references, self.batch_size, self._score_batch)

    def _score_batch(self, sources: list[str], translations: list[str], references: list[str]) -> list[float]:
        import torch

        mt, src, ref = (self.tokenizer.encode([clean_text(x) for x in col]) for col in (translations, sources, references))
        passes = [self._pass(*self._concat(p)) for p in ((mt, src), (mt, ref), (mt, src, ref))]
        regression = torch.stack([torch.where(s > 1.0, 1.0, s) * w
                                  for (s, _), w in zip(passes, SCORE_WEIGHTS[:3])], dim=0).sum(dim=0)
        width = max(len(r) for r in mt)
        probs = torch.sum(torch.stack([torch.softmax(lg, dim=2)[:, :width, :] * w
                                       for (_, lg), w in zip(passes, SPAN_WEIGHTS)]), dim=0)
        mqm = (torch.tensor([mqm_points(probs[j, :len(mt[j])].argmax(dim=1).tolist())
                             for j in range(len(mt))]) * -1 + MQM_CAP) / MQM_CAP
        final = regression + mqm.to(regression.device) * SCORE_WEIGHTS[3]
        return [float(v) for v in final.tolist()]


def mqm_points(labels: Sequence[int]) -> int:
    """MQM points of one translation's token tags (0 O, 1 minor, 2 major, 3 critical), as
    unbabel-comet's `UnifiedMetric.decode` then `_compute_mqm_from_spans`: a span opens on an error
    tag, takes that tag's severity, and counts when an O closes it; capped at 25."""
    points, open_severity = 0, 0
    for lab in labels:
        if lab and not open_severity:
            open_severity = lab
        elif not lab and open_severity:
            points += SEVERITY_POINTS[open_severity]
            open_severity = 0
    return min(points, MQM_CAP)
