"""Reading a dataset column's value, which datasets keep as data or as JSON text."""

from __future__ import annotations

import json
from typing import Any


def json_or_text(value: Any) -> Any:
    """A column value, decoded when it is JSON text (a string that is not JSON stays a string)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
