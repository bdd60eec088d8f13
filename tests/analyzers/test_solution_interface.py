"""A solution's interface (what the harness calls) is not dead code; what it never calls still is."""

from __future__ import annotations

import ast

from analyzer_helpers import rules, run_only

from rewardkit.analyzers.tools.vulture_tool import interface_lines

LEETCODE = '''\
class Solution:
    def twoSum(self, nums: list[int], target: int) -> list[int]:
        def doubled(x: int) -> int:
            return 2 * x

        seen: dict[int, int] = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
        return []

    def _unused_private(self) -> None:
        pass
'''
FUNCTIONS = '''\
import functools


def solve(n: int) -> int:
    return _helper(n)


def _helper(n: int) -> int:
    return n + 1


def _forgotten(n: int) -> int:
    return n - 1


@functools.cache
def entry(n: int) -> int:
    return n
'''


def unused(code: str, **thresholds: object) -> set[str]:
    report = run_only("vulture", code, **thresholds)
    return {f.message.split(" (")[0] for f in report.findings if f.tool == "vulture"}


def test_a_leetcode_answer_has_no_unused_interface() -> None:
    assert unused(LEETCODE) == {"unused function 'doubled'", "unused method '_unused_private'"}


def test_top_level_functions_are_the_interface_private_helpers_are_not() -> None:
    assert unused(FUNCTIONS) == {"unused function '_forgotten'"}


def test_the_profile_can_report_the_interface_as_vulture_does() -> None:
    found = unused(LEETCODE, vulture_report_interface=True)
    assert {"unused class 'Solution'", "unused method 'twoSum'"} <= found
    assert "unused function 'entry'" in unused(FUNCTIONS, vulture_report_interface=True)
    assert rules(run_only("vulture", FUNCTIONS), "vulture") == {"unused-function"}


def test_interface_lines_cover_decorators() -> None:
    lines = interface_lines(ast.parse(FUNCTIONS))
    assert {4, 16, 17} <= lines and 8 not in lines and 12 not in lines
