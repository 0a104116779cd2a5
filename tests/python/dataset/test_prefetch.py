"""The prefetching iterator, map workers and their config settings."""
import gc
import os
import threading
import time

import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import rows


def wait_until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "msrt-dataset-prefetch"]


@pytest.fixture(autouse=True)
def _no_thread_left():
    """Every test ends with no prefetch thread running."""
    yield
    assert wait_until(lambda: not prefetch_threads()), "a prefetch thread outlived its test"


class CountingSource:
    """An iterable source of `n` rows that counts the rows it produced and notes its closing."""

    def __init__(self, n, fail_at=None, error=ValueError):
        self.n, self.fail_at, self.error = n, fail_at, error
        self.produced = 0
        self.closed = threading.Event()

    def __call__(self):
        try:
            for i in range(self.n):
                if i == self.fail_at:
                    raise self.error(f"source failed at row {i}")
                self.produced += 1
                yield (np.array(i, np.int64),)
        finally:
            self.closed.set()


def test_config_values_and_errors():
    assert ds.config.get_prefetch_size() == 16
    ds.config.set_prefetch_size(3)
    assert ds.config.get_prefetch_size() == 3
    assert ds.config.get_num_parallel_workers() == 8
    ds.config.set_num_parallel_workers(3)
    assert ds.config.get_num_parallel_workers() == 3
    for setter in (ds.config.set_prefetch_size, ds.config.set_num_parallel_workers):
        for bad in (1.0, "2", True, None):
            with pytest.raises(TypeError, match="isn't of type int"):
                setter(bad)
        for bad in (0, -1, 2 ** 31):
            with pytest.raises(ValueError, match="not within the required range"):
                setter(bad)
    with pytest.raises(TypeError):
        ds.config.set_enable_prefetch(1)
    assert ds.config.get_prefetch_size() == 3 and ds.config.get_num_parallel_workers() == 3


def test_iterator_reads_ahead_bounded_by_prefetch_size(small_blocks):
    ds.config.set_prefetch_size(2)
    source = CountingSource(1000)
    iterator = ds.GeneratorDataset(source, ["x"]).create_tuple_iterator(output_numpy=True, num_epochs=1)
    assert int(next(iterator)[0]) == 0
    # The thread fills the queue (2 blocks of 7 rows) beyond the block being read...
    assert wait_until(lambda: source.produced >= 3 * 7)
    time.sleep(0.05)
    # ...and then waits: 2 queued + 1 being consumed + 1 waiting to be queued.
    assert source.produced <= 4 * 7
    assert [int(r[0]) for r in iterator] == list(range(1, 1000))


def test_without_prefetch_nothing_is_read_ahead(small_blocks):
    ds.config.set_enable_prefetch(False)
    source = CountingSource(1000)
    iterator = ds.GeneratorDataset(source, ["x"]).create_tuple_iterator(output_numpy=True, num_epochs=1)
    next(iterator)
    time.sleep(0.02)
    assert source.produced == 7
    assert not prefetch_threads()


def test_same_rows_with_and_without_prefetch():
    def pipeline():
        data = ds.NumpySlicesDataset(np.arange(3000, dtype=np.int32), ["x"])
        return data.map(lambda x: x * 3, "x").shuffle(100).batch(64)

    ds.config.set_seed(5)
    with_prefetch = rows(pipeline())
    ds.config.set_enable_prefetch(False)
    without = rows(pipeline())
    assert len(with_prefetch) == len(without) == 47
    for a, b in zip(with_prefetch, without):
        np.testing.assert_array_equal(a[0], b[0])


class SourceError(Exception):
    pass


@pytest.mark.parametrize("error", [ValueError, SourceError])
def test_source_error_raised_in_consumer_with_its_type(small_blocks, error):
    source = CountingSource(100, fail_at=30, error=error)
    iterator = ds.GeneratorDataset(source, ["x"]).create_tuple_iterator(output_numpy=True, num_epochs=1)
    seen = []
    with pytest.raises(error, match="source failed at row 30"):
        for row in iterator:
            seen.append(int(row[0]))
    assert seen == list(range(28))  # the 4 full blocks before the failing one
    assert wait_until(lambda: not prefetch_threads())


