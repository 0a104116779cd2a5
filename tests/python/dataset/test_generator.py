"""GeneratorDataset (random-access, callable and iterable sources; workers; shards) and
NumpySlicesDataset."""
import os

import numpy as np
import pytest

import msrt
import msrt.dataset as ds
from dsutil import rows
from msrt.dataset import config


class Squares:
    """A random-access source: row i is (i, i * i as float32 of shape (2,))."""

    def __init__(self, n=20):
        self.n = n

    def __getitem__(self, i):
        return np.array(i), np.full((2,), i * i, np.float32)

    def __len__(self):
        return self.n


def values(dataset, column=0):
    return [int(row[column]) for row in rows(dataset)]


# --------------------------------------------------------------------------
# Sources

def test_random_access_source_in_order_and_shuffled():
    data = ds.GeneratorDataset(Squares(), ["i", "sq"], shuffle=False)
    assert data.get_col_names() == ["i", "sq"] and data.get_dataset_size() == 20
    got = rows(data)
    assert [int(i) for i, _ in got] == list(range(20))
    np.testing.assert_array_equal(got[3][1], np.array([9, 9], np.float32))
    shuffled = values(ds.GeneratorDataset(Squares(), ["i", "sq"]))  # shuffled by default
    assert sorted(shuffled) == list(range(20)) and shuffled != list(range(20))


def test_callable_and_iterable_sources_and_row_conversions():
    def generator():
        for i in range(5):
            yield i, 0.5 * i, np.arange(i, i + 3, dtype=np.int16)

    data = ds.GeneratorDataset(generator, ["a", "b", "c"])
    got = rows(data)
    assert data.get_dataset_size() == 5
    assert [(int(a), float(b)) for a, b, _ in got] == [(i, 0.5 * i) for i in range(5)]
    # MindSpore's conversions: a Python int is int64, a Python float in a tuple float32.
    assert (got[0][0].dtype, got[0][1].dtype, got[0][2].dtype) == (np.int64, np.float32, np.int16)
    iterable = ds.GeneratorDataset([np.full((2, 2), i, np.uint8) for i in range(4)], "image", shuffle=False)
    assert [int(x[0, 0]) for x, in rows(iterable)] == [0, 1, 2, 3]  # a bare array is one column
    # A callable is called again each epoch.
    iterator = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert len(list(iterator)) == 5 and len(list(iterator)) == 5


def test_iterable_without_len_is_counted_and_num_samples_limits_it():
    data = ds.GeneratorDataset(lambda: (np.array(i) for i in range(13)), "x", num_samples=4)
    assert data.get_dataset_size() == 4 and values(data) == [0, 1, 2, 3]
    assert ds.GeneratorDataset(lambda: (np.array(i) for i in range(13)), "x").get_dataset_size() == 13

    class Sized:
        def __iter__(self):
            return iter(np.arange(6))

        def __len__(self):
            return 6

    sized = ds.GeneratorDataset(Sized(), "x")
    assert sized.get_dataset_size() == 6 and values(sized) == list(range(6))


def test_num_samples_sampler_and_shards_on_random_access_sources():
    assert values(ds.GeneratorDataset(Squares(), ["i", "sq"], shuffle=False, num_samples=6)) == list(range(6))
    assert values(ds.GeneratorDataset(Squares(), ["i", "sq"], sampler=[5, 1, 7])) == [5, 1, 7]
    picked = ds.GeneratorDataset(Squares(), ["i", "sq"], sampler=ds.SequentialSampler(start_index=18))
    assert values(picked) == [18, 19]
    # 20 rows in 3 shards: each gets ceil(20 / 3) = 7, the last wrapping around (MindSpore pads).
    shards = [values(ds.GeneratorDataset(Squares(), ["i", "sq"], shuffle=False, num_shards=3, shard_id=k))
              for k in range(3)]
    assert shards == [[(k + 3 * j) % 20 for j in range(7)] for k in range(3)]  # shard 2 ends with row 0
    config.set_seed(3)
    shuffled = [values(ds.GeneratorDataset(Squares(), ["i", "sq"], num_shards=4, shard_id=k)) for k in range(4)]
    assert sorted(sum(shuffled, [])) == list(range(20))  # 20 = 4 * 5: disjoint, complete


