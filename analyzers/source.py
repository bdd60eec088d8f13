"""Turning whatever the caller passed into Python source text, or into a finding.

Bad input never raises: ``None`` and other non-text objects, undecodable bytes,
NUL bytes, oversized sources and syntax errors each become one ``rk-input``
finding, and the other tools are skipped for that source.

Unless the profile sets ``honour_suppressions``, inline suppression comments
(``# nosec``, ``# noqa``, ``# pylint: disable=...``, ``# type: ignore``,
``# mypy: ignore-errors``...) are blanked before the tools see the code, so a
generated program cannot switch its own findings off.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from dataclasses import dataclass

from .finding import Finding
from .profile import Profile

SUPPRESSION = re.compile(r"nosec|noqa|pylint\s*:|type\s*:\s*ignore|mypy\s*:|pyright\s*:|pragma\s*:",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Prepared:
    """Source text and its AST, or the input finding that replaces analysis."""

    text: str | None
    tree: ast.Module | None
    problem: Finding | None


def _problem(profile: Profile, rule: str, message: str, line: int = 1) -> Prepared:
    found = profile.finding("rk-input", rule, message, line)
    return Prepared(None, None, found)


def decode(code: bytes) -> str:
    """Decode bytes as Python source does (BOM, coding cookie, default UTF-8)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(code).readline)
    return code.decode(encoding)


def prepare(code: object, profile: Profile) -> Prepared:
    """Decode, size-check and parse one input."""
    if isinstance(code, (bytes, bytearray, memoryview)):
        try:
            code = decode(bytes(code))
        except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
            return _problem(profile, "decode-error", f"cannot decode source: {exc}")
    if not isinstance(code, str):
        return _problem(profile, "invalid-input", f"expected str or bytes, got {type(code).__name__}")
    try:
        size = len(code.encode("utf-8"))
    except UnicodeEncodeError as exc:
        return _problem(profile, "decode-error", f"text is not valid Unicode: {exc.reason}")
    if "\x00" in code:
        line = code.count("\n", 0, code.index("\x00")) + 1
        return _problem(profile, "syntax-error", "source contains NUL bytes", line)
    limit = int(profile.threshold("max_source_bytes"))
    if size > limit:
        return _problem(
            profile, "source-too-large", f"source is {size} bytes (limit {limit}); not analyzed"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except SyntaxError as exc:
        return _problem(profile, "syntax-error", f"{exc.msg}", exc.lineno or 1)
    except (ValueError, RecursionError, MemoryError) as exc:
        return _problem(profile, "syntax-error", f"cannot parse: {type(exc).__name__}")
    if not profile.threshold("honour_suppressions"):
        code = erase_suppressions(code)
    return Prepared(code, tree, None)


def erase_suppressions(code: str) -> str:
    """``code`` with every comment that suppresses a tool reduced to ``#`` (lines keep their numbers)."""
    lines = code.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    for token in reversed(tokens):
        if token.type == tokenize.COMMENT and SUPPRESSION.search(token.string):
            row, col = token.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "#" + line[col + len(token.string):]
    return "".join(lines)
