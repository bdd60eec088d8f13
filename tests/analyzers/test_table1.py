"""Every Table 1 row of the CISQ paper: a positive and a negative example per check."""

from __future__ import annotations

import pytest
from analyzer_helpers import rules, run_only

from rewardkit.analyzers.catalog import lookup

MANY_BRANCHES = "def f(x):\n" + "".join(
    f"    if x == {i}:\n        return {i}\n" for i in range(12)
) + "    return -1\n"

CASES: list[tuple[str, str, str, str]] = [
    # (tool, rule, positive, negative)
    # -- maintainability: complexity (radon, xenon grades)
    ("radon", "CC-C", MANY_BRANCHES, "def f(x):\n    return x + 1\n"),
    # -- maintainability: dead code (vulture)
    ("vulture", "unused-import", "import os\n", "import os\nprint(os.sep)\n"),
    ("vulture", "unreachable-code", "def f():\n    return 1\n    print(2)\n",
     "def f():\n    print(2)\n    return 1\nf()\n"),
    ("vulture", "unused-function", "def _helper():\n    return 1\n",  # a public one is the interface
     "def _helper():\n    return 1\nprint(_helper())\n"),
    # -- maintainability: structure (pylint)
    ("pylint", "R0913", "def f(a, b, c, d, e, g):\n    return a\n",
     "def f(a, b):\n    return a\n"),
    ("pylint", "R0902", "class C:\n    def __init__(self):\n"
     + "".join(f"        self.a{i} = {i}\n" for i in range(9)),
     "class C:\n    def __init__(self):\n        self.a = 1\n"),
    ("pylint", "R0912", "def f(x):\n" + "".join(f"    if x == {i}:\n        x += 1\n" for i in range(14)),
     "def f(x):\n    if x:\n        return 1\n    return 2\n"),
    ("pylint", "R0911", MANY_BRANCHES, "def f(x):\n    return x\n"),
    ("pylint", "C0302", "x = 1\n" * 1001, "x = 1\n" * 10),
    # -- maintainability: style and documentation (pylint)
    ("pylint", "C0116", "def f():\n    return 1\n", 'def f():\n    """Doc."""\n    return 1\n'),
    ("pylint", "C0103", "def BadName():\n    return 1\n", "def good_name():\n    return 1\n"),
    # -- security (bandit): injection, unsafe data, cryptography
    ("bandit", "B602", "import subprocess\nsubprocess.call('ls ' + x, shell=True)\n",
     "import subprocess\nsubprocess.call(['ls', x])\n"),
    ("bandit", "B605", "import os\nos.system('rm ' + x)\n", "import os\nprint(os.sep)\n"),
    ("bandit", "B301", "import pickle\npickle.loads(data)\n", "import json\njson.loads(data)\n"),
    ("bandit", "B506", "import yaml\nyaml.load(s)\n", "import yaml\nyaml.safe_load(s)\n"),
    ("bandit", "B324", "import hashlib\nhashlib.md5(b'x')\n", "import hashlib\nhashlib.sha256(b'x')\n"),
    ("bandit", "B311", "import random\ntoken = random.random()\n",
     "import secrets\ntoken = secrets.token_hex()\n"),
    ("bandit", "B105", "password = 'hunter2'\n", "password = input()\n"),
    # -- security: dependencies (advisory table)
    ("rk-deps", "vulnerable-import", "import ecdsa\n", "import hashlib\n"),
    ("rk-deps", "obsolete-import", "from distutils.core import setup\n", "import importlib\n"),
    # -- performance (own AST checks)
    ("rk-perf", "string-concat-in-loop", "s = ''\nfor x in xs:\n    s += str(x)\n",
     "total = 0\nfor x in xs:\n    total += x\n"),
    ("rk-perf", "io-in-loop", "for p in paths:\n    data = open(p).read()\n",
     "data = open(p).read()\nfor line in data:\n    print(line)\n"),
    ("rk-perf", "expensive-call-in-loop", "import re\nfor s in xs:\n    re.compile('a+').match(s)\n",
     "import re\npat = re.compile('a+')\nfor s in xs:\n    pat.match(s)\n"),
    ("rk-perf", "growing-copy-in-loop", "out = []\nfor x in xs:\n    out = out + [x]\n",
     "out = []\nfor x in xs:\n    out.append(x)\n"),
    ("rk-perf", "large-literal", f"TABLE = {list(range(60))}\n", f"TABLE = {list(range(10))}\n"),
    ("rk-perf", "deeply-nested-literal", "X = [[[[[[1]]]]]]\n", "X = [[1], [2]]\n"),
    ("rk-perf", "too-many-class-attributes",
     "class C:\n" + "".join(f"    a{i} = {i}\n" for i in range(12)), "class C:\n    a = 1\n"),
    ("rk-perf", "linear-search-in-loop",
     "seen = [1, 2]\nfor x in xs:\n    if x in seen:\n        print(x)\n",
     "seen = {1, 2}\nfor x in xs:\n    if x in seen:\n        print(x)\n"),
    ("rk-perf", "linear-search-in-loop",
     "def f(xs):\n    order = sorted(xs)\n    return [order.index(x) for x in xs]\n",
     "def f(xs):\n    rank = {x: i for i, x in enumerate(sorted(xs))}\n    return [rank[x] for x in xs]\n"),
    # -- reliability: exception handling
    ("rk-reliability", "bare-except", "try:\n    f()\nexcept:\n    log()\n",
     "try:\n    f()\nexcept ValueError:\n    log()\n"),
    ("rk-reliability", "broad-except", "try:\n    f()\nexcept Exception:\n    log()\n",
     "try:\n    f()\nexcept Exception:\n    log()\n    raise\n"),
    ("rk-reliability", "empty-except", "try:\n    f()\nexcept ValueError:\n    pass\n",
     "try:\n    f()\nexcept ValueError:\n    log()\n"),
    ("rk-reliability", "resource-leak", "def f(p):\n    fh = open(p)\n    return fh.read()\n",
     "def f(p):\n    with open(p) as fh:\n        return fh.read()\n"),
    # -- reliability: concurrency
    ("rk-reliability", "lock-not-released",
     "import threading\nlock = threading.Lock()\ndef f():\n    lock.acquire()\n    work()\n",
     "import threading\nlock = threading.Lock()\ndef f():\n    lock.acquire()\n"
     "    try:\n        work()\n    finally:\n        lock.release()\n"),
    ("rk-reliability", "lock-order-inversion",
     "def f():\n    with lock_a:\n        with lock_b:\n            pass\n"
     "def g():\n    with lock_b:\n        with lock_a:\n            pass\n",
     "def f():\n    with lock_a:\n        with lock_b:\n            pass\n"
     "def g():\n    with lock_a, lock_b:\n        pass\n"),
    # -- reliability: infinite loops
    ("rk-reliability", "infinite-loop", "while True:\n    poll()\n",
     "while True:\n    if poll():\n        break\n"),
    ("rk-reliability", "infinite-loop", "while True:\n    continue\n    break\n",
     "def f():\n    while True:\n        yield 1\n"),
    ("rk-reliability", "loop-condition-unchanged",
     "def f(n):\n    i = 0\n    while i < n:\n        print(i)\n",
     "def f(n):\n    i = 0\n    while i < n:\n        print(i)\n        i += 1\n"),
    ("rk-reliability", "loop-variable-modified", "for i in range(9):\n    i += 2\n    print(i)\n",
     "for i in range(9):\n    j = i + 2\n    print(j)\n"),
    ("rk-reliability", "iterable-modified-in-loop", "for x in xs:\n    if x < 0:\n        xs.remove(x)\n",
     "for x in list(xs):\n    if x < 0:\n        xs.remove(x)\n"),
    # -- reliability: type safety (mypy)
    ("mypy", "return-value", "def f() -> int:\n    return 'x'\n", "def f() -> int:\n    return 1\n"),
    ("mypy", "arg-type", "def f(x: int) -> int:\n    return x\nf('a')\n",
     "def f(x: int) -> int:\n    return x\nf(1)\n"),
    ("mypy", "no-untyped-def", "def f(x):\n    return x\n", "def f(x: int) -> int:\n    return x\n"),
]


