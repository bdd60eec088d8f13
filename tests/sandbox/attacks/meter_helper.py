"""Runs instruction-meter jobs in a process of its own, for ``test_instruction_meter``.

Reads ``{"codes": [[name, code], ...], "suite": {...}, "limits": {...}}`` as
JSON on stdin, runs each code in one ``Sandbox(workers=1,
meter="instructions")`` and prints one JSON line per run as soon as it ends:
the result's ``to_dict()`` plus ``name`` and ``elapsed_s``.  The test watches
this process and its sandbox worker from outside, so that an attack that
hangs or balloons the worker can be stopped and reported instead of taking
the test run (or the machine) down with it.
"""

from __future__ import annotations

import json
import sys
import time

from rewardkit.sandbox import Limits, Sandbox, TestSuite


def main() -> None:
    """Run the jobs read from stdin; one JSON line per result on stdout."""
    job = json.load(sys.stdin)
    suite = TestSuite.from_dict(job["suite"])
    with Sandbox(workers=1, meter="instructions", limits=Limits(**job["limits"])) as sandbox:
        for name, code in job["codes"]:
            started = time.monotonic()
            result = sandbox.run(code, suite)
            line = {**result.to_dict(), "name": name, "elapsed_s": time.monotonic() - started}
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
