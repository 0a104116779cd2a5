"""The auto-parallel context keys that act in data_parallel: parameter_broadcast,
full_batch / dataset_strategy, and the datasets' shards (num_shards / shard_id,
defaulting from the cluster).

The sharding rule is checked in one process with explicit num_shards and
shard_id; one msrun job of pctx_worker.py checks the cluster's default, the
broadcast (ranks that start from different values end equal, and equal to one
process started from rank 0's values; without the broadcast they differ) and
the refusals."""
import os
import pathlib
import socket
import struct
import subprocess
import sys

import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.dataset import config
from msrt.mindrecord import FileWriter

WORKER = pathlib.Path(__file__).with_name("pctx_worker.py")
N_PARAMS = 4
WORKERS = 2
JOB_TIMEOUT = 90


@pytest.fixture
def context():
    yield
    ms.reset_auto_parallel_context()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    config._reset()


# --- shards in one process ----------------------------------------------------------------------
def values(dataset):
    return [int(row[0].reshape(-1)[0]) for row in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def write_mnist(directory, n):
    """MNIST files of n images (train split) whose pixel (0, 0) is the row number."""
    directory.mkdir(parents=True)
    images = np.zeros((n, 28, 28), np.uint8)
    images[:, 0, 0] = np.arange(n)
    (directory / "train-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    (directory / "train-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, n) + bytes(n))
    return str(directory)


def write_cifar10(directory, n):
    """A CIFAR-10 train file of n records whose first red pixel is the row number."""
    directory.mkdir(parents=True)
    records = np.zeros((n, 1 + 3 * 32 * 32), np.uint8)
    records[:, 1] = np.arange(n)
    (directory / "data_batch_1.bin").write_bytes(records.tobytes())
    return str(directory)


def write_mindrecord(directory, n):
    directory.mkdir(parents=True)
    path = str(directory / "rows.mindrecord")
    writer = FileWriter(path)
    writer.add_schema({"v": {"type": "int64"}}, "rows")
    writer.write_raw_data([{"v": i} for i in range(n)])
    writer.commit()
    return path


SOURCES = {
    "NumpySlicesDataset": lambda tmp, n, **kw: ds.NumpySlicesDataset(np.arange(n), column_names=["v"], **kw),
    "GeneratorDataset": lambda tmp, n, **kw: ds.GeneratorDataset([(np.int64(i),) for i in range(n)], ["v"], **kw),
    "MnistDataset": lambda tmp, n, **kw: ds.MnistDataset(write_mnist(tmp / "mnist", n), usage="train", **kw),
    "Cifar10Dataset": lambda tmp, n, **kw: ds.Cifar10Dataset(write_cifar10(tmp / "cifar", n), usage="train", **kw),
    "MindDataset": lambda tmp, n, **kw: ds.MindDataset(write_mindrecord(tmp / "mr", n), **kw),
}


