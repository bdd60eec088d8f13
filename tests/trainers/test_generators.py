"""The generators: an OpenAI-compatible client against a real local HTTP server, the tiny local model, replay.

The server (:class:`FakeServer`) answers ``POST /v1/chat/completions`` with
``echo:<last user message>``, records every request, counts how many are in
flight at once, and can be scripted to fail, refuse or hang.  The
``rewardkit optimize --generator openai`` command runs against it too.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tiny_lm import TinyLM
from transformers import PreTrainedTokenizerBase

from rewardkit.trainers.generators import (
    Generator,
    OpenAIGenerator,
    Prompt,
    ReplayGenerator,
    Sampling,
    make_generator,
)
from rewardkit.trainers.generators.local import TransformersGenerator
from rewardkit.trainers.optimize import main as optimize_main

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the tiny model samples far faster on one thread

FAST_RETRY = {"retry-after-ms": "10"}  # the openai client waits as the server says (its own backoff: 0.5 s+)


@dataclass
class Script:
    """What the server does, and what it saw."""

    failures: list[int] = field(default_factory=list)  # statuses to answer, in turn, before succeeding
    status: int | None = None  # answer every request with this status instead
    retry_headers: dict[str, str] = field(default_factory=lambda: dict(FAST_RETRY))  # sent with failures
    delay_s: float = 0.0  # time each request takes
    hang: bool = False  # never answer (until the test ends)
    answer: dict[str, Any] | None = None  # a 200 answer to send instead of the chat completion
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def do_POST(self) -> None:
        script = self.server.script
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with script.lock:
            headers = {key.lower(): value for key, value in self.headers.items()}
            script.requests.append({"path": self.path, "body": body, "headers": headers})
            script.in_flight += 1
            script.max_in_flight = max(script.max_in_flight, script.in_flight)
            status = script.failures.pop(0) if script.failures else script.status
        try:
            if script.hang:
                script.release.wait()
                return
            time.sleep(script.delay_s)
        finally:
            # out of flight before the answer leaves: a client that has read it may send its next
            # request before this thread runs again
            with script.lock:
                script.in_flight -= 1
        if status is not None:
            self._send(status, {"error": {"message": f"scripted {status}"}}, script.retry_headers)
        elif script.answer is not None:
            self._send(200, script.answer)
        else:
            message = {"role": "assistant", "content": f"echo:{body['messages'][-1]['content']}"}
            self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    script: Script

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    httpd = FakeServer(("127.0.0.1", 0), Handler)
    httpd.script = Script()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.script.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def client(server: FakeServer, **options: Any) -> OpenAIGenerator:
    return OpenAIGenerator(server.base_url, "tiny", **{"api_key": "", **options})


def dead_url() -> str:
    """The API root of a port nobody listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- OpenAI-compatible endpoint --------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 4])
def test_order_kept_and_concurrency_bounded(server: FakeServer, concurrency: int) -> None:
    server.script.delay_s = 0.05
    prompts: list[Prompt] = [f"p{i}" for i in range(20)]
    gen = client(server, concurrency=concurrency)
    assert gen.generate(prompts) == [f"echo:p{i}" for i in range(20)]
    assert gen.last_errors == [None] * 20
    assert server.script.max_in_flight <= concurrency
    assert (server.script.max_in_flight > 1) == (concurrency > 1)
    assert {r["path"] for r in server.script.requests} == {"/v1/chat/completions"}


def test_request_body_and_headers(server: FakeServer) -> None:
    gen = client(server, api_key="sk-test", system_prompt="Be brief.", extra_body={"top_k": 20})
    chat = [{"role": "system", "content": "Own system."}, {"role": "user", "content": "hi"}]
    texts = gen.generate(["plain", chat], Sampling(max_new_tokens=7, temperature=0.3, top_p=0.9, seed=5),
                         stop=["\n"])
    assert texts == ["echo:plain", "echo:hi"]
    by_prompt = {r["body"]["messages"][-1]["content"]: r for r in server.script.requests}
    plain = by_prompt["plain"]
    assert plain["headers"]["authorization"] == "Bearer sk-test"
    assert plain["body"] == {"model": "tiny", "n": 1, "max_tokens": 7, "temperature": 0.3, "top_p": 0.9,
                             "seed": 5, "top_k": 20, "stop": ["\n"],
                             "messages": [{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "plain"}]}
    assert by_prompt["hi"]["body"]["messages"] == chat  # a chat's own system prompt is kept


