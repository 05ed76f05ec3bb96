"""lm-evaluation-harness as the reference: its own task YAMLs (as installed), built by its own
TaskManager into its own ConfigurableTask, on rows given here instead of a download. Only the call
that fetches a dataset is replaced (`datasets.load_dataset` inside lm_eval.api.task), after checking
that it asks for the dataset and config the YAML names; everything else (includes, `!function`
tags, process_docs, samplers, fewshot_context, construct_requests, process_results, the metrics'
aggregations) is lm-eval's code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

lm_eval = pytest.importorskip("lm_eval", reason="lm-eval is the reference for prompt=lm-eval and import-lm-eval "
                                                  "(pip install lm-eval, in the test extra)")


def tasks_dir() -> Path:
    import lm_eval.tasks

    return Path(lm_eval.tasks.__file__).parent


def lm_task(folder: str | Path, name: str, splits: dict[str, list[dict[str, Any]]], monkeypatch: Any,
            dataset: tuple[str, str | None] | None = None, shots: int = 0) -> Any:
    """lm-eval's task `name` from the YAMLs under lm_eval/tasks/`folder` (or a folder of one's own),
    its dataset `splits`."""
    import datasets
    import lm_eval.api.task as api_task
    from lm_eval.tasks import TaskManager

    def load_dataset(path: str | None = None, name: str | None = None, **_: Any) -> Any:
        if dataset is not None:
            assert (path, name) == dataset, f"lm-eval's YAML asks for {path} {name}, not {dataset}"
        return datasets.DatasetDict({k: datasets.Dataset.from_list(v) for k, v in splits.items()})

    monkeypatch.setattr(api_task.datasets, "load_dataset", load_dataset)
    tm = TaskManager(include_defaults=False, include_path=str(folder if isinstance(folder, Path) else tasks_dir() / folder))
    task = tm.load(name)["tasks"][name]
    task.set_config("num_fewshot", shots)
    task.set_fewshot_seed(1234)  # lm-eval's default fewshot_random_seed
    return task


def requests(task: Any, chat: bool = False, multiturn: bool = False) -> list[list[tuple[Any, ...]]]:
    """Each document's requests' arguments, as lm-eval's build_all_requests makes them; with `chat`,
    the context is the messages the chat template would receive (as JSON)."""
    def template(messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        return json.dumps(messages, ensure_ascii=False)

    task.build_all_requests(apply_chat_template=chat, chat_template=template if chat else None,
                            fewshot_as_multiturn=multiturn)
    per_doc: dict[int, list[tuple[Any, ...]]] = {}
    for inst in task.instances:
        per_doc.setdefault(inst.doc_id, []).append(inst.arguments)
    return [per_doc[i] for i in sorted(per_doc)]


def filtered(task: Any, replies: list[str]) -> dict[str, list[dict[str, Any]]]:
    """For a generate_until task whose requests are built: each filter pipeline's per-document
    metrics for these replies (one a document), through lm-eval's filters and process_results."""
    for inst, reply in zip(task.instances, replies):
        inst.resps = [reply]
    task.apply_filters()
    names = list(task.instances[0].filtered_resps)
    docs = list(task.eval_docs)
    return {n: [task.process_results(docs[i.doc_id], [i.filtered_resps[n]]) for i in task.instances] for n in names}
