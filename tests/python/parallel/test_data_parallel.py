"""Data-parallel training: TrainOneStepCell all-reduces the gradients
(nn.DistributedGradReducer) in fusion buckets in parallel_mode data_parallel.

msrun starts 2 and 4 workers of dp_worker.py; each trains the same MLP and
LeNet on its rows of one global batch, under several fusion settings, in
GRAPH_MODE and PYNATIVE_MODE, and with float16 parameters with and without
gradient_fp32_sync. Every rank must end with the same parameters, and those
of one process trained on the whole batch; each step must run one fused
all-reduce (all_reduce_fused) per fusion bucket."""
import copy
import os
import pathlib
import re
import socket
import subprocess
import sys

import numpy as np
import pytest

import msrt as ms
from msrt import nn
import msrt.communication as c
from msrt.communication import GlobalComm

WORKER = pathlib.Path(__file__).with_name("dp_worker.py")
sys.path.insert(0, str(WORKER.parent))
from dp_worker import RUNS, STEPS, reference as reference_of  # noqa: E402

N_PARAMS = {"mlp": 4, "lenet": 8}  # weights and biases; LeNet's convolutions have no bias
# The all-reduces per step each run's fusion setting gives (Note [Gradient fusion buckets]): MLP
# parameters fc1.weight, fc1.bias, fc2.weight, fc2.bias; LeNet conv1.weight, conv2.weight, fc1-fc3.
BUCKETS = {
    ("mlp", None): 1, ("mlp", "off"): 4, ("mlp", "index"): 2, ("mlp", "comm_index"): 3, ("mlp", "size"): 4,
    ("mlp", "param"): 2, ("lenet", None): 1, ("lenet", "off"): 8, ("lenet", "index"): 2, ("lenet", "size"): 8,
    ("lenet", "param"): 3,
}
JOB_TIMEOUT = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def params(out, run, rank):
    return [np.load(out / f"{run}_rank{rank}_{i}.npy") for i in range(N_PARAMS[RUNS.get(run, ("mlp",))[0]])]


def ref_params(out, run):
    name = reference_of(run)
    return [np.load(out / f"{name}_rank0_{i}.npy") for i in range(N_PARAMS[RUNS[run][0]])]


