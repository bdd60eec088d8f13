"""What every loader shares: reading local files, reaching the Hugging Face Hub, small field helpers.

Local files are ``.jsonl`` (optionally ``.gz``), ``.json`` (a list of records,
or one record) and ``.parquet``, or a directory holding those.  Hub datasets go
through ``datasets.load_dataset``; the Hub is probed first with a short
timeout, so an unreachable Hub gives a clear error at once instead of minutes
of retries.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import json
import os
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".parquet")
PROBE_TIMEOUT_S = 4.0
DIFFICULTY_NAMES = {"easy": "easy", "medium": "medium", "hard": "hard",
                    # APPS levels, in the order of its paper
                    "introductory": "easy", "interview": "medium", "competition": "hard"}


class LoaderError(ValueError):
    """A dataset that cannot be loaded; the message says what to do instead."""


# -- local files ---------------------------------------------------------------------------
@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a dataset is read and built.

    Building a benchmark makes millions of objects that live as long as it
    does (HumanEval+'s expected outputs); each full collection meanwhile walks
    all of them, a third of loading HumanEval+ from a warm cache.  Collection
    resumes after, as it was.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def data_files(path: Path, split: str | None = None) -> list[Path]:
    """The data files at ``path`` (a file, or a directory searched recursively), in name order.

    With ``split``, a directory keeps only files whose name or folder names the
    split (``test.jsonl``, ``test-00000-of-00001.parquet``, ``test/0000.parquet``).
    """
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LoaderError(f"no such dataset file or directory: {path}")
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES)
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if split is not None:
        files = [p for p in files if _names_split(p.relative_to(path), split)]
    if not files:
        which = f" for split {split!r}" if split else ""
        raise LoaderError(f"{path} holds no {', '.join(SUFFIXES)} files{which}")
    return files


def _names_split(relative: Path, split: str) -> bool:
    stem = relative.name.split(".")[0]
    return stem == split or stem.startswith(f"{split}-") or split in relative.parts[:-1]


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one file, as plain dicts; LoaderError at the first that cannot be read."""
    for record in iter_records(path):
        if isinstance(record, LoaderError):
            raise record
        yield record


def iter_records(path: Path) -> Iterator[dict[str, Any] | LoaderError]:
    """The records of one file, each a dict or, in its place, the LoaderError saying why it is not.

    A JSONL line that is not a JSON object is one bad record (the next lines
    are read); a ``.json`` file that is not JSON is one error for the file.
    """
    name = path.name
    if name.endswith(".parquet"):
        yield from _parquet_records(path)
        return
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        if name.endswith((".jsonl", ".jsonl.gz")):
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield _record(line, f"{path}:{number}")
            return
        text = handle.read()
    try:
        data = _loads(text, str(path))
    except LoaderError as exc:
        yield exc
        return
    for index, item in enumerate(data if isinstance(data, list) else [data]):
        yield _as_record(item, f"{path}[{index}]")


def _record(line: str, where: str) -> dict[str, Any] | LoaderError:
    try:
        return _as_record(_loads(line, where), where)
    except LoaderError as exc:
        return exc


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoaderError(f"{where}: not valid JSON ({exc})") from exc


def _as_record(item: Any, where: str) -> dict[str, Any] | LoaderError:
    if not isinstance(item, dict):
        return LoaderError(f"{where}: a record must be a JSON object, got {type(item).__name__}")
    return item


def _parquet_records(path: Path) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        try:
            import pandas as pd
        except ImportError as exc:
            raise LoaderError(f"reading {path} needs pyarrow (pip install pyarrow)") from exc
        yield from pd.read_parquet(path).to_dict(orient="records")
        return
    for batch in pq.ParquetFile(path).iter_batches(batch_size=256):
        yield from batch.to_pylist()


# -- the Hugging Face Hub ------------------------------------------------------------------
def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def hub_offline() -> bool:
    """Whether the user asked for offline mode (then only the local Hugging Face cache is used)."""
    return _truthy("HF_HUB_OFFLINE") or _truthy("HF_DATASETS_OFFLINE")


def hub_endpoint() -> str:
    """The Hub address ``datasets`` would use."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co")


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the Hub opens within ``timeout`` seconds (DNS included)."""
    parsed = urlparse(hub_endpoint())
    host = parsed.hostname or "huggingface.co"
    port = parsed.port or (80 if parsed.scheme == "http" else 443)

    def connect() -> bool:
        with socket.create_connection((host, port), timeout=timeout):
            return True

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(connect).result(timeout=timeout + 1)
    except (OSError, FutureTimeout):
        return False
    finally:
        pool.shutdown(wait=False)


def hub_records(repo: str, split: str, config: str | None = None) -> Iterator[dict[str, Any]]:
    """Rows of a Hub dataset through ``datasets.load_dataset``; LoaderError says what to do if not."""
    advice = (f"download {repo} where the Hub is reachable and pass its local path "
              f"(a directory, .parquet or .jsonl file) instead of the name")
    try:
        import datasets
    except ImportError as exc:
        raise LoaderError(f"loading {repo} from the Hugging Face Hub needs the 'datasets' package "
                          f"(pip install datasets); or {advice}") from exc
    if not hub_offline() and not hub_reachable():
        raise LoaderError(f"the Hugging Face Hub ({hub_endpoint()}) cannot be reached; {advice}, "
                          "or set HF_HUB_OFFLINE=1 to use a copy already in the Hugging Face cache")
    try:
        rows = datasets.load_dataset(repo, config, split=split)
    except Exception as exc:  # datasets raises many kinds: connection, missing split, format
        raise LoaderError(f"could not load {repo} (split {split!r}) from the Hugging Face Hub: "
                          f"{exc}; {advice}") from exc
    for row in rows:
        yield dict(row)


# -- field helpers -------------------------------------------------------------------------
def json_field(value: Any, name: str, where: str) -> Any:
    """A field that datasets store as JSON text (or already decoded): the decoded value."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise LoaderError(f"{where}: field {name!r} is not valid JSON ({exc})") from exc


def difficulty(value: Any) -> str:
    """``easy``/``medium``/``hard`` where the dataset's label maps to one, else the label lowercased."""
    text = str(value or "").strip().lower()
    return DIFFICULTY_NAMES.get(text, text)


def sequence(value: Any) -> list[Any]:
    """A list-like field as a list: ``None`` gives ``[]``; numpy arrays (pandas) become lists."""
    if value is None:
        return []
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (str, bytes, dict)):
        return [value]
    return list(value)


def text(value: Any) -> str:
    """A string field that may be missing, ``None`` or a list of parts (Mercury's ``pretty_content``)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "\n".join(str(part) for part in value)
    return str(value)
