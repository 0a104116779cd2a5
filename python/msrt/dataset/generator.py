"""GeneratorDataset and NumpySlicesDataset: datasets whose rows come from Python objects.

A source is random-access (`__getitem__` and `__len__`: read in the order of
a sampler, so it can be shuffled and sharded), callable (called once per pass;
it returns an iterable of rows) or iterable (`iter()` once per pass). A row is
a tuple of values, one per column (a bare array or scalar is one column).

Random-access sources may be read by `num_parallel_workers` workers: threads,
or with `python_multiprocessing=True` processes forked at the start of each
pass (see _workers.py: rows travel back as raw array bytes behind a JSON
header, never pickled) and come out in the sampler's order.
"""
import numpy as np

from ._validate import as_column_list, check_bool, check_columns, check_source_params, type_check
from . import _workers, datasets
from ._blocks import _stack
from .datasets import MappableDataset

_ROW_TYPES = (int, float, str, bytes, np.ndarray, np.generic)


def _as_array(value, position, tensor_type):
    if isinstance(value, tensor_type):
        value = value.asnumpy()
    if isinstance(value, float) and position is not None:  # a Python float inside a tuple
        array = np.array(value, dtype=np.float32)
    else:
        array = np.asarray(value)
    if array.dtype == object:
        where = "the row" if position is None else f"item {position} of the row"
        raise TypeError(f"Data type of {where} or its converted NumPy array is expected to be int, float, str or "
                        f"bytes, but got {array.dtype} (from {type(value).__name__}).")
    return array


def _convert_row(row, columns):
    """A row from the source as a list of arrays, one per column (MindSpore's conversions)."""
    from .._tensor import Tensor  # not at import: the msrt package imports this module

    if isinstance(row, _ROW_TYPES + (Tensor,)):
        values = [_as_array(row, None, Tensor)]
    elif isinstance(row, dict):
        raise TypeError("Input data is expected to be int, float, str, bytes, numpy.ndarray, Tensor or tuple of "
                        "these types, but got dict.")
    else:
        try:
            values = [_as_array(value, i, Tensor) for i, value in enumerate(row)]
        except TypeError as error:
            if "expected to be" in str(error):
                raise
            raise TypeError(f"A row of the source should be a tuple of NumPy arrays, got {type(row)}.") from None
    if len(values) != len(columns):
        raise RuntimeError(
            f"Invalid data, the number of columns returned by the source is {len(values)}, but column_names has "
            f"{len(columns)}: {columns}."
        )
    return values


def _rows_to_block(rows, width):
    return [_stack([row[c] for row in rows]) for c in range(width)]


