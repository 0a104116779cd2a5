"""MnistDataset: MNIST-format IDX files (MNIST, Fashion-MNIST, ...) from a directory.

Files are looked up by their standard names, each either plain or gzipped:
train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
t10k-labels-idx1-ubyte (plus ".gz"). Decoded arrays are cached per process
(see _filecache.py).
"""
import gzip
import os
import zlib

import numpy as np

from . import _filecache
from .datasets import _FolderSplitDataset

_ROWS = _COLS = 28

# Usage "all" reads the test split first: MindSpore sorts the file names and
# "t10k-..." sorts before "train-...".
_SPLITS = {"train": ("train",), "test": ("t10k",), "all": ("t10k", "train")}


class MnistFileNotFoundError(RuntimeError, FileNotFoundError):
    """A required MNIST file is missing (a RuntimeError, as in MindSpore, and a FileNotFoundError)."""


class MnistFormatError(RuntimeError):
    """An MNIST file is not a well-formed IDX file of the expected kind."""


def clear_cache():
    """Forgets every decoded dataset array held by this process."""
    _filecache.clear()


def _find(dataset_dir, stem):
    """Path of `stem` or `stem`.gz in `dataset_dir` (the plain file wins), or None."""
    for name in (stem, stem + ".gz"):
        path = os.path.join(dataset_dir, name)
        if os.path.isfile(path):
            return path
    return None


def _split_files(dataset_dir, usage):
    """[(images path, labels path)] for each split `usage` reads, checking they exist."""
    pairs = []
    for prefix in _SPLITS[usage]:
        image_stem, label_stem = f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"
        image, label = _find(dataset_dir, image_stem), _find(dataset_dir, label_stem)
        if image is None and label is None and usage == "all":
            continue  # as MindSpore, "all" reads whichever splits are present
        for path, stem in ((image, image_stem), (label, label_stem)):
            if path is None:
                raise MnistFileNotFoundError(
                    f"MnistDataset: file not found: '{os.path.join(dataset_dir, stem)}' "
                    f"(nor '{stem}.gz') for usage '{usage}' in directory '{dataset_dir}'."
                )
        pairs.append((image, label))
    if not pairs:
        raise MnistFileNotFoundError(
            f"MnistDataset: no MNIST files in directory '{dataset_dir}': expected "
            "train-images-idx3-ubyte / train-labels-idx1-ubyte and/or t10k-images-idx3-ubyte / "
            "t10k-labels-idx1-ubyte (each optionally gzipped, '.gz')."
        )
    return pairs


def _read_bytes(path):
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise MnistFormatError(f"MnistDataset: '{path}' is not a valid gzip file ({error}).") from None
    except OSError as error:
        raise RuntimeError(f"MnistDataset: cannot read '{path}': {error.strerror or error}.") from None


def _check(path, raw, images):
    """(count, data offset) of an MNIST IDX file, checked in C++ (src/io/idx.cc, fuzzed)."""
    from .. import _C

    try:
        return _C._check_mnist_idx(raw, path, images)
    except ValueError as error:
        raise MnistFormatError(str(error)) from None


def _read_images(path):
    raw = _read_bytes(path)
    count, offset = _check(path, raw, True)
    return np.frombuffer(raw, np.uint8, offset=offset).reshape(count, _ROWS, _COLS, 1)


def _read_labels(path):
    raw = _read_bytes(path)
    _, offset = _check(path, raw, False)
    return np.frombuffer(raw, np.uint8, offset=offset).astype(np.uint32)


def _load(dataset_dir, usage, pairs):
    def load():
        images, labels = [], []
        for image_path, label_path in pairs:
            split_images, split_labels = _read_images(image_path), _read_labels(label_path)
            if len(split_images) != len(split_labels):
                raise MnistFormatError(
                    f"MnistDataset: image/label count mismatch: '{image_path}' holds {len(split_images)} "
                    f"images but '{label_path}' holds {len(split_labels)} labels."
                )
            images.append(split_images)
            labels.append(split_labels)
        return [parts[0] if len(parts) == 1 else np.concatenate(parts) for parts in (images, labels)]

    return _filecache.cached(("mnist", os.path.realpath(dataset_dir), usage), [p for pair in pairs for p in pair],
                             load)


class MnistDataset(_FolderSplitDataset):
    """Reads MNIST-format files: columns "image" (uint8, 28x28x1) and "label" (uint32 scalar).

    Args:
        dataset_dir (str): directory holding the IDX files (plain or .gz).
        usage (str, optional): "train" (60000 rows for MNIST), "test" (10000) or "all"
            (test then train). Default: None, meaning "all".
        num_samples (int, optional): rows to read; None or 0 reads all.
        num_parallel_workers (int, optional): accepted for compatibility.
        shuffle (bool, optional): random order (new each epoch). Default: None, which
            shuffles unless a sampler is given.
        sampler (Sampler or list of indices, optional): which rows, in which order.
        num_shards (int, optional) / shard_id (int, optional): read shard `shard_id` of
            `num_shards` (rows shard_id, shard_id + num_shards, ...; every shard gets
            ceil(rows / num_shards) rows, wrapping around).
        cache: must be None (msrt has no cache server).

    Raises:
        ValueError: `dataset_dir` is not a readable directory, `usage` is not one of
            "train", "test", "all", or a count is out of range.
        TypeError: an argument has the wrong type.
        RuntimeError: inconsistent sampler/shuffle/shard arguments; a file is missing
            (MnistFileNotFoundError, also a FileNotFoundError) or malformed (MnistFormatError).
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id, cache)
        self._pairs = _split_files(dataset_dir, self.usage)
        self._columns = ["image", "label"]

    def _load(self):
        return list(_load(self.dataset_dir, self.usage, self._pairs))

    def _source_size(self):
        return len(self._load()[1])
