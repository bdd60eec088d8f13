"""Hostile code gets a clean verdict, harms nothing and leaves nothing behind (SPEC §6)."""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import leftovers
import psutil
import pytest
from killer import children_with

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

ONE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "done\n"}]})
QUICK = Limits(time_s=2, memory_mb=512, output_kb=1024)


@pytest.fixture
def clean_host() -> Iterator[None]:
    """After the test, nothing our sandbox could have left: no process of a sandbox uid, no
    file of one in /tmp, /var/tmp or /dev/shm, no orphaned work root (see :mod:`leftovers`).
    Files that anything else on the machine creates meanwhile are not looked at."""
    before = leftovers.Snapshot.take()
    yield
    leftovers.assert_clean(before)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("while True:\n    pass\n", Status.TIMEOUT),
        ("import signal, time\nfor s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT):\n"
         "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n", Status.TIMEOUT),
        ("x = bytearray(4 * 1024 ** 3)\n", Status.MEMORY_EXCEEDED),
        ("chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 1024 ** 2))\n",
         Status.MEMORY_EXCEEDED),
        ("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", Status.OUTPUT_EXCEEDED),
        ("def f(n):\n    return f(n + 1)\nf(0)\n", Status.RUNTIME_ERROR),
        ("import ctypes\nctypes.string_at(0)\n", Status.RUNTIME_ERROR),
    ],
    ids=["infinite-loop", "ignores-signals", "memory-bomb", "memory-growth", "huge-output",
         "deep-recursion", "segfault"],
)
def test_runaway_code_gets_its_verdict(sandbox: Sandbox, clean_host: None, code: str,
                                       expected: Status) -> None:
    result = sandbox.run(code, ONE, limits=QUICK)
    assert result.status == expected, result.feedback


def test_fork_bomb_is_contained(sandbox: Sandbox, clean_host: None) -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = sandbox.run(code, ONE, limits=QUICK)
    assert result.status in (Status.TIMEOUT, Status.RUNTIME_ERROR)
    assert sandbox.run("print('done')", ONE).passed  # the machine still works