def _ordered_blocks(indices, workers, count):
    """Blocks of the rows `indices` read by `workers`, in order."""
    size = max(1, min(datasets._BLOCK_ROWS, -(-len(indices) // (4 * count))))
    chunks = (indices[i:i + size] for i in range(0, len(indices), size))
    return _workers.ordered_results(chunks, workers, count)


# --------------------------------------------------------------------------
# The datasets

def _is_random_access(source):
    return hasattr(source, "__getitem__") and hasattr(source, "__len__")


class GeneratorDataset(MappableDataset):
    """A dataset whose rows come from a Python source (see the module docstring).

    Args:
        source: a random-access object (`source[i]` and `len(source)`), a callable
            returning an iterable, or an iterable; each row a tuple of NumPy arrays
            (or values NumPy converts; a Python float in a tuple becomes float32).
        column_names (str or list[str]): names of the columns, required.
        column_types (list of msrt dtypes, optional): each column's dtype, checked per row.
        schema: not supported by msrt (pass column_names).
        num_samples (int, optional): rows to read (None: all).
        num_parallel_workers (int, optional): workers reading a random-access source. Default: 1.
        shuffle, sampler, num_shards, shard_id: as for every random-access source
            (shuffled by default; shards of equal size, ceil(rows / num_shards), wrapping
            around; in data_parallel after init() the cluster's shard by default). Only for
            random-access sources: an iterable one is read whole on every rank.
        python_multiprocessing (bool, optional): workers are forked processes (True,
            the default) or threads.
        max_rowsize: accepted for compatibility.

    Raises:
        TypeError: the source is none of the three kinds, or an argument has the wrong type.
        ValueError: column_names missing, or shuffle/sampler/shards given for a source
            that is not random-access.
        RuntimeError: inconsistent sampler/shuffle/shard arguments; at iteration, rows whose
            column count or dtype does not match.
    """

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=6):
        if not (callable(source) or hasattr(source, "__iter__") or hasattr(source, "__getitem__")):
            raise TypeError(f"Input `source` function of GeneratorDataset should be callable, iterable or random "
                            f"accessible, but got {type(source)}.")
        if schema is not None:
            raise NotImplementedError("msrt's GeneratorDataset does not read a schema; pass column_names "
                                      "(and column_types).")
        if column_names is None:
            raise ValueError("Neither columns_names nor schema are provided.")
        check_columns(column_names, "column_names")
        column_names = as_column_list(column_names)
        self._dtypes = None
        if column_types is not None:
            from .transforms.transforms import _numpy_dtype

            type_check(column_types, (list,), "column_types")
            if len(column_types) != len(column_names):
                raise ValueError(f"column_types should have one dtype per column: got {len(column_types)} "
                                 f"for columns {column_names}.")
            self._dtypes = [_numpy_dtype(t) for t in column_types]
        check_bool(python_multiprocessing, "python_multiprocessing")
        self._random_access = _is_random_access(source)
        if not self._random_access:
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("num_shards", num_shards)):
                if value is not None:
                    raise ValueError(f"{name} is not supported if source does not have attribute '__getitem__' "
                                     f"(and '__len__').")
        check_source_params(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        super().__init__(num_parallel_workers=num_parallel_workers, sampler=sampler, num_samples=num_samples,
                         shuffle=shuffle, num_shards=num_shards, shard_id=shard_id)
        self.source = source
        self.column_names = column_names
        self.column_types = column_types
        self.python_multiprocessing = python_multiprocessing
        self.max_rowsize = max_rowsize
        self._columns = list(column_names)
        self._iterable_size = None

    def _shards_by_default(self):
        return self._random_access  # an iterable source is read whole on every rank

    def _row(self, value):
        row = _convert_row(value, self._columns)
        if self._dtypes is not None:
            for name, array, dtype in zip(self._columns, row, self._dtypes):
                if array.dtype != dtype:
                    raise RuntimeError(f"Invalid data type of column '{name}': column_types gives {dtype}, but the "
                                       f"source returned {array.dtype}.")
        return row

    def _read(self, indices):
        """The rows `indices` of a random-access source, as one block."""
        return _rows_to_block([self._row(self.source[int(i)]) for i in indices], len(self._columns))

    def _source_size(self):
        if self._random_access or hasattr(self.source, "__len__"):
            return len(self.source)
        if self._iterable_size is None:  # as MindSpore: an iterable is counted by reading it once
            self._iterable_size = sum(1 for _ in self._rows_of_iterable())
        return self._iterable_size

    def _size(self):
        if self._random_access:
            return super()._size()
        size = self._source_size()
        return min(size, self.num_samples) if self.num_samples else size

    def _blocks(self, indices):
        workers = self.num_parallel_workers or 1
        if workers == 1 or len(indices) == 0:
            for start in range(0, len(indices), datasets._BLOCK_ROWS):
                yield self._read(indices[start:start + datasets._BLOCK_ROWS])
            return
        if self.python_multiprocessing:
            pool = _workers.ProcessWorkers(workers, self._read, _workers.encode_indices, _workers.decode_indices,
                                           "GeneratorDataset")
        else:
            pool = _workers.ThreadWorkers(workers, self._read, "generator")
        yield from _ordered_blocks(indices, pool, workers)

    def _rows_of_iterable(self):
        rows = self.source() if callable(self.source) else iter(self.source)
        limit = self.num_samples or None
        for count, value in enumerate(rows):
            if limit is not None and count >= limit:
                return
            yield self._row(value)

    def _run(self, state):
        if self._random_access:
            yield from super()._run(state)
            return
        state.next_pass(self)
        pending = []
        for row in self._rows_of_iterable():
            pending.append(row)
            if len(pending) == datasets._BLOCK_ROWS:
                yield _rows_to_block(pending, len(self._columns))
                pending = []
        if pending:
            yield _rows_to_block(pending, len(self._columns))

    def split(self, sizes, randomize=True):
        if self._random_access:
            return super().split(sizes, randomize)
        return super(MappableDataset, self).split(sizes, randomize)


class _NumpySlices:
    """The columns of NumpySlicesDataset's `data`, sliced along their first axis."""

    def __init__(self, data, column_names):
        if isinstance(data, dict):
            names = list(data.keys())
            data = tuple(getattr(v, "values", v) for v in data.values())  # pandas-like columns too
        elif isinstance(data, tuple):
            names = None
        else:
            data = (data,)
            names = None
        arrays = []
        for i, column in enumerate(data):
            try:
                array = np.asarray(column)
            except ValueError:
                raise ValueError(f"NumpySlicesDataset: column {i} is ragged: its rows should all have one shape."
                                 ) from None
            if array.dtype == object:
                raise TypeError(f"NumpySlicesDataset: column {i} holds {type(array.flat[0]).__name__} objects; every "
                                f"column should convert to a NumPy array of numbers or strings.")
            if array.ndim == 0:
                raise ValueError(f"NumpySlicesDataset: column {i} is a scalar; it should have a first axis to slice.")
            arrays.append(array)
        lengths = [len(a) for a in arrays]
        if len(set(lengths)) > 1:
            raise ValueError(f"Data length in each column is not equal: {lengths}.")
        if column_names is not None:
            names = as_column_list(column_names)
        elif names is None:
            names = [f"column_{i}" for i in range(len(arrays))]
        if len(names) != len(arrays):
            raise ValueError(f"column_names should name each of the {len(arrays)} columns of data, got {names}.")
        self.arrays = arrays
        self.names = names

    def __getitem__(self, index):
        return tuple(a[index, ...] for a in self.arrays)

    def __len__(self):
        return len(self.arrays[0])


class NumpySlicesDataset(GeneratorDataset):
    """Rows sliced from NumPy-convertible data along its first axis.

    `data` is a list or NumPy array (one column), a tuple (one column per item) or a
    dict (keys name the columns). Columns are named `column_names`, else the dict's
    keys, else "column_0", "column_1", .... Shuffled by default; sampler, num_samples
    and shards as every random-access source. Blocks of rows are sliced from the
    arrays in the calling thread: `num_parallel_workers` is checked, not used.
    """

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None):
        type_check(data, (list, tuple, dict, np.ndarray), "data")
        if len(data) == 0:
            raise ValueError("Argument data cannot be empty.")
        if column_names is not None:
            check_columns(column_names, "column_names")
        slices = _NumpySlices(data, column_names)
        super().__init__(slices, column_names=slices.names, num_samples=num_samples,
                         num_parallel_workers=num_parallel_workers, shuffle=shuffle, sampler=sampler,
                         num_shards=num_shards, shard_id=shard_id)

    def _blocks(self, indices):
        # Whole blocks sliced at once: the data is already in arrays.
        for start in range(0, len(indices), datasets._BLOCK_ROWS):
            part = indices[start:start + datasets._BLOCK_ROWS]
            yield [a[part] for a in self.source.arrays]
