"""Helpers of the service tests: start and stop a real service, and a batch to score."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from rewardkit.benchmarks.embedded import load_mini

TOKEN = "test-token-1234"
MAX_BATCH = 64
MAX_BODY_MB = 1


@dataclass
class Service:
    """The running service: its address and token."""

    url: str
    token: str
    process: subprocess.Popen[bytes]

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        """An HTTP client for the service, sending ``token`` (none if None)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(log: Path, *options: str, token: str | None = TOKEN,
          env: dict[str, str] | None = None) -> Service:
    """Start ``rewardkit serve`` on a free loopback port and wait until /health answers.

    ``token=None`` starts it without one; ``env`` adds to its environment.
    """
    port = free_port()
    command = [sys.executable, "-m", "rewardkit", "serve", "--port", str(port),
               *(["--token", token] if token else []), "--log-level", "warning", *options]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, **(env or {})})
    service = Service(f"http://127.0.0.1:{port}", token or "", process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the service exited ({process.returncode}): {log.read_text()}")
        try:
            if httpx.get(service.url + "/health", timeout=1).status_code == 200:
                return service
        except httpx.TransportError:
            time.sleep(0.1)
    stop(service)
    raise RuntimeError(f"the service did not answer within 60 s: {log.read_text()}")


def stop(service: Service) -> None:
    """Stop the service gracefully (it closes its sandboxes), or kill it."""
    stop_process(service.process)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL if it has not exited 20 s later."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def problem_batch() -> tuple[list[str], dict[str, list[Any]]]:
    """Completions for three embedded problems (call, stdio and script tests): right, wrong,
    without code, ill-formatted; with their ``tests`` and ``baseline_code`` columns."""
    problems = {p.problem_id: p for p in load_mini()}
    completions: list[str] = []
    columns: dict[str, list[Any]] = {"tests": [], "baseline_code": []}
    for name in ("mini/count-pairs", "mini/missing-number/stdio", "mini/find-duplicate"):
        problem = problems[name]
        fast, slow = problem.references[0].code, problem.references[-1].code
        group = [f"Here:\n```python\n{fast}\n```\n", slow, f"```python\n{slow}\n```",
                 "```python\nprint('no idea')\n```", "I cannot solve this.", "```python\nx = (\n"]
        completions += group
        columns["tests"] += [problem.tests.to_dict()] * len(group)
        columns["baseline_code"] += [slow] * len(group)
    return completions, columns
