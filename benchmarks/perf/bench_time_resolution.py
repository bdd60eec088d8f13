"""Benchmark of the meters' absolute resolution per language: a trivial program measured over and over.

A relative noise floor means nothing near the timer's resolution: a program of
well under a millisecond, after the worker takes its language's start-up cost
off, reports a few hundred microseconds that move by as much from run to run
(the start-up cost itself is measured once per worker, so two workers also
disagree by the noise of their own probes).  Below that resolution a difference
in time is no difference (:data:`rewardkit.rewards.components.TIME_RESOLUTION_S`).

Run ``python benchmarks/perf/bench_time_resolution.py [PROCESSES] [RUNS] [LANGUAGE...]``
(default 3 and 8, every language).  For each language it starts PROCESSES
fresh sandboxes (2 workers, ``repeats=3``, as the efficiency presets measure),
runs RUNS copies of a program that echoes a word (three cases; each copy differs
in a comment, so it compiles afresh as a model's candidates do), and compares
every measurement with every other, the way a reward compares a candidate with
its baseline.  It prints, per language, the median ``time_s`` and the median,
p95 and largest absolute difference between two measurements of time (ms),
memory (KiB) and the integral (KiB·s), as one JSON object a line.
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys

CASES = {"mode": "stdio", "cases": [{"input": f"{word}\n", "output": f"{word}\n"}
                                    for word in ("a", "bb", "ccc")]}
PROGRAMS = {  # language -> (program echoing one word, how the language writes a comment)
    "python": ("print(input())\n", "#"),
    "c": ('#include <stdio.h>\nint main(void){char s[64];\n'
          'if (scanf("%63s", s) == 1) printf("%s\\n", s);\nreturn 0;}\n', "//"),
    "cpp": ('#include <iostream>\n#include <string>\n'
            'int main(){std::string s; std::cin >> s; std::cout << s << "\\n";}\n', "//"),
    "java": ("import java.io.*;\npublic class Main { public static void main(String[] a) throws Exception {\n"
             "System.out.println(new BufferedReader(new InputStreamReader(System.in)).readLine()); } }\n",
             "//"),
    "javascript": ("console.log(require('fs').readFileSync(0, 'utf8').trim());\n", "//"),
    "go": ('package main\nimport "fmt"\nfunc main(){var s string; fmt.Scan(&s); fmt.Println(s)}\n', "//"),
    "rust": ("use std::io::*;\nfn main(){let mut s = String::new(); stdin().read_line(&mut s).unwrap();"
             ' print!("{}", s);}\n', "//"),
}
KEYS = ("time_s", "peak_memory_kb", "integral_kb_s")
SCALE = {"time_s": 1000.0, "peak_memory_kb": 1.0, "integral_kb_s": 1.0}  # time in ms


def measure(language: str, runs: int) -> None:
    """In a fresh process: ``runs`` comment-only copies of the language's program, as JSON on stdout."""
    from rewardkit.sandbox import Sandbox

    code, comment = PROGRAMS[language]
    out = []
    with Sandbox(workers=2, repeats=3) as sandbox:
        jobs = [(f"{code}{comment} copy {n}\n", CASES, language) for n in range(runs + 2)]
        for result in sandbox.run_many(jobs)[2:]:  # the first two warm both workers up
            if result.passed:
                out.append({key: getattr(result, key) for key in KEYS})
            else:
                print(result.status, result.feedback[:300], file=sys.stderr)
    print(json.dumps(out))


def _quantile(values: list[float], fraction: float) -> float:
    return sorted(values)[min(len(values) - 1, int(fraction * len(values)))]


def report(language: str, processes: int, runs: int) -> None:
    """Measure ``language`` in ``processes`` processes; print the differences between measurements."""
    measured = [m for _ in range(processes) for m in json.loads(subprocess.run(
        [sys.executable, __file__, "measure", language, str(runs)], check=True, capture_output=True,
        text=True).stdout)]
    median_ms = 1000 * statistics.median(m["time_s"] for m in measured)
    line: dict[str, object] = {"language": language, "measurements": len(measured),
                               "median_time_ms": round(median_ms, 3)}
    for key in KEYS:
        gaps = [abs(a[key] - b[key]) * SCALE[key] for a, b in itertools.combinations(measured, 2)]
        line[key] = {"median": round(statistics.median(gaps), 3), "p95": round(_quantile(gaps, 0.95), 3),
                     "max": round(max(gaps), 3)}
    print(json.dumps(line), flush=True)


def main(argv: list[str]) -> None:
    """``measure LANGUAGE RUNS`` (one process's share) or ``[PROCESSES] [RUNS] [LANGUAGE...]``."""
    if argv[:1] == ["measure"]:
        measure(argv[1], int(argv[2]))
        return
    numbers = [int(a) for a in argv if a.isdigit()]
    processes, runs = (numbers + [3, 8][len(numbers):])[:2]
    for language in [a for a in argv if not a.isdigit()] or list(PROGRAMS):
        report(language, processes, runs)


if __name__ == "__main__":
    main(sys.argv[1:])
