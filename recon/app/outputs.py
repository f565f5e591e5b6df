"""Where commands write: output locations checked before the work, and result directories
replaced whole.

The contract (README, "Outputs"):

* **Checked first.** A command's output location is checked for writability before any work
  is done (:func:`check_writable`): an unwritable ``-o`` fails in a second, naming the
  user's path, not after an hour of fitting and not with a hidden temporary name.
* **A file** is only ever replaced by a complete new one (:func:`recon.io.atomic_path`).
* **A result directory** (``reconstruct -o DIR``, ``identify rig -o DIR``) is built in a
  staging directory beside it, ``.DIR.partial`` (:func:`staging`), and swapped in whole at the
  end (:func:`commit`): on Linux one ``renameat2(RENAME_EXCHANGE)``, atomic; elsewhere two
  renames, with :func:`recover` finishing a swap that was interrupted between them. So a run
  killed at any moment leaves ``DIR`` holding the complete earlier result (or nothing, if there
  was none) and the staging directory holding the run so far: ``--resume`` continues its
  chains from there. A report is part of the directory and is built before the swap, so an old
  report never sits beside a new result or the reverse.
* **One run at a time.** A run holds a lock on its output directory, ``.DIR.lock`` beside it
  (:func:`locked`, an advisory ``flock`` that the system drops when the process ends, however
  it ends): a second run into the same directory refuses at once, naming the holder (process,
  host, command, start), exit 75 (``sysexits`` EX_TEMPFAIL: try again later), instead of racing
  the first for its staging directory.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import logging
import os
import shutil
import tempfile
from pathlib import Path

from models.errors import InputError

__all__ = ["check_writable", "staging", "commit", "recover", "replaced_whole", "resumable",
           "locked", "OutputBusy", "STAGING_SUFFIX"]

log = logging.getLogger(__name__)

STAGING_SUFFIX = ".partial"
#: files of a staging directory that a later ``--resume`` continues from
RESUMABLE = ("chains.h5",)
_OLD_SUFFIX = ".replaced"
#: marks the earlier result of a swap: wherever a kill leaves it, it is not a run to resume
_SWAPPED_OUT = ".swapped-out"


def _staging_path(path: Path) -> Path:
    return path.with_name(f".{path.name}{STAGING_SUFFIX}")


def _lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


class OutputBusy(InputError):
    """The output directory is being written by another run (:func:`locked`). Exit 75."""

    exit_code = 75


@contextlib.contextmanager
def locked(path: str | os.PathLike):
    """``with locked(DIR):`` hold DIR's lock (module docstring) for the block; raises
    :class:`OutputBusy` naming the holder when another process holds it."""
    path = Path(path)
    try:
        import fcntl
    except ImportError:           # no flock (not POSIX): runs are not serialised
        yield path
        return
    lock = _lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            holder = os.read(fd, 4096).decode(errors="replace").strip() or "unknown holder"
            os.close(fd)
            raise OutputBusy(f"another run is writing this directory ({holder}); wait for it "
                             "to end or give another output", source=str(path)) from None
        try:   # the holder before us may have removed the file between our open and lock
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        import shlex
        import socket
        import sys
        import time

        os.ftruncate(fd, 0)
        os.write(fd, (f"pid {os.getpid()} on {socket.gethostname()}, "
                      f"{shlex.join(['dockrecon'] + sys.argv[1:])[:300]}, since "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n").encode())
        yield path
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


def _old_path(path: Path) -> Path:
    return path.with_name(f".{path.name}{_OLD_SUFFIX}")


def check_writable(path: str | os.PathLike, *, directory: bool | None = False,
                   option: str = "--output") -> Path:
    """Check, before any work, that ``path`` can be written: a file (``directory`` False),
    a directory of files (True) or either (None: an existing directory is written into, any
    other path is a file). The nearest existing ancestor must be a writable directory, and
    ``path`` itself, if it exists, of the right kind. Raises :class:`InputError` naming
    ``option`` and the path; returns the path."""
    p = Path(path)
    if directory and p.exists() and not p.is_dir():
        raise InputError("exists and is not a directory", key=option, source=str(p))
    if directory is False and p.is_dir():
        raise InputError("is a directory; give a file name", key=option, source=str(p))
    anc = p if directory is not False and p.is_dir() else p.parent
    while not anc.exists():
        if anc.parent == anc:
            break
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"{anc} is not a directory", key=option, source=str(p))
    try:  # os.access is not enough (read-only mounts, ACLs): try it
        fd, probe = tempfile.mkstemp(prefix=".dockrecon-write-test-", dir=anc)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"cannot write in {anc} ({exc.strerror or exc})", key=option,
                         source=str(p)) from None
    if p.is_file() and not directory and not os.access(p, os.W_OK):
        # replaced by rename, which needs the directory only; still, a read-only file is
        # the user saying "do not overwrite"
        raise InputError("exists and is read-only", key=option, source=str(p))
    return p


def recover(path: str | os.PathLike) -> None:
    """Finish a directory swap that a kill interrupted (:func:`commit`):

    * after the atomic exchange, before the earlier result (now in the staging place) was
      removed: that directory carries the swapped-out mark and is removed, so ``--resume``
      never continues the chains of a result older than ``DIR``;
    * before the exchange, after the mark: the mark is removed from ``DIR`` (still the
      earlier result; the staging directory keeps the finished run);
    * between the two renames where there is no exchange: ``DIR`` missing with its complete
      staging beside it -> moved in; the replaced earlier result, if left, removed.
    """
    path = Path(path)
    old, stage = _old_path(path), _staging_path(path)
    if (stage / _SWAPPED_OUT).exists():
        shutil.rmtree(stage, ignore_errors=True)
        log.warning("%s: removed the earlier result that an interrupted swap left in %s",
                    path, stage)
    if path.is_dir():
        (path / _SWAPPED_OUT).unlink(missing_ok=True)
    if not path.exists() and (stage / ".complete").exists():
        os.rename(stage, path)
        log.warning("%s: finished replacing the directory (an earlier run was interrupted "
                    "while swapping it in)", path)
    if old.exists() and path.exists():
        shutil.rmtree(old, ignore_errors=True)


def resumable(path: str | os.PathLike) -> bool:
    """Whether ``--resume`` has something to continue for result directory ``path``: the
    chains of its interrupted run (staging) or of the finished one."""
    path = Path(path)
    return any((d / n).exists() for d in (_staging_path(path), path) for n in RESUMABLE)


def staging(path: str | os.PathLike, *, resume: bool = False,
            keep: tuple[str, ...] = RESUMABLE) -> Path:
    """The staging directory of result directory ``path``, ready for a run: emptied unless
    ``resume`` (then kept as the interrupted run left it; a ``keep`` file that only the
    finished ``path`` holds is copied in, so ``--resume`` also extends a finished run's
    chains)."""
    path = Path(path)
    recover(path)
    stage = _staging_path(path)
    if stage.exists() and not resume:
        shutil.rmtree(stage)
    stage.mkdir(parents=True, exist_ok=True)
    (stage / ".complete").unlink(missing_ok=True)
    if resume:
        for name in keep:
            if not (stage / name).exists() and (path / name).exists():
                shutil.copy2(path / name, stage / name)
    return stage


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False
    where the call is not available."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def commit(stage: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Swap the finished staging directory ``stage`` in as ``path`` (module docstring); the
    earlier ``path``, if any, is removed. Returns ``path``."""
    stage, path = Path(stage), Path(path)
    (stage / ".complete").touch()
    if not path.exists():
        os.rename(stage, path)
        return _finish(path)
    (path / _SWAPPED_OUT).touch()                        # the earlier result, about to go
    if _exchange(stage, path):
        shutil.rmtree(stage, ignore_errors=True)         # now the earlier result
    else:
        old = _old_path(path)
        if old.exists():
            shutil.rmtree(old)
        os.rename(path, old)
        os.rename(stage, path)                           # recover() finishes a kill here
        shutil.rmtree(old, ignore_errors=True)
    return _finish(path)


