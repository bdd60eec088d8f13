"""Forged pytest verdicts: a wrong solution of a ``pytest`` suite that tries to be read as passing.

pytest's own verdicts (its terminal summary, its exit code) are the solution's to write: it
runs in pytest's process.  ``pytest`` suites take each test's verdict from the runner's plugin
on a descriptor of its own, each frame bearing a nonce read before the solution is imported
(:mod:`rewardkit.sandbox.runtime.pytest_runner`), and a test passes only when the plugin's hook
wrappers saw its function run and return.  Each attack below is a wrong answer (``add``
returns 0) that passes pytest's exit code, or its summary, or both; each must score below 1
on every backend.
"""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

from . import BACKENDS

QUICK = Limits(time_s=10, memory_mb=512)
SUITE = TestSuite.from_dict({"mode": "pytest", "check": (
    "from solution import add\n\n\ndef test_small():\n    assert add(1, 2) == 3\n\n\n"
    "def test_large():\n    assert add(40, 2) == 42\n")})
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return 0\n"
FRAME = ("import json, os\n"
         "def _frame(body):\n"
         "    data = json.dumps(body).encode()\n"
         "    os.write(4, len(data).to_bytes(4, 'big') + data)\n")

ATTACKS = {
    # pytest's summary line on stdout, then a clean exit before any test runs
    "fake summary and os._exit(0) at import":
        WRONG + "print('2 passed in 0.01s')\nimport os\nos._exit(0)\n",
    # the runner's frames, written on its verdict descriptor without the nonce
    "frames without the nonce":
        WRONG + FRAME + "names = ['test_solution.py::test_small', 'test_solution.py::test_large']\n"
        "_frame({'collected': names})\n"
        "for name in names:\n"
        "    _frame({'test': name, 'result': 'passed'})\n"
        "_frame({'done': 2})\nos._exit(0)\n",
    # SystemExit(0) from inside the test: pytest would exit 0 if it let it through
    "sys.exit(0) in a test": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    # every phase of every test reported as passed by a patched _pytest.runner (pytest exits 0)
    "patched _pytest.runner":
        WRONG + "import _pytest.runner as runner\nfrom _pytest.reports import TestReport\n"
        "def call_and_report(item, when, log=True, **kwargs):\n"
        "    report = TestReport(item.nodeid, item.location, {}, 'passed', None, when, [])\n"
        "    if log:\n        item.ihook.pytest_runtest_logreport(report=report)\n"
        "    return report\n"
        "runner.call_and_report = call_and_report\n",
    # the builtins the runner's plugin would call to decide a verdict, replaced
    "builtins.all patched": WRONG + "import builtins\nbuiltins.all = lambda iterable: True\n",
    # json's encoder, which would write the runner's frames, rewriting failures as passes
    "json encoder replaced":
        WRONG + "import json\nclass Forge(json.JSONEncoder):\n    def encode(self, o):\n"
        "        if isinstance(o, dict) and o.get('result') == 'failed':\n"
        "            o = {'test': o['test'], 'result': 'passed'}\n"
        "        return super().encode(o)\n"
        "json.JSONEncoder = Forge\n",
    # every test skipped from the solution's own code (pytest exits 0)
    "pytest.skip in the solution": "import pytest\ndef add(a, b):\n    pytest.skip('later')\n",
    # no test collected: a hook that deselects them all (pytest exits 5, and 0 with -p no:...)
    "tests deselected":
        WRONG + "import gc\nfrom _pytest.config import Config\n"
        "class Drop:\n    def pytest_collection_modifyitems(self, items):\n        items.clear()\n"
        "for obj in gc.get_objects():\n"
        "    if isinstance(obj, Config):\n        obj.pluginmanager.register(Drop())\n",
}


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_forged_pytest_verdicts_score_below_one(backend_sandbox: Sandbox) -> None:
    right = backend_sandbox.run(RIGHT, SUITE, limits=QUICK)
    assert right.status == Status.PASSED and right.pass_rate == 1.0, right.feedback
    results = backend_sandbox.run_many([(code, SUITE) for code in ATTACKS.values()], limits=QUICK)
    scored = {name: (r.status, r.pass_rate) for name, r in zip(ATTACKS, results, strict=True)}
    assert all(status not in (Status.PASSED, Status.SANDBOX_ERROR) and rate < 1.0
               for status, rate in scored.values()), scored
