"""Client of the reward service (``rewardkit serve``): a TRL reward and verl functions over HTTP.

>>> reward = RemoteReward("http://127.0.0.1:8765", preset="cisq_grpo")   # doctest: +SKIP
>>> trainer = GRPOTrainer(..., reward_funcs=[reward])                     # doctest: +SKIP

:class:`RemoteReward` is called like an in-process reward and has its name,
so TRL logs ``rewards/cisq_grpo/mean`` either way.  It sends the completions'
text and the dataset columns rewards read (``tests``, ``language``,
``baseline_code``, ``baseline_metrics``, ``reference_metrics``); TRL's other
arguments stay here.  A fault of the service or of the way to it (connection
refused, reset or cut mid-answer, a timeout, HTTP 429 or 5xx, as while it
restarts) is tried again, ``retries`` times at most, with a growing wait;
then every sample of the batch gets ``None`` (TRL leaves them out) and a
warning is logged.  No score is made up, and the component functions of
:meth:`RemoteReward.functions` all see one outcome per batch, so a sample is
never scored by some components and left out by others.  A request the
service rejects (unknown preset, malformed tests, missing column, wrong
token, batch too large) raises ``ValueError`` with the service's message, at once.

For verl, :func:`compute_score` (threads), :func:`compute_score_async` (verl's
reward loop), :func:`compute_score_float` (``prime``) and :func:`compute_score_batch`
(``batch``) call the service named by ``url=`` or ``REWARDKIT_URL``, with the
conventions of :mod:`rewardkit.rewards.verl` (verl's dict form, ``reward_kwargs``,
concurrent per-sample calls sent as one request); point verl's
``custom_reward_function.path`` at ``pkg://rewardkit.client``.  verl needs a number
for every sample, so when the service stays unreachable through the retries they
raise :class:`ServiceUnavailable` rather than return made-up scores.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx

# absolute imports: verl loads this file by its path, outside the package
from rewardkit.rewards.coalesce import Coalescer
from rewardkit.rewards.composite import (
    ComponentFunction,
    RewardFunction,
    RewardResult,
    log_to_trainer,
    split_samples,
)
from rewardkit.rewards.engine import COLUMNS, ConfigError
from rewardkit.rewards.extract import completion_text
from rewardkit.rewards.shared_batch import SharedBatch
from rewardkit.rewards.verl import VERL_KEYWORDS, policy_of, verl_result, verl_samples

log = logging.getLogger("rewardkit.client")

URL_ENV, TOKEN_ENV, PRESET_ENV = "REWARDKIT_URL", "REWARDKIT_TOKEN", "REWARDKIT_PRESET"
RETRY_STATUSES = {429, 500, 502, 503, 504}


class ServiceUnavailable(ConnectionError):
    """The service did not answer, or kept failing, through every retry, or answered with
    something other than a score of the batch sent."""


class RemoteReward:
    """A reward computed by a rewardkit service, called as TRL calls reward functions.

    ``token`` defaults to ``$REWARDKIT_TOKEN``; ``timeout`` bounds, in
    seconds, each wait of an attempt (to connect, to send, for the answer);
    ``retries`` more attempts follow a failed one, after ``backoff``, then
    twice that, and so on: at most ``retries + 1`` attempts with
    ``backoff * (2**retries - 1)`` seconds between them (7 s by default).
    """

    def __init__(self, url: str, preset: str = "cisq_grpo", objective: str | None = None, *,
                 token: str | None = None, timeout: float = 300.0, retries: int = 3,
                 backoff: float = 1.0) -> None:
        self.url, self.preset, self.objective = url.rstrip("/"), preset, objective
        self.retries, self.backoff = retries, backoff
        self.__name__ = preset
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        self._timeout = timeout
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(timeout=timeout, headers=self._headers)
        self._components: dict[str, float] | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the HTTP client (its connections and locks), which a copy opens anew;
        the token travels with the copy."""
        return {key: value for key, value in vars(self).items() if key != "_http"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._http = httpx.Client(timeout=self._timeout, headers=self._headers)

    # -- TRL's interface ---------------------------------------------------------------------------
    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        """The weighted reward of each completion; ``None`` each when the service is unreachable."""
        results = self._results_or_none(completions, kwargs)
        if results is None:
            return [None] * len(completions)
        log_to_trainer(kwargs, results, list(results[0].components) if results else [])
        return [r.value for r in results]

    def functions(self, weighted: bool = False) -> list[RewardFunction]:
        """One function per component, named after it, for ``reward_funcs`` (with ``reward_weights=
        self.weights``; ``weighted=True`` for a trainer without weights, as
        :meth:`rewardkit.rewards.Reward.functions`).  The functions share one request per batch,
        and its outcome: when it failed, every function gives ``None`` for that batch (see
        :mod:`.rewards.shared_batch`)."""
        shared: SharedBatch[list[RewardResult | None]] = SharedBatch(list(self.components))
        return [ComponentFunction(self._results_or_none, name, shared, logs=i == 0,
                                  weight=weight if weighted else 1.0)
                for i, (name, weight) in enumerate(self.components.items())]

    @property
    def components(self) -> dict[str, float]:
        """The preset's component names and weights, in order, as the service has them."""
        if self._components is None:
            path = f"/presets/{self.preset}"
            params = {"objective": self.objective} if self.objective else {}
            self._components = dict(self._request("GET", path, params=params)["components"])
        return self._components

    @property
    def weights(self) -> list[float]:
        """The components' weights in order, for TRL's ``reward_weights``."""
        return list(self.components.values())

    # -- richer results ---------------------------------------------------------------------------------
    def results(self, completions: Sequence[Any], **columns: Any) -> list[RewardResult]:
        """Value, components and info of each completion; :class:`ServiceUnavailable` when the
        service cannot be reached, ``ValueError`` when it rejects the request."""
        return self._score(completions, columns)

    def score(self, samples: Sequence[dict[str, Any]]) -> list[RewardResult]:
        """Records ``{"completion": ..., <columns>}``, scored as ``Reward.score`` scores them
        (see :meth:`results`)."""
        return self._score(*split_samples(samples))

    def _score(self, completions: Sequence[Any], columns: dict[str, Any]) -> list[RewardResult]:
        payload = {"preset": self.preset, "objective": self.objective,
                   "completions": [completion_text(c).value for c in completions],
                   "columns": _columns(columns)}
        data = self._request("POST", "/score", content=json.dumps(payload))
        return _results(data, len(completions), self.url)

    def health(self) -> dict[str, Any]:
        """The service's ``/health`` answer."""
        return dict(self._request("GET", "/health"))

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    def __enter__(self) -> RemoteReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------------------
    def _results_or_none(self, completions: list[Any], kwargs: dict[str, Any]) -> list[RewardResult] | None:
        try:
            return self.results(completions, **kwargs)
        except ServiceUnavailable as exc:
            log.warning("rewardkit service unreachable, %d rewards left out (None): %s",
                        len(completions), exc)
            return None

    def _request(self, method: str, path: str, **options: Any) -> Any:
        """The JSON answer.  Transport faults (refused, reset, cut, timed out) and 429/5xx are tried
        again, with backoff, on a new connection where the last one failed (httpx drops it, so no
        late answer is read as another request's); other errors raise ValueError at once."""
        if "content" in options:
            options["headers"] = {"Content-Type": "application/json"}
        started, problem = time.monotonic(), ""
        for attempt in range(self.retries + 1):
            if attempt:
                wait = self.backoff * 2 ** (attempt - 1)
                log.warning("rewardkit service: %s %s%s failed (%s); attempt %d of %d in %.3g s",
                            method, self.url, path, problem, attempt + 1, self.retries + 1, wait)
                time.sleep(wait)
            try:
                response = self._http.request(method, self.url + path, **options)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUSES:
                problem = f"HTTP {response.status_code}: {_message(response)}"
                continue
            if response.is_error:
                raise ValueError(f"rewardkit service at {self.url} rejected the request "
                                 f"(HTTP {response.status_code}): {_message(response)}")
            try:
                return response.json()
            except ValueError as exc:
                raise ServiceUnavailable(f"{method} {self.url}{path} answered HTTP {response.status_code} "
                                         f"with a body that is not JSON: {response.text[:200]!r}") from exc
        raise ServiceUnavailable(f"{method} {self.url}{path} failed {self.retries + 1} times in "
                                 f"{time.monotonic() - started:.1f} s; last: {problem}")


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"])
    except (ValueError, KeyError, TypeError):
        return response.text[:500]


def _results(data: Any, count: int, url: str) -> list[RewardResult]:
    """The results in a ``/score`` answer; ServiceUnavailable unless it has one of each per completion."""
    try:
        rewards, components, info = data["rewards"], data["components"], data["info"]
        if len(rewards) != count or len(info) != count or any(len(v) != count for v in components.values()):
            raise ValueError(f"{len(rewards)} rewards, {len(info)} infos, component lengths "
                             f"{sorted({len(v) for v in components.values()})}")
        return [RewardResult(value, {name: values[i] for name, values in components.items()}, info[i])
                for i, value in enumerate(rewards)]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ServiceUnavailable(f"the service at {url} answered something other than a score of the "
                                 f"{count} completions sent ({type(exc).__name__}: {exc})") from exc


def _columns(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The columns rewards read; ValueError for one that JSON cannot carry."""
    columns = {key: kwargs[key] for key in COLUMNS if key in kwargs}
    for key, value in columns.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"column {key!r} cannot be sent as JSON: {exc}") from exc
    return columns


# -- verl ---------------------------------------------------------------------------------------------------
MAX_BATCH = 256  # the service's default --max-batch
REMOTE_OPTIONS = ("url", "preset", "objective", "token", "retries", "backoff", "timeout", "max_batch",
                  "fault")


class _RemoteScorer:
    """A client of the service and the coalescer that sends its per-sample calls as one request.
    (No dataclass: verl may load this file as a module missing from ``sys.modules``.)"""

    def __init__(self, remote: RemoteReward, max_batch: int) -> None:
        self.remote = remote
        self.coalescer: Coalescer[dict[str, Any], RewardResult] = Coalescer(
            remote.score, max_batch=max_batch, name=f"rewardkit-verl-{remote.preset}")


_remotes: dict[tuple[Any, ...], _RemoteScorer] = {}
_remotes_lock = threading.Lock()


def remote_scorer(url: str | None = None, preset: str | None = None, objective: str | None = None,
                  token: str | None = None, retries: int = 3, backoff: float = 1.0, timeout: float = 300.0,
                  max_batch: int = MAX_BATCH, fault: Any = None, **others: Any) -> _RemoteScorer:
    """The client for verl's ``reward_kwargs``, one per distinct set (an option it does not know
    raises :class:`ConfigError`; a preset, objective or token the service refuses raises
    ``ValueError`` at the first call, with the service's message).  ``fault`` is the verl
    functions' own (:func:`rewardkit.rewards.verl.policy_of`), not the client's."""
    del fault
    unknown = sorted(set(others) - VERL_KEYWORDS)
    if unknown:
        raise ConfigError(f"rewardkit.client's verl functions have no option "
                          f"{', '.join(map(repr, unknown))} (verl: custom_reward_function.reward_kwargs); "
                          f"they take {', '.join(REMOTE_OPTIONS)}")
    url = url or os.environ.get(URL_ENV)
    if not url:
        raise ConfigError(f"give the service's address: url=... (verl: custom_reward_function."
                          f"reward_kwargs.url) or {URL_ENV}")
    preset = preset or os.environ.get(PRESET_ENV) or "cisq_grpo"
    key = (url, preset, objective, token, retries, backoff, timeout, max_batch)
    with _remotes_lock:
        if key not in _remotes:
            remote = RemoteReward(url, preset, objective, token=token, retries=retries, backoff=backoff,
                                  timeout=timeout)
            _remotes[key] = _RemoteScorer(remote, max_batch)
        return _remotes[key]


def _unavailable(count: int, exc: ServiceUnavailable) -> ServiceUnavailable:
    return ServiceUnavailable(f"rewardkit could not score {count} sample{'s' * (count != 1)}, and verl needs "
                              f"a number for every sample (made-up ones would be wrong rewards): {exc}")


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any],
                        extra_infos: Sequence[dict[str, Any] | None] | None = None,
                        **reward_kwargs: Any) -> list[dict[str, float]]:
    """verl's batch reward over HTTP, in verl's dict form (see :mod:`rewardkit.rewards.verl`), for
    verl's ``batch`` manager.  ``ground_truth`` is the test suite, ``extra_info`` may carry the other
    columns.  The keywords (verl's ``reward_kwargs``): ``url``, ``preset``, ``objective``, ``token``
    (defaults ``$REWARDKIT_URL``, ``$REWARDKIT_PRESET`` else cisq_grpo, ``$REWARDKIT_TOKEN``),
    ``retries``, ``backoff``, ``timeout`` (:class:`RemoteReward`'s), ``max_batch`` (samples per
    request of gathered per-sample calls; the service's ``--max-batch``), ``fault``.  A sample left
    without a value (sandbox fault) gets the ``fault`` policy's score (default 0.0) with
    ``rewardkit_fault`` 1.0, since verl needs a number (:mod:`rewardkit.rewards.faults`); a
    service unreachable through the retries raises :class:`ServiceUnavailable` rather than fake a batch."""
    samples = verl_samples(data_sources, solution_strs, ground_truths, extra_infos)
    policy = policy_of(reward_kwargs)
    try:
        results = remote_scorer(**reward_kwargs).remote.score(samples)
    except ServiceUnavailable as exc:
        raise _unavailable(len(samples), exc) from exc
    return [verl_result(r, policy) for r in results]


def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: dict[str, Any] | None = None, **reward_kwargs: Any) -> dict[str, float]:
    """verl's per-sample reward over HTTP (see :func:`compute_score_batch`); concurrent calls
    (verl's thread pool) go to the service as one request."""
    [sample] = verl_samples([data_source], [solution_str], [ground_truth], [extra_info])
    policy = policy_of(reward_kwargs)
    try:
        result = remote_scorer(**reward_kwargs).coalescer(sample)
    except ServiceUnavailable as exc:
        raise _unavailable(1, exc) from exc
    return verl_result(result, policy)


async def compute_score_async(data_source: Any, solution_str: str, ground_truth: Any,
                              extra_info: dict[str, Any] | None = None,
                              **reward_kwargs: Any) -> dict[str, float]:
    """:func:`compute_score` for verl's reward loop, which awaits coroutine functions: the calls
    awaited at once go to the service as one request."""
    [sample] = verl_samples([data_source], [solution_str], [ground_truth], [extra_info])
    policy = policy_of(reward_kwargs)
    try:
        result = await remote_scorer(**reward_kwargs).coalescer.score_async(sample)
    except ServiceUnavailable as exc:
        raise _unavailable(1, exc) from exc
    return verl_result(result, policy)


def compute_score_float(data_source: Any, solution_str: str, ground_truth: Any,
                        extra_info: dict[str, Any] | None = None, **reward_kwargs: Any) -> float:
    """The reward alone, for a manager that wants a number (verl's ``prime``)."""
    return compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)["score"]
