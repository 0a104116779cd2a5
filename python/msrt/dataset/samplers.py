"""Samplers: which rows of a random-access source each pass reads, in which order.

A sampler turns the number of rows of its source into an array of row
indices, once per pass (every epoch and every repeat is a new pass); random
samplers draw a new order each pass, reproducibly from the pipeline seed.
"""
import abc

import numpy as np

from ._validate import INT32_MAX, INT64_MAX


def _generator(*words):
    """A NumPy generator seeded by a tuple of non-negative ints."""
    return np.random.Generator(np.random.PCG64(list(words)))


class _PassSeeds:
    """What a sampler may draw randomness from during one pass of an iterator.

    `seed` is the iterator's seed; `shared_seed` is the configured seed even
    when none was set, so that shards in different processes agree on one
    permutation; `pass_index` counts the passes this source has made.
    """

    def __init__(self, seed, shared_seed, pass_index):
        self.seed = seed
        self.shared_seed = shared_seed
        self.pass_index = pass_index

    def rng(self, tag):
        return _generator(self.seed, tag, self.pass_index)

    def shared_rng(self, tag):
        return _generator(self.shared_seed, tag, self.pass_index)


_RANDOM_TAG = 1
_SUBSET_RANDOM_TAG = 2
_DISTRIBUTED_TAG = 3


def _check_num_samples(num_samples):
    if num_samples is not None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool):
            raise TypeError(f"num_samples must be integer but was: {num_samples}.")
        if num_samples < 0 or num_samples > INT64_MAX:
            raise ValueError(f"num_samples exceeds the boundary between 0 and {INT64_MAX}(INT64_MAX)!")


def _limit(count, num_samples):
    return count if not num_samples else min(count, num_samples)


class BuiltinSampler(abc.ABC):
    """Base of the samplers. `num_samples` None or 0 means every row the sampler selects."""

    def __init__(self, num_samples=None):
        _check_num_samples(num_samples)
        self.num_samples = num_samples

    def get_num_samples(self):
        return self.num_samples

    @abc.abstractmethod
    def _count(self, num_rows):
        """Rows one pass yields from a source of `num_rows` rows."""

    @abc.abstractmethod
    def _indices(self, num_rows, seeds):
        """Row indices of one pass, an int64 array."""

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class SequentialSampler(BuiltinSampler):
    """Rows in order from `start_index`."""

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None:
            if not isinstance(start_index, int) or isinstance(start_index, bool):
                raise TypeError(f"start_index must be integer but was: {start_index}.")
            if start_index < 0 or start_index > INT64_MAX:
                raise ValueError(f"start_index exceeds the boundary between 0 and {INT64_MAX}(INT64_MAX)!")
        super().__init__(num_samples)
        self.start_index = start_index

    def _start(self, num_rows):
        start = self.start_index or 0
        if start and start >= num_rows:
            raise RuntimeError(
                f"SequentialSampler: start_index {start} is out of range, the source has {num_rows} rows."
            )
        return start

    def _count(self, num_rows):
        return _limit(num_rows - self._start(num_rows), self.num_samples)

    def _indices(self, num_rows, seeds):
        start = self._start(num_rows)
        return np.arange(start, start + self._count(num_rows), dtype=np.int64)


