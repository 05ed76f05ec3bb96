"""Model families from model specs, for self-preference checks (a judge scoring its own family).

A spec is `backend:NAME[@endpoint]`; NAME may carry an organisation (`meta-llama/Meta-Llama-3-8B`), a
local path (`/models/Qwen2.5-7B`), an Ollama tag after a colon (`qwen2.5:7b`) or a file
(`replay:answers.jsonl`). The family is read from the model's own name, not the tag or the size:
the first known family name found in it (`Meta-Llama-3-8B-Instruct` -> llama), else the family the
organisation publishes (`mistralai/...` -> mistral), else the name's leading letters. Users can state
families explicitly (`--family SPEC=FAMILY`), which always wins.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Mapping

# Known families and the spellings that mark them inside a model name (checked in this order).
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("qwen", ("qwen", "qwq")),
    ("llama", ("llama",)),
    ("mistral", ("mistral", "mixtral", "magistral", "codestral", "ministral")),
    ("gemma", ("gemma",)),
    ("gemini", ("gemini",)),
    ("gpt", ("gpt", "chatgpt")),
    ("claude", ("claude",)),
    ("jais", ("jais",)),
    ("deepseek", ("deepseek",)),
    ("phi", ("phi",)),
    ("command", ("command", "aya", "c4ai")),
    ("falcon", ("falcon",)),
    ("allam", ("allam",)),
    ("fanar", ("fanar",)),
    ("silma", ("silma",)),
    ("grok", ("grok",)),
    ("yi", ("yi",)),
)
ORGS = {"meta-llama": "llama", "meta": "llama", "mistralai": "mistral", "qwen": "qwen", "alibaba": "qwen",
        "anthropic": "claude", "openai": "gpt", "deepseek-ai": "deepseek", "coherelabs": "command",
        "cohereforai": "command", "inceptionai": "jais", "tiiuae": "falcon", "allam-ai": "allam",
        "microsoft": "phi", "qcri": "fanar", "silma-ai": "silma", "xai": "grok", "01-ai": "yi"}


def model_name(spec: str) -> tuple[str | None, str]:
    """(organisation or None, model name) of a spec: backend prefix, endpoint, path, tag removed."""
    rest = spec.split("@", 1)[0]
    backend, sep, tail = rest.partition(":")
    if sep and re.fullmatch(r"[a-z][a-z0-9_-]*", backend) and not tail.startswith("//"):
        rest = tail
    if rest.startswith("python:") or spec.startswith("python:"):
        rest = rest.rsplit(":", 1)[-1]  # python:pkg.mod:fn -> fn
    rest = rest.rstrip("/")
    parts = [p for p in PurePosixPath(rest).parts if p not in ("/", "")]
    name = parts[-1] if parts else rest
    org = parts[-2] if len(parts) >= 2 else None
    name = name.split(":", 1)[0]  # Ollama tag: qwen2.5:7b -> qwen2.5
    name = re.sub(r"\.(jsonl?|gguf|safetensors|bin)$", "", name, flags=re.I)
    return org, name


def _marks(token: str, mark: str) -> bool:
    """Does a name token carry a family mark? Short marks (qwen, phi, aya, gpt) only as the whole token or
    followed by a version (`phi3`, `qwen2`), so `phind` is not phi; long ones (five letters or more)
    anywhere in the token (`tinyllama`, `codellama`, `mixtral8x7b`)."""
    if len(mark) >= 5:
        return mark in token
    return token == mark or (token.startswith(mark) and token[len(mark)].isdigit())


def model_family(spec: str, explicit: Mapping[str, str] | None = None) -> str:
    """The family of a model spec: `explicit[spec]` when given, else parsed from the name."""
    if explicit and spec in explicit:
        return explicit[spec].lower()
    org, name = model_name(spec)
    low = name.lower()
    tokens = [t for t in re.split(r"[^a-z0-9]+", low) if t]
    for family, marks in FAMILIES:
        for mark in marks:
            if any(_marks(t, mark) for t in tokens):
                return family
    if re.match(r"o\d", low):  # o1, o3-mini, o4-mini: OpenAI's reasoning series
        return "gpt"
    if org and org.lower() in ORGS:
        return ORGS[org.lower()]
    m = re.match(r"[a-z]+", low)
    return m.group(0) if m else low


def parse_families(pairs: list[str]) -> dict[str, str]:
    """`SPEC=FAMILY` strings (from `--family`) as a mapping; raises ValueError on a malformed one."""
    out = {}
    for p in pairs:
        spec, sep, fam = p.rpartition("=")
        if not sep or not spec.strip() or not fam.strip():
            raise ValueError(f"--family takes SPEC=FAMILY, got {p!r}")
        out[spec.strip()] = fam.strip().lower()
    return out