def single(tmp_path, shards):
    """Stand-alone training on rank 0's rows of `shards` (1: the whole batch)."""
    out = tmp_path / f"single{shards}"
    out.mkdir()
    done = subprocess.run([sys.executable, str(WORKER), str(out), "single", str(shards)], capture_output=True,
                          text=True, timeout=JOB_TIMEOUT, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return single(tmp_path_factory.mktemp("reference"), 1)


def graph_all_reduces(out, run, rank):
    """The all_reduce_fused kernels of the compiled step, and the dtypes they reduce (capture IR). The
    reducer's operators are those fused all-reduces and casts only (no concatenation, split or reshape)."""
    ir = out / "ir" / run
    order = next(ir.rglob(f"rank_{rank}/*_execution_order_*.ir")).read_text()
    steps = re.findall(r"^\d+: (\w+) ", order, re.MULTILINE)
    assert "all_reduce" not in steps, (run, steps)
    capture = next(ir.rglob(f"rank_{rank}/00_capture_*.ir")).read_text()
    reducer_ops = set(re.findall(r"DistributedGradReducer/(\w+?)-op\d+", capture))
    assert reducer_ops <= {"all_reduce_fused", "cast"}, (run, reducer_ops)
    dtypes = re.findall(r"= all_reduce_fused\(.*\} : \(?(\w+)\(", capture)
    return steps.count("all_reduce_fused"), dtypes


def eager_all_reduces(out, run, rank):
    """The all_reduce_fused calls of the profiled PYNATIVE steps (the profiler's op summary)."""
    summary = next((out / "prof" / run).rglob(f"op_summary_{rank}.csv")).read_text().splitlines()
    calls = {row.split(",")[0]: int(row.split(",")[1]) for row in summary[1:]}
    assert "all_reduce" not in calls and "concat" not in calls, (run, calls)
    return calls.get("all_reduce_fused", 0)


@pytest.mark.parametrize("workers", [2, 4])
def test_data_parallel_matches_one_process_on_the_whole_batch(workers, tmp_path, reference):
    out = tmp_path / "out"
    out.mkdir()
    argv = [sys.executable, "-m", "msrt.parallel.cluster.run", f"--worker_num={workers}",
            f"--local_worker_num={workers}", "--master_addr=127.0.0.1", f"--master_port={free_port()}",
            f"--log_dir={tmp_path / 'logs'}", "--join=True", "--cluster_time_out=30", str(WORKER), str(out)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=JOB_TIMEOUT, env=env)
    logs = "\n".join(p.read_text() for p in sorted((tmp_path / "logs").glob("worker_*.log")))
    assert done.returncode == 0, done.stdout + done.stderr + logs
    errors = {}
    for run, (network, how, fusion, half, fp32_sync) in RUNS.items():
        want = ref_params(reference, run)
        tol = 2e-2 if half else 1e-5
        for rank in range(workers):
            got = params(out, run, rank)
            for i, value in enumerate(got):
                np.testing.assert_array_equal(value, params(out, run, 0)[i], err_msg=f"{run} rank {rank} param {i}")
                np.testing.assert_allclose(value, want[i], rtol=tol, atol=tol, err_msg=f"{run} rank {rank} {i}")
        errors[run] = max(np.abs(a - b).max() for a, b in zip(params(out, run, 0), want))
        if how == "loss_scale":
            continue  # it also all-reduces the overflow flag
        buckets = BUCKETS[network, fusion]
        for rank in range(workers):
            if how == "graph":
                count, dtypes = graph_all_reduces(out, run, rank)
                assert count == buckets, (run, rank, count)
                assert dtypes == ["Float16" if half and not fp32_sync else "Float32"] * buckets, (run, dtypes)
            else:
                assert eager_all_reduces(out, run, rank) == STEPS * buckets, run
    # float16 gradients reduced in float32 end nearer to the float32 reference than reduced in float16.
    for how in ("graph", "pynative"):
        assert errors[f"half_sync_{how}"] <= errors[f"half_nosync_{how}"], errors


def test_one_shard_alone_trains_differently(tmp_path, reference):
    # What the comparison above rules out: a rank that kept its local gradients.
    local = single(tmp_path, 2)
    for run in ("graph", "pynative", "loss_scale", "lenet_graph", "lenet_pynative"):
        diff = max(np.abs(a - b).max() for a, b in zip(ref_params(local, run), ref_params(reference, run)))
        assert diff > 1e-3, (run, diff)


@pytest.fixture
def context():
    yield
    ms.reset_auto_parallel_context()
    ms.set_context(mode=ms.PYNATIVE_MODE)


def small_train_net():
    net = nn.Dense(3, 2)
    return nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1)


@pytest.mark.parametrize("mode", [ms.ParallelMode.SEMI_AUTO_PARALLEL, ms.ParallelMode.AUTO_PARALLEL,
                                  ms.ParallelMode.HYBRID_PARALLEL])
def test_other_parallel_modes_are_refused(mode, context):
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_auto_parallel_context(parallel_mode=mode)
    loss_net, opt = small_train_net()
    with pytest.raises(RuntimeError, match=f"parallel_mode '{mode}' is not supported yet"):
        nn.TrainOneStepCell(loss_net, opt)
    with pytest.raises(RuntimeError, match=f"parallel_mode '{mode}' is not supported yet"):
        nn.TrainOneStepWithLossScaleCell(loss_net, opt, ms.Tensor(np.float32(8.0)))


def test_stand_alone_has_no_reducer(context):
    loss_net, opt = small_train_net()
    step = nn.TrainOneStepCell(loss_net, opt)
    assert not step.reducer_flag and step.grad_reducer is None


