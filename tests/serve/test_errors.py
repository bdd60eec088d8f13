"""Bad requests get a 4xx JSON error that says what is wrong, and the service keeps answering."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from serve_helpers import MAX_BATCH, MAX_BODY_MB, Service

from rewardkit.cli import main
from rewardkit.serve import ServeConfig, ServeError, is_loopback
from rewardkit.serve.app import create_app
from rewardkit.serve.service import Service as Core

STDIO = {"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]}


def expect_error(answer: httpx.Response, status: int, words: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    body: dict[str, Any] = answer.json()
    assert body["status"] == status and words in body["error"], body
    return body


def test_token_is_required(service: Service) -> None:
    with service.client(token=None) as anonymous:
        expect_error(anonymous.post("/score", json={"completions": ["x"]}), 401, "needs a token")
        assert anonymous.get("/health").status_code == 200  # health stays open
    with service.client(token="wrong") as impostor:
        answer = impostor.post("/run", json={"code": "print(1)", "tests": STDIO})
        expect_error(answer, 401, "wrong token")
        assert answer.headers["www-authenticate"] == "Bearer"
        expect_error(impostor.post("/analyze", json={"codes": ["x = 1\n"]}), 401, "wrong token")
        expect_error(impostor.get("/presets/cisq_grpo"), 401, "wrong token")


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.7", "::", "example.org"])
def test_binding_beyond_loopback_needs_a_token(host: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert not is_loopback(host)
    with pytest.raises(ServeError, match="--token"):
        ServeConfig(host=host).check()
    ServeConfig(host=host, token="t0ken").check()
    assert main(["serve", "--host", host, "--token", ""]) == 2
    assert "REWARDKIT_TOKEN" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_needs_no_token(host: str) -> None:
    ServeConfig(host=host).check()


def _nested(levels: int) -> list[Any]:
    value: list[Any] = [0]
    for _ in range(levels):
        value = [value]
    return value


CALL_F = {"code": "def f(x):\n    return 1\n"}


@pytest.mark.parametrize(("path", "body", "words"), [
    ("/run", CALL_F | {"tests": {"mode": "call", "entry_point": "f",
                                 "cases": [{"args": [_nested(300)], "expected": 1}]}},
     "'args' cannot be used"),
    ("/run", CALL_F | {"tests": {"mode": "call", "entry_point": "f",
                                 "cases": [{"args": [1], "expected": _nested(300)}]}},
     "'expected' cannot be used"),
    ("/run", {"code": "print(1)", "tests": {"mode": "script", "entry_point": "f",
                                            "check": "x = " + "(" * 5000 + ")" * 5000}}, "does not compile"),
    ("/analyze", {"codes": ["x = 1\n"], "profile": {"thresholds": 5}}, "must be an object"),
    ("/analyze", {"codes": ["x = 1\n"], "profile": {"tools": [1, 2]}}, "must be an object"),
    ("/analyze", {"codes": ["x = 1\n"], "profile": {"thresholds": {"tool_timeout_s": "9"}}},
     "must be a positive number"),
])
def test_suites_and_profiles_that_cannot_be_used_are_refused(http: httpx.Client, path: str,
                                                             body: dict[str, Any], words: str) -> None:
    """Before any work: a call the worker could not be sent (or a value it could not compare) is
    the client's fault, never a ``sandbox_error``."""
    expect_error(http.post(path, json=body), 400, words)


def test_bad_settings_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--max-batch", "0"], ["--workers", "0"], ["--backend", "cloud"], ["--max-run-s", "0"],
                 ["--max-cases", "0"], ["--suite-time-s", "-1"], ["--max-tool-s", "0"]):
        assert main(["serve", *argv]) == 2
        assert "rewardkit serve:" in capsys.readouterr().err


def test_body_over_the_limit(http: httpx.Client) -> None:
    huge = {"completions": ["x" * (MAX_BODY_MB * 2**20 + 1)]}
    expect_error(http.post("/score", json=huge), 413, "request body over")

    def chunks() -> Any:  # no Content-Length: counted while it arrives
        yield b'{"completions": ["'
        for _ in range(2 * MAX_BODY_MB):
            yield b"x" * 2**20
        yield b'"]}'

    expect_error(http.post("/score", content=chunks(), headers={"Content-Type": "application/json"}),
                 413, "request body over")


def test_too_many_completions(http: httpx.Client) -> None:
    many = {"completions": ["x"] * (MAX_BATCH + 1), "columns": {"tests": [STDIO] * (MAX_BATCH + 1)}}
    expect_error(http.post("/score", json=many), 413, f"at most {MAX_BATCH}")
    expect_error(http.post("/analyze", json={"codes": ["x = 1\n"] * (MAX_BATCH + 1)}), 413, "at most")


