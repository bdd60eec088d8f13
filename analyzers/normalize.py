"""Source text as every tool reads it: decoded per PEP 263, no coding cookie, ``\\n`` line ends.

The tools read the UTF-8 file the tool runner writes, and they honour a coding
cookie in it: a cookie that names another codec (``utf-16``, ``latin-1``) or
that does not match the text makes them fail or misread the source.  So bytes
are decoded as Python decodes a source file (BOM, else cookie, else UTF-8),
and the text, bytes' or str's, loses its BOM and has its cookie lines blanked
to ``#`` (line numbers stay).

Python ends lines at ``\\r\\n``, ``\\r`` and ``\\n`` only, and they all become
``\\n`` here.  ``str.splitlines`` also breaks at ``\\f``, ``\\v``, ``\\x1c``-``\\x1e``,
``\\x85``, ``\\u2028`` and ``\\u2029``, so it numbers lines differently from the
tools: code that maps line numbers must split at ``"\\n"`` instead.
"""

from __future__ import annotations

import io
import re
import tokenize

#: PEP 263's own pattern of a coding declaration (on line 1 or 2).
COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+", re.ASCII)
#: The characters ``str.splitlines`` breaks at and Python does not (``\r`` is normalised away).
_SPLITLINES_ONLY = str.maketrans(dict.fromkeys("\f\v\x1c\x1d\x1e\x85\u2028\u2029", " "))


def decode(code: bytes) -> str:
    """Decode bytes as Python decodes a source file; raises SyntaxError, LookupError or
    UnicodeDecodeError when they cannot be (an unknown codec, bytes the codec rejects)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(code).readline)
    return code.decode(encoding)


def normalize(text: str) -> str:
    """``text`` without BOM, with ``\\n`` line ends and its coding cookie lines reduced to ``#``."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    head = text.split("\n", 2)
    if not any(COOKIE.match(line) for line in head[:2]):
        return text
    for i in range(min(2, len(head))):
        if COOKIE.match(head[i]):
            head[i] = "#"
    return "\n".join(head)


def splitlines_safe(text: str) -> str:
    """``text`` (normalised) with the characters only ``str.splitlines`` breaks at made spaces,
    for tools that count lines with it: then their lines are Python's."""
    return text.translate(_SPLITLINES_ONLY)