def test_daemon_does_not_outlive_the_run(sandbox: Sandbox, clean_host: None) -> None:
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        while True:\n"
        "            time.sleep(0.05)\n"
        "    os._exit(0)\n"
        "print('done')\n"
    )
    assert sandbox.run(code, ONE, limits=QUICK).passed


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A directory on the host, outside any sandbox work dir, with a file in it."""
    base = Path("/srv") if os.access("/srv", os.W_OK) else Path.cwd()
    target = base / f"rewardkit-hostile-{os.getpid()}"
    target.mkdir()
    (target / "keep.txt").write_text("precious")
    yield target
    for child in target.iterdir():
        child.unlink()
    target.rmdir()


def test_cannot_write_or_delete_outside_the_work_dir(sandbox: Sandbox, clean_host: None,
                                                     host_dir: Path) -> None:
    code = (
        "import os, shutil\n"
        f"for path in ({str(host_dir / 'keep.txt')!r},):\n"
        "    try:\n        os.remove(path)\n    except OSError:\n        pass\n"
        f"for path in ({str(host_dir / 'new.txt')!r}, '/tmp/planted.txt', '/etc/planted',\n"
        f"             {str(Path.cwd() / 'planted.txt')!r}):\n"
        "    try:\n        open(path, 'w').write('x')\n    except OSError:\n        pass\n"
        "open('mine.txt', 'w').write('fine')\n"
        "print('done')\n"
    )
    assert sandbox.run(code, ONE).passed
    assert (host_dir / "keep.txt").read_text() == "precious"
    assert not (host_dir / "new.txt").exists()
    assert not Path("/etc/planted").exists()
    assert not (Path.cwd() / "planted.txt").exists()


def test_cannot_read_the_callers_secrets(clean_host: None) -> None:
    os.environ["REWARDKIT_TEST_SECRET"] = "hunter2-do-not-leak"
    try:
        with Sandbox(workers=1) as sb:
            code = (
                "import os, glob\n"
                "found = [repr(dict(os.environ))]\n"
                "for path in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):\n"
                "    try:\n        found.append(open(path, 'rb').read().decode('latin-1'))\n"
                "    except OSError:\n        pass\n"
                "for path in ('/root/.bash_history', '/etc/shadow'):\n"
                "    try:\n        found.append(open(path).read())\n    except OSError:\n        pass\n"
                "print('\\n'.join(found))\n"
            )
            result = sb.run(code, ONE)
            hidden = sb.run("import os\nprint(sorted(os.listdir('/root')))", ONE)
    finally:
        del os.environ["REWARDKIT_TEST_SECRET"]
    assert result.status == Status.WRONG_ANSWER  # it ran; look at what it printed
    assert "hunter2" not in result.feedback
    assert "root:" not in result.feedback
    # only toolchains under /root are shown (the Python prefix, a rustup toolchain), nothing else
    shown = hidden.feedback.split("Got:\n", 1)[1].splitlines()[0]
    assert set(ast.literal_eval(shown)) <= {".pyenv", ".rustup"}, shown


def test_expected_outputs_never_reach_the_solution(sandbox: Sandbox) -> None:
    secret = "expected-7f3a9c"
    suite = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": secret}]})
    code = (
        "import gc, os, sys\n"
        "hits = [o for o in gc.get_objects() if isinstance(o, str) and 'expected-7f3a' in o]\n"
        "for root, _, files in os.walk('.'):\n"
        "    for name in files:\n"
        "        try:\n            data = open(os.path.join(root, name), errors='ignore').read()\n"
        "        except OSError:\n            continue\n"
        "        hits += [line for line in data.splitlines() if 'expected-7f3a' in line]\n"
        "print(hits[0] if hits else 'nothing')\n"
    )
    result = sandbox.run(code, suite)
    assert result.status == Status.WRONG_ANSWER


def test_no_network(sandbox: Sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
        "    print('connected')\n"
        "except OSError as exc:\n"
        "    print('done')\n"
    )
    result = sandbox.run(code, ONE, limits=QUICK)
    thread.join()
    server.close()
    assert result.passed  # 'done': the connection failed
    assert accepted == []


def test_killing_the_parent_or_everyone_harms_nothing(sandbox: Sandbox, clean_host: None) -> None:
    code = ("import os, signal\n"
            "for target in (os.getppid(), -1, 1):\n"
            "    try:\n        os.kill(target, signal.SIGKILL)\n    except OSError:\n        pass\n"
            "print('done')\n")
    sandbox.run(code, ONE, limits=QUICK)
    assert sandbox.run("print('done')", ONE).passed


# -- the harness cannot be fooled into a pass --------------------------------------------------
CALL = TestSuite.from_dict({"mode": "call", "entry_point": "Solution.square", "cases": [
    {"args": [3], "expected": 9}, {"args": [4], "expected": 16}]})
SCRIPT = TestSuite.from_dict({"mode": "script", "entry_point": "square", "check":
                              "def check(candidate):\n    assert candidate(3) == 9\n"
                              "    assert abs(candidate(4) - 16) < 1e-9\n"})


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nsys.exit(0)\n",
        "import os\nos._exit(0)\n",
        "class Solution:\n    def square(self, x):\n        import sys; sys.exit(0)\n",
        "class Solution:\n    def square(self, x):\n        import os; os._exit(0)\n",
        "class E:\n    def __eq__(self, o): return True\n    def __sub__(self, o): return 0\n"
        "class Solution:\n    def square(self, x): return E()\n",
        "class I(int):\n    def __eq__(self, o): return True\n"
        "class Solution:\n    def square(self, x): return I(0)\n",
        "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.AssertionError = type('N', (Exception,), {})\n"
        "class Solution:\n    def square(self, x): return 0\n",
        "import sys\nh = sys.modules.get('runtime.harness') or sys.modules.get('__main__')\n"
        "if h and hasattr(h, '_answer'):\n    h._answer = lambda ns, req: {'ok': True, 'value': 9}\n"
        "class Solution:\n    def square(self, x): return 0\n",
        "import os\nfrom runtime import protocol\n"
        "for fd in range(3, 10):\n"
        "    try: protocol.write_frame_fd(fd, {'ok': True, 'value': 9})\n"
        "    except Exception: pass\n"
        "print('PASSED', 'ok', '{\"ok\": true}')\n"
        "class Solution:\n    def square(self, x): return 0\n",
    ],
    ids=["sys-exit", "os-exit", "exit-in-call", "os-exit-in-call", "always-equal",
         "int-subclass", "patch-builtins", "patch-harness", "fake-frames"],
)
def test_harness_cannot_be_fooled(sandbox: Sandbox, code: str) -> None:
    script_code = code.replace("class Solution:\n    def square(self, x)", "if True:\n    def square(x)")
    assert not sandbox.run(code, CALL, limits=QUICK).passed
    assert not sandbox.run(script_code, SCRIPT, limits=QUICK).passed


def test_patched_timers_do_not_change_the_measurement(sandbox: Sandbox) -> None:
    code = ("import time, resource, os\n"
            "time.perf_counter = time.monotonic = time.time = time.process_time = lambda: 0.0\n"
            "resource.getrusage = lambda *a: None\nos.times = lambda: None\n"
            "x = 0\nfor i in range(3_000_000):\n    x += i\nprint('done')\n")
    result = sandbox.run(code, ONE)
    assert result.passed and result.time_s > 0.05


def test_a_run_dies_with_its_worker(clean_host: None) -> None:
    """A worker killed outright (OOM killer, kill -9) takes its running solution with it.

    The run's first process asks for SIGKILL when its parent dies; as the init of
    its pid namespace it takes everything it started along.
    """
    others = set(_workers())  # other tests' sandboxes may have workers of their own
    with Sandbox(workers=1) as sb:
        assert sb.run("print('done')", ONE).passed
        (worker,) = set(_workers()) - others
        uid = leftovers.SANDBOX_UID_BASE + worker
        killer = threading.Timer(1.0, os.kill, (worker, signal.SIGKILL))
        killer.start()
        result = sb.run("import time\ntime.sleep(30)\nprint('done')\n", ONE, limits=Limits(time_s=40))
        killer.join()
        assert result.status == Status.SANDBOX_ERROR, result.feedback
        deadline = time.monotonic() + 5
        while _running_as(uid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _running_as(uid) == [], "the run outlived its worker"
        assert sb.run("print('done')", ONE).passed  # a fresh worker serves the next job


def _running_as(uid: int) -> list[int]:
    """Live (not zombie) processes of one sandbox uid."""
    return [p.pid for p in psutil.process_iter(["uids", "status"])
            if p.info["uids"] and p.info["uids"].real == uid and p.info["status"] != psutil.STATUS_ZOMBIE]


def _workers() -> list[int]:
    """Pids of this test process's sandbox workers."""
    return [p.pid for p in children_with(leftovers.WORKER_MARK)]
