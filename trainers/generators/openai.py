"""A generator for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang, ...).

Standard library only: ``urllib.request`` in a thread pool.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

from .base import Prompt, Sampling

EXCERPT = 300  # characters of an error body kept in last_errors


class _Retryable(Exception):
    """A failure worth another try (connection, timeout, 408, 429, 5xx)."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class OpenAIGenerator:
    """Completions from ``POST {base_url}/chat/completions``, ``concurrency`` requests at a time.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1``.
    ``api_key`` defaults to ``$OPENAI_API_KEY``; an empty key sends no
    ``Authorization`` header (as a local vLLM expects).  Plain-text prompts
    become one user message; ``system_prompt`` goes first in any chat that
    has no system message.  Failed requests are retried ``retries`` times,
    waiting ``backoff_s * 2**attempt`` or the server's ``Retry-After``;
    other 4xx answers are not retried.  ``timeout_s`` bounds each socket
    operation.  ``extra_body`` (e.g. ``{"top_k": 20}`` for vLLM) is merged
    into every request, and the ``options`` of :meth:`generate` into that call's.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, concurrency: int = 8,
                 retries: int = 3, backoff_s: float = 0.5, timeout_s: float = 60.0,
                 system_prompt: str | None = None, extra_body: dict[str, Any] | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, e.g. http://127.0.0.1:8000/v1; "
                             f"got {base_url!r}")
        if concurrency < 1 or retries < 0:
            raise ValueError(f"need concurrency >= 1 and retries >= 0, got {concurrency} and {retries}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.concurrency = concurrency
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self.last_errors: list[str | None] = []

    def generate(self, prompts: list[Prompt], sampling: Sampling | None = None, **options: Any) -> list[str]:
        """One completion per prompt, in order; ``""`` (and the reason in ``last_errors``) for failures."""
        sampling = sampling or Sampling()
        bodies = [self.body(prompt, sampling, **options) for prompt in prompts]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            results = list(pool.map(self._complete, bodies))
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

    def _complete(self, body: dict[str, Any]) -> tuple[str, str | None]:
        """The completion's text and ``None``, or ``""`` and why, after up to ``retries`` retries."""
        reason = ""
        for attempt in range(self.retries + 1):
            try:
                return self._post(body), None
            except _Retryable as failure:
                reason = str(failure)
                if attempt < self.retries:
                    wait = failure.retry_after
                    time.sleep(self.backoff_s * 2 ** attempt if wait is None else wait)
            except ValueError as failure:
                return "", str(failure)
        return "", f"{reason} (gave up after {self.retries + 1} attempts)"

    def _post(self, body: dict[str, Any]) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # nosec B310 - http(s) only, checked in __init__
                raw = response.read()
        except urllib.error.HTTPError as error:
            reason = f"HTTP {error.code} from {self.url}: {_error_body(error)}"
            if error.code in (408, 429) or error.code >= 500:
                raise _Retryable(reason, _retry_after(error.headers.get("Retry-After"))) from error
            raise ValueError(reason) from error
        except (OSError, http.client.HTTPException) as error:  # refused, reset, timed out, cut short
            raise _Retryable(f"request to {self.url} failed: {getattr(error, 'reason', error)}") from error
        return _content(raw)


def _content(raw: bytes) -> str:
    """The first choice's message text; ``ValueError`` for an answer that is not a chat completion."""
    try:
        content = json.loads(raw)["choices"][0]["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise ValueError(f"not a chat completion ({type(error).__name__}): {_excerpt(raw)}") from error
    return content if isinstance(content, str) else ""


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), if any."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _error_body(error: urllib.error.HTTPError) -> str:
    """An excerpt of an error answer's body, or why it could not be read."""
    try:
        return _excerpt(error.read())
    except (OSError, http.client.HTTPException) as failure:
        return f"(body unreadable: {failure})"


def _excerpt(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "..."
