"""The three test modes, TreeNode/ListNode conversion, evaluators and feedback."""

from __future__ import annotations

import pytest

from rewardkit.sandbox import ExecutionResult, Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime import compile_plain
from rewardkit.sandbox.runtime.harness import mentions_nodes

ADD_STDIO = TestSuite.from_dict({"mode": "stdio", "cases": [
    {"input": "1 2\n", "output": "3\n"},
    {"input": "10 -4\n", "output": "6\n"},
    {"input": "0 0\n", "output": "0\n"},
]})
ADD_PY = "a, b = map(int, input().split())\nprint(a + b)\n"


def test_stdio_pass_and_metrics(sandbox: Sandbox) -> None:
    result = sandbox.run(ADD_PY, ADD_STDIO)
    assert result.status == Status.PASSED and result.passed
    assert (result.tests_passed, result.tests_total, result.pass_rate) == (3, 3, 1.0)
    assert result.time_s > 0 and result.wall_s > 0
    assert result.peak_memory_kb > 100 and result.integral_kb_s > 0  # KiB the run added
    assert ExecutionResult.from_dict(result.to_dict()) == result


def test_stdio_wrong_answer_counts_and_explains(sandbox: Sandbox) -> None:
    result = sandbox.run("a, b = map(int, input().split())\nprint(a + b if a else 99)\n", ADD_STDIO)
    assert result.status == Status.WRONG_ANSWER
    assert (result.tests_passed, result.tests_total) == (2, 3)
    assert result.failed_case == 2
    assert "Expected:\n0" in result.feedback and "Got:\n99" in result.feedback


def test_runtime_error_feedback_has_the_exception(sandbox: Sandbox) -> None:
    result = sandbox.run("raise ValueError('boom')\n", ADD_STDIO)
    assert result.status == Status.RUNTIME_ERROR
    assert "ValueError: boom" in result.feedback


def test_syntax_error_is_compile_error(sandbox: Sandbox) -> None:
    result = sandbox.run("def f(:\n", ADD_STDIO)
    assert result.status == Status.COMPILE_ERROR
    assert "SyntaxError" in result.feedback


def test_stdio_evaluator_accepts_any_valid_answer(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({
        "mode": "stdio",
        "cases": [{"input": "4\n", "output": "2 2\n"}],
        "evaluator": "def evaluate(expected, actual):\n"
                     "    a, b = map(int, actual.split())\n"
                     "    return a + b == sum(map(int, expected.split()))\n",
    })
    assert sandbox.run("print(1, 3)", suite).passed
    assert sandbox.run("print(1, 2)", suite).status == Status.WRONG_ANSWER
    assert sandbox.run("print('junk')", suite).status == Status.WRONG_ANSWER


TWO_SUM = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.twoSum", "cases": [
    {"args": [[2, 7, 11, 15], 9], "expected": [0, 1]},
    {"args": [[3, 2, 4], 6], "expected": [1, 2]},
]})


def test_call_mode_leetcode_class(sandbox: Sandbox) -> None:
    code = (
        "class Solution:\n"
        "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
        "        seen = {}\n"
        "        for i, x in enumerate(nums):\n"
        "            if target - x in seen:\n"
        "                return [seen[target - x], i]\n"
        "            seen[x] = i\n"
    )
    assert sandbox.run(code, TWO_SUM).passed
    wrong = sandbox.run("class Solution:\n    def twoSum(self, nums, target):\n        return (0, 1)\n",
                        TWO_SUM)
    assert wrong.status == Status.WRONG_ANSWER and wrong.tests_passed == 1
    assert "returned [0, 1]" in wrong.feedback or "returned (0, 1)" in wrong.feedback


