"""``analyze`` and ``analyze_many``: report cache, de-duplication and the worker pool.

Reports are cached in this process by the SHA-256 of the input and the profile
(reports with tool errors are not cached). Uncached sources are split into
chunks for a persistent pool of worker processes, each keeping its tools warm
(pylint's linter and mypy's cache are built once per worker); a single source,
or ``workers=1``, is analysed in this process.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import multiprocessing
import os
import sys
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from .engine import Engine
from .finding import ToolError
from .profile import Profile, ProfileLike, load_profile
from .report import QualityReport

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


def _run_pool(codes: list[object], profile: Profile, workers: int) -> list[QualityReport]:
    size = max(1, min(_MAX_CHUNK, math.ceil(len(codes) / (2 * workers))))
    chunks = [codes[i : i + size] for i in range(0, len(codes), size)]
    futures: list[Future[list[QualityReport]]] = [
        _get_pool(workers, profile).submit(_work, profile.data, chunk) for chunk in chunks
    ]
    out: list[QualityReport] = []
    for chunk, future in zip(chunks, futures, strict=True):
        try:
            out.extend(future.result())
        except Exception as exc:  # a worker died: those sources get an error, not a crash
            shutdown_pool()
            error = ToolError("rewardkit", f"analysis worker failed: {type(exc).__name__}")
            out.extend(QualityReport.from_findings((), [error]) for _ in chunk)
    return out


def analyze_many(
    codes: Sequence[object], profile: ProfileLike = None, workers: int | None = None
) -> list[QualityReport]:
    """Analyse many sources; reports come back in input order.

    Identical sources are analysed once; ``workers`` defaults to the CPU count
    (at most 8); ``workers=1`` runs everything in this process.
    """
    prof = load_profile(profile)
    keys = [cache_key(code, prof) for code in codes]
    todo: dict[str, object] = {}
    for key, code in zip(keys, codes, strict=True):
        if key not in _cache and key not in todo:
            todo[key] = code
    if todo:
        n_workers = workers or min(os.cpu_count() or 1, 8)
        pending = list(todo.values())
        if n_workers <= 1 or len(pending) == 1:
            fresh = engine_for(prof).analyze(pending)
        else:
            fresh = _run_pool(pending, prof, min(n_workers, len(pending)))
        results = dict(zip(todo, fresh, strict=True))
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