@pytest.mark.parametrize(("tool", "rule", "positive", "negative"), CASES,
                         ids=[f"{c[0]}:{c[1]}:{i}" for i, c in enumerate(CASES)])
def test_rule_fires_on_positive_only(tool: str, rule: str, positive: str, negative: str) -> None:
    assert rule in rules(run_only(tool, positive), tool)
    assert rule not in rules(run_only(tool, negative), tool)


@pytest.mark.parametrize(("tool", "rule", "positive"),
                         [(t, r, p) for t, r, p, _ in CASES if t != "bandit"])
def test_finding_carries_catalog_defaults(tool: str, rule: str, positive: str) -> None:
    found = next(f for f in run_only(tool, positive).findings if f.rule == rule)
    row = lookup(tool, rule)
    assert found.characteristic == row.characteristic
    if tool != "rk-deps":  # the advisory table sets these
        assert (found.severity, found.cwe) == (row.severity, row.cwe)
    assert found.line >= 1


def test_bandit_cwe_and_severity_come_from_bandit() -> None:
    report = run_only("bandit", "import subprocess\nsubprocess.call('ls ' + x, shell=True)\n")
    b602 = next(f for f in report.findings if f.rule == "B602")
    assert (b602.cwe, b602.severity, b602.characteristic) == (78, "critical", "security")
    weak = next(f for f in run_only("bandit", "password = 'hunter2'\n").findings)
    assert (weak.cwe, weak.severity) == (259, "low")


def test_complexity_grades_escalate() -> None:
    branches = "def f(x):\n" + "".join(f"    if x == {i}:\n        x += 1\n" for i in range(25))
    found = {f.rule: f.severity for f in run_only("radon", branches).findings}
    assert found.get("CC-D") == "medium"
    relaxed = run_only("radon", branches, cc_max_grade="D")
    assert not [f for f in relaxed.findings if f.rule.startswith("CC-")]


def test_advisory_severity_and_cwe_come_from_table() -> None:
    found = run_only("rk-deps", "from PyPDF2 import PdfReader\n").findings
    assert [(f.rule, f.cwe, f.severity) for f in found] == [("vulnerable-import", 835, "medium")]
    assert "CVE-2023-36464" in found[0].message