def test_a_bare_entry_point_resolves_to_a_method_of_solution(sandbox: Sandbox) -> None:
    """``fn_name``/``func_name`` name the method of LeetCode's ``class Solution`` as verl and
    LiveCodeBench call it; a top-level function of that name still answers when there is none."""
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "add",
                                 "cases": [{"args": [1, 2], "expected": 3}, {"args": [2, 2], "expected": 4}]})
    method = "class Solution:\n    def add(self, a: int, b: int) -> int:\n        return a + b\n"
    assert sandbox.run(method, suite).passed
    assert sandbox.run("def add(a, b):\n    return a + b\n", suite).passed
    wrong = sandbox.run("class Solution:\n    def add(self, a, b):\n        return a - b\n", suite)
    assert wrong.status == Status.WRONG_ANSWER and wrong.tests_passed == 0
    missing = sandbox.run("class Solution:\n    def other(self, a, b):\n        return a + b\n", suite)
    assert missing.status == Status.RUNTIME_ERROR and "method of Solution" in missing.feedback


def test_call_mode_prelude_keeps_builtin_pow_and_has_sys_and_copy(sandbox: Sandbox) -> None:
    """LeetCode-style code uses pow(b, e, m), sys and copy without importing them."""
    suite = {"mode": "call", "entry_point": "Solution.modPow",
             "cases": [{"args": [3, 200, 1_000_000_007], "expected": pow(3, 200, 1_000_000_007)}]}
    code = ("class Solution:\n"
            "    def modPow(self, base: int, exp: int, mod: int) -> int:\n"
            "        assert sys.maxsize and copy.deepcopy([1]) == [1] and sqrt(4) == 2\n"
            "        return pow(base, exp, mod)\n")
    result = sandbox.run(code, suite)
    assert result.passed, result.feedback


def test_call_mode_tree_and_list_nodes(sandbox: Sandbox) -> None:
    depth = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.maxDepth", "cases": [
        {"args": [[3, 9, 20, None, None, 15, 7]], "expected": 3}, {"args": [[]], "expected": 0}]})
    code = ("class Solution:\n    def maxDepth(self, root: Optional[TreeNode]) -> int:\n"
            "        return 0 if not root else 1 + max(self.maxDepth(root.left), "
            "self.maxDepth(root.right))\n")
    assert sandbox.run(code, depth).passed
    invert = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.invertTree", "cases": [
        {"args": [[4, 2, 7, 1, 3, 6, 9]], "expected": [4, 7, 2, 9, 6, 3, 1]}]})
    code = ("class Solution:\n    def invertTree(self, root: Optional[TreeNode]) -> Optional[TreeNode]:\n"
            "        if root:\n            root.left, root.right = "
            "self.invertTree(root.right), self.invertTree(root.left)\n        return root\n")
    assert sandbox.run(code, invert).passed
    reverse = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.reverseList", "cases": [
        {"args": [[1, 2, 3]], "expected": [3, 2, 1]}]})
    code = ("class Solution:\n    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:\n"
            "        prev = None\n        while head:\n"
            "            head.next, prev, head = prev, head, head.next\n        return prev\n")
    assert sandbox.run(code, reverse).passed


DEPTH = ("    def maxDepth(self, root: ANNOTATION) -> int:\n"
         "        return 0 if not root else 1 + max(self.maxDepth(root.left), self.maxDepth(root.right))\n")


@pytest.mark.parametrize("annotation", ["Optional[TreeNode]", "'Optional[TreeNode]'", "'TreeNode'",
                                        "future", "helper"])
def test_a_tree_parameter_is_found_however_it_is_annotated(sandbox: Sandbox, annotation: str) -> None:
    """A string annotation, every annotation under the solution's own ``from __future__ import
    annotations``, and a method of a class nested in a helper function are read too."""
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.maxDepth", "cases": [
        {"args": [[3, 9, 20, None, None, 15, 7]], "expected": 3}, {"args": [[]], "expected": 0}]})
    solution = "class Solution:\n" + DEPTH.replace("ANNOTATION", annotation)
    if annotation == "future":
        solution = "from __future__ import annotations\n" + solution.replace("future", "Optional[TreeNode]")
    if annotation == "helper":
        nested = "".join(f"    {line}\n" for line in solution.replace("helper", "TreeNode").splitlines())
        solution = f"def make():\n{nested}    return Solution\nSolution = make()\n"
    result = sandbox.run(solution, suite)
    assert result.passed, result.feedback