def check_partition(shards, n):
    """Equal shards of ceil(n / k) rows; together every row once, and the
    ceil(n / k) * k - n extra rows repeat distinct rows (the padding)."""
    k = len(shards)
    size = -(-n // k)
    assert [len(s) for s in shards] == [size] * k, (n, [len(s) for s in shards])
    counts = np.bincount(np.concatenate(shards), minlength=n)
    assert counts.min() == 1 and counts.max() <= 2 and counts.sum() == size * k, counts


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("n,k", [(7, 2), (9, 4), (13, 4), (11, 2)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_explicit_shards_are_equal_and_disjoint_but_for_padding(source, n, k, shuffle, tmp_path, context):
    if shuffle:
        config.set_seed(1234)  # the same seed on every rank: one permutation, split
    make = SOURCES[source]
    base = make(tmp_path / "whole", n, shuffle=False)
    assert sorted(values(base)) == list(range(n))
    shards = []
    for shard_id in range(k):
        dataset = make(tmp_path / f"shard{shard_id}", n, shuffle=shuffle, num_shards=k, shard_id=shard_id)
        assert dataset.get_dataset_size() == -(-n // k)
        shards.append(np.array(values(dataset)))
    check_partition(shards, n)
    if not shuffle:  # MindSpore's DistributedSampler order: rows shard_id, shard_id + k, ... wrapping around
        for shard_id, got in enumerate(shards):
            np.testing.assert_array_equal(got, (np.arange(len(got)) * k + shard_id) % n)


def test_shuffled_shards_are_a_partition_without_a_seed(context):
    shards = [np.array(values(ds.NumpySlicesDataset(np.arange(10), column_names=["v"], num_shards=2, shard_id=i)))
              for i in range(2)]
    check_partition(shards, 10)
    assert list(np.concatenate(shards)) != list(range(10))  # shuffled


def test_no_default_shards_outside_a_data_parallel_cluster(context):
    # stand_alone, or data_parallel without init(): every row.
    for mode in (ms.ParallelMode.STAND_ALONE, ms.ParallelMode.DATA_PARALLEL):
        ms.set_auto_parallel_context(parallel_mode=mode)
        dataset = ds.NumpySlicesDataset(np.arange(7), column_names=["v"], shuffle=False)
        assert dataset.num_shards is None and values(dataset) == list(range(7))


# --- full_batch, dataset_strategy, parameter_broadcast in one process -----------------------------
def test_full_batch_is_refused_when_compiling_outside_semi_and_auto_parallel(context):
    ms.set_context(mode=ms.GRAPH_MODE)
    net, x = nn.Dense(3, 2), ms.Tensor(np.ones((2, 3), np.float32))
    for key, value in (("full_batch", True), ("dataset_strategy", "full_batch")):
        ms.set_auto_parallel_context(**{key: value})
        with pytest.raises(RuntimeError, match="full_batch could only be used under semi_auto_parallel or "
                                               "auto_parallel, but parallel_mode is 'stand_alone'"):
            net(x)
        ms.set_auto_parallel_context(full_batch=False)
        assert net(x).shape == (2, 2)  # compiles again with the key cleared
    # PYNATIVE_MODE in stand_alone compiles nothing: MindSpore does not check there.
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_auto_parallel_context(full_batch=True)
    assert net(x).shape == (2, 2)


def test_data_parallel_refuses_full_batch_at_the_first_call(context):
    # Before any communication: the check comes first.
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, full_batch=True, device_num=2)
    net = nn.Dense(3, 2)
    with pytest.raises(RuntimeError, match="but parallel_mode is 'data_parallel'"):
        net(ms.Tensor(np.ones((2, 3), np.float32)))


def test_dataset_strategy_values_are_checked_and_leave_the_context_unchanged(context):
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_auto_parallel_context(dataset_strategy=((1, 2),))
    cases = (("model_parallel", ValueError, "'full_batch', 'data_parallel' or a tuple of tuples of int, but got "
                                            "'model_parallel'"),
             (3, TypeError, "must be str or tuple of tuples of int, but got int (3)"),
             (((1, 2.5),), TypeError, "must be int, but got float (2.5)"),
             ([[1, 2]], TypeError, "must be str or tuple of tuples of int, but got list"),
             ((1, 2), TypeError, "must be a tuple of int, but got int (1)"),
             (((0, 2),), ValueError, "must be a positive int (a split count), but got 0"),
             (((1, 2), (-1, 2)), ValueError, "must be a positive int (a split count), but got -1"))
    for bad, error, message in cases:
        with pytest.raises(error) as info:
            ms.set_auto_parallel_context(dataset_strategy=bad)
        assert "'dataset_strategy'" in str(info.value) and message in str(info.value), info.value
        assert ms.get_auto_parallel_context("dataset_strategy") == [[1, 2]]
        assert ms.get_auto_parallel_context("full_batch") is False
    with pytest.raises(TypeError, match="full_batch"):
        ms.set_auto_parallel_context(full_batch="yes")
    assert ms.get_auto_parallel_context("full_batch") is False


def test_parameter_broadcast_without_a_cluster_says_what_is_missing(context):
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, parameter_broadcast=True)
    net = nn.Dense(3, 2)
    with pytest.raises(RuntimeError, match="does not exist"):
        net(ms.Tensor(np.ones((2, 3), np.float32)))
    # In stand_alone the key does nothing (MindSpore's rule).
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.STAND_ALONE)
    assert nn.Dense(3, 2)(ms.Tensor(np.ones((2, 3), np.float32))).shape == (2, 2)


def test_data_parallel_without_broadcast_or_seed_warns(context):
    import warnings

    from msrt.common import seed
    from msrt._warnings import MsrtWarning

    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL)
    x = ms.Tensor(np.ones((2, 3), np.float32))
    prior = seed.get_seed()
    seed._reset()
    with pytest.warns(MsrtWarning, match="neither parameter_broadcast nor a seed"):
        nn.Dense(3, 2)(x)
    ms.set_seed(3)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", MsrtWarning)
            nn.Dense(3, 2)(x)
    finally:
        seed._reset()
        if prior is not None:
            ms.set_seed(prior)


