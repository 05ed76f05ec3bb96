"""The endpoint line at a command's start (issue #30, reading item 6): which base URL each endpoint
model's requests go to, where it came from, and the key's variable, printed before any request by
`run`, `arena`, `aragen` and `sweep` (once each, not again under the table); `report` still shows it."""

from __future__ import annotations

import json

import yaml
from conftest import cli

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: every call fails


def test_run_prints_it_first_and_once(tmp_path, srv):
    srv.configure(answers={"": "ຄຳຕອບ: B"})
    r = cli("run", "laobench-mcq", "--model", "openai:m", "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "a"), env={"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-secret"})
    assert r.returncode == 0, r.stderr
    line = f"endpoint: {srv.url} (from $OPENAI_BASE_URL) · API key from $OPENAI_API_KEY"
    assert r.stdout.splitlines()[0] == line and r.stdout.count("endpoint: ") == 1
    assert "sk-secret" not in r.stdout + r.stderr
    assert line in cli("report", str(tmp_path / "a")).stdout  # the record's view keeps it


def test_a_run_that_fails_said_where_it_was_sending(tmp_path):
    r = cli("run", "vi-diacritics", "--model", f"openai:m@{DEAD}", "--limit", "1", "--no-cache", "--no-progress",
            "--max-retries", "0", "--out", str(tmp_path / "a"), env={"OPENAI_API_KEY": ""})
    assert r.returncode == 2 and "Cannot connect to host 127.0.0.1:9" in r.stderr  # the endpoint's check
    assert r.stdout.splitlines()[0] == f"endpoint: {DEAD} (from the model spec) · no API key sent ($OPENAI_API_KEY not set)"


def test_arena_and_aragen_print_every_endpoint_before_loading_anything(tmp_path):
    bad = tmp_path / "bad.jsonl"  # refused at load (item 8): the lines come first all the same
    bad.write_text(json.dumps({"id": "p", "prompt": "Where should I travel in Laos this year?"}) + "\n", encoding="utf-8")
    env = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "https://proxy.example/v1", "JUDGE_KEY": "k"}
    r = cli("arena", "--model", "openai:cand", "--baseline", f"openai:base@{DEAD}", "--judge", "openai:j1@http://127.0.0.1:8/v1",
            "--judge", "python:helpers:good_answer", "--api-key-env", "JUDGE_KEY", "--data", str(bad), "--out", str(tmp_path / "o"), env=env)
    assert r.returncode == 2 and "the prompt is written in Latin script" in r.stderr
    assert r.stdout.splitlines() == [
        "model: endpoint: https://proxy.example/v1 (from $OPENAI_BASE_URL) · API key from $JUDGE_KEY",
        f"baseline: endpoint: {DEAD} (from the model spec) · API key from $JUDGE_KEY",
        "judge openai:j1@http://127.0.0.1:8/v1: endpoint: http://127.0.0.1:8/v1 (from the model spec) · API key from $JUDGE_KEY"]
    r = cli("aragen", "--model", f"openai:cand@{DEAD}", "--judge", "openai:j1", "--data", str(bad),
            "--out", str(tmp_path / "g"), env=env)
    assert r.returncode == 2
    assert r.stdout.splitlines() == [
        f"model: endpoint: {DEAD} (from the model spec) · no API key sent ($OPENAI_API_KEY not set)",
        "judge openai:j1: endpoint: https://proxy.example/v1 (from $OPENAI_BASE_URL) · no API key sent ($OPENAI_API_KEY not set)"]


def test_a_sweep_prints_each_model_once_at_its_start(tmp_path, srv):
    spec = {"out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"),
            "store": f"sqlite:///{tmp_path / 'store.sqlite'}",
            "models": [{"spec": f"openai:a@{srv.url}", "name": "a"},
                       {"spec": "openai:b", "name": "b", "api_key_env": "B_KEY"}, {"spec": "python:helpers:good_answer"}],
            "benchmarks": [{"name": "vi-diacritics", "limit": 1}, {"name": "laobench-mcq", "limit": 1}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    r = cli("sweep", str(path), "--no-progress", env={"OPENAI_BASE_URL": srv.url, "B_KEY": "x", "OPENAI_API_KEY": ""})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == [f"model a: endpoint: {srv.url} (from the model spec) · no API key sent ($OPENAI_API_KEY not set)",
                         f"model b: endpoint: {srv.url} (from $OPENAI_BASE_URL) · API key from $B_KEY"]
    assert r.stdout.count("endpoint: ") == 2 and lines[2].startswith("run ")
