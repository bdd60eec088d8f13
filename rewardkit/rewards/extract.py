"""From a completion to text, and from text to the code that gets run.

Completions arrive as plain strings or as TRL conversational lists
(``[{"role": "assistant", "content": ...}]``); anything else (``None``,
bytes that are not UTF-8, numbers) is turned into text or rejected with a
reason, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..sandbox.runtime.languages import language_key

MAX_COMPLETION_CHARS = 1_000_000

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
SOLUTION = re.compile(r"<solution>(.*?)</solution>", re.DOTALL)



@dataclass(frozen=True)
class Text:
    """The text of a completion, or why there is none."""

    value: str | None
    problem: str | None = None


def completion_text(completion: Any) -> Text:
    """Text of a standard or conversational completion."""
    if isinstance(completion, list):
        if not completion:
            return Text(None, "empty conversational completion")
        last = completion[-1]
        if not isinstance(last, dict) or "content" not in last:
            return Text(None, "conversational completion without a 'content' message")
        completion = last["content"]
    if completion is None:
        return Text(None, "completion is None")
    if isinstance(completion, (bytes, bytearray)):
        try:
            completion = bytes(completion).decode("utf-8")
        except UnicodeDecodeError:
            return Text(None, "completion bytes are not UTF-8")
    if not isinstance(completion, str):
        return Text(None, f"completion is a {type(completion).__name__}, not text")
    if len(completion) > MAX_COMPLETION_CHARS:
        return Text(None, f"completion longer than {MAX_COMPLETION_CHARS:,} characters")
    if "\x00" in completion:
        return Text(None, "completion contains NUL bytes")
    return Text(completion)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """Complete fenced blocks as (language tag, body)."""
    return [(tag.lower(), body) for tag, body in FENCE.findall(text)]


def has_unterminated_fence(text: str) -> bool:
    """Whether a code fence was opened and never closed."""
    return text.count("```") % 2 == 1


def same_language(tag: str, language: str) -> bool:
    """Whether a fence tag names ``language``: both resolve alike through the sandbox's
    names and aliases (:func:`~rewardkit.sandbox.runtime.languages.language_key`)."""
    return language_key(tag) == language_key(language)


def extract_code(text: str, language: str = "python") -> str | None:
    """The code to run: the last fenced block inside ``<solution>``, else the
    solution body; without ``<solution>``, the last fenced block; without
    fences, the whole text.  Blocks tagged with another language are skipped.
    """
    solutions = SOLUTION.findall(text)
    scope = solutions[-1] if solutions else text
    blocks = [body for tag, body in fenced_blocks(scope) if not tag or same_language(tag, language)]
    if blocks:
        code = blocks[-1]
    elif solutions or "```" not in scope:
        code = scope
    else:
        return None  # only fences of other languages, or an unterminated one
    code = code.strip("\n")
    return code if code.strip() else None
