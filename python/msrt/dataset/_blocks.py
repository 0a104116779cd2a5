"""Blocks: consecutive rows of a pipeline, one entry per column (datasets.py's
module docstring describes them), and the state one iterator keeps across its
passes (Note [passes and seeds] there)."""
import numpy as np

from . import config
from .samplers import _generator

# Rows per block read from a source: large enough to amortise Python overhead
# per NumPy call, small enough to stay in cache through a chain of transforms.
_BLOCK_ROWS = 512


# --------------------------------------------------------------------------
# Columns inside a block

def _num_rows(block):
    return len(block[0]) if block else 0


def _row(column, i):
    """Row i of a column as an ndarray (0-d for scalars, never a NumPy scalar)."""
    if isinstance(column, np.ndarray):
        return column[i, ...]
    return column[i]


def _stack(rows):
    """Rows as one ndarray when they share shape and dtype, else the list itself."""
    first = rows[0]
    if all(r.shape == first.shape and r.dtype == first.dtype for r in rows):
        return np.stack(rows)
    return list(rows)


def _take(column, indices):
    if isinstance(column, np.ndarray):
        return column[indices]
    return [column[i] for i in indices]


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, np.ndarray) for p in parts):
        first = parts[0]
        if all(p.shape[1:] == first.shape[1:] and p.dtype == first.dtype for p in parts):
            return np.concatenate(parts)
    rows = []
    for part in parts:
        rows.extend(_row(part, i) for i in range(len(part)))
    return _stack(rows)


def _concat_blocks(blocks):
    if len(blocks) == 1:
        return blocks[0]
    return [_concat([b[c] for b in blocks]) for c in range(len(blocks[0]))]


def _as_outputs(result):
    """What an operation returned, as a list of ndarrays (a tuple is several columns)."""
    if isinstance(result, tuple):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


def _is_vectorised(op):
    return getattr(op, "_vectorised", False)


class _RunState:
    """The state one iterator keeps across its epochs: seeds and pass counters."""

    def __init__(self):
        self.seed = config._iterator_seed()
        self.shared_seed = config.get_seed()
        self._passes = {}

    def next_pass(self, node):
        index = self._passes.get(id(node), 0)
        self._passes[id(node)] = index + 1
        return index

    def rng(self, tag, node, pass_index):
        return _generator(self.seed, tag, node._depth, pass_index)