def test_shuffle_is_reproducible_with_a_seed():
    config.set_seed(7)
    first = values(ds.GeneratorDataset(Squares(), ["i", "sq"]))
    config.set_seed(7)
    assert values(ds.GeneratorDataset(Squares(), ["i", "sq"])) == first


@pytest.mark.parametrize("multiprocessing", [False, True])
def test_parallel_workers_give_the_rows_in_sampler_order(multiprocessing, small_blocks):
    pids = []

    class Source(Squares):
        def __getitem__(self, i):
            pids.append(os.getpid())
            return np.array(i), np.full((i % 3 + 1,), i, np.float32)  # ragged column too

    data = ds.GeneratorDataset(Source(57), ["i", "v"], sampler=list(range(56, -1, -1)), num_parallel_workers=3,
                               python_multiprocessing=multiprocessing)
    for _ in range(2):  # workers are made afresh each epoch
        got = rows(data)
        assert [int(i) for i, _ in got] == list(range(56, -1, -1))
        for i, v in got:
            np.testing.assert_array_equal(v, np.full((int(i) % 3 + 1,), int(i), np.float32))
            assert v.flags.writeable
    # Process workers read in other processes: this one read nothing.
    assert (len(pids) == 0) == multiprocessing
    assert len(rows(data.project("i").batch(4).map(lambda i: i * 2, "i"))) == 15


def test_an_abandoned_pass_stops_its_worker_processes():
    import multiprocessing

    data = ds.GeneratorDataset(Squares(5000), ["i", "sq"], shuffle=False, num_parallel_workers=2)
    assert values(data.take(3)) == [0, 1, 2]
    iterator = data.create_tuple_iterator(output_numpy=True)
    assert int(next(iterator)[0]) == 0
    iterator.stop()
    assert multiprocessing.active_children() == []


def test_process_workers_after_msrt_ran_and_with_tensors_in_rows():
    warm = msrt.ops.matmul(msrt.Tensor(np.ones((64, 64), np.float32)), msrt.Tensor(np.ones((64, 64), np.float32)))
    assert float(warm.asnumpy()[0, 0]) == 64.0

    class Source(Squares):
        def __getitem__(self, i):
            return (msrt.Tensor(np.full((3,), i, np.float32)) * 2,)

    data = ds.GeneratorDataset(Source(10), "x", shuffle=False, num_parallel_workers=2)
    np.testing.assert_array_equal(np.stack([x for x, in rows(data)]), np.repeat(np.arange(10.0)[:, None] * 2, 3, 1))


@pytest.mark.parametrize("multiprocessing", [False, True])
def test_worker_errors_reach_the_caller_with_their_type(multiprocessing):
    class Broken(Squares):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError(f"no row {i}")
            return (np.array(i),)

    data = ds.GeneratorDataset(Broken(), "x", shuffle=False, num_parallel_workers=2,
                               python_multiprocessing=multiprocessing)
    with pytest.raises(KeyError, match="no row 5"):
        rows(data)


def test_column_types_are_checked_per_row():
    data = ds.GeneratorDataset(Squares(4), ["i", "sq"], column_types=[msrt.int64, msrt.float32], shuffle=False)
    assert values(data) == [0, 1, 2, 3]
    wrong = ds.GeneratorDataset(Squares(4), ["i", "sq"], column_types=[msrt.int32, msrt.float32])
    with pytest.raises(RuntimeError, match="column_types gives int32, but the source returned int64"):
        rows(wrong)


def test_bad_rows_raise_at_iteration():
    with pytest.raises(RuntimeError, match="number of columns returned by the source is 2, but column_names has 1"):
        rows(ds.GeneratorDataset(Squares(), "x"))
    with pytest.raises(TypeError, match="got dict"):
        rows(ds.GeneratorDataset(lambda: iter([{"a": 1}]), "x"))
    with pytest.raises(TypeError, match="expected to be int, float, str or bytes"):
        rows(ds.GeneratorDataset(lambda: iter([(object(),)]), "x"))