class RandomSampler(BuiltinSampler):
    """A new random order each pass; with `replacement`, independent draws."""

    def __init__(self, replacement=False, num_samples=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement must be a boolean value but was: {replacement}.")
        super().__init__(num_samples)
        self.replacement = replacement

    def _count(self, num_rows):
        if self.replacement:
            return self.num_samples or num_rows
        return _limit(num_rows, self.num_samples)

    def _indices(self, num_rows, seeds):
        rng = seeds.rng(_RANDOM_TAG)
        if self.replacement:
            return rng.integers(0, num_rows, size=self._count(num_rows), dtype=np.int64)
        return rng.permutation(num_rows)[: self._count(num_rows)].astype(np.int64, copy=False)


class DistributedSampler(BuiltinSampler):
    """Shard `shard_id` of `num_shards`: rows shard_id, shard_id + num_shards, ... of one
    (optionally shuffled) order, wrapping around so every shard gets ceil(n / num_shards).

    The shuffled order is drawn from the configured seed (`config.get_seed()`,
    also when no seed was set) so shards in separate processes are disjoint.
    """

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        if not isinstance(num_shards, int) or isinstance(num_shards, bool):
            raise TypeError(f"num_shards must be integer but was: {num_shards}.")
        if not isinstance(shard_id, int) or isinstance(shard_id, bool):
            raise TypeError(f"shard_id must be integer but was: {shard_id}.")
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be a boolean value but was: {shuffle}.")
        if num_shards <= 0 or num_shards > INT32_MAX:
            raise ValueError(f"num_shards exceeds the boundary between 1 and {INT32_MAX}!")
        if shard_id < 0 or shard_id >= num_shards:
            raise ValueError("shard_id should be less than num_shards.")
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise TypeError(f"offset must be integer but was: {offset}.")
        if offset != -1:
            raise NotImplementedError("msrt's DistributedSampler supports only offset=-1 (an even split).")
        super().__init__(num_samples)
        self.num_shards = num_shards
        self.shard_id = shard_id
        self.shuffle = shuffle
        self.offset = offset

    def _count(self, num_rows):
        shard_size = max(1, -(-num_rows // self.num_shards))
        return _limit(shard_size, self.num_samples)

    def _indices(self, num_rows, seeds):
        if num_rows == 0:
            return np.zeros(0, np.int64)
        positions = (np.arange(self._count(num_rows), dtype=np.int64) * self.num_shards + self.shard_id) % num_rows
        if not self.shuffle:
            return positions
        order = seeds.shared_rng(_DISTRIBUTED_TAG).permutation(num_rows)
        return order[positions].astype(np.int64, copy=False)


def _check_indices(indices, name):
    if isinstance(indices, np.ndarray):
        if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
            raise TypeError(f"{name}: indices must be a 1-D array of integers, got {indices.dtype} {indices.shape}.")
        return indices.astype(np.int64)
    if isinstance(indices, int) and not isinstance(indices, bool):
        return np.array([indices], np.int64)
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"Unsupported indices type: {type(indices)}.")
    for i, item in enumerate(indices):
        if not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            raise TypeError(f"Type of indices element must be int, but got list[{i}]: {item}, type: {type(item)}.")
    return np.asarray(indices, np.int64).reshape(-1)


def _check_bounds(indices, num_rows):
    bad = (indices < 0) | (indices >= num_rows)
    if bad.any():
        raise RuntimeError(
            f"Sample ID {int(indices[bad][0])} is out of bound, expected range [0, {num_rows - 1}]."
        )


class SubsetSampler(BuiltinSampler):
    """The given row indices, in the given order."""

    def __init__(self, indices, num_samples=None):
        super().__init__(num_samples)
        self.indices = _check_indices(indices, type(self).__name__)

    def _count(self, num_rows):
        return _limit(len(self.indices), self.num_samples)

    def _indices(self, num_rows, seeds):
        chosen = self.indices[: self._count(num_rows)]
        _check_bounds(chosen, num_rows)
        return chosen


class SubsetRandomSampler(SubsetSampler):
    """The given row indices in a new random order each pass."""

    def _indices(self, num_rows, seeds):
        order = seeds.rng(_SUBSET_RANDOM_TAG).permutation(len(self.indices))
        chosen = self.indices[order][: self._count(num_rows)]
        _check_bounds(chosen, num_rows)
        return chosen


class IterSampler(BuiltinSampler):
    """Indices produced by iterating a user object, afresh each pass."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def _indices(self, num_rows, seeds):
        chosen = _check_indices(list(iter(self.sampler)), "sampler")
        chosen = chosen[: _limit(len(chosen), self.num_samples)]
        _check_bounds(chosen, num_rows)
        return chosen

    def _count(self, num_rows):
        return _limit(len(list(iter(self.sampler))), self.num_samples)


def select_sampler(num_samples, sampler, shuffle, num_shards, shard_id):
    """The sampler a source uses, from its arguments (MindSpore's rules)."""
    if sampler is not None:
        if isinstance(sampler, BuiltinSampler):
            return sampler
        if isinstance(sampler, (np.ndarray, list, tuple)):
            return SubsetSampler(sampler, num_samples)
        if isinstance(sampler, int) and not isinstance(sampler, bool):
            return SubsetSampler([sampler])
        if not isinstance(sampler, str):
            try:
                iter(sampler)
            except TypeError:
                pass
            else:
                return IterSampler(sampler, num_samples)
        raise TypeError(f"Unsupported sampler object of type ({type(sampler)})")
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=shuffle is not False, num_samples=num_samples)
    if shuffle is False:
        return SequentialSampler(num_samples=num_samples)
    return RandomSampler(num_samples=num_samples)


class _PositionSampler(BuiltinSampler):
    """Rows at fixed `positions` of what `base` yields each pass (a split of a source)."""

    def __init__(self, base, positions):
        super().__init__(None)
        self.base = base
        self.positions = np.asarray(positions, np.int64)

    def _count(self, num_rows):
        return len(self.positions)

    def _indices(self, num_rows, seeds):
        return self.base._indices(num_rows, seeds)[self.positions]