def test_a_node_name_kept_only_in_a_folded_tuple_is_seen() -> None:
    """Python 3.12 drops string constants that only a folded tuple uses (a function's string
    annotations are folded so); the name is found there too."""
    assert mentions_nodes(compile_plain('x = ("Optional[TreeNode]",)', "s.py"))
    assert not mentions_nodes(compile_plain('x = ("Optional[Tree]",)', "s.py"))


def test_call_mode_in_place_argument(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.sortColors", "cases": [
        {"args": [[2, 0, 1]], "expected": [0, 1, 2], "return_arg": 0}]})
    code = "class Solution:\n    def sortColors(self, nums: List[int]) -> None:\n        nums.sort()\n"
    assert sandbox.run(code, suite).passed


ADD_SCRIPT = TestSuite.from_dict({"mode": "script", "entry_point": "add", "check": (
    "def check(candidate):\n"
    "    assert candidate(1, 2) == 3\n"
    "    assert candidate(-1, 1) == 0\n"
    "    assert helper() == 'ok'\n"),
    "definitions": "def helper():\n    return 'ok'\n"})  # the problem's own, seen by the check


def test_script_mode_humaneval_style(sandbox: Sandbox) -> None:
    good = "def add(a, b):\n    return a + b\n"
    assert sandbox.run(good, ADD_SCRIPT).passed
    bad = "def add(a, b):\n    return a - b\n"
    assert sandbox.run(bad, ADD_SCRIPT).status == Status.WRONG_ANSWER
    missing = sandbox.run("def plus(a, b):\n    return a + b\n", ADD_SCRIPT)
    assert missing.status == Status.RUNTIME_ERROR and "no function 'add'" in missing.feedback


def test_script_mode_keeps_tuples(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "script", "entry_point": "pair", "check":
                                 "def check(candidate):\n    assert candidate() == (1, 2)\n"})
    assert sandbox.run("def pair():\n    return (1, 2)\n", suite).passed
    assert not sandbox.run("def pair():\n    return [1, 2]\n", suite).passed


def test_non_python_needs_stdio(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="Python only"):
        sandbox.run("int main(){}", TWO_SUM, language="c")
    with pytest.raises(ValueError, match="unknown language"):
        sandbox.run("x", ADD_STDIO, language="cobol")


def test_run_many_keeps_order(sandbox: Sandbox) -> None:
    jobs = [(ADD_PY if i % 3 else "print(0)", ADD_STDIO) for i in range(12)]
    results = sandbox.run_many(jobs)
    assert [r.passed for r in results] == [bool(i % 3) for i in range(12)]


def test_repeats_report_medians_and_spread() -> None:
    with Sandbox(workers=1, repeats=3) as sb:
        result = sb.run("s = sum(i * i for i in range(200000))\nprint(1)", {
            "mode": "stdio", "cases": [{"input": "", "output": "1\n"}]})
    assert result.passed and result.repeats == 3
    assert set(result.spread) == {"time_s", "wall_s", "peak_memory_kb", "integral_kb_s"}
    assert all(v >= 0 for v in result.spread.values())


def test_run_many_takes_repeats_as_run_does() -> None:
    with Sandbox(workers=1, repeats=3) as sb:
        jobs = [(ADD_PY, ADD_STDIO)] * 2
        assert [r.repeats for r in sb.run_many(jobs)] == [3, 3]
        assert [r.repeats for r in sb.run_many(jobs, repeats=1)] == [1, 1]


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="time_s"):
        Limits(time_s=0)
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        Sandbox(backend="cloud")
    with pytest.raises(ValueError, match="meter"):
        Sandbox(meter="vibes")
