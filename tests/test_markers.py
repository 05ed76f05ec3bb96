"""The `process` marker (tests/conftest.py): a test that starts a process or a server, itself, through a
helper or through a fixture, is marked, so `-m "not process and not slow"` is the fast set."""

from __future__ import annotations

from conftest import process_functions


def test_process_starts_are_found_through_helpers_and_fixtures(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(
        "import subprocess\n"
        "def spawn():\n    return subprocess.Popen(['x'])\n"
        "def helper():\n    return spawn()\n"
        "@pytest.fixture\ndef fixture_server():\n    yield start_server()\n"
        "def test_uses_fixture(fixture_server):\n    pass\n"
        "def helper_with_server(srv):\n    return srv.spec()\n"
        "def test_cli():\n    cli('run')\n"
        "def test_helper():\n    helper()\n"
        "def test_plain():\n    assert 1 + 1 == 2\n"
        "def test_other_subprocess_call():\n    subprocess.run(['true'])\n", encoding="utf-8")
    found = process_functions([f])
    assert {"spawn", "helper", "fixture_server", "test_uses_fixture", "test_cli", "test_helper",
            "test_other_subprocess_call"} <= found
    assert "test_plain" not in found and "helper_with_server" not in found  # takes a server, starts none


def test_this_suites_server_fixtures_and_helpers_are_process(repo_root):
    found = process_functions((repo_root / "tests").glob("*.py"))
    assert {"server", "srv", "hub", "hostile", "start", "replay_run", "board_runs", "local_ray",
            "test_killed_job_is_resubmitted_and_resumes_from_the_cache"} <= found
    assert "test_process_starts_are_found_through_helpers_and_fixtures" not in found
