"""A key goes only where the user pointed it (issue 21). `openai:M@127.0.0.1:8000/v1` (no scheme) went
to the default hosted API with OPENAI_API_KEY. Now every `openai:MODEL@URL` spec and base URL is read
by `models/endpoint.py`: a base URL without a scheme is an error naming the fix, the default host is
used only when no `@BASE_URL` is given (then OPENAI_BASE_URL, as the ecosystem does), and a run
records which base URL it used and the variable its key came from, never the key.

The "default host" is stood for by a recording server that OPENAI_BASE_URL points at: a request or
a key reaching it where the spec named another host (or no valid one) would show in its log."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from service_helpers import start_hostile

from glotbench.errors import SpecError
from glotbench.registry import load_model

KEY = "sk-test-never-leak-0123456789"


@pytest.fixture(scope="module")
def recorder():
    h = start_hostile("127.0.0.2")
    yield h
    h.stop()


def _files(run_dir) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in run_dir.rglob("*") if p.is_file())


@pytest.mark.parametrize("tail", ["127.0.0.1:{port}/v1", "localhost:{port}", "example.com/v1", "myserver",
                                  "[::1]:{port}/v1"])
def test_a_base_url_without_a_scheme_is_an_error_and_nothing_is_sent(srv, recorder, tmp_path, tail):
    recorder.control()
    spec = "openai:M@" + tail.format(port=srv.port)
    r = cli("run", "vi-diacritics", "--model", spec, "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r"),
            env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": recorder.url})
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "no scheme" in lines[0], r.stderr
    assert f"openai:M@http://{tail.format(port=srv.port)}" in lines[0]  # the fix, spelt out
    assert KEY not in r.stderr + r.stdout
    assert recorder.seen() == [] and srv.requests() == []
    assert not (tmp_path / "r").exists()  # refused before a run directory was made


def test_the_run_records_the_base_url_and_where_the_key_came_from(srv, recorder, tmp_path):
    """An explicit @BASE_URL wins over OPENAI_BASE_URL: the key reaches the named server only."""
    recorder.control()
    srv.configure(require_key=KEY)  # the named server answers only with the key: it got it
    out = tmp_path / "r"
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "3", "--no-cache", "--no-progress",
            "--out", str(out), env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": recorder.url})
    assert r.returncode == 0, r.stderr
    assert recorder.seen() == []
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    for doc in (res, run):
        m = doc["model"]
        assert (m["endpoint"], m["base_url_from"], m["api_key_from"]) == (srv.url, "spec", "OPENAI_API_KEY"), m
    assert res["counts"]["failed"] == 0
    assert KEY not in _files(out)


def test_openai_base_url_is_used_when_the_spec_names_no_host(recorder, tmp_path):
    recorder.control(reply='{"restored_text": "x"}')
    out = tmp_path / "r"
    r = cli("run", "vi-diacritics", "--model", "openai:gpt-x", "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(out), "--api-key-env", "MY_KEY",
            env={"MY_KEY": KEY, "OPENAI_API_KEY": "sk-the-other-one", "OPENAI_BASE_URL": recorder.url + "/"})
    assert r.returncode == 0, r.stderr
    seen = recorder.seen()
    assert seen and {s["authorization"] for s in seen} == {f"Bearer {KEY}"}, seen
    m = json.loads((out / "results.json").read_text(encoding="utf-8"))["model"]
    assert (m["endpoint"], m["base_url_from"], m["api_key_from"]) == (recorder.url, "OPENAI_BASE_URL", "MY_KEY")
    assert KEY not in _files(out) and "sk-the-other-one" not in _files(out)


def test_a_run_without_a_key_says_none(recorder, tmp_path):
    recorder.control(reply='{"restored_text": "x"}')
    out = tmp_path / "r"
    r = cli("run", "vi-diacritics", "--model", f"openai:m@{recorder.url}", "--limit", "1", "--no-cache",
            "--no-progress", "--out", str(out), env={"OPENAI_API_KEY": ""})
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "results.json").read_text(encoding="utf-8"))["model"]
    assert m["api_key_from"] == "none" and m["base_url_from"] == "spec"
    seen = recorder.seen()
    assert seen and all(s["authorization"] is None for s in seen), seen


@pytest.mark.parametrize("value", ["127.0.0.1:8000/v1", "ftp://h/v1", "localhost"])
def test_openai_base_url_is_checked_like_a_spec(value, tmp_path):
    r = cli("run", "vi-diacritics", "--model", "openai:gpt-x", "--limit", "1", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r"), env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": value})
    assert r.returncode == 2 and "OPENAI_BASE_URL" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("spec,model", [("openai:claude-3@20240229", "claude-3@20240229"),
                                        ("openai:a@b@https://h.example/v1", "a@b")])
def test_at_signs_in_model_names(spec, model, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert load_model(spec).model == model


def test_every_reader_of_openai_specs_refuses_a_missing_scheme(tmp_path):
    """The embedder (`build dedupe --embedder`) and the sweep file read specs the same way."""
    from glotbench.build.embed import check_spec, load_embedder
    from glotbench.engine.sweep import load_sweep
    from glotbench.errors import GlotbenchError

    for fn in (check_spec, load_embedder):
        with pytest.raises(SpecError, match="no scheme"):
            fn("openai:e5@127.0.0.1:8000/v1")
    assert load_embedder("openai:e5@http://127.0.0.1:9/v1").url == "http://127.0.0.1:9/v1"
    sweep = tmp_path / "s.yaml"
    sweep.write_text("models: [{spec: 'openai:m@localhost:8000/v1'}]\nbenchmarks: [vi-diacritics]\n"
                     f"out: {tmp_path / 'o'}\n", encoding="utf-8")
    with pytest.raises(GlotbenchError, match="no scheme"):
        load_sweep(str(sweep))


@pytest.mark.parametrize("path", ["./nonexistent", "/models/x", "~/no-such-model-here", "a/b/c", "m.gguf",
                                  "no-such-dir/", "org/no-such-dir/"])
def test_a_missing_local_hf_path_is_no_such_file(path, tmp_path):
    r = cli("run", "vi-diacritics", "--model", f"hf:{path}", "--limit", "1", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and "no such file or directory" in r.stderr, r.stderr
    assert "repo" not in r.stderr.lower() and len(r.stderr.strip().splitlines()) == 1


# -- review of issue 21: an empty base URL, credentials in a URL, hints that name the right fix --

@pytest.mark.parametrize("tail", ["", "  ", "v2@"])
def test_an_at_sign_with_no_base_url_after_it_is_an_error_not_the_default_host(srv, recorder, tmp_path, tail):
    """`openai:qwen@$URL` with $URL unset reads `openai:qwen@`: the user named a base URL, an empty one;
    it went to the default host (here OPENAI_BASE_URL's recorder) with the key."""
    recorder.control(reply='{"restored_text": "x"}')
    spec = "openai:M@" + tail.format(port=srv.port)
    r = cli("run", "vi-diacritics", "--model", spec, "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r"), env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": recorder.url})
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no base URL after '@'" in lines[0], r.stderr
    assert recorder.seen() == [] and srv.requests() == [] and not (tmp_path / "r").exists()


@pytest.mark.parametrize("where", ["spec", "env"])
@pytest.mark.parametrize("url", ["http://user:pass@{host}/v1", "http://127.0.0.1:{port}@{host}/v1"])
def test_a_base_url_with_credentials_is_refused_and_names_its_real_host(srv, recorder, tmp_path, url, where):
    """`http://127.0.0.1:8000@evil.example/v1` goes to evil.example (the part before '@' is a user name):
    refused in one line naming the host it would reach; before, the spec was split at the last '@' and
    the error suggested `openai:M@http://127.0.0.1:8000@http://evil.example/v1`, and OPENAI_BASE_URL
    with credentials stopped with aiohttp's 'Cannot combine AUTHORIZATION header...'."""
    recorder.control(reply='{"restored_text": "x"}')
    base = url.format(host=f"127.0.0.2:{recorder.port}", port=srv.port)
    spec, env = ("openai:M@" + base, {}) if where == "spec" else ("openai:M", {"OPENAI_BASE_URL": base})
    r = cli("run", "vi-diacritics", "--model", spec, "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r"), env={"OPENAI_API_KEY": KEY, **env})
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "user name or password" in lines[0] and "'127.0.0.2'" in lines[0], r.stderr
    assert "http://http" not in lines[0] and "@http://127.0.0.2" not in lines[0]
    assert recorder.seen() == [] and srv.requests() == []


@pytest.mark.parametrize("tail,fix", [("http:/h.example/v1", "openai:M@http://h.example/v1"),
                                      ("//h.example/v1", "openai:M@http://h.example/v1"),
                                      ("HTTPS:h.example", "openai:M@https://h.example")])
def test_the_fix_named_for_a_broken_scheme_is_a_url(tail, fix, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(SpecError) as e:
        load_model("openai:M@" + tail)
    assert f"write {fix} " in str(e.value) and "http://http" not in str(e.value) and "http:////" not in str(e.value)


@pytest.mark.parametrize("tail", ["http://:8000/v1", "http://h.example:port/v1", "http://[::1/v1"])
def test_a_base_url_with_no_host_or_a_bad_port_is_one_line(tail, tmp_path):
    r = cli("run", "vi-diacritics", "--model", "openai:M@" + tail, "--limit", "1", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r"), env={"OPENAI_API_KEY": KEY})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and repr(tail) in lines[0], r.stderr
    assert "/models" not in lines[0]  # was: "error: run: http://:8000/v1/models"


def test_spaces_around_a_named_base_url_are_not_part_of_it(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    m = load_model("openai:M@ http://h.example/v1 ")
    assert (m.model, m.base_url) == ("M", "http://h.example/v1")
