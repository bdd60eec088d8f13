"""What a load produced: the problems, and the records that could not become one (index and reason)."""

from __future__ import annotations

from dataclasses import dataclass

from ..problem import Problem

SHOWN = 10  # reasons a summary spells out; the rest are counted


class SkippedRecords(UserWarning):
    """Some records of a dataset were skipped; the message lists them (``#index reason``)."""


@dataclass(frozen=True)
class Skipped:
    """A record that was not loaded: its index among the records read, and why."""

    index: int
    reason: str


class Loaded(list[Problem]):
    """The problems loaded (a plain list of them), with ``skipped``: the records left out, in order."""

    def __init__(self, problems: list[Problem] | None = None, skipped: list[Skipped] | None = None) -> None:
        super().__init__(problems or [])
        self.skipped: list[Skipped] = list(skipped or [])

    def summary(self, shown: int = SHOWN) -> str:
        """``N records skipped: #i reason; #j reason ...`` on one line ('' when none was)."""
        if not self.skipped:
            return ""
        parts = [f"#{s.index} {s.reason}" for s in self.skipped[:shown]]
        more = len(self.skipped) - shown
        return (f"{len(self.skipped)} records skipped: " + "; ".join(parts)
                + (f"; and {more} more" if more > 0 else ""))