@pytest.mark.parametrize(("path", "body", "status", "words"), [
    ("/score", b'{"completions": ["x"', 400, "not valid JSON"),
    ("/score", b"[1, 2]", 422, "invalid request"),
    ("/score", {"completions": "x"}, 422, "completions"),
    ("/score", {"completions": [1]}, 422, "completions.0"),
    ("/score", {"completions": ["x"], "columns": {"tests": "x"}}, 422, "columns.tests"),
    ("/score", {"completions": ["x"], "colums": {}}, 422, "colums: Extra inputs are not permitted"),
    ("/score", {"preset": "best", "completions": ["x"]}, 400, "unknown preset 'best'"),
    ("/score", {"preset": "afterburner", "objective": "speed", "completions": ["x"]}, 400,
     "unknown objective"),
    ("/score", {"preset": "cisq_grpo", "objective": "time", "completions": ["x"]}, 400, "no objective"),
    ("/score", {"completions": ["x"]}, 400, "'tests' column"),
    ("/score", {"completions": ["x", "y"], "columns": {"tests": [STDIO]}}, 400, "one entry per completion"),
    ("/score", {"preset": "afterburner", "completions": ["x"], "columns": {"tests": [STDIO]}}, 400,
     "baseline"),
    ("/run", {"code": "print(1)"}, 422, "tests"),
    ("/run", {"code": "print(1)", "tests": STDIO, "language": "cobol"}, 400, "unknown language"),
    ("/run", {"code": "print(1)", "tests": STDIO, "limits": {"time_s": 999}}, 400, "at most 10"),
    ("/run", {"code": "print(1)", "tests": STDIO, "limits": {"time_s": -1}}, 422, "limits.time_s"),
    ("/run", {"code": "print(1)", "tests": STDIO, "repeats": 50}, 422, "repeats"),
    ("/run", {"code": "x", "tests": {"mode": "call", "cases": []}}, 400, "'entry_point'"),
    ("/analyze", {"codes": ["x = 1\n"], "profile": {"tools": {"lint9000": True}}}, 400, "unknown tool"),
    ("/analyze", {"codes": ["x = 1\n"], "profile": "/etc/passwd"}, 422, "profile"),
    ("/openrlhf", {"query": ["x"]}, 400, "needs a label"),
    ("/openrlhf", {"query": ["x"], "labels": ["{not json"]}, 400, "label 0 is not JSON"),
])
def test_bad_request(http: httpx.Client, path: str, body: Any, status: int, words: str) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = http.post(path, content=content, headers={"Content-Type": "application/json"})
    expect_error(answer, status, words)
    assert http.get("/health").json()["status"] == "ok"


def test_unknown_routes_and_methods_and_content_types(http: httpx.Client) -> None:
    expect_error(http.get("/nowhere"), 404, "Not Found")
    expect_error(http.get("/score"), 405, "Method Not Allowed")
    expect_error(http.get("/presets/best"), 400, "unknown preset")
    answer = http.post("/score", content=b'{"completions": ["x"]}', headers={"Content-Type": "text/plain"})
    expect_error(answer, 415, "Content-Type: application/json")


def test_hostile_code_is_the_code_s_problem_not_the_service_s(http: httpx.Client) -> None:
    """Code that crashes, loops or kills itself gets its verdict; the service goes on."""
    for code, status in [("import os\nos._exit(0)", "wrong_answer"),
                         ("while True:\n    pass", "timeout"),
                         ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", None)]:
        answer = http.post("/run", json={"code": code, "tests": STDIO, "limits": {"time_s": 1}})
        assert answer.status_code == 200, answer.text
        if status:
            assert answer.json()["status"] == status
    assert http.get("/health").json()["status"] == "ok"


def test_a_fault_of_the_service_is_a_logged_json_500(caplog: pytest.LogCaptureFixture) -> None:
    """A bug behind a route (here: scoring raises) is answered, logged, and the service goes on."""

    class Broken(Core):
        def score(self, *args: Any) -> dict[str, Any]:
            raise RuntimeError("boom")

    config = ServeConfig()
    with TestClient(create_app(config, Broken(config)), base_url="http://127.0.0.1") as http:
        expect_error(http.post("/score", json={"completions": ["x"]}), 500, "RuntimeError: boom")
        assert http.get("/health").json()["status"] == "ok"
    assert "request failed" in caplog.text and "boom" in caplog.text
