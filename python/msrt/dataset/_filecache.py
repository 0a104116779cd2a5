"""Decoded dataset files, cached per process and keyed by the files' identity.

A key holds each file's real path, size and modification time, so a file
rewritten in place is read again. Cached arrays are read-only.
"""
import os
import threading

_cache = {}
_lock = threading.Lock()


def _signature(path):
    stat = os.stat(path)
    return (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)


def cached(key, paths, load):
    """`load()` (a tuple of arrays) for `key` and the current state of `paths`, read once."""
    full_key = (key, tuple(_signature(p) for p in paths))
    with _lock:
        hit = _cache.get(full_key)
        if hit is None:
            hit = tuple(load())
            for array in hit:
                array.setflags(write=False)
            _cache[full_key] = hit
        return hit


def clear():
    """Forgets every decoded array held by this process."""
    with _lock:
        _cache.clear()
