"""Test code sent by a client never runs in the server: evaluators, checks and definitions are
judged in a sandboxed referee, through every route; a token-less service answers loopback names only.

Each hostile suite tries what code running in the server could do: write a file on the host,
read the server's environment (a secret the service was started with) or a file only the
server's user can see, or kill the server.  Where it ran in the server, the verdict would say so
(the evaluator or check passes only if the theft worked) and the file would be there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_helpers import Service, start, stop

from rewardkit.sandbox import Sandbox, TestSuite

SECRET = "rk-secret-7c41"
ADD = "def add(a, b):\n    return a + b\n"
DOUBLE = "print(int(input()) * 2)\n"


@pytest.fixture(scope="module")
def host_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder on the host: a planted answer key, and where a marker would appear."""
    folder = tmp_path_factory.mktemp("host")
    (folder / "answer-key").write_text("42\n")
    return folder


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = start(tmp_path_factory.mktemp("untrusted") / "service.log", "--workers", "2",
                    env={"RK_SECRET": SECRET})
    yield running
    stop(running)


def theft(host_dir: Path, name: str) -> str:
    """Python statements that succeed only in the server's process: write a marker on the host,
    read the planted key and the server's secret (each raises or differs in a sandbox)."""
    return (f"import os\n"
            f"open({str(host_dir / name)!r}, 'w').write('ran as ' + str(os.getuid()))\n"
            f"stolen = open({str(host_dir / 'answer-key')!r}).read() + os.environ['RK_SECRET']\n")


def evaluator_suite(host_dir: Path, name: str) -> dict[str, Any]:
    source = ("def evaluate(expected, actual):\n"
              + "".join("    " + line + "\n" for line in theft(host_dir, name).splitlines())
              + "    return stolen == '42\\n' + " + repr(SECRET) + "\n")
    return {"mode": "stdio", "cases": [{"input": "2\n", "output": "4\n"}], "evaluator": source}


def check_suite(host_dir: Path, name: str, where: str) -> dict[str, Any]:
    """A script suite whose ``where`` ("definitions" or "check") does the theft."""
    stealing = theft(host_dir, name)
    check = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    if where == "check":
        return {"mode": "script", "entry_point": "add", "check": stealing + check}
    return {"mode": "script", "entry_point": "add", "definitions": stealing, "check": check}


def killer_suite() -> dict[str, Any]:
    """A check that kills the process it runs in: the server's, were it run there."""
    check = ("import os, signal\n"
             "def check(candidate):\n"
             "    assert candidate(1, 2) == 3\n"
             "    os.kill(os.getpid(), signal.SIGKILL)\n")
    return {"mode": "script", "entry_point": "add", "check": check}


def post(http: httpx.Client, path: str, body: dict[str, Any], **params: str) -> dict[str, Any]:
    answer = http.post(path, json=body, params=params)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def test_suites_with_code_still_judge_right_and_wrong_answers(service: Service) -> None:
    tests = {"mode": "script", "entry_point": "add",
             "definitions": "import math\ndef expected(a, b):\n    return math.fsum([a, b])\n",
             "check": "def check(candidate):\n    assert candidate(1, 2) == expected(1, 2)\n"
                      "    assert candidate(*(5, 6)) == 11\n"}
    evaluator = {"mode": "stdio", "cases": [{"input": "2\n", "output": "4\n"}],
                 "evaluator": "def evaluate(expected, actual):\n"
                              "    return expected.split() == actual.split()\n"}
    with service.client() as http:
        assert post(http, "/run", {"code": ADD, "tests": tests})["status"] == "passed"
        assert post(http, "/run", {"code": "def add(a, b):\n    return a - b\n", "tests": tests})[
            "status"] == "wrong_answer"
        assert post(http, "/run", {"code": DOUBLE, "tests": evaluator})["status"] == "passed"
        assert post(http, "/run", {"code": "print(5)", "tests": evaluator})["status"] == "wrong_answer"


@pytest.mark.parametrize("kind", ["evaluator", "check", "definitions"])
def test_client_test_code_cannot_touch_the_server_through_run(service: Service, host_dir: Path,
                                                              kind: str) -> None:
    name = f"run-{kind}"
    if kind == "evaluator":
        body = {"code": DOUBLE, "tests": evaluator_suite(host_dir, name)}
    else:
        body = {"code": ADD, "tests": check_suite(host_dir, name, kind)}
    with service.client() as http:
        result = post(http, "/run", body)
    assert result["status"] == "wrong_answer", result  # the theft failed inside the referee
    assert not (host_dir / name).exists()


