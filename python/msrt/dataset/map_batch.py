"""Dataset operations that transform columns: map (with its worker pool) and batch
(with per_batch_map and padding). The base class Dataset builds them (datasets.py)."""
import collections
import math

import numpy as np

from . import _workers, config
from ._blocks import _as_outputs, _concat_blocks, _is_vectorised, _num_rows, _row, _RunState, _stack
from ._validate import as_column_list, check_columns, check_pos_int32, refuse_unsupported, type_check
from .datasets import Dataset, _operation


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


@_operation("map")
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
        refuse_unsupported("map", "cache", kwargs.get("cache"), "a dataset cache server")
        refuse_unsupported("map", "callbacks", kwargs.get("callbacks"), "dataset callbacks (DSCallback)")
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


@_operation("batch")
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
