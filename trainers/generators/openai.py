"""A generator for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang, ...).

Built on the ``openai`` package (``pip install 'rewardkit[openai]'``): one
``AsyncOpenAI`` client per :meth:`OpenAIGenerator.generate` call sends the
requests, ``concurrency`` at a time under an asyncio semaphore, and retries
by itself what is worth another try (connection errors, timeouts, 408, 409,
429, 5xx: exponential backoff from 0.5 s, or the server's ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ...optional import requires
from .base import Prompt, Sampling

with requires("openai"):
    import openai

EXCERPT = 300  # characters of an error answer kept in last_errors
CONNECT_TIMEOUT_S = 5.0  # a host that never answers fails this fast, whatever timeout_s is
RETRIED_STATUSES = frozenset({408, 409, 429})  # and every 5xx: what the openai client retries
NO_KEY = "EMPTY"  # sent for an empty key, as vLLM's docs do: a server started without a key ignores it

T = TypeVar("T")


class OpenAIGenerator:
    """Completions from ``POST {base_url}/chat/completions``, ``concurrency`` requests at a time.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1``.
    ``api_key`` defaults to ``$OPENAI_API_KEY``; an empty one (a local vLLM
    started without ``--api-key``) is sent as ``EMPTY``, which such a server ignores.  Plain-text prompts
    become one user message; ``system_prompt`` goes first in any chat that
    has no system message.  The client retries a failed request up to
    ``retries`` times; ``timeout_s`` bounds each attempt (connecting: at most
    5 s).  ``extra_body`` (e.g. ``{"top_k": 20}`` for vLLM) is merged into
    every request, and the ``options`` of :meth:`generate` into that call's.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, concurrency: int = 8,
                 retries: int = 3, timeout_s: float = 60.0, system_prompt: str | None = None,
                 extra_body: dict[str, Any] | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, e.g. http://127.0.0.1:8000/v1; "
                             f"got {base_url!r}")
        if concurrency < 1 or retries < 0 or timeout_s <= 0:
            raise ValueError(f"need concurrency >= 1, retries >= 0 and timeout_s > 0, got {concurrency}, "
                             f"{retries} and {timeout_s}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.concurrency = concurrency
        self.retries = retries
        self.timeout_s = timeout_s
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self.last_errors: list[str | None] = []

    def generate(self, prompts: list[Prompt], sampling: Sampling | None = None, **options: Any) -> list[str]:
        """One completion per prompt, in order; ``""`` (and the reason in ``last_errors``) for failures."""
        sampling = sampling or Sampling()
        bodies = [self.body(prompt, sampling, **options) for prompt in prompts]
        results = _run(self._complete_all(bodies))
        self.last_errors = [error for _, error in results]
        return [text for text, _ in results]

    def body(self, prompt: Prompt, sampling: Sampling, **options: Any) -> dict[str, Any]:
        """The JSON request for one prompt."""
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        if self.system_prompt and not any(m.get("role") == "system" for m in messages):
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        body: dict[str, Any] = {"model": self.model, "messages": messages, "n": 1,
                                "max_tokens": sampling.max_new_tokens, "temperature": sampling.temperature,
                                "top_p": sampling.top_p}
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        return {**body, **self.extra_body, **options}

    async def _complete_all(self, bodies: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
        gate = asyncio.Semaphore(self.concurrency)
        timeout = openai.Timeout(self.timeout_s, connect=min(self.timeout_s, CONNECT_TIMEOUT_S))
        async with openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key or NO_KEY,
                                      max_retries=self.retries, timeout=timeout) as client:
            return list(await asyncio.gather(*(self._complete(client, gate, body) for body in bodies)))

    async def _complete(self, client: openai.AsyncOpenAI, gate: asyncio.Semaphore,
                        body: dict[str, Any]) -> tuple[str, str | None]:
        """The completion's text and ``None``, or ``""`` and why there is none."""
        model, messages, rest = body["model"], body["messages"], {k: v for k, v in body.items()
                                                                   if k not in ("model", "messages")}
        async with gate:
            try:
                completion = await client.chat.completions.create(model=model, messages=messages,
                                                                  extra_body=rest)
            except openai.OpenAIError as error:
                return "", self._reason(error)
        try:
            content = completion.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as error:  # an answer that is not a chat completion
            return "", f"not a chat completion from {self.base_url} ({type(error).__name__}): " \
                       f"{_excerpt(str(completion))}"
        return content if isinstance(content, str) else "", None

    def _reason(self, error: openai.OpenAIError) -> str:
        """Why a request failed, in one line, with how many attempts the client made."""
        attempts = f"(gave up after {self.retries + 1} attempts)"
        if isinstance(error, openai.APITimeoutError):
            return f"request to {self.base_url} timed out after {self.timeout_s:g} s {attempts}"
        if isinstance(error, openai.APIConnectionError):
            return f"cannot connect to {self.base_url}: {_root_cause(error)} {attempts}"
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            retried = status in RETRIED_STATUSES or status >= 500
            return (f"HTTP {status} from {self.base_url}: {_excerpt(error.response.text)}"
                    + (f" {attempts}" if retried else ""))
        return f"{type(error).__name__}: {error}"


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end, in a thread of its own when this one already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:  # e.g. called from a notebook
        return pool.submit(asyncio.run, coroutine).result()


def _root_cause(error: BaseException) -> str:
    """The message of the innermost explicit cause (e.g. the socket's "Connection refused")."""
    seen = {id(error)}
    while (inner := error.__cause__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        error = inner
    return str(error) or type(error).__name__


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "..."
