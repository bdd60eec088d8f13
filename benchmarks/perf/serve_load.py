"""GRPO-shaped load on ``rewardkit serve``: ``bench_serve_load.py`` and ``tests/serve/test_load.py``.

A request is what a GRPO trainer sends each step: 4 prompts × 4 completions,
few distinct within a group, scored with ``cisq_grpo`` (code block, pass rate,
quality with its default profile: deterministic, so an answer that differs
from the in-process reward's is wrong, not noisy).  Most requests repeat a
batch of a pool the service has seen (its caches answer); every
``new_every``-th holds a completion never sent before (run and analysed), and
every ``hostile_every``-th of those a new hostile program as well.  Each
batch of the pool holds one of the hostile programs of :data:`HOSTILE`.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import subprocess  # nosec B404 - starts the service under test
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import psutil

from rewardkit.rewards import Engine, Reward, cisq_grpo
from rewardkit.sandbox import Limits, Sandbox

PRESET = "cisq_grpo"
PROMPTS, PROBLEMS = 4, 8
# A hostile program costs at most 2 s of a sandbox worker; a right one needs ~15 ms, so only
# a machine loaded far past its cores would time it out (the service's own 60 s bound on a
# whole suite is never reached here, and is left out in-process).
LIMITS = Limits(time_s=2.0, memory_mb=256)
SERVE_OPTIONS = ("--time-limit", f"{LIMITS.time_s:g}", "--memory-mb", str(LIMITS.memory_mb))
SECRET_ENV, SECRET = "LOAD_SECRET", "rk-load-secret-7f3a"  # in the service's environment only

# What a policy under RL may emit; each reads the problem's input or ignores it.
HOSTILE = {
    "infinite loop": "while True:\n    pass",
    "fork bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    "memory hog": "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 26))",
    "huge output": "import sys\nwhile True:\n    sys.stdout.write('x' * (1 << 20))",
    "writes files": "for i in range(64):\n    with open(f'out{i}.txt', 'w') as out:\n"
                    "        out.write('x' * 4096)\nprint(int(input()) * 2)",
    "reads secrets": "import glob, os\nseen = [f'{k}={v}' for k, v in os.environ.items()]\n"
                     "for path in ['/etc/shadow', *glob.glob('/proc/*/environ')]:\n"
                     "    try:\n"
                     "        seen += open(path, 'rb').read().decode('latin-1').split('\\0')\n"
                     "    except OSError:\n        pass\n"
                     "print('\\n'.join(s for s in seen if 'SECRET' in s) or open('/etc/passwd').read())",
    "exits before printing": "import os\nn = int(input())\nos._exit(0)\nprint(n * 2)",
}
# Groups of a prompt's 4 completions: a policy repeats itself.
SHAPES = (("right", "right", "right", "wrong"), ("right", "wrong", "wrong", "prose"),
          ("explained", "right", "unterminated", "wrong"), ("wrong", "wrong", "prose", "explained"))

Answer = dict[str, Any]
Memory = tuple[float, float]  # MiB: a process, and its descendants together
Group = tuple[int, tuple[str, ...], str]  # problem, the kinds of its completions, tag of the first kind


@dataclass(frozen=True)
class Batch:
    """One request: its ``/score`` body, and that body as JSON (a key to its expected answer)."""

    key: str
    body: dict[str, Any]


def tests(problem: int) -> dict[str, Any]:
    """Problem ``problem``: print the input number times ``problem + 2``."""
    cases = [{"input": f"{n}\n", "output": f"{n * (problem + 2)}\n"} for n in (1, 7, 12345)]
    return {"mode": "stdio", "cases": cases}


def completion(problem: int, kind: str, tag: str = "") -> str:
    """A completion of ``kind`` for ``problem``; ``tag`` (a comment) makes its code new."""
    factor = problem + 2
    if kind == "prose":
        return f"Multiply the number by {factor}."
    if kind == "unterminated":
        return f"```python\nprint(int(input()) * {factor})\n"
    if kind == "explained":
        return f"Read n, print n * {factor}:\n```python\nprint(int(input()) * {factor})\n```"
    code = {"right": f"n = int(input())\nprint(n * {factor})",
            "wrong": f"n = int(input())\nprint(n + {factor})"}.get(kind) or HOSTILE[kind]
    return f"```python\n{tag}{code}\n```"


class Workload:
    """The pool of seen batches, and sequences of requests; the same ``seed``, the same ones."""

    def __init__(self, seed: int = 0, pool: int = 32, new_every: int = 20, hostile_every: int = 5) -> None:
        self.rng = random.Random(seed)  # nosec B311 - reproducible batches, not security
        self.new_every, self.hostile_every = new_every, hostile_every
        self.fresh = 0  # new batches made so far
        # each hostile program always on the same problem, so the pool runs each once
        self.pool = [self._batch([self._hostile(i, i % len(HOSTILE))]) for i in range(pool)]

    def _hostile(self, index: int, problem: int, tag: str = "") -> Group:
        kind = list(HOSTILE)[index % len(HOSTILE)]
        return problem % PROBLEMS, (kind, kind, "right", "wrong"), tag

    def _batch(self, groups: list[Group]) -> Batch:
        """A batch of ``groups``, filled up to :data:`PROMPTS` with groups of :data:`SHAPES`."""
        while len(groups) < PROMPTS:
            groups.append((self.rng.randrange(PROBLEMS), self.rng.choice(SHAPES), ""))
        completions: list[str] = []
        suites: list[dict[str, Any]] = []
        for problem, shape, tag in groups:
            completions += [completion(problem, kind, tag if kind == shape[0] else "") for kind in shape]
            suites += [tests(problem)] * len(shape)
        body = {"preset": PRESET, "completions": completions, "columns": {"tests": suites}}
        return Batch(json.dumps(body, sort_keys=True), body)

    def new(self) -> Batch:
        """A batch with a new completion (twice in its group) and, every ``hostile_every``-th
        time, a new hostile program (twice in another group)."""
        self.fresh += 1
        tag = f"# sample {self.fresh}\n"
        groups: list[Group] = [(self.rng.randrange(PROBLEMS), ("right", "right", "wrong", "prose"), tag)]
        if self.fresh % self.hostile_every == 0:
            groups.append(self._hostile(self.fresh // self.hostile_every, self.rng.randrange(PROBLEMS), tag))
        return self._batch(groups)

    def requests(self, count: int) -> list[Batch]:
        """``count`` requests: batches of the pool, and a new batch every ``new_every``-th."""
        return [self.new() if i % self.new_every == self.new_every - 1 else self.rng.choice(self.pool)
                for i in range(count)]


def local_reward(workers: int) -> Reward:
    """The in-process reference: the same preset and limits on a sandbox of ``workers`` processes."""
    return cisq_grpo(engine=Engine(sandbox=Sandbox(workers=workers, limits=LIMITS)))


def local_answer(reward: Reward, body: dict[str, Any]) -> Answer:
    """The in-process reward's answer to a ``/score`` body, as the service's JSON would carry it."""
    results = reward.evaluate(body["completions"], body["columns"])
    names = [component.name for component, _ in reward.components]
    answer = {"rewards": [r.value for r in results],
              "components": {name: [r.components.get(name) for r in results] for name in names},
              "info": [r.info for r in results]}
    return json.loads(json.dumps(answer))


class Clients:
    """One HTTP connection per client thread, each opened by ``connect``; closed on exit."""

    def __init__(self, connect: Callable[[], httpx.Client]) -> None:
        self.connect = connect
        self.local = threading.local()
        self.opened: list[httpx.Client] = []

    def __enter__(self) -> Clients:
        return self

    def __exit__(self, *exc: object) -> None:
        for client in self.opened:
            client.close()

    def score(self, body: dict[str, Any]) -> Answer:
        """The service's answer to ``body``; an error for any status but 200."""
        client = getattr(self.local, "client", None)
        if client is None:
            client = self.local.client = self.connect()
            self.opened.append(client)
        response = client.post("/score", json=body)
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:300]}")
        return response.json()


