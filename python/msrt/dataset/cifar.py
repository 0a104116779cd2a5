"""Cifar10Dataset and Cifar100Dataset: the CIFAR binary format from a directory.

CIFAR-10: data_batch_1.bin ... data_batch_5.bin (train) and test_batch.bin
(test); each record is 1 label byte then 3072 image bytes (the red, green and
blue 32x32 planes). CIFAR-100: train.bin and test.bin; each record is a coarse
label byte, a fine label byte, then the 3072 image bytes. As MindSpore, every
".bin" file of the directory whose name contains the usage's word is read, in
sorted order. Reading is plain byte slicing: the Python-pickle CIFAR format is
not supported (reading it could run code).
"""
import os

import numpy as np

from . import _filecache
from .datasets import _FolderSplitDataset

_SIDE = 32
_IMAGE_BYTES = 3 * _SIDE * _SIDE


class CifarFileNotFoundError(RuntimeError, FileNotFoundError):
    """No CIFAR file for the usage asked (a RuntimeError, as in MindSpore, and a FileNotFoundError)."""


class CifarFormatError(RuntimeError):
    """A CIFAR file is not a well-formed CIFAR binary file."""


def _files(dataset_dir, usage, words, kind):
    """The sorted .bin files of `dataset_dir` whose names contain the usage's word."""
    wanted = words[usage]
    names = sorted(n for n in os.listdir(dataset_dir) if n.endswith(".bin") and any(w in n for w in wanted)
                   and os.path.isfile(os.path.join(dataset_dir, n)))
    if not names:
        raise CifarFileNotFoundError(
            f"{kind}: no CIFAR binary files for usage '{usage}' in directory '{dataset_dir}': expected '.bin' files "
            f"whose names contain {' or '.join(repr(w) for w in wanted)}. (The Python-pickle CIFAR format is not "
            f"supported; use the binary version.)"
        )
    return [os.path.join(dataset_dir, n) for n in names]


def _read_records(path, label_bytes, label_limits, kind):
    """(images N x 32 x 32 x 3 uint8, labels N x label_bytes uint32) of one file, checked."""
    record = label_bytes + _IMAGE_BYTES
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as error:
        raise RuntimeError(f"{kind}: cannot read '{path}': {error.strerror or error}.") from None
    if not raw or len(raw) % record:
        raise CifarFormatError(
            f"{kind}: '{path}' is not a CIFAR binary file: its size {len(raw)} is not a positive multiple of the "
            f"record size {record} ({label_bytes} label byte(s) + {_IMAGE_BYTES} image bytes); is it truncated?"
        )
    data = np.frombuffer(raw, np.uint8).reshape(-1, record)
    labels = data[:, :label_bytes].astype(np.uint32)
    for column, limit in enumerate(label_limits):
        bad = np.flatnonzero(labels[:, column] >= limit)
        if bad.size:
            raise CifarFormatError(
                f"{kind}: '{path}' is not a CIFAR binary file: record {bad[0]} has label {labels[bad[0], column]}, "
                f"expected below {limit}."
            )
    images = data[:, label_bytes:].reshape(-1, 3, _SIDE, _SIDE).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels


class _CifarDataset(_FolderSplitDataset):
    _WORDS = _LABEL_LIMITS = _LABEL_COLUMNS = None

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id, cache)
        self._paths = _files(dataset_dir, self.usage, self._WORDS, type(self).__name__)
        self._columns = ["image"] + list(self._LABEL_COLUMNS)

    def _load(self):
        kind = type(self).__name__

        def load():
            parts = [_read_records(p, len(self._LABEL_LIMITS), self._LABEL_LIMITS, kind) for p in self._paths]
            images = np.concatenate([images for images, _ in parts])
            labels = np.concatenate([labels for _, labels in parts])
            return [images] + [np.ascontiguousarray(labels[:, c]) for c in range(labels.shape[1])]

        return list(_filecache.cached((kind, tuple(self._paths)), self._paths, load))

    def _source_size(self):
        return len(self._load()[0])


class Cifar10Dataset(_CifarDataset):
    """Reads CIFAR-10 binary files: columns "image" (uint8, 32x32x3, HWC) and "label" (uint32 scalar).

    Args:
        dataset_dir (str): directory holding data_batch_*.bin and/or test_batch.bin.
        usage (str, optional): "train" (files named *data_batch*), "test" (*test_batch*) or
            "all" (both, train first). Default: None, meaning "all".
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache:
            as for `MnistDataset`.

    Raises:
        ValueError: `dataset_dir` is not a readable directory or `usage` is not valid.
        TypeError: an argument has the wrong type.
        RuntimeError: inconsistent sampler/shuffle/shard arguments; no file for the usage
            (CifarFileNotFoundError, also a FileNotFoundError); a truncated or malformed file
            (CifarFormatError), named in the message.
    """

    _WORDS = {"train": ("data_batch",), "test": ("test_batch",), "all": ("data_batch", "test_batch")}
    _LABEL_LIMITS = (10,)
    _LABEL_COLUMNS = ("label",)


class Cifar100Dataset(_CifarDataset):
    """Reads CIFAR-100 binary files: columns "image" (uint8, 32x32x3, HWC), "coarse_label" and
    "fine_label" (uint32 scalars).

    Args:
        dataset_dir (str): directory holding train.bin and/or test.bin.
        usage (str, optional): "train", "test" or "all" (test then train, in sorted file
            order). Default: None, meaning "all".
        Other arguments and errors: as for `Cifar10Dataset`.
    """

    _WORDS = {"train": ("train",), "test": ("test",), "all": ("train", "test")}
    _LABEL_LIMITS = (20, 100)
    _LABEL_COLUMNS = ("coarse_label", "fine_label")
