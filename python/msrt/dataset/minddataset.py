"""MindDataset: reads MindRecord files, written by MindSpore's FileWriter or msrt's.

The format is MindSpore's (Note [MindRecord layout] in msrt/mindrecord/_format.py).
Each data file is checked when the dataset is created (header, pages, the `.db`
index beside it); each row is checked against the index when it is read.
"""
import enum
import os

import numpy as np

from ..mindrecord import _format
from ._validate import check_columns, type_check
from ._blocks import _BLOCK_ROWS, _stack
from .datasets import MappableDataset
from .samplers import BuiltinSampler

_FILE_ORDER_TAG = 31


class Shuffle(str, enum.Enum):
    """Shuffle modes of file-based sources (`mindspore.dataset.Shuffle`): GLOBAL shuffles
    every row; FILES shuffles the order of the files, each read in order; INFILE keeps
    the files' order and shuffles the rows within each file."""

    GLOBAL = "global"
    FILES = "files"
    INFILE = "infile"


class _FileOrderSampler(BuiltinSampler):
    """Rows file by file (file k holds rows starts[k]:starts[k + 1]), with the files' order or
    the rows within each file shuffled each pass."""

    def __init__(self, starts, mode, num_samples=None):
        super().__init__(num_samples)
        self._starts = starts
        self._mode = mode

    def _count(self, num_rows):
        return num_rows if not self.num_samples else min(num_rows, self.num_samples)

    def _indices(self, num_rows, seeds):
        rng = seeds.rng(_FILE_ORDER_TAG)
        files = [np.arange(self._starts[k], self._starts[k + 1], dtype=np.int64) for k in range(len(self._starts) - 1)]
        if self._mode is Shuffle.FILES:
            files = [files[k] for k in rng.permutation(len(files))]
        else:
            files = [rng.permutation(rows) for rows in files]
        order = np.concatenate(files) if files else np.zeros(0, np.int64)
        return order[:self._count(num_rows)]


def _shard_files(dataset_files):
    """The data files to read: a str names one file of a set (all its shards are read, in
    shard order); a list names exactly the files to read, in that order."""
    if isinstance(dataset_files, os.PathLike):
        dataset_files = os.fspath(dataset_files)
    type_check(dataset_files, (str, list), "dataset_files")
    files = [dataset_files] if isinstance(dataset_files, str) else list(dataset_files)
    if not files:
        raise ValueError("dataset_files should not be empty.")
    for path in files:
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        type_check(path, (str,), "dataset_files[i]")
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise ValueError(f"The file {path} does not exist or permission denied!")
    if isinstance(dataset_files, str):
        return _format.open_set(dataset_files)
    shards = [_format.Shard(os.fspath(p)) for p in files]
    _format.check_same_set(shards)
    return shards


class MindDataset(MappableDataset):
    """Rows of MindRecord files, as `mindspore.dataset.MindDataset`.

    Args:
        dataset_files (str or list[str]): one file of a set written by FileWriter (every
            shard of the set is read, found beside it by the names its header lists), or a
            list of data files (exactly those are read, in that order).
        columns_list (list[str], optional): the fields to read, in that order. Default: all,
            in the sorted order of their names (MindSpore keeps its schema as a JSON object
            with sorted keys).
        shuffle (bool or Shuffle, optional): True or Shuffle.GLOBAL (the default, None)
            shuffles every row, False reads in order; Shuffle.FILES and Shuffle.INFILE
            shuffle the files' order or the rows within each file (not with shards).
        num_parallel_workers, num_shards, shard_id, sampler, num_samples: as every
            random-access source.
        padded_sample, num_padded, cache: not supported by msrt (pass None).

    Columns: int32/int64/float32/float64 scalars as 0-d arrays of that dtype, string as a
    0-d NumPy str array, bytes as a 1-D uint8 array, arrays with the schema's shape (its
    -1 resolved per row).

    Raises:
        ValueError: a file does not exist; columns_list names no field of the schema.
        TypeError: an argument has the wrong type.
        MindRecordFormatError (a RuntimeError): a file or its index is missing, corrupt or
            not a MindRecord file, named in the message.
    """

    def __init__(self, dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None, cache=None):
        if padded_sample is not None or num_padded is not None:
            raise NotImplementedError("msrt's MindDataset does not pad shards; pass padded_sample=None and "
                                      "num_padded=None.")
        if columns_list is not None:
            check_columns(columns_list, "columns_list")
            type_check(columns_list, (list,), "columns_list")
        mode = shuffle if isinstance(shuffle, Shuffle) else None
        if mode is not None:
            if mode is not Shuffle.GLOBAL and num_shards is not None:
                raise NotImplementedError(f"msrt's MindDataset shards only with shuffle True, False or "
                                          f"Shuffle.GLOBAL, got {mode}.")
            shuffle = True
        super().__init__(num_parallel_workers=num_parallel_workers, sampler=sampler, num_samples=num_samples,
                         shuffle=shuffle, num_shards=num_shards, shard_id=shard_id, cache=cache)
        self.dataset_files = dataset_files
        self.columns_list = columns_list
        self._shards = _shard_files(dataset_files)
        schema = self._shards[0].schema
        names = [name for name, _, _ in schema]
        wanted = sorted(names) if columns_list is None else list(columns_list)
        for name in wanted:
            if name not in names:
                raise ValueError(f"Invalid columns_list, column '{name}' is not in the MindRecord schema {names}.")
        self._select = [names.index(n) for n in wanted]
        self._columns = wanted
        counts = [s.row_count for s in self._shards]
        self._starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        if mode in (Shuffle.FILES, Shuffle.INFILE):
            self.sampler = _FileOrderSampler(self._starts, mode, num_samples)

    def _source_size(self):
        return int(self._starts[-1])

    def _read_rows(self, indices):
        which = np.searchsorted(self._starts, indices, side="right") - 1
        rows = [None] * len(indices)
        for shard_index in np.unique(which).tolist():
            positions = np.nonzero(which == shard_index)[0]
            local = indices[positions] - self._starts[shard_index]
            for position, values in zip(positions.tolist(), self._shards[shard_index].read_rows(local)):
                rows[position] = [values[j] for j in self._select]
        return rows

    def _blocks(self, indices):
        for start in range(0, len(indices), _BLOCK_ROWS):
            rows = self._read_rows(np.asarray(indices[start:start + _BLOCK_ROWS], np.int64))
            if rows:
                yield [_stack([row[c] for row in rows]) for c in range(len(self._columns))]
