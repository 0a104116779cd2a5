"""One process of the auto-parallel context tests (test_parallel_context.py).

    pctx_worker.py OUT_DIR          under msrun: init(), data_parallel
    pctx_worker.py OUT_DIR single   one process, stand_alone, from rank 0's initial values

Every rank builds the MLP from its own random initial values (a seed of its
rank) and trains it on the rows a NumpySlicesDataset created without
num_shards gives it: with parameter_broadcast in GRAPH_MODE and PYNATIVE_MODE
("bcast_graph", "bcast_pynative"), and without it ("plain"). The final
parameters go to OUT_DIR/<run>_rank<r>_<i>.npy, the rows each rank's default
datasets read to OUT_DIR/rows_<name>_rank<r>.npy. The worker also checks the
broadcast of other dtypes and of layerwise_parallel parameters, and that
full_batch and a tuple dataset_strategy are refused in data_parallel.
"""
import os
import sys

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn

OUT, SINGLE = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "single"
STEPS, ROWS, FEATURES, HIDDEN, CLASSES = 3, 16, 5, 6, 3
ODD_ROWS = 13  # the default-sharded datasets: not a multiple of the rank count


class MLP(nn.Cell):
    def __init__(self, seed):
        super().__init__()
        self.fc1 = nn.Dense(FEATURES, HIDDEN)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(HIDDEN, CLASSES)
        rng = np.random.default_rng(seed)
        for p in self.trainable_params():
            p.set_data(ms.Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.5))

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def data():
    rng = np.random.default_rng(11)
    return (rng.standard_normal((ROWS, FEATURES)).astype(np.float32),
            rng.standard_normal((ROWS, CLASSES)).astype(np.float32))


def train(run, rank, size):
    x, y = data()
    # Created without num_shards: under data_parallel after init() it reads this rank's shard.
    loader = ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(ROWS // size)
    assert loader.get_dataset_size() == 1
    net = MLP(seed=100 + rank)  # rank 0's initial values are the single run's
    opt = nn.SGD(net.trainable_params(), learning_rate=0.3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    batch = next(loader.create_tuple_iterator(num_epochs=1))
    for _ in range(STEPS):
        step(*batch)
    for i, p in enumerate(net.trainable_params()):
        np.save(os.path.join(OUT, f"{run}_rank{rank}_{i}.npy"), p.asnumpy())


class Mixed(nn.Cell):
    """Parameters of several dtypes, one of them layerwise_parallel."""

    def __init__(self, rank):
        super().__init__()
        self.f16 = ms.Parameter(ms.Tensor(np.full(3, rank + 0.5, np.float16)), name="f16")
        self.i32 = ms.Parameter(ms.Tensor(np.full(2, 1000 * rank + 7, np.int32)), name="i32", requires_grad=False)
        self.flag = ms.Parameter(ms.Tensor(np.array([rank == 0, rank != 0])), name="flag", requires_grad=False)
        # Beyond float32's 24-bit mantissa: a float32 round trip would change it.
        self.i64 = ms.Parameter(ms.Tensor(np.full(2, 2 ** 40 + 1 + rank, np.int64)), name="i64", requires_grad=False)
        self.local = ms.Parameter(ms.Tensor(np.full(2, rank, np.float32)), name="local", layerwise_parallel=True)

    def construct(self, x):
        return x + self.local


def check_broadcast(rank):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_auto_parallel_context(parameter_broadcast=True)
    cell = Mixed(rank)
    assert list(cell.parameters_broadcast_dict()) == ["f16", "i32", "flag", "i64"]
    cell(ms.Tensor(np.zeros(2, np.float32)))
    np.testing.assert_array_equal(cell.f16.asnumpy(), np.full(3, 0.5, np.float16))
    np.testing.assert_array_equal(cell.i32.asnumpy(), np.full(2, 7, np.int32))
    np.testing.assert_array_equal(cell.flag.asnumpy(), [True, False])
    np.testing.assert_array_equal(cell.i64.asnumpy(), np.full(2, 2 ** 40 + 1, np.int64))
    assert cell.f16.dtype == ms.float16 and cell.i32.dtype == ms.int32 and cell.flag.dtype == ms.bool_
    np.testing.assert_array_equal(cell.local.asnumpy(), np.full(2, rank, np.float32))  # not broadcast
    # Only the first call broadcasts: a later change on one rank stays there.
    cell.i32.set_data(ms.Tensor(np.full(2, rank, np.int32)))
    cell(ms.Tensor(np.zeros(2, np.float32)))
    np.testing.assert_array_equal(cell.i32.asnumpy(), np.full(2, rank, np.int32))
    ms.set_auto_parallel_context(parameter_broadcast=False)


def check_refusals():
    x, y = ms.Tensor(np.ones((2, FEATURES), np.float32)), ms.Tensor(np.ones((2, CLASSES), np.float32))

    def step():
        net = MLP(seed=1)
        return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))

    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        for key, value in (("full_batch", True), ("dataset_strategy", "full_batch")):
            ms.set_auto_parallel_context(**{key: value})
            try:
                step()(x, y)
            except RuntimeError as e:
                assert "full_batch could only be used under semi_auto_parallel or auto_parallel" in str(e), e
            else:
                raise AssertionError(f"{key}={value!r} trained in data_parallel")
            ms.set_auto_parallel_context(dataset_strategy="data_parallel")
    ms.set_context(mode=ms.GRAPH_MODE)  # a tuple strategy can only be set in GRAPH_MODE
    ms.set_auto_parallel_context(dataset_strategy=((2, 1), (2, 1)))
    try:
        step()(x, y)
    except RuntimeError as e:
        assert "only semi_auto_parallel and auto_parallel use" in str(e), e
    else:
        raise AssertionError("a tuple dataset_strategy trained in data_parallel")
    ms.set_auto_parallel_context(dataset_strategy="data_parallel")
    ms.set_context(mode=ms.PYNATIVE_MODE)


def save_default_shards(rank, size):
    values = np.arange(ODD_ROWS, dtype=np.int64)
    sources = {
        "slices": lambda: ds.NumpySlicesDataset(values, column_names=["v"], shuffle=False),
        "slices_shuffled": lambda: ds.NumpySlicesDataset(values, column_names=["v"]),
        "generator": lambda: ds.GeneratorDataset([(v,) for v in values], column_names=["v"]),
        "iterable": lambda: ds.GeneratorDataset(lambda: iter([(v,) for v in values]), column_names=["v"]),
    }
    for name, make in sources.items():
        dataset = make()
        got = np.array([int(row[0]) for row in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)])
        assert dataset.get_dataset_size() == len(got), (name, dataset.get_dataset_size(), len(got))
        if name != "iterable":
            assert (dataset.num_shards, dataset.shard_id) == (size, rank), (name, dataset.num_shards)
        np.save(os.path.join(OUT, f"rows_{name}_rank{rank}.npy"), got)


def main():
    if SINGLE:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        train("single", 0, 1)
        return
    from msrt.communication import get_group_size, get_rank, init
    init()
    rank, size = get_rank(), get_group_size()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    save_default_shards(rank, size)
    check_broadcast(rank)
    check_refusals()
    for run, mode, broadcast in (("bcast_graph", ms.GRAPH_MODE, True), ("bcast_pynative", ms.PYNATIVE_MODE, True),
                                 ("plain", ms.PYNATIVE_MODE, False)):
        ms.set_context(mode=mode)
        ms.set_auto_parallel_context(parameter_broadcast=broadcast)
        train(run, rank, size)
    print("worker", rank, "of", size, "OK", flush=True)


if __name__ == "__main__":
    main()
