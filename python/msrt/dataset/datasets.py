"""Datasets: lazy pipelines of sources and operations (the iterators that run
them are in iterators.py, the block helpers in _blocks.py).

A dataset is a node with its children; `map`, `batch`, `shuffle`... return a new
node and compute nothing. An iterator runs the pipeline: each node pulls
*blocks* from its child and yields blocks. A block holds consecutive rows, one
entry per column: an ndarray whose first axis is the row when all rows of the
column share shape and dtype, else a list of per-row ndarrays. Transforms with
a vectorised path therefore see hundreds of rows at once (see `MapDataset`).

Note [passes and seeds]: every epoch and every repeat re-runs the source; each
run is a *pass*. Random choices (sampler order, the shuffle buffer) are drawn
from (iterator seed, node kind, node depth, pass index), so a new iterator with
the same `config.set_seed` reproduces the same rows, and each pass differs.
"""
import abc
import collections
import copy
import math
import warnings

import numpy as np

from . import _workers, config
from ._blocks import (_BLOCK_ROWS, _as_outputs, _concat_blocks, _is_vectorised, _num_rows, _row, _RunState, _stack,
                      _take)
from .iterators import DictIterator, TupleIterator
from ._validate import (
    INT32_MAX,
    as_column_list,
    check_columns,
    check_dir,
    check_num_parallel_workers,
    check_pos_int32,
    check_source_params,
    check_valid_str,
    check_value,
    type_check,
)
from .samplers import (
    DistributedSampler,
    RandomSampler,
    SubsetRandomSampler,
    _generator,
    _PassSeeds,
    _PositionSampler,
    select_sampler,
)

_SHUFFLE_TAG = 11
_SPLIT_TAG = 12


# --------------------------------------------------------------------------
# The base class

