"""A seccomp filter for runs: syscalls that leave kernel state behind, or reach past the sandbox, fail.

A run's files, processes, SysV IPC and message queues die with its
namespaces and scratch, but some kernel objects are keyed by uid and outlive
every process: a keyring made with ``add_key`` is still there for the next
run of the same uid.  Docker's default profile denies those syscalls; this
filter denies them on every backend, with the other ones Docker's profile
denies to unprivileged code (new namespaces, mounts, BPF, performance
counters, ``io_uring``, kernel modules, clocks...).  A denied call returns
``EPERM``, as it does under Docker, so a program that probes gets an error
rather than a kill.  Calls of another architecture's ABI (``int 0x80``, x32)
are denied the same way.

The filter is installed in the run's first process after it drops to the
sandbox uid (:func:`install`); ``exec`` keeps it, so compiled programs,
compilers and valgrind run under it too.
"""

from __future__ import annotations

import ctypes
import os
import struct

from .mounts import libc

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM

_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data
_X32_BIT = 0x40000000

# The denied syscalls by name, then their numbers on each architecture the filter knows.
DENIED = (
    "add_key", "request_key", "keyctl",  # keyrings: keyed by uid, they outlive the run
    "unshare", "setns",  # new or other namespaces
    "mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
    "open_tree", "mount_setattr",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "process_vm_readv", "process_vm_writev", "kcmp", "open_by_handle_at", "name_to_handle_at",
    "fanotify_init", "syslog", "acct", "quotactl",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "swapon", "swapoff", "reboot", "sethostname", "setdomainname",
    "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
)
_NUMBERS = {
    "x86_64": (0xC000003E, {
        "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "setns": 308,
        "mount": 165, "umount2": 166, "pivot_root": 155, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "fanotify_init": 300, "syslog": 103,
        "acct": 163, "quotactl": 179, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "kexec_load": 246, "kexec_file_load": 320, "swapon": 167, "swapoff": 168, "reboot": 169,
        "sethostname": 170, "setdomainname": 171, "settimeofday": 164, "clock_settime": 227,
        "adjtimex": 159, "clock_adjtime": 305}),
    "aarch64": (0xC00000B7, {
        "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "setns": 268,
        "mount": 40, "umount2": 39, "pivot_root": 41, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "fanotify_init": 262, "syslog": 116,
        "acct": 89, "quotactl": 60, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294, "swapon": 224, "swapoff": 225, "reboot": 142,
        "sethostname": 161, "setdomainname": 162, "settimeofday": 170, "clock_settime": 112,
        "adjtimex": 171, "clock_adjtime": 266}),
}


def _instruction(code: int, k: int, jump_true: int = 0, jump_false: int = 0) -> bytes:
    return struct.pack("HBBI", code, jump_true, jump_false, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter's BPF program for ``machine`` (this one by default), or None for one it does not know."""
    known = _NUMBERS.get(machine or os.uname().machine)
    if known is None:
        return None
    arch, numbers = known
    code = [_instruction(_LOAD_WORD, _ARCH),
            _instruction(_JUMP_EQUAL, arch, jump_true=1),
            _instruction(_RETURN, RET_EPERM),
            _instruction(_LOAD_WORD, _NR)]
    if arch == _NUMBERS["x86_64"][0]:  # the x32 ABI shares the architecture with its own numbers
        code += [_instruction(_JUMP_AT_LEAST, _X32_BIT, jump_false=1), _instruction(_RETURN, RET_EPERM)]
    for name in DENIED:
        code += [_instruction(_JUMP_EQUAL, numbers[name], jump_false=1), _instruction(_RETURN, RET_EPERM)]
    code.append(_instruction(_RETURN, RET_ALLOW))
    return b"".join(code)


def describe() -> str:
    """What :attr:`.isolation.Isolation.syscall_filter` says: the filter in force, or why none is."""
    if program() is None:
        return f"none: no syscall table for {os.uname().machine}"
    return f"deny-list of {len(DENIED)} syscalls (keyrings, namespaces, mounts, bpf, io_uring...)"


def install() -> None:
    """Install the filter in this process (and everything it will start); OSError if the kernel refuses."""
    code = program()
    if code is None:
        raise OSError(f"no seccomp syscall table for {os.uname().machine}")
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(buffer)))
    _prctl("PR_SET_NO_NEW_PRIVS", PR_SET_NO_NEW_PRIVS, 1)
    _prctl("PR_SET_SECCOMP", PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def _prctl(what: str, *args: int) -> None:
    """``prctl(*args)`` with its unused arguments zero; OSError naming ``what`` if it fails."""
    values = [ctypes.c_ulong(value) for value in (*args, 0, 0, 0, 0)[:5]]
    if libc.prctl(*values) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({what})")
