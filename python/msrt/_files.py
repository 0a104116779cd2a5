"""Paths and files msrt writes: one safe-write helper in C++ (Note [Safe file
writes] in src/core/file_io.h) used by every writer."""
import os

from . import _C


def fspath(path, op, arg):
    """`path` (str or os.PathLike) as a str; TypeError for other types,
    ValueError for an empty path or one holding a NUL byte."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        raise TypeError(f"For '{op}', the argument '{arg}' must be a str, but got {type(path).__name__}.")
    _C._check_path(path, f"For '{op}', the argument '{arg}'")
    return path


def rank_place(folder):
    """`folder`/rank_<id> in a distributed job (after msrt.communication.init(),
    or with RANK_ID set), else `folder` itself: where a rank writes the files
    of its own (Note [Per-rank places] in src/runtime/rank.h)."""
    return _C.rank_place(folder)


def write_atomic(path, data, durable=True):
    """Replaces the file `path` with `data` (bytes) atomically; a symlink at
    the path is replaced, never written through. OSError naming the path."""
    _C._write_file_atomic(path, bytes(data), durable)


def read(path):
    """The bytes of the regular file `path`; OSError naming the path."""
    return _C._read_file(path)


def make_dirs(path):
    """Creates the folder `path` and its parents; OSError naming the path."""
    _C._make_dirs(path)


class PendingFile:
    """A file built in pieces at any offsets and put in place atomically: the bytes
    go to a fresh temporary file in the target's folder (mkstemp: O_EXCL and
    O_NOFOLLOW, mode 0600); `commit` fsyncs it, renames it over `path` (a
    symlink there is replaced, never written through) and fsyncs the folder,
    so readers see the old file or the whole new one. Regions never written
    stay holes (zeros). A PendingFile dropped without `commit` removes its
    temporary file. OSError naming the path on every failure."""

    def __init__(self, path):
        import tempfile
        import weakref

        self.path = os.path.abspath(path)
        folder, name = os.path.split(self.path)
        try:
            self._fd, self._temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        except OSError as error:
            raise OSError(error.errno, f"cannot create a temporary file beside '{path}': {error.strerror}") from None
        self._cleanup = weakref.finalize(self, _discard_temp, self._fd, self._temp)

    def write(self, offset, data):
        """Writes all of `data` at `offset`."""
        view = memoryview(data).cast("B")
        while view:
            done = os.pwrite(self._fd, view, offset)
            view, offset = view[done:], offset + done

    def read(self, offset, size):
        """`size` bytes from `offset` (of what was written so far)."""
        parts = []
        while size:
            chunk = os.pread(self._fd, size, offset)
            if not chunk:
                raise OSError(f"'{self._temp}' ends before offset {offset}")
            parts.append(chunk)
            size, offset = size - len(chunk), offset + len(chunk)
        return b"".join(parts)

    def commit(self):
        """Puts the file in place (fsync, rename over `path`, fsync of the folder)."""
        if self._cleanup.detach() is None:
            raise OSError(f"'{self.path}': this pending file was committed or discarded already")
        try:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
            os.replace(self._temp, self.path)
        except OSError as error:
            _discard_temp(-1, self._temp)
            raise OSError(error.errno, f"cannot write '{self.path}': {error.strerror}") from None
        folder = os.open(os.path.dirname(self.path), os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

    def discard(self):
        """Removes the temporary file; the target is left as it was."""
        if self._cleanup.detach() is not None:
            _discard_temp(self._fd, self._temp)


def _discard_temp(fd, temp):
    for step in (lambda: os.close(fd) if fd >= 0 else None, lambda: os.unlink(temp)):
        try:
            step()
        except OSError:
            pass
