"""``analyze`` and ``analyze_many``: report cache, de-duplication, and where the analysis runs.

Reports are cached in this process by the SHA-256 of the input and the profile
(reports with tool errors are not cached).  Uncached sources are analysed by
warm worker processes (:mod:`.pool`: pylint's linter and mypy's cache are built
once per worker) under a per-source time budget; ``workers=1`` uses one.  With
``backend="ray"`` they go in chunks to Ray tasks instead (:mod:`.ray_batch`),
each of which runs such a pool on its node.  Cache and de-duplication stay
here either way.  Calls from several threads run at once, each on workers of
its own, so a slow source in one call does not hold up another.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from .finding import ToolError
from .pool import AnalysisPool, chunked
from .profile import Profile, ProfileLike, load_profile
from .report import QualityReport
from .source import prepare

BACKENDS = ("local", "ray")
CACHE_SIZE = 8192

_cache: OrderedDict[str, QualityReport] = OrderedDict()
_cache_lock = threading.Lock()
_pool = AnalysisPool()


def _work(profile_data: dict[str, Any], codes: list[object]) -> list[QualityReport]:
    """Analyse a chunk where this runs (a Ray task): on this process's own analysis pool."""
    return analyze_many(codes, Profile(profile_data), workers=1)


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
    with _cache_lock:
        _cache.clear()


def shutdown_pool() -> None:
    """Stop the worker processes, cutting short the analyses in progress in other threads (their
    unfinished sources get a ToolError); they start again on the next batch."""
    _pool.abort()
    _pool.close()


atexit.register(shutdown_pool)


def _analyze(codes: list[object], profile: Profile, workers: int | None,
             backend: str) -> list[QualityReport]:
    """Reports for distinct, uncached sources: on the local analysis pool, or on Ray."""
    texts = {i: text for i, code in enumerate(codes) if (text := _as_text(code)) is not None}
    found = (_on_ray if backend == "ray" else _on_pool)(list(texts.values()), profile, workers)
    reports = dict(zip(texts, found, strict=True))
    return [reports[i] if i in reports else _not_text(code, profile) for i, code in enumerate(codes)]


def _as_text(code: object) -> str | bytes | None:
    """A source as it travels to a worker (str or bytes), or None for an input that is no text."""
    if isinstance(code, (bytearray, memoryview)):
        return bytes(code)
    return code if isinstance(code, (str, bytes)) else None


def _on_pool(texts: list[object], profile: Profile, workers: int | None) -> list[QualityReport]:
    if not texts:
        return []
    return _pool.analyze(profile, texts, workers or min(os.cpu_count() or 1, 8))


def _not_text(code: object, profile: Profile) -> QualityReport:
    """The report of an input that is no source at all (None, a number...)."""
    problem = prepare(code, profile).problem
    return QualityReport.from_findings([problem] if problem else [])


def _on_ray(texts: list[object], profile: Profile, workers: int | None) -> list[QualityReport]:
    if not texts:
        return []
    from .ray_batch import ray_slots, run_chunks

    slots = ray_slots()
    chunks = chunked(texts, workers or slots)
    outcomes = run_chunks(_work, profile, chunks, slots)
    return [report for chunk, outcome in zip(chunks, outcomes, strict=True)
            for report in (_failed(len(chunk), outcome) if isinstance(outcome, Exception) else outcome)]


def _failed(count: int, exc: Exception) -> list[QualityReport]:
    """Reports for sources whose worker failed: no findings, the failure as an error."""
    error = ToolError("rewardkit", f"analysis worker failed: {type(exc).__name__}")
    return [QualityReport.from_findings((), [error]) for _ in range(count)]


def analyze_many(
    codes: Sequence[object], profile: ProfileLike = None, workers: int | None = None,
    backend: str = "local",
) -> list[QualityReport]:
    """Analyse many sources; reports come back in input order.

    Identical sources are analysed once; ``workers`` (processes) defaults to the
    CPU count (at most 8).
    ``backend="ray"`` analyses chunks as Ray tasks instead (``workers`` then
    defaults to the cluster's CPU count), see :mod:`.ray_batch`.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown analysis backend {backend!r}; use one of {BACKENDS}")
    prof = load_profile(profile)
    keys = [cache_key(code, prof) for code in codes]
    results: dict[str, QualityReport] = {}
    todo: dict[str, object] = {}
    with _cache_lock:
        for key, code in zip(keys, codes, strict=True):
            if key in _cache:
                results[key] = _cache[key]
            elif key not in todo:
                todo[key] = code
    if todo:
        found = dict(zip(todo, _analyze(list(todo.values()), prof, workers, backend), strict=True))
        results.update(found)
        with _cache_lock:
            _cache.update((key, report) for key, report in found.items() if not report.errors)
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return [results[k] for k in keys]


def analyze(code: object, profile: ProfileLike = None) -> QualityReport:
    """Analyse one source (str or bytes) on one worker; never raises on bad code."""
    return analyze_many([code], profile, workers=1)[0]
