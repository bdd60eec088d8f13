"""A completion's quality comes from tools for its language: Python's analyzers never judge C++."""

from __future__ import annotations

import pytest

from rewardkit import rewards
from rewardkit.analyzers import analyze_many
from rewardkit.rewards import ConfigError, Engine

# C++ for a C++ compiler, a docstring and a clean print for Python's analyzers
POLYGLOT = '''\
#if 0
"""
#endif
#include <cstdio>
int main() { char buf[8]; gets(buf); return system(buf); }
#if 0
"""
print("ok")
#endif
'''


def _quality(completion: str, language: str) -> list[float | None]:
    engine = Engine(analyze=analyze_many)
    return rewards.quality(engine=engine)(completions=[completion], language=[language])


def test_a_cpp_row_is_refused_with_its_language_named() -> None:
    with pytest.raises(ConfigError, match="'cpp'"):
        _quality(f"```cpp\n{POLYGLOT}```", "cpp")


def test_a_cpp_block_in_a_python_row_is_not_judged_as_python() -> None:
    assert _quality(f"```cpp\n{POLYGLOT}```", "python") == [0.0]


def test_a_python_row_still_scores() -> None:
    [score] = _quality('```python\nprint("ok")\n```', "python")
    assert score is not None and score > 0
