"""Erasing inline suppressions, so that a generated program cannot switch its own findings off.

Unless the profile sets ``honour_suppressions``, every comment that suppresses
a tool (``# nosec``, ``# noqa``, ``# pylint: disable=...``, ``# type: ignore``,
``# mypy: ignore-errors``...) is reduced to ``#`` before the tools see the code.
Comments are found by Python's tokenizer, and lines are counted as Python
counts them (at ``\\n``, see :mod:`.normalize`), so the comment erased is the
one the tools would have read.  Should the tokenizer refuse the text, every
suppression keyword in it is defused instead, strings included: failing open
would let a trick that confuses the tokenizer keep its suppressions.
"""

from __future__ import annotations

import io
import re
import tokenize

SUPPRESSION = re.compile(r"nosec|noqa|pylint\s*:|type\s*:\s*ignore|mypy\s*:|pyright\s*:|pragma\s*:",
                         re.IGNORECASE)
#: What vulture reads as a suppression anywhere on a line, inside a string too.
VULTURE_NOQA = re.compile(r"# noqa", re.IGNORECASE)


def erase_suppressions(code: str) -> str:
    """``code`` (``\\n`` line ends) with every suppressing comment reduced to ``#``; lines keep
    their numbers and other comments stay."""
    if not SUPPRESSION.search(code):
        return code
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return _defuse(SUPPRESSION, code)
    lines = code.split("\n")
    for token in reversed(tokens):
        if token.type == tokenize.COMMENT and SUPPRESSION.search(token.string):
            row, col = token.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "#" + line[col + len(token.string):]
    return "\n".join(lines)


def defuse_vulture_noqa(code: str) -> str:
    """``code`` with vulture's ``# noqa`` marker made unreadable wherever it is (same length)."""
    return _defuse(VULTURE_NOQA, code)


def _defuse(pattern: re.Pattern[str], code: str) -> str:
    return pattern.sub(lambda m: m.group()[0] + "_" * (len(m.group()) - 1), code)