def test_api_key_from_environment_or_none(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    OpenAIGenerator(server.base_url, "tiny").generate(["a"])
    client(server).generate(["b"])  # an empty key, as for a local vLLM: vLLM's placeholder
    first, second = (r["headers"] for r in server.script.requests)
    assert first["authorization"] == "Bearer env-key"
    assert second["authorization"] == "Bearer EMPTY"
    assert "seed" not in server.script.requests[0]["body"]


def test_5xx_and_429_are_retried(server: FakeServer) -> None:
    server.script.failures = [500, 503, 429]
    gen = client(server, retries=3)
    assert gen.generate(["x"]) == ["echo:x"]
    assert gen.last_errors == [None]
    assert len(server.script.requests) == 4


def test_the_servers_retry_after_is_honoured(server: FakeServer) -> None:
    server.script.failures = [429]
    server.script.retry_headers = {"Retry-After": "1.5"}  # seconds; the client's own backoff is 0.5 s
    start = time.monotonic()
    assert client(server).generate(["x"]) == ["echo:x"]
    assert time.monotonic() - start >= 1.4


def test_gives_up_after_the_last_retry(server: FakeServer) -> None:
    server.script.status = 502
    gen = client(server, retries=2)
    assert gen.generate(["x", "y"]) == ["", ""]
    assert len(server.script.requests) == 6
    for error in gen.last_errors:
        assert error is not None
        assert "HTTP 502" in error and "scripted 502" in error and "3 attempts" in error


def test_other_4xx_is_not_retried(server: FakeServer) -> None:
    server.script.failures = [400]
    gen = client(server, retries=3)
    assert gen.generate(["x"]) == [""]
    assert gen.last_errors[0] is not None and "HTTP 400" in gen.last_errors[0]
    assert "scripted 400" in gen.last_errors[0] and "attempts" not in gen.last_errors[0]
    assert len(server.script.requests) == 1


def test_an_answer_that_is_not_a_chat_completion(server: FakeServer) -> None:
    server.script.answer = {"object": "something else"}
    gen = client(server)
    assert gen.generate(["x"]) == [""]
    assert gen.last_errors[0] is not None and "not a chat completion" in gen.last_errors[0]


def test_timeout_gives_empty_text(server: FakeServer) -> None:
    server.script.hang = True
    gen = client(server, timeout_s=0.3, retries=1)
    start = time.monotonic()
    assert gen.generate(["x"]) == [""]
    assert time.monotonic() - start < 5
    assert gen.last_errors[0] is not None and "timed out" in gen.last_errors[0]
    assert len(server.script.requests) == 2


def test_connection_refused_gives_empty_text() -> None:
    gen = OpenAIGenerator(dead_url(), "tiny", retries=1)
    assert gen.generate(["x"]) == [""]
    assert gen.last_errors[0] is not None and "cannot connect" in gen.last_errors[0]
    assert "2 attempts" in gen.last_errors[0]


def test_generate_from_a_running_event_loop(server: FakeServer) -> None:
    import asyncio

    async def inside() -> list[str]:  # as in a notebook, whose cells run in an event loop
        return client(server).generate(["x"])

    assert asyncio.run(inside()) == ["echo:x"]


def test_bad_configuration_fails_fast() -> None:
    with pytest.raises(ValueError, match="http://"):
        OpenAIGenerator("127.0.0.1:8000/v1", "tiny")
    with pytest.raises(ValueError, match="concurrency"):
        OpenAIGenerator("http://127.0.0.1:8000/v1", "tiny", concurrency=0)


# --- rewardkit optimize --generator openai ----------------------------------------------------------------


def optimize_cli(base_url: str, out: Path, *extra: str) -> int:
    return optimize_main(["--dataset", "mini", "--limit", "2", "--generator", "openai", "--model", "tiny",
                          "--base-url", base_url, "--api-key", "", "--out", str(out), "--repeats", "1",
                          *extra])


def test_optimize_against_an_unreachable_server_fails_fast(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    start = time.monotonic()
    code = optimize_cli(dead_url(), out, "--iterations", "10")
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 1, err
    assert elapsed < 20, elapsed  # 4 attempts with the client's backoff: about 3 s (42 s and exit 0 before)
    assert "stopped: generator 'openai' gave no text for any of the 2 prompts of iteration 0" in err
    assert "2 x cannot connect to" in err and "--base-url" in err
    assert "event loop" not in err  # the connection's own cause, not an exception met while handling it
    assert not out.exists()  # nothing done, nothing written


def test_optimize_against_a_server_that_always_fails(server: FakeServer, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    server.script.status = 500
    code = optimize_cli(server.base_url, tmp_path / "out", "--iterations", "3", "--retries", "1")
    err = capsys.readouterr().err
    assert code == 1, err
    assert "2 x HTTP 500 from" in err and "scripted 500" in err and "2 attempts" in err
    assert len(server.script.requests) == 4  # iteration 0 only: 2 prompts x 2 attempts


def test_optimize_counts_partial_failures(server: FakeServer, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REWARDKIT_CACHE_DIR", str(tmp_path / "cache"))
    server.script.failures = [500, 400]  # the first request is retried and answered, the second is not
    out = tmp_path / "out"
    code = optimize_cli(server.base_url, out, "--iterations", "1")
    err = capsys.readouterr().err
    assert code == 0, err
    summary = json.loads((out / "iterations.json").read_text())
    assert [(row["prompts"], row["generation_failures"]) for row in summary["iterations"]] == [(2, 1), (2, 0)]
    assert summary["generation_failures"] == 1 and summary["stopped"] is None
    assert "1 of 4 generations failed (iteration 0: 1;" in err
    steps = [json.loads(line)["steps"][0] for line in (out / "trajectories.jsonl").read_text().splitlines()]
    [error] = [step["generator_error"] for step in steps if step["generator_error"] is not None]
    assert error.startswith("HTTP 400 from") and "scripted 400" in error


# --- local transformers model ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local(tiny_lm: TinyLM) -> TransformersGenerator:
    return TransformersGenerator(str(tiny_lm.path), batch_size=2, system_prompt="Answer.")


def started(tokenizer: PreTrainedTokenizerBase, thinking: str) -> str:
    """A plain-text prompt: a chat already rendered, with an answer begun that the model can finish."""
    chat = tokenizer.apply_chat_template([{"role": "user", "content": "Read n and print 2*n."}],
                                         tokenize=False, add_generation_prompt=True)
    return f"{chat}<thinking>{thinking}</thinking>\n<solution>\n```python\n"


GREEDY = Sampling(max_new_tokens=24, temperature=0)
PLAIN_AND_CHAT: list[Prompt] = ["Read n and print 2*n.",
                               [{"role": "user", "content": "Read n and print n*n."}]]


def test_local_batches_keep_order(local: TransformersGenerator, tiny_lm: TinyLM) -> None:
    prompts: list[Prompt] = [
        started(tiny_lm.tokenizer, "double"),
        [{"role": "user", "content": "Read n and print n*n."}],
        started(tiny_lm.tokenizer, "square"),
        [{"role": "system", "content": "Own."}, {"role": "user", "content": "Read n and print 2*n."}],
        started(tiny_lm.tokenizer, "add"),
    ]
    texts = local.generate(prompts, GREEDY)  # three batches of at most two
    assert local.last_errors == [None] * 5
    assert texts[0].startswith("print(int(input())*2)")
    assert texts[2].startswith("n = int(input())\nprint(n*n)")
    assert texts[4].startswith("print(int(input())+2)")
    assert texts[1] and texts[3]
    assert texts == [local.generate([prompt], GREEDY)[0] for prompt in prompts]
    assert local.generate(prompts, GREEDY) == texts  # greedy is deterministic


def test_local_renders_chats_with_the_system_prompt(local: TransformersGenerator, tiny_lm: TinyLM) -> None:
    template = tiny_lm.tokenizer.apply_chat_template
    assert local.render("plain") == "plain"
    assert local.render([{"role": "user", "content": "hi"}]) == template(
        [{"role": "system", "content": "Answer."}, {"role": "user", "content": "hi"}],
        tokenize=False, add_generation_prompt=True)
    own = [{"role": "system", "content": "Own."}, {"role": "user", "content": "hi"}]
    assert local.render(own) == template(own, tokenize=False, add_generation_prompt=True)


def test_local_seed_makes_sampling_reproducible(local: TransformersGenerator) -> None:
    prompts = PLAIN_AND_CHAT * 4

    def sample(seed: int) -> list[str]:
        return local.generate(prompts, Sampling(max_new_tokens=24, temperature=1.5, seed=seed))

    first = sample(1)
    assert sample(1) == first
    assert any(sample(seed) != first for seed in (2, 3, 4))


def test_local_from_objects_and_failed_batch(tiny_lm: TinyLM) -> None:
    gen = TransformersGenerator(tiny_lm.model, tiny_lm.tokenizer, batch_size=8)
    assert gen.generate(PLAIN_AND_CHAT, GREEDY, no_such_option=1) == ["", ""]  # generate() rejects it
    assert all(e is not None and "no_such_option" in e for e in gen.last_errors)
    assert all(gen.generate(PLAIN_AND_CHAT, GREEDY))
    assert gen.last_errors == [None, None]


def test_local_bad_path_fails_fast(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="save_pretrained"):
        TransformersGenerator(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="cannot load a causal LM"):
        TransformersGenerator(str(tmp_path))  # a directory with no model in it


# --- replay and the factory ------------------------------------------------------------------------------


def test_replay_cycles_its_pool() -> None:
    gen = ReplayGenerator(["a", "b"])
    assert gen.generate(["p", "q", "r"]) == ["a", "b", "a"]
    assert gen.prompts == ["p", "q", "r"]


def test_replay_keyed_pools() -> None:
    gen = ReplayGenerator({"one": ["1a", "1b"], "two": ["2a"]}, key=lambda p: str(p).split(":")[0])
    assert gen.generate(["one:x", "two:y", "one:z", "three:w"]) == ["1a", "2a", "1b", ""]
    assert gen.last_errors[:3] == [None] * 3 and "three" in str(gen.last_errors[3])


def test_make_generator(tiny_lm: TinyLM) -> None:
    kinds: dict[str, dict[str, Any]] = {"replay": {"pool": ["a"]},
                                        "openai": {"base_url": "http://127.0.0.1:1/v1", "model": "m"},
                                        "local": {"model": str(tiny_lm.path)}}
    for kind, options in kinds.items():
        gen = make_generator(kind, **options)
        assert isinstance(gen, Generator) and gen.name == kind
    with pytest.raises(ValueError, match="unknown generator kind"):
        make_generator("vllm")