def test_data_parallel_inserts_the_reducer(context):
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=4)
    loss_net, opt = small_train_net()
    step = nn.TrainOneStepCell(loss_net, opt)
    assert step.reducer_flag
    assert isinstance(step.grad_reducer, nn.DistributedGradReducer)
    assert step.grad_reducer.mean is True and step.grad_reducer.degree == 4
    # Without init() there is no world group: the first step says so.
    x, y = ms.Tensor(np.ones((2, 3), np.float32)), ms.Tensor(np.ones((2, 2), np.float32))
    with pytest.raises(RuntimeError, match="does not exist"):
        step(x, y)


def test_grad_reducer_arguments(context):
    params = nn.Dense(3, 2).trainable_params()
    ms.set_auto_parallel_context(gradients_mean=True)
    reducer = nn.DistributedGradReducer(params, degree=2)
    assert reducer.mean is True and reducer.degree == 2 and reducer.fusion_type == 1
    assert reducer.group in (GlobalComm.WORLD_COMM_GROUP, c.NCCL_WORLD_COMM_GROUP, c.HCCL_WORLD_COMM_GROUP)
    assert nn.DistributedGradReducer(params, mean=False, degree=3).mean is False
    for degree in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="'degree' must be an int greater than 0"):
            nn.DistributedGradReducer(params, degree=degree)
    with pytest.raises(TypeError, match="'mean' must be a bool"):
        nn.DistributedGradReducer(params, mean=1, degree=2)
    with pytest.raises(TypeError, match="'fusion_type' must be an int"):
        nn.DistributedGradReducer(params, degree=2, fusion_type="1")
    with pytest.raises(ValueError, match="'fusion_type' must be an int greater than or equal to 0, but got -1"):
        nn.DistributedGradReducer(params, degree=2, fusion_type=-1)
    with pytest.raises(TypeError, match="'group' must be a str"):
        nn.DistributedGradReducer(params, degree=2, group=1)
    with pytest.raises(TypeError, match="'parameters' must be a list or tuple of Parameters"):
        nn.DistributedGradReducer(params[0], degree=2)
    with pytest.raises(ValueError, match="the number of gradients must be the number of parameters"):
        reducer((ms.Tensor(np.ones(2, np.float32)),))
    # degree defaults to the group's size: without init() there is no group to ask.
    with pytest.raises(RuntimeError, match="does not exist"):
        nn.DistributedGradReducer(params)


def fusion_params(*shapes, dtype=np.float32):
    return [ms.Parameter(ms.Tensor(np.zeros(shape, dtype)), name=f"p{i}") for i, shape in enumerate(shapes)]


def test_buckets_default_all_in_one_in_reverse_order(context):
    params = fusion_params((3, 2), (2,), (4, 3), (4,))
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3, 2, 1, 0),)
    params[1].layerwise_parallel = True  # keeps its local gradient: in no bucket
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3, 2, 0),)


def test_buckets_by_size(context):
    mb = 1 << 18  # float32 elements in 1 MB
    params = fusion_params((mb,), (mb // 2,), (mb // 2,), (10,))
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": 1}})
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3, 2), (1,), (0,))
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": 2}})
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3, 2, 1), (0,))
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": 0}})
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3,), (2,), (1,), (0,))
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "auto", "config": None}})  # 64 MB
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3, 2, 1, 0),)
    ms.set_auto_parallel_context(comm_fusion={"openstate": False})
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3,), (2,), (1,), (0,))


def test_buckets_by_index(context):
    params = fusion_params(*[(2,)] * 5)
    ms.set_auto_parallel_context(all_reduce_fusion_config=[1, 3])  # index i closes a segment: {0,1} {2,3} {4}
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((4,), (3, 2), (1, 0))
    # fusion_type other than 1: the split indices do not apply (MindSpore's rule)
    assert nn.DistributedGradReducer(params, degree=2, fusion_type=2).buckets == ((4, 3, 2, 1, 0),)
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "index", "config": [0, 4]}})
    assert ms.get_auto_parallel_context("all_reduce_fusion_config") == [0, 4]
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((4, 3, 2, 1), (0,))
    ms.set_auto_parallel_context(all_reduce_fusion_config=[2, 5])
    with pytest.raises(ValueError, match=r"must be in \[0, 4\] for 5 parameters, but got 5 in \[2, 5\]"):
        nn.DistributedGradReducer(params, degree=2)