@dataclass
class Run:
    """What one load saw: the answers' latencies, the wrong answers, the lost requests."""

    clients: int
    wall_s: float = 0.0
    latencies: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        """Requests answered per second."""
        return len(self.latencies) / self.wall_s

    def quantile(self, q: float) -> float:
        """Latency quantile ``q`` in seconds (nearest rank)."""
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def drive(call: Callable[[dict[str, Any]], Answer], batches: Sequence[Batch], clients: int,
          expected: dict[str, Answer]) -> Run:
    """Send ``batches`` through ``call`` from ``clients`` threads, each sending the next batch
    once it has its answer.  The first answer to a batch becomes ``expected[batch.key]`` (the
    in-process reference goes first); a later one is wrong if it differs or holds :data:`SECRET`.
    A call that raises is a lost request."""
    run = Run(clients)
    lock = threading.Lock()
    order: Iterator[int] = iter(range(len(batches)))

    def client() -> None:
        while True:
            with lock:
                index = next(order, None)
            if index is None:
                return
            batch = batches[index]
            start = time.perf_counter()
            try:
                answer = call(batch.body)
            except (httpx.HTTPError, RuntimeError, ValueError) as exc:  # counted; the load goes on
                with lock:
                    run.lost.append(f"request {index}: {type(exc).__name__}: {exc}"[:500])
                continue
            elapsed = time.perf_counter() - start
            with lock:
                run.latencies.append(elapsed)
                want = expected.setdefault(batch.key, answer)
                if want != answer:
                    run.wrong.append(f"request {index}: {difference(want, answer)}")
                elif SECRET in json.dumps(answer):
                    run.wrong.append(f"request {index}: the answer holds the service's secret")

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(client) for _ in range(clients)]:
            future.result()
    run.wall_s = time.perf_counter() - start
    return run


