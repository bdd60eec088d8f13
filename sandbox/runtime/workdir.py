"""A program job's work dir between runs: what the build made, unchanged, and nothing else.

The runs of a program job share its work dir, one after the other.  After the
build, :meth:`Build.record` takes the regular files there (the source and what
the compiler wrote) into memory and removes everything else (a compiler's
caches); after each run, :meth:`Build.restore` removes whatever the run added,
wherever it hid it, and gives every recorded file back its content and mode, so
that nothing a run writes, renames or rewrites reaches the next one.  Holding
the files in memory, not on disk, is what makes this hold where the run has the
worker's own uid (a container): there is nowhere on disk it could not write.

:func:`empty` and :func:`remove` delete trees a hostile run built: folders of
any mode (mode 000 included, where the worker owns them) and any depth (no
recursion, two descriptors at a time), symlinks never followed.  The run's
processes must be gone: nothing may change the tree while it is deleted.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Collection
from dataclasses import dataclass, field

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OWNER_ONLY = 0o700


def empty(folder: str, keep: Collection[str] = ()) -> None:
    """Delete every entry of ``folder`` (not a symlink) but the names in ``keep``.

    A folder inside is opened up (mode 700) and its entries deleted; a folder
    inside that is moved up to ``folder`` first, under a fresh name, and emptied
    in turn, so depth costs neither recursion nor descriptors.
    """
    top = os.open(folder, _DIR_FLAGS)
    try:
        names = [name for name in os.listdir(top) if name not in keep]
        queue = [name for name in names if _unlink_unless_folder(top, name)]
        serial = 0
        while queue:
            name = queue.pop()
            _open_up(top, name)
            inner = os.open(name, _DIR_FLAGS, dir_fd=top)
            try:
                for entry in os.listdir(inner):
                    if _unlink_unless_folder(inner, entry):
                        _open_up(inner, entry)  # moving a folder rewrites its "..": it must be writable
                        moved, serial = _fresh_name(top, serial)
                        os.rename(entry, moved, src_dir_fd=inner, dst_dir_fd=top)
                        queue.append(moved)
            finally:
                os.close(inner)
            os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)


def remove(path: str) -> None:
    """Delete whatever is at ``path`` (a file, a symlink, a tree), if anything."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(path)
        return
    os.chmod(path, _OWNER_ONLY)
    empty(path)
    os.rmdir(path)


def _unlink_unless_folder(folder: int, name: str) -> bool:
    """Unlink entry ``name`` of the open ``folder``; True, and nothing done, for a folder."""
    if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
        return True
    os.unlink(name, dir_fd=folder)
    return False


def _open_up(folder: int, name: str) -> None:
    """Give folder ``name`` (in the open ``folder``) mode 700; a folder the worker does not
    own stays as it is (the worker is root there, or cannot change it)."""
    with contextlib.suppress(PermissionError):
        os.chmod(name, _OWNER_ONLY, dir_fd=folder)


def _fresh_name(folder: int, serial: int) -> tuple[str, int]:
    """A name no entry of the open ``folder`` has, and the serial to try next."""
    while True:
        name, serial = f".rk-removing-{serial}", serial + 1
        try:
            os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return name, serial


@dataclass(frozen=True)
class Kept:
    """One file of the build: its content, mode and owner."""

    content: bytes
    mode: int
    uid: int
    gid: int


@dataclass
class Build:
    """The files a job's build left in its work dir ``folder``, held in memory."""

    folder: str
    files: dict[str, Kept] = field(default_factory=dict)

    @classmethod
    def record(cls, folder: str) -> Build:
        """Take the regular files in ``folder`` as the build; delete everything else there."""
        build = cls(folder)
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                remove(path)
                continue
            with open(path, "rb") as handle:
                build.files[name] = Kept(handle.read(), stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid)
        return build

    def restore(self) -> None:
        """Make the work dir hold the build again, exactly: a folder of mode 700 (whatever is at
        its path replaced), no other entry, and each file with its content, mode and owner."""
        try:
            real = stat.S_ISDIR(os.lstat(self.folder).st_mode)
        except FileNotFoundError:
            real = False
        if real:
            os.chmod(self.folder, _OWNER_ONLY)
        else:
            remove(self.folder)
            os.mkdir(self.folder, _OWNER_ONLY)
        empty(self.folder, keep=self.files)
        for name, kept in self.files.items():
            path = os.path.join(self.folder, name)
            if not _intact(path, kept):
                remove(path)
                _write(path, kept)


def _intact(path: str, kept: Kept) -> bool:
    """Whether ``path`` is still the regular file ``kept`` (its mode put back if a run changed it)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size != len(kept.content) \
            or (info.st_uid, info.st_gid) != (kept.uid, kept.gid):
        return False
    if stat.S_IMODE(info.st_mode) != kept.mode:
        os.chmod(path, kept.mode)
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as handle:
        return handle.read(len(kept.content) + 1) == kept.content


def _write(path: str, kept: Kept) -> None:
    """Create ``path`` afresh with ``kept``'s content, mode and owner."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(fd, "wb") as handle:
        handle.write(kept.content)
    if (kept.uid, kept.gid) != (os.geteuid(), os.getegid()):
        os.chown(path, kept.uid, kept.gid)
    os.chmod(path, kept.mode)