def test_parameters_broadcast_dict_leaves_out_layerwise_parallel():
    net = nn.Dense(3, 2)
    assert list(net.parameters_broadcast_dict()) == ["weight", "bias"]
    net.bias.layerwise_parallel = True
    assert list(net.parameters_broadcast_dict()) == ["weight"]
    net.weight.layerwise_parallel = True
    assert net.parameters_broadcast_dict() is None


# --- the msrun job -------------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(argv, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=JOB_TIMEOUT, env=env)
    logs = "\n".join(p.read_text() for p in sorted((tmp_path / "logs").glob("worker_*.log")))
    assert done.returncode == 0, done.stdout + done.stderr + logs


def params(out, run_name, rank):
    return [np.load(out / f"{run_name}_rank{rank}_{i}.npy") for i in range(N_PARAMS)]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("pctx")
    out = tmp_path / "out"
    out.mkdir()
    run([sys.executable, "-m", "msrt.parallel.cluster.run", f"--worker_num={WORKERS}",
         f"--local_worker_num={WORKERS}", "--master_addr=127.0.0.1", f"--master_port={free_port()}",
         f"--log_dir={tmp_path / 'logs'}", "--join=True", "--cluster_time_out=30", str(WORKER), str(out)], tmp_path)
    run([sys.executable, str(WORKER), str(out), "single"], tmp_path)
    return out


def test_parameter_broadcast_gives_every_rank_rank_0s_start(job):
    single = params(job, "single", 0)
    for run_name in ("bcast_graph", "bcast_pynative"):
        for rank in range(WORKERS):
            for i, (got, want) in enumerate(zip(params(job, run_name, rank), single)):
                np.testing.assert_array_equal(got, params(job, run_name, 0)[i], err_msg=f"{run_name} {rank} {i}")
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{run_name} {rank} {i}")


def test_without_parameter_broadcast_the_ranks_keep_their_own_start(job):
    ranks = [params(job, "plain", rank) for rank in range(WORKERS)]
    for rank in range(1, WORKERS):
        assert max(np.abs(a - b).max() for a, b in zip(ranks[0], ranks[rank])) > 1e-2


def test_source_datasets_shard_from_the_cluster_by_default(job):
    n = 13
    for name in ("slices", "slices_shuffled", "generator"):
        shards = [np.load(job / f"rows_{name}_rank{rank}.npy") for rank in range(WORKERS)]
        check_partition(shards, n)
        if name == "slices":
            for rank, got in enumerate(shards):
                np.testing.assert_array_equal(got, (np.arange(len(got)) * WORKERS + rank) % n)
    for rank in range(WORKERS):  # an iterable source is read whole
        np.testing.assert_array_equal(np.load(job / f"rows_iterable_rank{rank}.npy"), np.arange(n))
