"""State kept for a later run in kernel objects keyed by uid, not in files.

A run's files, processes and SysV IPC die with its namespaces and scratch,
but a keyring made with ``add_key`` belongs to the uid and outlives every
process: a run that caches its answer in the user keyring would find it in
the next run of the same worker (a repeat, another sample of the GRPO group,
another client of the service).  Each program here looks for its cache and
prints ``hit`` when it finds one, else leaves one and prints ``miss``; every
run expects ``miss``.  The other uid- or host-wide objects a run could try
(SysV shared memory and message queues, POSIX message queues, an abstract
unix socket held by a process that outlives the run) are tried the same way.
"""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Sandbox, Status, TestSuite

from . import BACKENDS

ONCE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "miss\n"}]})

_SYSCALL = '''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"add_key": 248, "keyctl": 250},
      "aarch64": {"add_key": 217, "keyctl": 219}}[os.uname().machine]
'''

CACHES = {
    # the user keyring: KEYCTL_SEARCH (10) for the cache, add_key to leave one
    "user-keyring": _SYSCALL + '''
USER = ctypes.c_long(-4)
if libc.syscall(NR["keyctl"], 10, USER, b"user", b"rk-cache", 0) > 0:
    print("hit")
else:
    libc.syscall(NR["add_key"], b"user", b"rk-cache", b"42", 2, USER)
    print("miss")
''',
    # the persistent keyring (KEYCTL_GET_PERSISTENT, 22) outlives even the uid's last login
    "persistent-keyring": _SYSCALL + '''
ring = libc.syscall(NR["keyctl"], 22, -1, ctypes.c_long(-4))
if ring > 0 and libc.syscall(NR["keyctl"], 10, ctypes.c_long(ring), b"user", b"rk-cache", 0) > 0:
    print("hit")
else:
    if ring > 0:
        libc.syscall(NR["add_key"], b"user", b"rk-cache", b"42", 2, ctypes.c_long(ring))
    print("miss")
''',
    "sysv-shared-memory": '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x524B
if libc.shmget(KEY, 4096, 0) >= 0:
    print("hit")
else:
    libc.shmget(KEY, 4096, 0o1666)
    print("miss")
''',
    "sysv-message-queue": '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x524C
if libc.msgget(KEY, 0) >= 0:
    print("hit")
else:
    libc.msgget(KEY, 0o1666)
    print("miss")
''',
    "posix-message-queue": '''
import ctypes
librt = ctypes.CDLL("librt.so.1", use_errno=True)
if librt.mq_open(b"/rk-cache", 0) >= 0:
    print("hit")
else:
    librt.mq_open(b"/rk-cache", 0o100 | 2, 0o666, None)
    print("miss")
''',
    # a daemon keeps an abstract socket bound for the next run to connect to
    "abstract-socket": '''
import os, socket, sys, time
probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    probe.connect("\\0rk-cache")
    print("hit")
    sys.exit(0)
except OSError:
    pass
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind("\\0rk-cache")
        server.listen()
        time.sleep(30)
    os._exit(0)
time.sleep(0.2)
print("miss")
''',
}


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
@pytest.mark.parametrize("name", sorted(CACHES))
def test_no_kernel_object_reaches_the_next_run(backend_sandbox: Sandbox, name: str) -> None:
    """The second run on the same worker finds nothing the first one left."""
    first, second = (backend_sandbox.run(CACHES[name], ONCE) for _ in range(2))
    assert first.status == Status.PASSED, (first.status, first.feedback, first.stderr)
    assert second.status == Status.PASSED, f"{name}: the second run found the cache: {second.feedback}"


def test_a_passing_samples_answer_does_not_reach_a_wrong_one(local_sandbox: Sandbox) -> None:
    """In one batch (a GRPO group), a right sample leaves its answer in the user keyring and a
    wrong one that prints whatever it finds there must still fail."""
    add = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]})
    right = _SYSCALL + '''
a, b = map(int, input().split())
libc.syscall(NR["add_key"], b"user", b"rk-answer", str(a + b).encode(), len(str(a + b)), ctypes.c_long(-4))
print(a + b)
'''
    wrong = _SYSCALL + '''
key = libc.syscall(NR["keyctl"], 10, ctypes.c_long(-4), b"user", b"rk-answer", 0)
buffer = ctypes.create_string_buffer(64)
size = libc.syscall(NR["keyctl"], 11, ctypes.c_long(key), buffer, 64) if key > 0 else -1
print(buffer.raw[:size].decode() if size > 0 else "0")
'''
    results = local_sandbox.run_many([(right, add), (wrong, add), (wrong, add)])
    assert results[0].status == Status.PASSED
    assert [r.status for r in results[1:]] == [Status.WRONG_ANSWER] * 2


def test_isolation_names_the_syscall_filter(local_sandbox: Sandbox) -> None:
    assert local_sandbox.isolation["syscall_filter"].startswith("deny-list")