def test_argument_errors():
    with pytest.raises(TypeError, match="callable, iterable or random accessible"):
        ds.GeneratorDataset(3, "x")
    with pytest.raises(ValueError, match="Neither columns_names nor schema"):
        ds.GeneratorDataset(Squares())
    with pytest.raises(NotImplementedError, match="schema"):
        ds.GeneratorDataset(Squares(), schema="schema.json")
    with pytest.raises(TypeError, match="column_names"):
        ds.GeneratorDataset(Squares(), 5)
    with pytest.raises(ValueError, match="one dtype per column"):
        ds.GeneratorDataset(Squares(), ["i", "sq"], column_types=[msrt.int64])
    for key in ("shuffle", "sampler", "num_shards"):
        with pytest.raises(ValueError, match=f"{key} is not supported if source does not have attribute"):
            ds.GeneratorDataset(lambda: iter([]), "x", **{key: {"shuffle": True, "sampler": [0],
                                                                "num_shards": 2}[key]})
    with pytest.raises(RuntimeError, match="sampler and shuffle"):
        ds.GeneratorDataset(Squares(), ["i", "sq"], shuffle=True, sampler=[1])
    with pytest.raises(RuntimeError, match="requires shard_id"):
        ds.GeneratorDataset(Squares(), ["i", "sq"], num_shards=2)
    with pytest.raises(ValueError, match="shard_id"):
        ds.GeneratorDataset(Squares(), ["i", "sq"], num_shards=2, shard_id=2)
    with pytest.raises(ValueError, match="num_parallel_workers"):
        ds.GeneratorDataset(Squares(), ["i", "sq"], num_parallel_workers=0)
    with pytest.raises(TypeError, match="python_multiprocessing"):
        ds.GeneratorDataset(Squares(), ["i", "sq"], python_multiprocessing=1)


# --------------------------------------------------------------------------
# NumpySlicesDataset

def test_numpy_slices_of_list_tuple_dict_and_array():
    data = ds.NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], shuffle=False)
    assert data.get_col_names() == ["column_0"]
    np.testing.assert_array_equal(np.stack([x for x, in rows(data)]), [[1, 2], [3, 4], [5, 6]])
    pair = ds.NumpySlicesDataset(([1, 2, 3], [4.0, 5.0, 6.0]), column_names=["a", "b"], shuffle=False)
    assert [(int(a), float(b)) for a, b in rows(pair)] == [(1, 4.0), (2, 5.0), (3, 6.0)]
    table = ds.NumpySlicesDataset({"x": np.arange(6).reshape(3, 2), "y": ["p", "q", "r"]}, shuffle=False)
    assert table.get_col_names() == ["x", "y"]
    got = list(table.create_dict_iterator(output_numpy=True, num_epochs=1))
    np.testing.assert_array_equal(got[2]["x"], [4, 5])
    assert str(got[1]["y"]) == "q"
    renamed = ds.NumpySlicesDataset({"x": [1, 2]}, column_names=["z"], shuffle=False)
    assert renamed.get_col_names() == ["z"]
    images = np.random.default_rng(0).integers(0, 255, (10, 4, 4, 3), dtype=np.uint8)
    np.testing.assert_array_equal(np.stack([x for x, in rows(ds.NumpySlicesDataset(images, shuffle=False))]),
                                  images)


def test_numpy_slices_shuffle_sampler_and_shards():
    data = list(range(10))
    shuffled = values(ds.NumpySlicesDataset(data, ["x"]))
    assert sorted(shuffled) == data and shuffled != data
    assert values(ds.NumpySlicesDataset(data, ["x"], sampler=ds.SubsetSampler([9, 0, 4]))) == [9, 0, 4]
    assert values(ds.NumpySlicesDataset(data, ["x"], shuffle=False, num_samples=3)) == [0, 1, 2]
    shards = [values(ds.NumpySlicesDataset(data, ["x"], shuffle=False, num_shards=4, shard_id=k)) for k in range(4)]
    assert shards == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]


def test_numpy_slices_errors():
    with pytest.raises(TypeError, match="data"):
        ds.NumpySlicesDataset("abc")
    with pytest.raises(ValueError, match="cannot be empty"):
        ds.NumpySlicesDataset([])
    with pytest.raises(ValueError, match="not equal"):
        ds.NumpySlicesDataset(([1, 2], [1, 2, 3]))
    with pytest.raises(ValueError, match="should name each of the 2 columns"):
        ds.NumpySlicesDataset(([1, 2], [3, 4]), column_names=["a"])
    with pytest.raises(ValueError, match="column 0 is ragged"):
        ds.NumpySlicesDataset([[1], [2, 3]])
    with pytest.raises(TypeError, match="holds object objects"):
        ds.NumpySlicesDataset([object(), object()])