def difference(expected: Answer, got: Answer) -> str:
    """The first completion whose reward, components or info differ, on both sides."""
    with contextlib.suppress(KeyError, IndexError, TypeError, ValueError):  # else: not the same shape
        for index, (want, have) in enumerate(zip(_rows(expected), _rows(got), strict=True)):
            if want != have:
                return f"completion {index}: expected {want}, got {have}"
    return f"expected {json.dumps(expected)[:300]}, got {json.dumps(got)[:300]}"


def _rows(answer: Answer) -> list[tuple[Any, ...]]:
    """Per completion: its reward, its components, its info."""
    return [(reward, {name: values[i] for name, values in answer["components"].items()}, answer["info"][i])
            for i, reward in enumerate(answer["rewards"])]


def rss_mb(pid: int) -> Memory:
    """Resident memory (MiB) of process ``pid``, and of all its descendants together."""
    process = psutil.Process(pid)
    descendants = 0
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.Error):  # ended meanwhile
            descendants += child.memory_info().rss
    return process.memory_info().rss / 2**20, descendants / 2**20


def start_service(*options: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """``rewardkit serve`` with ``options`` on a free loopback port (``env`` added to its
    environment), once ``/health`` answers; its process and URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "rewardkit", "serve", "--port", str(port), "--log-level", "warning",
               *options]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL,  # nosec B603 - our own command
                               env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    # httpx retries a refused connection with backoff (0.5 s, 1 s, 2 s...): about a minute in all
    with httpx.Client(transport=httpx.HTTPTransport(retries=8)) as client:
        try:
            client.get(url + "/health", timeout=10).raise_for_status()
        except httpx.HTTPError as exc:
            process.kill()
            raise RuntimeError(f"the service did not start: {exc}") from exc
    return process, url


# -- requests that hold the service's lanes (the fairness test and benchmark) ----------------------
SLEEPY = "import time\ntime.sleep({seconds})\nprint({value})\n"


def one_case(value: int) -> dict[str, Any]:
    """A stdio suite of one case whose answer is ``value``."""
    return {"mode": "stdio", "cases": [{"input": "", "output": f"{value}\n"}]}


def sleepy_batch(count: int, seconds: float) -> dict[str, Any]:
    """A cisq_grpo batch of ``count`` distinct programs that sleep, then print the right answer."""
    completions = [f"```python\n{SLEEPY.format(seconds=seconds, value=i)}```" for i in range(count)]
    return {"preset": "cisq_grpo", "completions": completions,
            "columns": {"tests": [one_case(i) for i in range(count)]}}


def busy_for_mypy(salt: int, levels: int = 8) -> str:
    """~200 bytes that keep mypy busy for minutes at 8 levels (each doubles its overload
    inference), distinct per ``salt``."""
    expression = "xs"
    for i in range(levels):
        expression = f"max({expression}, key=lambda v{i}: v{i})"
    return f"# {salt}\nxs = [1, 2]\nbiggest = {expression}\n"
