"""griffe extension for the API reference: our reST-flavoured docstrings as Markdown.

Doctest runs (``>>>`` lines and their output) become fenced ``pycon`` blocks,
and Sphinx roles (``:func:`~.x```) become plain code spans.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?\w+:`~?\.?([^`]+)`")


def markdown(text: str) -> str:
    """``text`` with doctest runs fenced and roles turned into code spans."""
    out: list[str] = []
    in_run = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith((">>>", "...")) and not in_run:
            out.append("```pycon")
            in_run = True
        elif in_run and not stripped:
            out.append("```")
            in_run = False
        out.append(line if in_run else ROLE.sub(r"`\1`", line))
    if in_run:
        out.append("```")
    return "\n".join(out)


class RstToMarkdown(griffe.Extension):
    """Rewrite every docstring as it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
