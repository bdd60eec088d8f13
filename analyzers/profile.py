"""Analysis profiles: which tools run, rule severities, thresholds (TOML or dict).

A profile is ``data/default_profile.toml`` with the user's sections merged over
it (the ``tool_budget_s`` threshold, seconds per tool, is merged tool by tool).
``severity`` keys are ``"tool:rule"`` or ``"tool:*"``; the value ``"off"``
drops the rule.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Union, cast

from .catalog import lookup
from .finding import INPUT_FAULT_TOOL, SEVERITIES, Finding, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ProfileLike = Union["Profile", Mapping[str, Any], str, Path, None]
_SECTIONS = ("tools", "thresholds", "severity", "pylint")


@cache
def _default_data() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data/default_profile.toml").read_text("utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True)
class Profile:
    """A validated profile. Build it with :func:`load_profile`."""

    data: dict[str, Any]

    @property
    def fingerprint(self) -> str:
        """Stable hash of the settings, part of the report cache key."""
        blob = json.dumps(self.data, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def enabled(self, tool: str) -> bool:
        """Whether ``tool`` runs."""
        return bool(self.data["tools"].get(tool, True))

    def threshold(self, name: str) -> Any:
        """A value of the ``thresholds`` section."""
        return self.data["thresholds"][name]

    def tool_budget(self, tool: str) -> float:
        """Seconds ``tool`` may spend on one source: its ``tool_budget_s`` entry, else
        ``tool_timeout_s``, and never more than ``tool_timeout_s``."""
        ceiling = float(self.threshold("tool_timeout_s"))
        return min(float(self.threshold("tool_budget_s").get(tool, ceiling)), ceiling)

    @property
    def pylint_extra(self) -> tuple[str, ...]:
        """Pylint message ids enabled besides the catalog's."""
        return tuple(self.data["pylint"]["enable"])

    def finding(
        self, tool: str, rule: str, message: str, line: int, cwe: int | None = None,
        severity: str | None = None,
    ) -> Finding | None:
        """Build a finding with catalog defaults and this profile's override.

        ``cwe`` and ``severity`` replace the catalog's when a tool reports its
        own (bandit, the advisory table). Returns None when the rule is off.
        """
        row = lookup(tool, rule)
        overrides = self.data["severity"]
        sev = overrides.get(f"{tool}:{rule}") or overrides.get(f"{tool}:*") or severity
        if sev == "off":
            return None
        if sev not in SEVERITIES:
            sev = row.severity
        return Finding(
            tool, rule, message, max(int(line), 1), cast(Severity, sev), row.characteristic,
            cwe if cwe is not None else row.cwe,
        )


def _validate(data: dict[str, Any]) -> None:
    defaults = _default_data()
    for key in data:
        if key not in _SECTIONS:
            raise ValueError(f"unknown profile section {key!r}")
    for tool in data["tools"]:
        if tool not in defaults["tools"]:
            raise ValueError(f"unknown tool {tool!r}; known: {sorted(defaults['tools'])}")
    for name in data["thresholds"]:
        if name not in defaults["thresholds"]:
            raise ValueError(f"unknown threshold {name!r}")
    for tool, seconds in data["thresholds"]["tool_budget_s"].items():
        if tool not in defaults["tools"] and tool != INPUT_FAULT_TOOL:
            raise ValueError(f"tool_budget_s names unknown tool {tool!r}")
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not seconds > 0:
            raise ValueError(f"tool_budget_s of {tool} must be a positive number, got {seconds!r}")
    for key, sev in data["severity"].items():
        if ":" not in key:
            raise ValueError(f"severity key {key!r} must be 'tool:rule'")
        if sev not in (*SEVERITIES, "off"):
            raise ValueError(f"severity {sev!r} for {key!r} is not one of {SEVERITIES} or 'off'")


def load_profile(profile: ProfileLike = None) -> Profile:
    """Defaults merged with a dict, a TOML file path, or an existing Profile."""
    if isinstance(profile, Profile):
        return profile
    user: Mapping[str, Any]
    if profile is None:
        user = {}
    elif isinstance(profile, (str, Path)):
        user = tomllib.loads(Path(profile).read_text("utf-8"))
    else:
        user = profile
    data = {section: dict(_default_data()[section]) for section in _SECTIONS}
    for section, values in user.items():
        if section not in _SECTIONS:
            raise ValueError(f"unknown profile section {section!r}")
        data[section].update(values)
    budgets = data["thresholds"]["tool_budget_s"]
    if not isinstance(budgets, Mapping):
        raise ValueError(f"tool_budget_s must be a table of seconds per tool, got {budgets!r}")
    # a user's entries are merged over the defaults', tool by tool
    data["thresholds"]["tool_budget_s"] = {**_default_data()["thresholds"]["tool_budget_s"], **budgets}
    data["pylint"]["enable"] = sorted(data["pylint"]["enable"])
    _validate(data)
    return Profile(data)
