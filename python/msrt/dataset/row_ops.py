"""Dataset operations that choose, reorder or combine rows: shuffle, repeat, take, skip,
filter, project, rename, zip and concat. The base class Dataset builds them (datasets.py)."""
import numpy as np

from ._blocks import _BLOCK_ROWS, _num_rows, _row, _RunState, _stack, _take
from ._validate import INT32_MAX, as_column_list, check_columns, check_value, type_check
from .datasets import _SHUFFLE_TAG, Dataset
from .samplers import _generator


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