class Dataset(abc.ABC):
    """Base of all datasets: the operations that build pipelines and the ways to read them."""

    def __init__(self, children=None, num_parallel_workers=None):
        if num_parallel_workers is not None:
            check_num_parallel_workers(num_parallel_workers)
        self.children = list(children or [])
        self.num_parallel_workers = num_parallel_workers
        self._depth = 1 + max((c._depth for c in self.children), default=-1)
        self._columns = []
        self._saved_output_shapes = None
        self._saved_output_types = None

    # What each node defines -------------------------------------------------
    @abc.abstractmethod
    def _run(self, state):
        """Yields the blocks of one pass."""

    @abc.abstractmethod
    def _size(self):
        """Rows one epoch yields, by MindSpore's rules (repeat(-1) counts once)."""

    @property
    def _child(self):
        return self.children[0]

    def _column_index(self, name, what):
        try:
            return self._columns.index(name)
        except ValueError:
            raise RuntimeError(
                f"Invalid column, {what} '{name}' does not exist in the dataset; its columns are {self._columns}."
            ) from None

    # Operations ---------------------------------------------------------------
    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None, **kwargs):
        """Applies `operations` (one callable or a list, in order) to `input_columns` (default:
        the first column); the last operation's outputs are named `output_columns` (default:
        the input names). `num_parallel_workers` workers (default: the configured number if
        `config.set_num_parallel_workers` was called, else the iterator's thread) transform
        blocks of rows, as threads or, with `python_multiprocessing=True`, forked processes;
        the order of rows is kept."""
        return MapDataset(self, operations, input_columns, output_columns, num_parallel_workers, **kwargs)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        """Stacks `batch_size` consecutive rows into one; a short last batch is kept
        unless `drop_remainder`. `batch_size` may be a callable taking a BatchInfo.

        Keyword arguments: `per_batch_map(col, ..., batch_info)` gets a list of rows per
        column of `input_columns` (default: all) and returns a tuple of lists, the
        columns `output_columns` (default: the input names); `pad_info` (MindSpore 1.x,
        see `padded_batch`); `python_multiprocessing` and `max_rowsize` are accepted.
        """
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, **kwargs)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        """`batch`, padding first: `pad_info` maps a column to (pad_shape, pad_value); a None
        shape or dim pads to the largest in the batch, a smaller dim cuts; `{}` pads every
        column to the batch's largest shape, with 0."""
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, pad_info=pad_info)

    def shuffle(self, buffer_size):
        """Shuffles rows through a buffer of `buffer_size` rows (a full shuffle when it
        holds the whole dataset); a new order each epoch."""
        return ShuffleDataset(self, buffer_size)

    def repeat(self, count=None):
        """Repeats the dataset `count` times; forever when `count` is None or -1."""
        return RepeatDataset(self, count)

    def take(self, count=-1):
        """The first `count` rows (-1: all)."""
        return TakeDataset(self, count)

    def skip(self, count):
        """All but the first `count` rows."""
        return SkipDataset(self, count)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """Keeps the rows for which `predicate(*columns)` is true; `input_columns` (default:
        all) name the columns it gets, one NumPy array each. The dataset's size is known only
        by running the filter, as in MindSpore."""
        return FilterDataset(self, predicate, input_columns, num_parallel_workers)

    def project(self, columns):
        """Keeps `columns`, in that order."""
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        """Renames `input_columns` to `output_columns`."""
        return RenameDataset(self, input_columns, output_columns)

    def zip(self, datasets):
        """Joins this dataset's columns with those of `datasets` (a Dataset or a tuple of
        them), row by row, until the shortest ends; column names must be distinct."""
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        type_check(datasets, (tuple, Dataset), "datasets")
        return ZipDataset((self,) + datasets)

    def concat(self, datasets):
        """The rows of this dataset followed by those of `datasets` (a Dataset or a list)."""
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        type_check(datasets, (list, Dataset), "datasets")
        return ConcatDataset([self] + datasets)

    def __add__(self, datasets):
        return self.concat(datasets)

    def split(self, sizes, randomize=True):
        """Splits the pipeline into datasets of `sizes` rows (ints summing to its size, or
        fractions summing to 1), in order; with `randomize` after a shuffle (buffer of
        10000 rows) drawn once, the same for every split and every epoch."""
        absolute = _split_sizes(self, sizes, randomize)
        source = self
        if randomize:
            source = ShuffleDataset(self, 10000)
            source._fixed_seed = config._iterator_seed()
        splits, skipped = [], 0
        for size in absolute:
            part = source.skip(skipped) if skipped else source
            splits.append(part.take(size))
            skipped += size
        return tuple(splits)

    # Information --------------------------------------------------------------
    def get_dataset_size(self):
        """Rows (batches, after `batch`) in one epoch."""
        return self._size()

    def get_batch_size(self):
        """The batch size of the last `batch` in the pipeline, 1 if there is none."""
        node = self
        while node.children:
            if isinstance(node, BatchDataset):
                return node.batch_size
            node = node._child
        return 1

    def get_repeat_count(self):
        """The count of the last `repeat` in the pipeline (-1: forever), 1 if there is none."""
        node = self
        while node.children:
            if isinstance(node, RepeatDataset):
                return node.count
            node = node._child
        return 1

    def get_col_names(self):
        """Names of the columns, in order."""
        return list(self._columns)

    def _first_row(self):
        state = _RunState()
        for block in self._run(state):
            if _num_rows(block):
                return [_row(column, 0) for column in block]
        return None

    def output_shapes(self, estimate=False):
        """Shapes of the columns of the first row (a list of lists)."""
        type_check(estimate, (bool,), "estimate")
        if self._saved_output_shapes is None:
            row = self._first_row()
            self._saved_output_shapes = [] if row is None else [list(v.shape) for v in row]
            self._saved_output_types = [] if row is None else [v.dtype for v in row]
        return [list(s) for s in self._saved_output_shapes]

    def output_types(self):
        """NumPy dtypes of the columns of the first row."""
        if self._saved_output_types is None:
            self.output_shapes()
        return list(self._saved_output_types)

    # Iterators -----------------------------------------------------------------
    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        """An iterator yielding each row as a list of column values; `num_epochs` epochs
        (-1: any number), each ending with StopIteration."""
        return TupleIterator(self, columns, num_epochs, output_numpy, do_copy)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        """An iterator yielding each row as a dict from column name to value."""
        return DictIterator(self, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        return self.create_tuple_iterator(num_epochs=1)

    def __repr__(self):
        return f"<{type(self).__name__} columns={self._columns}>"


def _split_sizes(dataset, sizes, randomize):
    """Absolute split sizes from `sizes` (MindSpore's checks and rounding)."""
    type_check(sizes, (list,), "sizes")
    type_check(randomize, (bool,), "randomize")
    if not sizes:
        raise ValueError("sizes cannot be empty.")
    all_int = all(isinstance(x, int) and not isinstance(x, bool) for x in sizes)
    all_float = all(isinstance(x, float) for x in sizes)
    if not (all_int or all_float):
        raise ValueError(f"sizes should be list of int or list of float, got {sizes}.")
    if all_int and not all(x > 0 for x in sizes):
        raise ValueError(f"sizes is a list of int, but there should be no negative or zero numbers, got {sizes}.")
    if all_float:
        if not all(0 < x <= 1 for x in sizes):
            raise ValueError(f"sizes is a list of float, but there should be no numbers outside the range (0, 1], "
                             f"got {sizes}.")
        if abs(sum(sizes) - 1) >= 1e-5:
            raise ValueError(f"sizes is a list of float, but the percentages do not sum up to 1, got {sizes}.")
    node = dataset
    while True:
        if isinstance(getattr(node, "sampler", None), DistributedSampler):
            raise RuntimeError("Dataset should not be sharded before split.")
        if not node.children:
            break
        node = node._child
    total = dataset.get_dataset_size()
    if total <= 0:
        raise RuntimeError("dataset_size is unknown, unable to split.")
    if all_int:
        if sum(sizes) != total:
            raise RuntimeError(f"Sum of split sizes {sum(sizes)} is not equal to dataset size {total}.")
        return list(sizes)
    absolute = []
    for fraction in sizes:
        size = int(round(fraction * total))
        if size == 0:
            raise RuntimeError(f"Split percentage {fraction} is too small (dataset size {total}).")
        absolute.append(size)
    # Rows missing go to the first split; rows too many come off the first split that has enough.
    difference = total - sum(absolute)
    if difference > 0:
        absolute[0] += difference
    else:
        for i, size in enumerate(absolute):
            if size + difference > 0:
                absolute[i] += difference
                break
    return absolute


class MappableDataset(Dataset):
    """A random-access source: rows are read in the order its sampler gives.

    In data_parallel mode after `communication.init()` (with more than one
    rank), a source given no sampler, num_shards or shard_id reads shard
    `get_rank()` of `get_group_size()`.

    Subclasses define `_source_size()` and either `_load()` (the columns of every
    row, as arrays whose first axis is the row) or `_blocks(indices)`.
    """

    def __init__(self, num_parallel_workers=None, sampler=None, num_samples=None, shuffle=None,
                 num_shards=None, shard_id=None, cache=None):
        check_source_params(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        if cache is not None:
            raise NotImplementedError("msrt has no dataset cache server; pass cache=None.")
        super().__init__(num_parallel_workers=num_parallel_workers)
        if sampler is None and num_shards is None and self._shards_by_default():
            from ..parallel._utils import _dataset_shards

            num_shards, shard_id = _dataset_shards()  # the cluster's, in data_parallel after init()
        self.sampler = select_sampler(num_samples, sampler, shuffle, num_shards, shard_id)
        self.num_samples = num_samples
        self.shuffle_flag = shuffle
        self.num_shards = num_shards
        self.shard_id = shard_id

    def _shards_by_default(self):
        """Whether the source takes num_shards and shard_id from the cluster when
        given neither (in data_parallel after communication.init())."""
        return True

    def _load(self):
        """The source's columns (arrays whose first axis is the row). A source
        overrides this or `_blocks`; the default `_blocks` reads it."""
        raise NotImplementedError(f"{type(self).__name__} defines neither _load() nor _blocks()")

    @abc.abstractmethod
    def _source_size(self):
        """Rows of the source before sampling."""

    def _size(self):
        return self.sampler._count(self._source_size())

    def _blocks(self, indices):
        """Blocks of the rows `indices`, in that order."""
        columns = self._load()
        for start in range(0, len(indices), _BLOCK_ROWS):
            part = indices[start:start + _BLOCK_ROWS]
            yield [column[part] for column in columns]

    def _run(self, state):
        seeds = _PassSeeds(state.seed, state.shared_seed, state.next_pass(self))
        yield from self._blocks(self.sampler._indices(self._source_size(), seeds))

    def split(self, sizes, randomize=True):
        """Splits a source into datasets of `sizes` rows (ints summing to its size, or
        fractions summing to 1). With `randomize`, rows go to the splits in one random
        order, drawn once (from `config.set_seed`'s seed when set), so the splits are
        disjoint; each split keeps that order every epoch."""
        absolute = _split_sizes(self, sizes, randomize)
        if isinstance(self.sampler, (RandomSampler, SubsetRandomSampler)):
            from .._warnings import MsrtWarning

            warnings.warn("Dataset is shuffled before split: its order changes every epoch, so the splits hold "
                          "different rows each epoch; create it with shuffle=False and split with randomize=True.",
                          MsrtWarning, stacklevel=2)
        total = sum(absolute)
        order = _generator(config._iterator_seed(), _SPLIT_TAG).permutation(total) if randomize else np.arange(total)
        splits, start = [], 0
        for size in absolute:
            part = copy.copy(self)
            part.sampler = _PositionSampler(self.sampler, order[start:start + size])
            splits.append(part)
            start += size
        return tuple(splits)


class _FolderSplitDataset(MappableDataset):
    """A source read from a folder holding a train and a test split
    (`usage` "train", "test" or "all"), as MnistDataset and Cifar10Dataset are."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        dataset_dir = check_dir(dataset_dir)
        if usage is not None:
            check_valid_str(usage, ["train", "test", "all"], "usage")
        super().__init__(num_parallel_workers=num_parallel_workers, sampler=sampler, num_samples=num_samples,
                         shuffle=shuffle, num_shards=num_shards, shard_id=shard_id, cache=cache)
        self.dataset_dir = dataset_dir
        self.usage = "all" if usage is None else usage


# --------------------------------------------------------------------------
# Operations

def _output_layout(child_columns, in_names, out_names, operation):
    """Where each column after a map (or per_batch_map) comes from, ("out", k) or ("in", j),
    and the column names. As many outputs as inputs: each output takes its input's place;
    otherwise the outputs come first, followed by the columns not consumed (MindSpore's order)."""
    if len(in_names) == len(out_names):
        renamed = dict(zip(in_names, range(len(out_names))))
        layout = [("out", renamed[c]) if c in renamed else ("in", j) for j, c in enumerate(child_columns)]
        columns = [out_names[renamed[c]] if c in renamed else c for c in child_columns]
    else:
        kept = [(j, c) for j, c in enumerate(child_columns) if c not in in_names]
        layout = [("out", k) for k in range(len(out_names))] + [("in", j) for j, _ in kept]
        columns = out_names + [c for _, c in kept]
    if len(set(columns)) != len(columns):
        duplicated = sorted({c for c in columns if columns.count(c) > 1})
        raise RuntimeError(
            f"Invalid columns, {operation} would produce duplicate column names {duplicated} "
            f"(columns after the {operation}: {columns})."
        )
    return layout, columns


def _validate_operations(operations):
    ops = list(operations) if isinstance(operations, list) else [operations]
    if not ops:
        raise ValueError("operations should not be empty.")
    for i, op in enumerate(ops):
        if not callable(op):
            raise TypeError(f"operations[{i}] is neither a transform nor a callable Python function: got {op!r}.")
    return ops


class MapDataset(Dataset):
    """Applies a chain of operations to some columns (see `Dataset.map`).

    Consecutive operations with a vectorised path run once per block on the
    stacked rows; the others run row by row. Columns: when as many outputs as
    inputs, each output takes its input's place; otherwise the outputs come
    first, followed by the columns the map did not consume (MindSpore's order).

    With `num_parallel_workers` > 1 (or `config.set_num_parallel_workers`), blocks
    are transformed by that many threads, or with `python_multiprocessing=True` by
    forked processes that receive and return raw array bytes (see _workers.py);
    blocks come out in their input order either way. Random transforms then draw
    in the order the workers reach them, so with a seed set their results are
    reproducible only with one worker (as in MindSpore).
    """

    _MAP_KWARGS = ("python_multiprocessing", "max_rowsize", "cache", "callbacks", "offload")

    def __init__(self, input_dataset, operations, input_columns=None, output_columns=None,
                 num_parallel_workers=None, **kwargs):
        for key in kwargs:
            if key not in self._MAP_KWARGS:
                raise TypeError(f"map() got an unexpected keyword argument '{key}'")
        if kwargs.get("python_multiprocessing") is not None:
            type_check(kwargs["python_multiprocessing"], (bool,), "python_multiprocessing")
        if kwargs.get("cache") is not None:
            raise NotImplementedError("msrt has no dataset cache server; pass cache=None.")
        if kwargs.get("callbacks") is not None:
            raise NotImplementedError("msrt does not run dataset callbacks yet; pass callbacks=None.")
        self.operations = _validate_operations(operations)
        for name, value in (("input_columns", input_columns), ("output_columns", output_columns)):
            if value is not None:
                check_columns(value, name)
        super().__init__([input_dataset], num_parallel_workers)
        child_columns = input_dataset._columns
        in_names = as_column_list(input_columns) if input_columns is not None else child_columns[:1]
        self.input_columns = in_names
        self._in_index = [input_dataset._column_index(n, "input column") for n in in_names]
        out_names = as_column_list(output_columns) if output_columns is not None else list(in_names)
        self.output_columns = out_names
        self._layout, self._columns = _output_layout(child_columns, in_names, out_names, "map")
        self.python_multiprocessing = bool(kwargs.get("python_multiprocessing"))

    def _size(self):
        return self._child._size()

    def _apply_row_ops(self, ops, columns, n):
        results = []
        for i in range(n):
            values = [_row(c, i) for c in columns]
            for op in ops:
                try:
                    values = _as_outputs(op(*values))
                except Exception as error:  # name the failing operation, keep the type
                    if hasattr(error, "add_note"):
                        error.add_note(f"(raised by map operation {op!r} on input columns {self.input_columns})")
                    raise
            results.append(values)
        width = len(results[0])
        if any(len(r) != width for r in results):
            raise RuntimeError(f"map operations on {self.input_columns} returned a varying number of columns.")
        return [_stack([r[k] for r in results]) for k in range(width)]

    def _transform(self, columns, n):
        ops = self.operations
        position = 0
        while position < len(ops):
            op = ops[position]
            if len(columns) == 1 and isinstance(columns[0], np.ndarray) and _is_vectorised(op):
                columns = [op._apply_rows(columns[0])]
                position += 1
                continue
            end = position + 1
            while end < len(ops) and not _is_vectorised(ops[end]):
                end += 1
            columns = self._apply_row_ops(ops[position:end], columns, n)
            position = end
        return columns

    def _outputs(self, columns):
        """The map's output columns for a block's input columns."""
        outputs = self._transform(columns, _num_rows(columns))
        if len(outputs) != len(self.output_columns):
            raise RuntimeError(
                f"Invalid columns, the number of columns returned in 'map' operations should match "
                f"the number of 'output_columns', but got the number of columns returned in 'map' "
                f"operations: {len(outputs)}, the number of 'output_columns': {len(self.output_columns)}."
            )
        return outputs

    def _workers(self):
        return self.num_parallel_workers or config._map_workers()

    def _run(self, state):
        blocks = (b for b in self._child._run(state) if _num_rows(b))
        workers = self._workers()
        if workers == 1:
            for block in blocks:
                outputs = self._outputs([block[j] for j in self._in_index])
                yield [outputs[k] if kind == "out" else block[k] for kind, k in self._layout]
            return
        # Blocks go to the workers in order and come back in order; `sent` keeps each
        # block's other columns until its outputs arrive.
        if self.python_multiprocessing:
            pool = _workers.ProcessWorkers(workers, self._outputs, _workers.encode_block, _workers.decode_block,
                                           "map")
        else:
            pool = _workers.ThreadWorkers(workers, self._outputs, "map")
        sent = collections.deque()

        def requests():
            for block in blocks:
                sent.append(block)
                yield [block[j] for j in self._in_index]

        for outputs in _workers.ordered_results(requests(), pool, workers):
            block = sent.popleft()
            yield [outputs[k] if kind == "out" else block[k] for kind, k in self._layout]


class BatchInfo:
    """What a callable `batch_size` or a `per_batch_map` learns about the batch being made."""

    def __init__(self, batch_num, epoch_num):
        self._batch_num = batch_num
        self._epoch_num = epoch_num

    def get_batch_num(self):
        """Batches already made in this epoch (from 0)."""
        return self._batch_num

    def get_epoch_num(self):
        """The epoch (pass over the batch's input) this batch belongs to, from 0."""
        return self._epoch_num


def _check_pad_info(pad_info):
    type_check(pad_info, (dict,), "pad_info")
    for key, value in pad_info.items():
        type_check(key, (str,), "key in pad_info")
        if value is None:
            continue
        type_check(value, (tuple,), "value in pad_info")
        if len(value) != 2:
            raise ValueError(f"value of pad_info should be a tuple of size 2 (pad_shape, pad_value), got {value}.")
        shape, pad_value = value
        if shape is not None:
            type_check(shape, (list,), "shape in pad_info")
            for dim in shape:
                if dim is not None:
                    check_pos_int32(dim, "dim of shape in pad_info")
        if pad_value is not None:
            type_check(pad_value, (int, float, str, bytes), "pad_value")


def _pad_rows(rows, name, pad):
    """`rows` padded (or cut) to one shape: pad_shape's dims, the batch's largest where None."""
    shape, value = pad if pad is not None else (None, None)
    rank = rows[0].ndim
    if any(r.ndim != rank for r in rows) or (shape is not None and len(shape) != rank):
        raise RuntimeError(
            f"Invalid pad_info, the ranks of column '{name}' and its pad shape must all be equal, got row shapes "
            f"{sorted({r.shape for r in rows})} and pad shape {shape}."
        )
    largest = [max(r.shape[d] for r in rows) for d in range(rank)]
    target = tuple(largest[d] if shape is None or shape[d] is None else shape[d] for d in range(rank))
    padded = []
    for row in rows:
        out = np.full(target, 0 if value is None else value, dtype=row.dtype)
        kept = tuple(slice(0, min(t, n)) for t, n in zip(target, row.shape))
        out[kept] = row[kept]
        padded.append(out)
    return padded


class BatchDataset(Dataset):
    """Stacks consecutive rows into batches (see `Dataset.batch`).

    An int batch size without per_batch_map or padding batches whole blocks at
    once; otherwise each batch is made from its rows: `per_batch_map` gets a list
    of rows per input column and a BatchInfo, then columns in `pad_info` are padded.
    """

    def __init__(self, input_dataset, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        if not callable(batch_size):
            type_check(batch_size, (int,), "batch_size")
            check_pos_int32(batch_size, "batch_size")
        type_check(drop_remainder, (bool,), "drop_remainder")
        known = ("python_multiprocessing", "max_rowsize", "per_batch_map", "input_columns", "output_columns",
                 "pad_info", "column_order")
        for key in kwargs:
            if key not in known:
                raise TypeError(f"batch() got an unexpected keyword argument '{key}'")
        if kwargs.get("column_order") is not None:
            raise TypeError("batch() no longer takes column_order (removed in MindSpore 2.0); use project() after it.")
        per_batch_map = kwargs.get("per_batch_map")
        input_columns, output_columns = kwargs.get("input_columns"), kwargs.get("output_columns")
        pad_info = kwargs.get("pad_info")
        if per_batch_map is not None and not callable(per_batch_map):
            raise TypeError(f"per_batch_map should be callable, got {type(per_batch_map)}.")
        for name, value in (("input_columns", input_columns), ("output_columns", output_columns)):
            if value is not None:
                check_columns(value, name)
                if per_batch_map is None:
                    raise ValueError(f"{name} can be given only together with per_batch_map.")
        if pad_info is not None:
            _check_pad_info(pad_info)
        super().__init__([input_dataset], num_parallel_workers)
        child_columns = input_dataset._columns
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.per_batch_map = per_batch_map
        self.pad_info = pad_info
        self._columns = list(child_columns)
        if per_batch_map is not None:
            in_names = as_column_list(input_columns) if input_columns is not None else list(child_columns)
            self._in_index = [input_dataset._column_index(n, "input column") for n in in_names]
            out_names = as_column_list(output_columns) if output_columns is not None else list(in_names)
            self.input_columns, self.output_columns = in_names, out_names
            self._layout, self._columns = _output_layout(child_columns, in_names, out_names, "per_batch_map")
        for name in pad_info or {}:
            if name not in self._columns:
                raise RuntimeError(f"Invalid pad_info, column '{name}' does not exist in the batch's columns "
                                   f"{self._columns}.")

    def _by_rows(self):
        return callable(self.batch_size) or self.per_batch_map is not None or self.pad_info is not None

    def _size(self):
        if callable(self.batch_size):  # sizes are known only by making the batches
            return sum(1 for _ in self._run(_RunState()))
        rows = self._child._size()
        if self.drop_remainder:
            return rows // self.batch_size
        return math.ceil(rows / self.batch_size)

    def _next_size(self, info):
        if not callable(self.batch_size):
            return self.batch_size
        size = self.batch_size(info)
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ValueError(f"batch_size function should return a positive integer, got {size!r}.")
        return size

    def _make_batch(self, rows, info):
        """One batch (a block of one row) from a list of rows (lists of column values)."""
        columns = [[row[c] for row in rows] for c in range(len(self._child._columns))]
        if self.per_batch_map is not None:
            result = self.per_batch_map(*[columns[j] for j in self._in_index], info)
            if not isinstance(result, tuple):
                raise RuntimeError(f"per_batch_map should return a tuple of lists of NumPy arrays, one per output "
                                   f"column, got {type(result)}.")
            if len(result) != len(self.output_columns):
                raise RuntimeError(f"per_batch_map returned {len(result)} columns, but output_columns names "
                                   f"{len(self.output_columns)}: {self.output_columns}.")
            outputs = [[np.asarray(v) for v in column] for column in result]
            if not all(outputs) or len({len(column) for column in outputs}) != 1:
                raise RuntimeError(f"per_batch_map should return non-empty columns of equal length, got lengths "
                                   f"{[len(column) for column in outputs]}.")
            columns = [outputs[k] if kind == "out" else columns[k] for kind, k in self._layout]
        for c, name in enumerate(self._columns):
            if self.pad_info is not None and (name in self.pad_info or not self.pad_info):
                columns[c] = _pad_rows(columns[c], name, self.pad_info.get(name))
        return [self._batches(_stack(column), name, 1) for column, name in zip(columns, self._columns)]

    def _run_by_rows(self, state):
        epoch = state.next_pass(self)
        info = BatchInfo(0, epoch)
        size, pending = self._next_size(info), []
        for block in self._child._run(state):
            for i in range(_num_rows(block)):
                pending.append([_row(column, i) for column in block])
                if len(pending) == size:
                    yield self._make_batch(pending, info)
                    info = BatchInfo(info.get_batch_num() + 1, epoch)
                    size, pending = self._next_size(info), []
        if pending and not self.drop_remainder:
            yield self._make_batch(pending, info)

    def _batches(self, column, name, count):
        """`column` (count * size rows) as `count` batches, stacked when they can be."""
        size = len(column) // count
        if isinstance(column, np.ndarray):
            return column.reshape((count, size) + column.shape[1:])
        batches = []
        for b in range(count):
            rows = column[b * size:(b + 1) * size]
            first = rows[0]
            for r in rows:
                if r.shape != first.shape:
                    raise RuntimeError(
                        "Inconsistent batch shapes, batch operation expects same shape for each data row, "
                        f"but got inconsistent shape in column {self._columns.index(name)} ('{name}'), expected "
                        f"shape for this column is:{list(first.shape)}, got shape:{list(r.shape)}."
                    )
                if r.dtype != first.dtype:
                    raise RuntimeError(
                        "Inconsistent batch type, batch operation expects same type for each data row, but got "
                        f"inconsistent type in column '{name}', expected type:{first.dtype}, got type:{r.dtype}."
                    )
            batches.append(np.stack(rows))
        return _stack(batches)

    def _emit(self, block, count):
        return [self._batches(column, name, count) for column, name in zip(block, self._columns)]

    def _run(self, state):
        if self._by_rows():
            yield from self._run_by_rows(state)
            return
        size = self.batch_size
        pending, rows = [], 0
        for block in self._child._run(state):
            n = _num_rows(block)
            if n == 0:
                continue
            pending.append(block)
            rows += n
            if rows < size:
                continue
            merged = _concat_blocks(pending)
            full = rows // size * size
            yield self._emit([column[:full] for column in merged], full // size)
            rows -= full
            pending = [[column[full:] for column in merged]] if rows else []
        if rows and not self.drop_remainder:
            yield self._emit(_concat_blocks(pending), 1)


def _gather(parts, which, local):
    """Rows `local[i]` of part `which[i]`, for each i, as one column."""
    first = parts[0]
    if all(isinstance(p, np.ndarray) and p.shape[1:] == first.shape[1:] and p.dtype == first.dtype for p in parts):
        out = np.empty((len(which),) + first.shape[1:], first.dtype)
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(len(parts) + 1))
        for b in range(len(parts)):
            if bounds[b] < bounds[b + 1]:
                rows = order[bounds[b]:bounds[b + 1]]
                out[rows] = parts[b][local[rows]]
        return out
    return _stack([_row(parts[b], i) for b, i in zip(which.tolist(), local.tolist())])


class _RowStore:
    """Rows a shuffle buffer may still emit, addressed by arrival number.

    Blocks are kept as they arrived (no concatenation); once they hold many
    more rows than are still live, the live rows are copied into one block.
    """

    def __init__(self):
        self.blocks = []
        self.block_ids = []  # sorted ids of each block's rows; increasing block to block
        self.total = 0  # rows ever added

    def add(self, block):
        n = _num_rows(block)
        self.blocks.append(block)
        self.block_ids.append(np.arange(self.total, self.total + n, dtype=np.int64))
        self.total += n

    def _locate(self, wanted):
        offsets = np.cumsum([0] + [len(ids) for ids in self.block_ids])
        positions = np.searchsorted(np.concatenate(self.block_ids), wanted)
        which = np.searchsorted(offsets, positions, side="right") - 1
        return which, positions - offsets[which]

    def take(self, wanted):
        which, local = self._locate(wanted)
        return [_gather([b[c] for b in self.blocks], which, local) for c in range(len(self.blocks[0]))]

    def keep_only(self, live):
        """Forgets every row not in `live` (once they clearly outnumber the live ones)."""
        stored = sum(len(ids) for ids in self.block_ids)
        if stored <= 2 * len(live) + _BLOCK_ROWS:
            return
        live = np.sort(np.asarray(live, np.int64))
        self.blocks = [self.take(live)]
        self.block_ids = [live]


class ShuffleDataset(Dataset):
    """MindSpore's shuffle buffer: fill `buffer_size` rows; then each incoming row
    replaces a randomly chosen buffered row, which is emitted; at the end the buffer
    drains in random order. A new order every pass (Note [passes and seeds])."""

    def __init__(self, input_dataset, buffer_size):
        type_check(buffer_size, (int,), "buffer_size")
        check_value(buffer_size, (2, INT32_MAX), "buffer_size")
        super().__init__([input_dataset])
        self.buffer_size = buffer_size
        self._columns = list(input_dataset._columns)

    def _size(self):
        return self._child._size()

    _fixed_seed = None  # set by split: the same order every pass and every iterator

    def _run(self, state):
        pass_index = state.next_pass(self)
        if self._fixed_seed is not None:
            rng = _generator(self._fixed_seed, _SHUFFLE_TAG)
        else:
            rng = state.rng(_SHUFFLE_TAG, self, pass_index)
        store = _RowStore()
        blocks = iter(self._child._run(state))
        # Rows are emitted in chunks: fewer, larger gathers from the store.
        chunk = max(_BLOCK_ROWS, self.buffer_size // 4)

        def pull(target):
            for block in blocks:
                if _num_rows(block):
                    store.add(block)
                    if store.total >= target:
                        return True
            return False

        more = pull(self.buffer_size)
        buffer = list(range(min(self.buffer_size, store.total)))
        next_id = len(buffer)
        while True:
            if more:
                more = pull(store.total + chunk)
            arrived = store.total - next_id
            if arrived == 0:
                break
            slots = rng.integers(0, len(buffer), size=arrived).tolist()
            out = [0] * arrived
            for k, slot in enumerate(slots):
                out[k] = buffer[slot]
                buffer[slot] = next_id + k
            next_id += arrived
            yield store.take(np.array(out, np.int64))
            store.keep_only(buffer)
        if buffer:
            # Drain: take a random slot, fill it from the end of the buffer.
            last = len(buffer) - 1
            draws = rng.random(len(buffer))
            out = []
            for i, draw in enumerate(draws.tolist()):
                slot = int(draw * (last + 1 - i))
                out.append(buffer[slot])
                buffer[slot] = buffer[last - i]
            yield store.take(np.array(out, np.int64))


class RepeatDataset(Dataset):
    def __init__(self, input_dataset, count=None):
        type_check(count, (int, type(None)), "repeat")
        if isinstance(count, int) and ((count <= 0 and count != -1) or count > INT32_MAX):
            raise ValueError("count should be either -1 or positive integer, range[1, INT32_MAX].")
        super().__init__([input_dataset])
        self.count = -1 if count is None else count
        self._columns = list(input_dataset._columns)

    def _size(self):
        rows = self._child._size()
        # As MindSpore: repeat(-1) reports the size of one pass.
        return rows * self.count if self.count > 0 else rows

    def _run(self, state):
        done = 0
        while self.count == -1 or done < self.count:
            produced = 0
            for block in self._child._run(state):
                produced += _num_rows(block)
                yield block
            done += 1
            if produced == 0:  # an empty dataset repeated forever would never yield
                return


class TakeDataset(Dataset):
    def __init__(self, input_dataset, count=-1):
        type_check(count, (int,), "count")
        if (count <= 0 and count != -1) or count > INT32_MAX:
            raise ValueError(
                f"count should be either -1 or within the required interval of (0, {INT32_MAX}], got {count}."
            )
        super().__init__([input_dataset])
        self.count = count
        self._columns = list(input_dataset._columns)

    def _size(self):
        rows = self._child._size()
        return rows if self.count == -1 else min(rows, self.count)

    def _run(self, state):
        if self.count == -1:
            yield from self._child._run(state)
            return
        left = self.count
        for block in self._child._run(state):
            n = _num_rows(block)
            if n >= left:
                yield [column[:left] for column in block]
                return
            left -= n
            yield block


class SkipDataset(Dataset):
    def __init__(self, input_dataset, count):
        type_check(count, (int,), "count")
        check_value(count, (0, INT32_MAX), "count")
        super().__init__([input_dataset])
        self.count = count
        self._columns = list(input_dataset._columns)

    def _size(self):
        return max(0, self._child._size() - self.count)

    def _run(self, state):
        left = self.count
        for block in self._child._run(state):
            if left:
                n = _num_rows(block)
                if n <= left:
                    left -= n
                    continue
                block = [column[left:] for column in block]
                left = 0
            yield block


class FilterDataset(Dataset):
    def __init__(self, input_dataset, predicate, input_columns=None, num_parallel_workers=None):
        if not callable(predicate):
            raise TypeError(f"Argument predicate with value {predicate!r} is not callable.")
        if input_columns is not None:
            check_columns(input_columns, "input_columns")
        super().__init__([input_dataset], num_parallel_workers)
        self.predicate = predicate
        self._columns = list(input_dataset._columns)
        names = self._columns if input_columns is None else as_column_list(input_columns)
        self.input_columns = names
        self._index = [input_dataset._column_index(n, "input column") for n in names]

    def _size(self):  # known only by filtering
        return sum(_num_rows(block) for block in self._run(_RunState()))

    def _keep(self, block, i):
        try:
            kept = self.predicate(*[_row(block[j], i) for j in self._index])
        except Exception as error:  # name the failing predicate, keep the type
            if hasattr(error, "add_note"):
                error.add_note(f"(raised by the filter predicate {self.predicate!r} on columns {self.input_columns})")
            raise
        return bool(np.asarray(kept).all()) if isinstance(kept, np.ndarray) else bool(kept)

    def _run(self, state):
        for block in self._child._run(state):
            keep = [i for i in range(_num_rows(block)) if self._keep(block, i)]
            if len(keep) == _num_rows(block):
                yield block
            elif keep:
                yield [_take(column, keep) for column in block]


class ProjectDataset(Dataset):
    def __init__(self, input_dataset, columns):
        check_columns(columns, "columns")
        super().__init__([input_dataset])
        names = as_column_list(columns)
        self._index = [input_dataset._column_index(n, "column") for n in names]
        self._columns = names

    def _size(self):
        return self._child._size()

    def _run(self, state):
        for block in self._child._run(state):
            yield [block[j] for j in self._index]


class RenameDataset(Dataset):
    def __init__(self, input_dataset, input_columns, output_columns):
        check_columns(input_columns, "input_columns")
        check_columns(output_columns, "output_columns")
        old, new = as_column_list(input_columns), as_column_list(output_columns)
        if len(old) != len(new):
            raise ValueError("Number of column in input_columns and output_columns is not equal.")
        super().__init__([input_dataset])
        for name in old:
            input_dataset._column_index(name, "column to rename")
        mapping = dict(zip(old, new))
        self._columns = [mapping.get(c, c) for c in input_dataset._columns]
        if len(set(self._columns)) != len(self._columns):
            raise RuntimeError(f"Invalid columns, rename would produce duplicate column names: {self._columns}.")

    def _size(self):
        return self._child._size()

    def _run(self, state):
        return self._child._run(state)


def _check_datasets(datasets, operation, minimum):
    for i, dataset in enumerate(datasets):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Invalid dataset, expected Dataset object, but got {type(dataset)} at position {i} "
                            f"of the datasets to {operation}.")
    if len(datasets) < minimum:
        raise ValueError(f"{operation} needs at least {minimum} datasets, got {len(datasets)}.")


def zip_datasets(datasets):
    """`msrt.dataset.zip` (as `mindspore.dataset.zip`): zips a tuple of at least two datasets
    (see `Dataset.zip`); named apart here so that this module keeps the builtin zip."""
    type_check(datasets, (tuple,), "datasets")
    if len(datasets) <= 1:
        raise ValueError(f"Can't zip empty or just one dataset: got {len(datasets)}.")
    return ZipDataset(datasets)


class ZipDataset(Dataset):
    """Rows of several datasets side by side (see `Dataset.zip`)."""

    def __init__(self, datasets):
        datasets = list(datasets)
        _check_datasets(datasets, "zip", 1)
        columns = [c for d in datasets for c in d._columns]
        duplicated = sorted({c for c in columns if columns.count(c) > 1})
        if duplicated:
            raise RuntimeError(f"Invalid data, duplicate column names {duplicated} when zipping datasets with "
                               f"columns {[d._columns for d in datasets]}; rename them first.")
        super().__init__(datasets)
        self._columns = columns

    def _size(self):
        return min(child._size() for child in self.children)

    def _run(self, state):
        runs = [iter(child._run(state)) for child in self.children]
        pending = [None] * len(runs)  # each child's unconsumed block
        try:
            while True:
                for k, run in enumerate(runs):
                    while pending[k] is None or _num_rows(pending[k]) == 0:
                        pending[k] = next(run, None)
                        if pending[k] is None:
                            return
                n = min(_num_rows(block) for block in pending)
                yield [column[:n] for block in pending for column in block]
                pending = [[column[n:] for column in block] for block in pending]
        finally:
            for run in runs:
                run.close()


class ConcatDataset(Dataset):
    """The rows of several datasets one after another (see `Dataset.concat`)."""

    def __init__(self, datasets):
        datasets = list(datasets)
        _check_datasets(datasets, "concat", 2)
        for dataset in datasets[1:]:
            if dataset._columns != datasets[0]._columns:
                raise RuntimeError(f"Invalid data, the datasets to concatenate must have the same columns, got "
                                   f"{datasets[0]._columns} and {dataset._columns}.")
        super().__init__(datasets)
        self._columns = list(datasets[0]._columns)

    def _size(self):
        return sum(child._size() for child in self.children)

    def _run(self, state):
        for child in self.children:
            yield from child._run(state)
