"""Judge prompts: our own 3C3H rubric (the default) or the upstream judge setup read from the user's copy.

`--judge-prompt DIR_OR_FILE` points at a copy of the 3C3H repository (or its `pipeline/` folder, or its
`jury.py`). glotbench ships none of that text: it reads the file with Python's `ast` module (never
executing it) and takes
- the system prompt (`system_prompt`, following an alias such as `system_prompt = system_prompt_2`),
- the per-round suffixes: in the branch `if round_number == K`, `combined_system_prompt = A + B` names
  the constants that make the system message,
- the user templates: the f-string assigned to `prompt` in that branch, and the fields it interpolates
  (`question1 = test.get("Question 1", "").strip()`, `model_answer1 = model_section.get("Answer 1", "")
  .strip()`), filled the same way: the reference entry's `Test` field or the model's answer, stripped.
The judge then receives exactly upstream's two messages: system (prompt + round suffix), user (template).
The SHA-256 of what was read goes into the signature.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from glotbench.errors import DataError

MAX_BYTES = 4 * 2**20


@dataclass(frozen=True)
class Template:
    """An f-string as parts: literal text, or ("field", source, key) where source is "test" (the task
    entry's Test) or "model" (the candidate's answers, keyed "Answer 1"/"Answer 2")."""

    parts: tuple[str | tuple[str, str], ...]

    def fill(self, test: Mapping[str, str | None], model: Mapping[str, str | None]) -> str:
        out = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
            else:
                src, key = p
                v = (test if src == "test" else model).get(key)
                out.append((v or "").strip())
        return "".join(out)


@dataclass(frozen=True)
class UpstreamPrompt:
    source: str
    system: Mapping[int, str]  # round -> full system message
    user: Mapping[int, Template]  # round -> user message template
    sha256: str = field(default="")

    def messages(self, rnd: int, test: Mapping[str, str | None], model: Mapping[str, str | None]) -> tuple[dict[str, str], ...]:
        return ({"role": "system", "content": self.system[rnd]},
                {"role": "user", "content": self.user[rnd].fill(test, model)})


def _find_jury(path: Path) -> Path:
    if path.is_file():
        if path.suffix != ".py":
            raise DataError(f"judge_prompt {path}: expected upstream's pipeline/jury.py (or the repository); "
                            "its prompts/*.md hold only a system prompt, not the per-round messages")
        return path
    for cand in (path / "pipeline" / "jury.py", path / "jury.py"):
        if cand.is_file():
            return cand
    raise DataError(f"judge_prompt {path}: no jury.py there (expected the 3C3H repository, its pipeline/ "
                    "folder, or pipeline/jury.py)")


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "string" constants, and NAME = OTHER aliases resolved."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, v = node.targets[0].id, node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out[name] = v.value
            elif isinstance(v, ast.Name) and v.id in out:
                out[name] = out[v.id]
    return out


def _concat(node: ast.expr, consts: Mapping[str, str], where: str) -> str:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _concat(node.left, consts, where) + _concat(node.right, consts, where)
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise DataError(f"{where}: the system prompt is not built from string constants")


def _field(value: ast.expr) -> tuple[str, str] | None:
    """`test.get("Question 1", "").strip()` -> ("test", "Question 1"); model_section -> ("model", ...)."""
    node = value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "strip":
        node = node.func.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.args and isinstance(node.args[0], ast.Constant)):
        src = {"test": "test", "model_section": "model"}.get(node.func.value.id)
        if src and isinstance(node.args[0].value, str):
            return (src, node.args[0].value)
    return None


def _round_of(test: ast.expr) -> int | None:
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, int)
            and isinstance(test.left, ast.Name) and "round" in test.left.id):
        return int(test.comparators[0].value)
    return None


def load_upstream_prompt(path_str: str) -> UpstreamPrompt:
    """Read upstream's judge messages from the user's copy (see the module docstring). Raises DataError."""
    path = _find_jury(Path(path_str))
    if path.stat().st_size > MAX_BYTES:
        raise DataError(f"{path}: larger than {MAX_BYTES // 2**20} MiB")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise DataError(f"{path}: not a readable Python file ({type(e).__name__}: {e})") from None
    consts = _constants(tree)
    if "system_prompt" not in consts:
        raise DataError(f"{path}: no module-level `system_prompt` string")
    system: dict[int, str] = {}
    user: dict[int, Template] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or (rnd := _round_of(node.test)) is None or rnd in user:
            continue
        fields: dict[str, tuple[str, str]] = {}
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            if (f := _field(stmt.value)) is not None:
                fields[name] = f
            elif name == "combined_system_prompt":
                system[rnd] = _concat(stmt.value, consts, f"{path}: round {rnd}")
            elif name == "prompt" and isinstance(stmt.value, ast.JoinedStr):
                parts: list[str | tuple[str, str]] = []
                for v in stmt.value.values:
                    if isinstance(v, ast.Constant):
                        parts.append(str(v.value))
                    elif (isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.conversion == -1
                          and v.format_spec is None and v.value.id in fields):
                        parts.append(fields[v.value.id])
                    else:
                        raise DataError(f"{path}: round {rnd}: the prompt template interpolates something other "
                                        "than a Test or Model field")
                user[rnd] = Template(tuple(parts))
    missing = [r for r in (0, 1, 2) if r not in user or r not in system]
    if missing:
        raise DataError(f"{path}: found no judge prompt (system and user template) for round(s) "
                        f"{', '.join(map(str, missing))}")
    blob = json.dumps({"system": {str(k): v for k, v in sorted(system.items())},
                       "user": {str(k): [list(p) if isinstance(p, tuple) else p for p in t.parts]
                                for k, t in sorted(user.items())}}, ensure_ascii=False, sort_keys=True)
    return UpstreamPrompt(str(path), system, user, hashlib.sha256(blob.encode("utf-8")).hexdigest())
