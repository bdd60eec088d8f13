"""``analyze`` and ``analyze_many``: report cache, de-duplication and the worker pool.

Reports are cached in this process by the SHA-256 of the input and the profile
(reports with tool errors are not cached). Uncached sources are split into
chunks for a persistent pool of worker processes, each keeping its tools warm
(pylint's linter and mypy's cache are built once per worker); ``workers=1``,
or a single source on the main thread, is analysed in this process (off the
main thread the pool takes it: tool time limits are alarms, main thread only).
With ``backend="ray"`` the chunks are Ray tasks instead (:mod:`.ray_batch`);
cache and de-duplication stay here either way.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import multiprocessing
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from .engine import Engine
from .finding import ToolError
from .profile import Profile, ProfileLike, load_profile
from .report import QualityReport

BACKENDS = ("local", "ray")
CACHE_SIZE = 8192
_MAX_CHUNK = 32
_MAX_ENGINES = 8

_cache: OrderedDict[str, QualityReport] = OrderedDict()
_engines: OrderedDict[str, Engine] = OrderedDict()
_pool: ProcessPoolExecutor | None = None
_pool_size = 0


def engine_for(profile: Profile) -> Engine:
    """This process's warm engine for ``profile`` (a few profiles are kept)."""
    key = profile.fingerprint
    if key in _engines:
        _engines.move_to_end(key)
    else:
        _engines[key] = Engine(profile)
        while len(_engines) > _MAX_ENGINES:
            _engines.popitem(last=False)
    return _engines[key]


def _work(profile_data: dict[str, Any], codes: list[object]) -> list[QualityReport]:
    return engine_for(Profile(profile_data)).analyze(codes)


def _warm(profile_data: dict[str, Any]) -> None:
    _work(profile_data, ['"""Warm-up."""\n'])


def cache_key(code: object, profile: Profile) -> str:
    """SHA-256 of the input's type and bytes and the profile fingerprint."""
    if isinstance(code, str):
        raw = b"s" + code.encode("utf-8", "surrogatepass")
    elif isinstance(code, (bytes, bytearray, memoryview)):
        raw = b"b" + bytes(code)
    else:
        raw = b"o" + type(code).__name__.encode()
    return hashlib.sha256(profile.fingerprint.encode() + raw).hexdigest()


def clear_cache() -> None:
    """Forget cached reports."""
    _cache.clear()


def shutdown_pool() -> None:
    """Stop the worker processes (they restart on the next batch)."""
    global _pool, _pool_size
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
    _pool, _pool_size = None, 0


atexit.register(shutdown_pool)


def _get_pool(workers: int, profile: Profile) -> ProcessPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size != workers:
        shutdown_pool()
        method = "forkserver" if sys.platform.startswith("linux") else "spawn"
        _pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context(method),
            initializer=_warm, initargs=(profile.data,),
        )
        _pool_size = workers
    return _pool


def _chunked(codes: list[object], slots: int) -> list[list[object]]:
    """About two chunks per slot, at most ``_MAX_CHUNK`` sources each."""
    size = max(1, min(_MAX_CHUNK, math.ceil(len(codes) / (2 * slots))))
    return [codes[i : i + size] for i in range(0, len(codes), size)]


def _run_pool(chunks: list[list[object]], profile: Profile,
              workers: int) -> list[list[QualityReport] | Exception]:
    futures: list[Future[list[QualityReport]]] = [
        _get_pool(workers, profile).submit(_work, profile.data, chunk) for chunk in chunks
    ]
    outcomes: list[list[QualityReport] | Exception] = []
    for future in futures:
        try:
            outcomes.append(future.result())
        except Exception as exc:  # a worker died: its sources get an error, not a crash
            shutdown_pool()
            outcomes.append(exc)
    return outcomes


def _analyze(codes: list[object], profile: Profile, workers: int | None,
             backend: str) -> list[QualityReport]:
    """Reports for distinct, uncached sources: here, on the process pool, or on Ray."""
    if backend == "ray":
        from .ray_batch import ray_slots, run_chunks

        slots = ray_slots()
        chunks = _chunked(codes, workers or slots)
        outcomes = run_chunks(_work, profile, chunks, slots)
    else:
        n_workers = workers or min(os.cpu_count() or 1, 8)
        # tool time limits are alarms, which only a main thread gets: off it, use the pool's
        if threading.current_thread() is threading.main_thread() or workers == 1:
            n_workers = min(n_workers, len(codes))
            if n_workers <= 1:
                return engine_for(profile).analyze(codes)
        chunks = _chunked(codes, n_workers)
        outcomes = _run_pool(chunks, profile, n_workers)
    out: list[QualityReport] = []
    for chunk, outcome in zip(chunks, outcomes, strict=True):
        out.extend(_failed(len(chunk), outcome) if isinstance(outcome, Exception) else outcome)
    return out


def _failed(count: int, exc: Exception) -> list[QualityReport]:
    """Reports for sources whose worker failed: no findings, the failure as an error."""
    error = ToolError("rewardkit", f"analysis worker failed: {type(exc).__name__}")
    return [QualityReport.from_findings((), [error]) for _ in range(count)]


def analyze_many(
    codes: Sequence[object], profile: ProfileLike = None, workers: int | None = None,
    backend: str = "local",
) -> list[QualityReport]:
    """Analyse many sources; reports come back in input order.

    Identical sources are analysed once; ``workers`` defaults to the CPU count
    (at most 8); ``workers=1`` runs everything in this process.
    ``backend="ray"`` analyses chunks as Ray tasks instead (``workers`` then
    defaults to the cluster's CPU count), see :mod:`.ray_batch`.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown analysis backend {backend!r}; use one of {BACKENDS}")
    prof = load_profile(profile)
    keys = [cache_key(code, prof) for code in codes]
    todo: dict[str, object] = {}
    for key, code in zip(keys, codes, strict=True):
        if key not in _cache and key not in todo:
            todo[key] = code
    if todo:
        results = dict(zip(todo, _analyze(list(todo.values()), prof, workers, backend), strict=True))
        for key, report in results.items():
            if not report.errors:
                _cache[key] = report
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    else:
        results = {}
    return [results[k] if k in results else _cache[k] for k in keys]


def analyze(code: object, profile: ProfileLike = None) -> QualityReport:
    """Analyse one source (str or bytes) in this process; never raises on bad code."""
    return analyze_many([code], profile, workers=1)[0]