def test_buckets_by_parameter_comm_fusion(context):
    net = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])
    params = net.trainable_params()
    assert [p.comm_fusion for p in params] == [1, 1, 1, 1]
    assert net[0].set_comm_fusion(3) is net[0]
    assert [p.comm_fusion for p in params] == [3, 3, 1, 1]
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3, 2), (1, 0))
    # The parameters' own ids take precedence over the split indices; id 0 is reduced alone.
    ms.set_auto_parallel_context(all_reduce_fusion_config=[2])
    params[2].comm_fusion = 0
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3,), (2,), (1, 0))
    net.set_comm_fusion(5)
    assert [p.comm_fusion for p in params] == [5] * 4
    # One shared id: the split indices apply again (index 2 closes the segment 0..2).
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((3,), (2, 1, 0))
    net.set_comm_fusion(7, recurse=False)  # the SequentialCell has no parameters of its own
    assert [p.comm_fusion for p in params] == [5] * 4
    assert params[0].clone().comm_fusion == 5 and copy.deepcopy(params[0]).comm_fusion == 5
    for bad, error in (("1", TypeError), (True, TypeError), (1.0, TypeError), (-1, ValueError)):
        with pytest.raises(error, match="'comm_fusion' must be an int"):
            params[0].comm_fusion = bad
        with pytest.raises(error, match="'fusion_type' must be an int"):
            net.set_comm_fusion(bad)
    assert [p.comm_fusion for p in params] == [5] * 4


def test_buckets_by_reduction_dtype(context):
    params = fusion_params((2,), (3,), dtype=np.float16) + fusion_params((4,))
    assert nn.DistributedGradReducer(params, degree=2).buckets == ((2, 1, 0),)  # all reduced in float32
    ms.set_auto_parallel_context(gradient_fp32_sync=False)
    reducer = nn.DistributedGradReducer(params, degree=2)
    assert reducer.fp32_sync is False and reducer.buckets == ((2,), (1, 0))


@pytest.mark.parametrize("kwargs, error, words", [
    ({"all_reduce_fusion_config": [3, 1]}, ValueError, "ascending"),
    ({"all_reduce_fusion_config": [1, 1]}, ValueError, "duplicates"),
    ({"all_reduce_fusion_config": []}, ValueError, "must not be empty"),
    ({"all_reduce_fusion_config": [1, "2"]}, TypeError, "must be int"),
    ({"comm_fusion": {"allreduce": {"mode": "index", "config": [2, 0]}}}, ValueError, "ascending"),
    ({"comm_fusion": {"allreduce": {"mode": "size", "config": -1}}}, ValueError, "larger than 0 or equal to 0"),
    ({"comm_fusion": {"allreduce": {"mode": "size", "config": 1.5}}}, TypeError, "int"),
    # MindSpore raises KeyError for an unknown fusion mode.
    ({"comm_fusion": {"allreduce": {"mode": "bucket", "config": 1}}}, KeyError, "'auto', 'size' or 'index'"),
])
def test_bad_fusion_settings_leave_the_context_unchanged(kwargs, error, words, context):
    params = fusion_params(*[(2,)] * 4)
    ms.set_auto_parallel_context(all_reduce_fusion_config=[1],
                                 comm_fusion={"allreduce": {"mode": "size", "config": 0}})
    before = {key: ms.get_auto_parallel_context(key) for key in ("all_reduce_fusion_config", "comm_fusion")}
    buckets = nn.DistributedGradReducer(params, degree=2).buckets
    with pytest.raises(error, match=re.escape(words)):
        ms.set_auto_parallel_context(gradients_mean=True, **kwargs)
    assert {key: ms.get_auto_parallel_context(key) for key in before} == before
    assert ms.get_auto_parallel_context("gradients_mean") is False
    assert nn.DistributedGradReducer(params, degree=2).buckets == buckets == ((3,), (2,), (1,), (0,))
