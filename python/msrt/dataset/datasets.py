"""Datasets: lazy pipelines of sources and operations. This module holds the base
classes; the operation nodes are in map_batch.py (map, batch) and row_ops.py
(shuffle, repeat, take, skip, filter, project, rename, zip, concat), the
iterators that run a pipeline in iterators.py, the block helpers in _blocks.py.

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
import copy
import warnings

import numpy as np

from . import config
from ._blocks import _BLOCK_ROWS, _num_rows, _row, _RunState
from .iterators import DictIterator, TupleIterator
from ._validate import (check_dir, check_num_parallel_workers, check_source_params, check_valid_str, refuse_unsupported,
                        type_check)
from .samplers import (
    DistributedSampler,
    RandomSampler,
    SubsetRandomSampler,
    _generator,
    _PassSeeds,
    _PositionSampler,
    select_sampler,
)

# The node kinds' tags in the seeds of Note [passes and seeds].
_SHUFFLE_TAG = 11
_SPLIT_TAG = 12

# The operation nodes, by the Dataset method that builds them. They subclass
# Dataset in map_batch.py and row_ops.py (which the package imports) and enter
# themselves here with @_operation(name), so this module does not import them.
_OPERATIONS = {}


def _operation(name):
    def enter(cls):
        _OPERATIONS[name] = cls
        return cls
    return enter


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
        return _OPERATIONS["map"](self, operations, input_columns, output_columns, num_parallel_workers, **kwargs)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        """Stacks `batch_size` consecutive rows into one; a short last batch is kept
        unless `drop_remainder`. `batch_size` may be a callable taking a BatchInfo.

        Keyword arguments: `per_batch_map(col, ..., batch_info)` gets a list of rows per
        column of `input_columns` (default: all) and returns a tuple of lists, the
        columns `output_columns` (default: the input names); `pad_info` (MindSpore 1.x,
        see `padded_batch`); `python_multiprocessing` and `max_rowsize` are accepted.
        """
        return _OPERATIONS["batch"](self, batch_size, drop_remainder, num_parallel_workers, **kwargs)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        """`batch`, padding first: `pad_info` maps a column to (pad_shape, pad_value); a None
        shape or dim pads to the largest in the batch, a smaller dim cuts; `{}` pads every
        column to the batch's largest shape, with 0."""
        return _OPERATIONS["batch"](self, batch_size, drop_remainder, num_parallel_workers, pad_info=pad_info)

    def shuffle(self, buffer_size):
        """Shuffles rows through a buffer of `buffer_size` rows (a full shuffle when it
        holds the whole dataset); a new order each epoch."""
        return _OPERATIONS["shuffle"](self, buffer_size)

    def repeat(self, count=None):
        """Repeats the dataset `count` times; forever when `count` is None or -1."""
        return _OPERATIONS["repeat"](self, count)

    def take(self, count=-1):
        """The first `count` rows (-1: all)."""
        return _OPERATIONS["take"](self, count)

    def skip(self, count):
        """All but the first `count` rows."""
        return _OPERATIONS["skip"](self, count)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """Keeps the rows for which `predicate(*columns)` is true; `input_columns` (default:
        all) name the columns it gets, one NumPy array each. The dataset's size is known only
        by running the filter, as in MindSpore."""
        return _OPERATIONS["filter"](self, predicate, input_columns, num_parallel_workers)

    def project(self, columns):
        """Keeps `columns`, in that order."""
        return _OPERATIONS["project"](self, columns)

    def rename(self, input_columns, output_columns):
        """Renames `input_columns` to `output_columns`."""
        return _OPERATIONS["rename"](self, input_columns, output_columns)

    def zip(self, datasets):
        """Joins this dataset's columns with those of `datasets` (a Dataset or a tuple of
        them), row by row, until the shortest ends; column names must be distinct."""
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        type_check(datasets, (tuple, Dataset), "datasets")
        return _OPERATIONS["zip"]((self,) + datasets)

    def concat(self, datasets):
        """The rows of this dataset followed by those of `datasets` (a Dataset or a list)."""
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        type_check(datasets, (list, Dataset), "datasets")
        return _OPERATIONS["concat"]([self] + datasets)

    def __add__(self, datasets):
        return self.concat(datasets)

    def split(self, sizes, randomize=True):
        """Splits the pipeline into datasets of `sizes` rows (ints summing to its size, or
        fractions summing to 1), in order; with `randomize` after a shuffle (buffer of
        10000 rows) drawn once, the same for every split and every epoch."""
        absolute = _split_sizes(self, sizes, randomize)
        source = self
        if randomize:
            source = _OPERATIONS["shuffle"](self, 10000)
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
            if isinstance(node, _OPERATIONS["batch"]):
                return node.batch_size
            node = node._child
        return 1

    def get_repeat_count(self):
        """The count of the last `repeat` in the pipeline (-1: forever), 1 if there is none."""
        node = self
        while node.children:
            if isinstance(node, _OPERATIONS["repeat"]):
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
        refuse_unsupported(type(self).__name__, "cache", cache, "a dataset cache server")
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