def test_client_test_code_cannot_touch_the_server_through_score(service: Service, host_dir: Path) -> None:
    completions = [f"```python\n{DOUBLE}```", f"```python\n{ADD}```", f"```python\n{ADD}```"]
    tests = [evaluator_suite(host_dir, "score-evaluator"), check_suite(host_dir, "score-check", "check"),
             json.dumps(check_suite(host_dir, "score-definitions", "definitions"))]
    with service.client() as http:
        scored = post(http, "/score", {"preset": "cisq_grpo", "completions": completions,
                                       "columns": {"tests": tests}})
    assert scored["components"]["pass_rate"] == [0.0, 0.0, 0.0]
    assert not any((host_dir / name).exists() for name in ("score-evaluator", "score-check",
                                                            "score-definitions"))


def test_client_test_code_cannot_touch_the_server_through_openrlhf(service: Service, host_dir: Path) -> None:
    labels = [json.dumps({"tests": evaluator_suite(host_dir, "openrlhf-evaluator")}),
              json.dumps(check_suite(host_dir, "openrlhf-check", "check"))]
    body = {"query": [f"Q1```python\n{DOUBLE}```", f"Q2```python\n{ADD}```"],
            "prompts": ["Q1", "Q2"], "labels": labels}
    with service.client() as http:
        answer = post(http, "/openrlhf", body, preset="cisq_grpo", token=service.token)
    assert answer["extra_logs"]["pass_rate"] == [0.0, 0.0]
    assert not (host_dir / "openrlhf-evaluator").exists() and not (host_dir / "openrlhf-check").exists()


def test_a_check_cannot_kill_the_server(service: Service) -> None:
    with service.client() as http:
        result = post(http, "/run", {"code": ADD, "tests": killer_suite()})
        assert result["status"] == "passed", result  # the kill reached nothing of the server's
        assert http.get("/health").json()["status"] == "ok"
    assert service.process.poll() is None


def test_in_process_suites_stay_trusted_by_default(host_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented difference: a caller's own dataset runs in its own process, unless it asks
    for the referee (as the service does)."""
    monkeypatch.setenv("RK_SECRET", SECRET)
    suite = TestSuite.from_dict(evaluator_suite(host_dir, "in-process"))
    with Sandbox(workers=1) as trusting:
        assert trusting.run(DOUBLE, suite).status == "passed"
    assert (host_dir / "in-process").read_text() == f"ran as {os.getuid()}"
    with Sandbox(workers=1, trust_suites=False) as refereeing:
        assert refereeing.run(DOUBLE, TestSuite.from_dict(evaluator_suite(host_dir, "refereed"))
                              ).status == "wrong_answer"
    assert not (host_dir / "refereed").exists()


@pytest.fixture(scope="module")
def open_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = start(tmp_path_factory.mktemp("tokenless") / "service.log", "--workers", "1", token=None)
    yield running
    stop(running)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example",
                                  "10.0.0.1", ""])
def test_a_tokenless_service_refuses_other_host_names(open_service: Service, host: str) -> None:
    answer = httpx.get(open_service.url + "/health", headers={"Host": host})
    assert answer.status_code == 403 and "not allowed" in answer.json()["error"]
    refused = httpx.post(open_service.url + "/run", headers={"Host": host},
                         json={"code": DOUBLE, "tests": {"cases": [{"input": "2\n", "output": "4\n"}]}})
    assert refused.status_code == 403


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "127.0.0.1:{port}", "127.8.9.10",
                                  "[::1]:{port}"])
def test_a_tokenless_service_answers_loopback_names(open_service: Service, host: str) -> None:
    port = open_service.url.rsplit(":", 1)[1]
    answer = httpx.get(open_service.url + "/health", headers={"Host": host.format(port=port)})
    assert answer.status_code == 200, answer.text


def test_a_service_with_a_token_takes_any_host_name(service: Service) -> None:
    with service.client() as http:
        assert http.get("/health", headers={"Host": "rewards.example"}).status_code == 200
