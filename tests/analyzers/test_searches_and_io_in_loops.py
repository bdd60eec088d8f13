"""Issue 15, analyzer coverage: CISQ Table 1 / ISO 5055 cases the own AST checks must catch.

- CWE-835: a while loop whose condition nothing in the body can change
  (``loop-condition-unchanged``; it predates issue 15, these cases pin it down).
- CWE-1067: an explicit ``for``/``if``/``break`` search of a list inside a loop
  (``linear-search-in-loop``, the same rule as ``x in some_list``).
- CWE-1050: ``f.write(...)`` and other I/O methods on a file or socket inside a loop
  (``io-in-loop``); standard streams stay unflagged, like ``print``.
"""

from __future__ import annotations

import pytest
from analyzer_helpers import rules, run_only

from rewardkit.analyzers.catalog import lookup

BUSY_WAIT = [
    "def f():\n    done = False\n    while not done:\n        pass\n",
    "def f(x):\n    y = 0\n    while x < 10:\n        y += 1\n    return y\n",
    "done = False\nwhile not done:\n    pass\n",
]
NOT_BUSY_WAIT = [
    # the counter advances
    "def f(n):\n    i = 0\n    while i < n:\n        i += 1\n",
    # a module-level flag that a called function may set
    "done = False\nwhile not done:\n    poll()\n",
    # the condition's list is handed to a call that may change it
    "def f(queue):\n    while queue:\n        process(queue)\n",
    # a way out
    "def f(x):\n    while x < 10:\n        break\n",
    # the condition reads an attribute
    "def f(s):\n    while s.running:\n        pass\n",
]

LINEAR_SEARCH = [
    "def f(xs, ys: list[int]):\n    c = 0\n    for x in xs:\n        for y in ys:\n"
    "            if y == x:\n                c += 1\n                break\n    return c\n",
    "def f(xs):\n    seen = sorted(xs)\n    hits = 0\n    for x in xs:\n        found = False\n"
    "        for y in seen:\n            if x == y:\n                found = True\n"
    "                break\n        if found:\n            hits += 1\n    return hits\n",
]
NOT_LINEAR_SEARCH = [
    # a dict lookup that breaks the loop: no inner search
    "def f(xs, table):\n    for x in xs:\n        if table[x] == 0:\n            break\n",
    # iterating a dict's keys: not a list (``x in d`` is not flagged either)
    "def f(xs):\n    d = {1: 2}\n    for x in xs:\n        for k in d:\n            if k == x:\n"
    "                break\n",
    # a single loop with a search is the search itself, not one repeated
    "def f(x, ys: list[int]):\n    for y in ys:\n        if y == x:\n            return True\n"
    "    return False\n",
    # the inner loop compares two of its own values: not a membership test
    "def f(xs, ys: list[int]):\n    for x in xs:\n        for y in ys:\n"
    "            if y == y * 2:\n                break\n",
]

# The CISQ paper's Appendix A example, and the same with a handle from ``f = open(...)``.
FILE_IO = [
    "def save(lines):\n    with open('out.txt', 'w') as f:\n        for line in lines:\n"
    "            f.write(line)\n",
    "f = open('out.txt', 'w')\nfor line in lines:\n    f.write(line)\nf.close()\n",
    "import socket\ndef send_all(chunks):\n    with socket.create_connection(('h', 1)) as s:\n"
    "        for c in chunks:\n            s.sendall(c)\n",
    "def load(n):\n    with open('in.txt') as f:\n        while n:\n            n -= 1\n"
    "            f.readline()\n",
]
NOT_FILE_IO = [
    # a write outside the loop
    "def save(lines):\n    with open('out.txt', 'w') as f:\n        f.write(''.join(lines))\n",
    # standard streams, like print(): competitive-programming answers write in loops
    "import sys\nfor x in xs:\n    sys.stdout.write(str(x))\n",
    "for x in xs:\n    print(x)\n",
    "f = open(0)\nfor _ in range(3):\n    f.readline()\n",
    # write on something that is not a file opened here
    "def f(buf, xs):\n    for x in xs:\n        buf.write(x)\n",
]


@pytest.mark.parametrize("code", BUSY_WAIT)
def test_busy_wait_is_flagged(code: str) -> None:
    assert "loop-condition-unchanged" in rules(run_only("rk-reliability", code), "rk-reliability")


@pytest.mark.parametrize("code", NOT_BUSY_WAIT)
def test_loop_that_can_end_is_not_flagged(code: str) -> None:
    found = rules(run_only("rk-reliability", code), "rk-reliability")
    assert not found & {"loop-condition-unchanged", "infinite-loop"}


PERF_RULES = [("linear-search-in-loop", LINEAR_SEARCH, NOT_LINEAR_SEARCH),
              ("io-in-loop", FILE_IO, NOT_FILE_IO)]


@pytest.mark.parametrize(("rule", "code", "flagged"),
                         [(rule, code, True) for rule, hits, _ in PERF_RULES for code in hits]
                         + [(rule, code, False) for rule, _, misses in PERF_RULES for code in misses])
def test_perf_rule_flags_its_pattern_and_nothing_else(rule: str, code: str, flagged: bool) -> None:
    # flagged: explicit for/if/break searches, file and socket I/O inside loops; not flagged: other
    # for/if/break loops, I/O outside loops and on the standard streams
    assert (rule in rules(run_only("rk-perf", code), "rk-perf")) is flagged


def test_appendix_a_finding_carries_cwe_1050_at_the_write() -> None:
    found = [f for f in run_only("rk-perf", FILE_IO[0]).findings if f.rule == "io-in-loop"]
    assert [(f.line, f.cwe) for f in found] == [(4, 1050)]
    assert lookup("rk-perf", "io-in-loop").cwe == 1050


def test_file_opened_in_the_loop_is_one_finding_at_the_open() -> None:
    code = "def load(paths):\n    for p in paths:\n        with open(p) as f:\n            f.read()\n"
    found = [f for f in run_only("rk-perf", code).findings if f.rule == "io-in-loop"]
    assert [f.line for f in found] == [3]


def test_write_per_line_in_an_inner_loop_is_flagged_besides_the_open() -> None:
    code = ("def save(groups):\n    for name, lines in groups:\n        with open(name, 'w') as f:\n"
            "            for line in lines:\n                f.write(line)\n")
    found = [f for f in run_only("rk-perf", code).findings if f.rule == "io-in-loop"]
    assert sorted(f.line for f in found) == [3, 5]


def test_explicit_search_carries_cwe_1067() -> None:
    found = [f for f in run_only("rk-perf", LINEAR_SEARCH[0]).findings
             if f.rule == "linear-search-in-loop"]
    assert [(f.line, f.cwe) for f in found] == [(4, 1067)]