def test_abandoned_iterator_stops_its_thread_and_closes_the_source(small_blocks):
    source = CountingSource(10 ** 6)
    iterator = ds.GeneratorDataset(source, ["x"]).batch(2).create_dict_iterator(num_epochs=1)
    next(iterator)
    assert prefetch_threads()
    del iterator
    gc.collect()
    assert wait_until(lambda: not prefetch_threads())
    assert source.closed.is_set()
    assert source.produced < 10 ** 6


def test_stop_ends_the_thread(small_blocks):
    source = CountingSource(10 ** 6)
    iterator = ds.GeneratorDataset(source, ["x"]).create_tuple_iterator(num_epochs=1)
    next(iterator)
    iterator.stop()
    assert not prefetch_threads() and source.closed.is_set()
    with pytest.raises(StopIteration):
        next(iterator)


def slow_affine(x):
    time.sleep(0.001)
    return x * 2 + 1, np.array(os.getpid() * 1000 + threading.get_ident() % 1000, np.int64)


@pytest.mark.parametrize("processes", [False, True])
def test_map_workers_keep_order_and_values(small_blocks, processes):
    data = ds.NumpySlicesDataset(np.arange(500, dtype=np.float64).reshape(250, 2), ["x"], shuffle=False)
    mapped = data.map(slow_affine, "x", ["y", "worker"], num_parallel_workers=3, python_multiprocessing=processes)
    got = rows(mapped)
    np.testing.assert_array_equal(np.stack([r[0] for r in got]), np.arange(500.0).reshape(250, 2) * 2 + 1)
    workers = {int(r[1]) for r in got}
    assert len(workers) > 1
    if processes:
        assert all(w // 1000 != os.getpid() for w in workers)
    else:
        assert all(w // 1000 == os.getpid() for w in workers)


def test_configured_workers_apply_to_maps_without_their_own(small_blocks):
    names = set()

    def record(x):
        names.add(threading.current_thread().name)
        time.sleep(0.001)
        return x

    data = ds.NumpySlicesDataset(np.arange(100), ["x"], shuffle=False).map(record, "x")
    assert [int(r[0]) for r in rows(data)] == list(range(100))
    assert not any(n.startswith("msrt-map") for n in names)
    ds.config.set_num_parallel_workers(2)
    names.clear()
    assert [int(r[0]) for r in rows(data)] == list(range(100))
    assert names and all(n.startswith("msrt-map") for n in names)


def fail_on_seven(x):
    if int(x) == 7:
        raise KeyError(f"no row {int(x)}")
    return x


@pytest.mark.parametrize("processes", [False, True])
def test_map_worker_errors_keep_their_type(small_blocks, processes):
    data = ds.NumpySlicesDataset(np.arange(50), ["x"], shuffle=False)
    data = data.map(fail_on_seven, "x", num_parallel_workers=2, python_multiprocessing=processes)
    with pytest.raises(KeyError, match="no row 7") as info:
        rows(data)
    if processes:
        assert "map worker process" in str(info.value)
    assert wait_until(lambda: not prefetch_threads())


def plus_one(x):
    return x + 1


def test_process_workers_with_blocks_larger_than_a_pipe():
    # 512-row blocks of 8 KB rows (4 MB): a worker must never be sent a request while its
    # answer waits unread (both sides would block on full pipes).
    values = np.arange(2000 * 1000, dtype=np.float64).reshape(2000, 1000)
    data = ds.NumpySlicesDataset(values, ["x"], shuffle=False)
    data = data.map(plus_one, "x", num_parallel_workers=2, python_multiprocessing=True)
    result = []
    reader = threading.Thread(target=lambda: result.append(np.stack([r[0] for r in rows(data)])), daemon=True)
    reader.start()
    reader.join(120)
    assert not reader.is_alive(), "map's worker processes deadlocked"
    np.testing.assert_array_equal(result[0], values + 1)


def test_close_from_the_producer_thread_does_not_join_itself(small_blocks):
    # The garbage collector can close an abandoned iterator in any thread, the producer's included.
    from msrt.dataset import _blocks, iterators

    closed, box, ready = [], [], threading.Event()

    def source():
        for i in range(100):
            if i == 20:
                ready.wait(5)
                box[0].close()  # inside the producer thread, while nobody reads
                closed.append(True)
            yield (np.array(i),)

    box.append(iterators._prefetched(ds.GeneratorDataset(source, ["x"])._run(_blocks._RunState()), 2))
    ready.set()
    assert wait_until(lambda: not prefetch_threads())
    assert closed == [True]
