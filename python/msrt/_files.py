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