def _finish(path: Path) -> Path:
    (path / ".complete").unlink(missing_ok=True)
    return path


@contextlib.contextmanager
def replaced_whole(path: str | os.PathLike, *, resume: bool = False):
    """``with replaced_whole(DIR) as stage:`` write the result into ``stage``; when the block
    ends without an exception, ``stage`` replaces ``DIR`` whole. On an exception ``DIR`` is
    untouched; ``stage`` stays for ``--resume`` when it holds chains, and is removed
    otherwise. ``DIR`` is locked for the block (:func:`locked`)."""
    with locked(path):
        interrupted = any((_staging_path(Path(path)) / n).exists() for n in RESUMABLE)
        stage = staging(path, resume=resume)
        try:
            yield stage
        except BaseException as exc:
            if getattr(exc, "refused_resume", False):
                # nothing of this run to keep: an interrupted run's chains stay as they were,
                # a copy of the finished run's goes
                if not interrupted:
                    shutil.rmtree(stage, ignore_errors=True)
            elif any((stage / name).exists() for name in RESUMABLE):
                log.warning("%s: the run so far is in %s; --resume continues it", path, stage)
            else:                                    # nothing to resume: leave no trace
                shutil.rmtree(stage, ignore_errors=True)
            raise
        commit(stage, path)
