"""One process of the data-parallel tests (test_data_parallel.py).

    dp_worker.py OUT_DIR         under msrun: init(), data_parallel, this rank's rows
    dp_worker.py OUT_DIR single N  one process, stand_alone, rows of rank 0 of N (N=1: the whole batch)

Trains the MLP and the LeNet from the same initial values with SGD, once per
entry of RUNS: GRAPH_MODE or PYNATIVE_MODE, TrainOneStepCell or
TrainOneStepWithLossScaleCell, under one gradient fusion setting (the
auto-parallel context, or Parameter.comm_fusion through Cell.set_comm_fusion),
float32 or float16 parameters with gradient_fp32_sync True or False. Saves
the final parameters as OUT_DIR/<run>_rank<r>_<i>.npy; a GRAPH_MODE run saves
its IR under OUT_DIR/ir/<run>, a PYNATIVE_MODE one its profile (op_summary,
which counts the all_reduce calls) under OUT_DIR/prof/<run>. The stand-alone
process trains each reference once (network, mode, float16 or not; the
float16 ones in float32 from the same float16 values) and saves it under the
reference's name (`reference(run)`).
"""
import os
import sys

import numpy as np

import msrt as ms
from msrt import nn
from msrt.examples.lenet import LeNet5

OUT, SINGLE = None, False  # set by main() from the command line
STEPS, BATCH, FEATURES, HIDDEN, CLASSES = 4, 16, 6, 8, 3

# name: (network, mode, fusion setting, float16 parameters, gradient_fp32_sync)
RUNS = {
    "graph": ("mlp", "graph", None, False, True),
    "pynative": ("mlp", "pynative", None, False, True),
    "loss_scale": ("mlp", "loss_scale", None, False, True),
    "off_graph": ("mlp", "graph", "off", False, True),
    "off_pynative": ("mlp", "pynative", "off", False, True),
    "index_graph": ("mlp", "graph", "index", False, True),
    "index_pynative": ("mlp", "pynative", "index", False, True),
    "comm_index_graph": ("mlp", "graph", "comm_index", False, True),
    "size_pynative": ("mlp", "pynative", "size", False, True),
    "param_graph": ("mlp", "graph", "param", False, True),
    "param_pynative": ("mlp", "pynative", "param", False, True),
    # Two scheduler threads: a bucket's all-reduce may run beside the rest of the backward pass.
    "lenet_concurrent_graph": ("lenet", "graph", "off", False, True),
    "lenet_graph": ("lenet", "graph", None, False, True),
    "lenet_pynative": ("lenet", "pynative", None, False, True),
    "lenet_index_graph": ("lenet", "graph", "index", False, True),
    "lenet_index_pynative": ("lenet", "pynative", "index", False, True),
    "lenet_size_graph": ("lenet", "graph", "size", False, True),
    "lenet_param_pynative": ("lenet", "pynative", "param", False, True),
    "half_sync_graph": ("mlp", "graph", None, True, True),
    "half_nosync_graph": ("mlp", "graph", None, True, False),
    "half_sync_pynative": ("mlp", "pynative", None, True, True),
    "half_nosync_pynative": ("mlp", "pynative", None, True, False),
}
# The fusion settings (test_data_parallel.py knows the buckets each gives).
FUSION = {
    "off": {"comm_fusion": {"openstate": False}},
    "index": {"all_reduce_fusion_config": [1]},  # MLP: {fc1}, {fc2}; LeNet: {conv1, conv2}, {fc1, fc2, fc3}
    "comm_index": {"comm_fusion": {"allreduce": {"mode": "index", "config": [0, 2]}}},
    "size": {"comm_fusion": {"allreduce": {"mode": "size", "config": 0}}},  # 0 MB: a bucket per gradient
}


class MLP(nn.Cell):
    def __init__(self, dtype=ms.float32):
        super().__init__()
        self.fc1 = nn.Dense(FEATURES, HIDDEN, dtype=dtype)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(HIDDEN, CLASSES, dtype=dtype)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def build(network, half):
    """The same start on every rank and in the stand-alone run; float16 parameters when `half` and
    distributed (the stand-alone run trains their float16 values in float32)."""
    ms.set_seed(7)
    net = MLP(ms.float16 if half and not SINGLE else ms.float32) if network == "mlp" else LeNet5()
    rng = np.random.default_rng(7)
    for p in net.trainable_params():
        fan_in = int(np.prod(p.shape[1:])) if len(p.shape) > 1 else 100
        value = rng.standard_normal(p.shape) * (0.5 if network == "mlp" else 1 / np.sqrt(fan_in))
        p.set_data(ms.Tensor(value.astype(np.float16 if half else np.float32).astype(np.float32)))
    return net


def data(network, rank, size, half):
    rng = np.random.default_rng(11)
    if network == "mlp":
        x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
        y = rng.standard_normal((BATCH, CLASSES)).astype(np.float32)
    else:
        x = rng.standard_normal((BATCH, 1, 32, 32)).astype(np.float32)
        y = rng.standard_normal((BATCH, 10)).astype(np.float32)
    if half:
        x, y = x.astype(np.float16).astype(np.float32), y.astype(np.float16).astype(np.float32)
    dtype = np.float16 if half and not SINGLE else np.float32
    chunk = BATCH // size
    return ms.Tensor(x[rank * chunk:(rank + 1) * chunk].astype(dtype)), \
        ms.Tensor(y[rank * chunk:(rank + 1) * chunk].astype(dtype))


def reference(run):
    """The stand-alone run `run` is compared with: it does not depend on the fusion setting."""
    network, how, _, half, _ = RUNS[run]
    return f"{network}_{how}" + ("_half" if half else "")


def train(run, rank, size):
    network, how, fusion, half, fp32_sync = RUNS[run]
    if not SINGLE:
        # A reset clears the previous run's fusion setting, and also device_num and global_rank.
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                     device_num=size, global_rank=rank, gradient_fp32_sync=fp32_sync,
                                     **FUSION.get(fusion, {}))
    ms.set_context(mode=ms.GRAPH_MODE if how == "graph" else ms.PYNATIVE_MODE, save_graphs=2 if how == "graph" else 0,
                   save_graphs_path=os.path.join(OUT, "ir", run),
                   inter_op_parallel_num=2 if "concurrent" in run and not SINGLE else 0)
    xs, ys = data(network, rank, size, half)
    net = build(network, half)
    if fusion == "param":  # MLP: fc1, fc2; LeNet: the convolutions, the dense layers but fc3.bias, fc3.bias
        for i, cell in enumerate(net.cells()):
            cell.set_comm_fusion(2 + (i if network == "mlp" else isinstance(cell, nn.Dense)))
        if network == "lenet":
            net.fc3.bias.comm_fusion = 0
    opt = nn.SGD(net.trainable_params(), learning_rate=0.2 if network == "mlp" else 0.05)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    if how == "loss_scale":
        step = nn.TrainOneStepWithLossScaleCell(loss_net, opt, ms.Tensor(np.float32(64.0)))
    else:
        step = nn.TrainOneStepCell(loss_net, opt)
    assert step.reducer_flag == (not SINGLE)
    profiler = None
    if how == "pynative" and not SINGLE:
        profiler = ms.Profiler(output_path=os.path.join(OUT, "prof", run))
    for _ in range(STEPS):
        step(xs, ys)
    if profiler is not None:
        profiler.analyse()
    for i, p in enumerate(net.trainable_params()):
        name = reference(run) if SINGLE else run
        np.save(os.path.join(OUT, f"{name}_rank{rank}_{i}.npy"), p.asnumpy().astype(np.float32))


def check_reducer(rank, size):
    """DistributedGradReducer on its own: float16 reduced (in float32) and cast back; sum or mean; a
    layerwise_parallel parameter keeps its local gradient; gradient_fp32_sync=False reduces float16 in
    float16; the mean's scale is applied before the sum."""
    params = [ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name=f"p{i}") for i in range(3)]
    params[2].layerwise_parallel = True
    grads = (ms.Tensor(np.full(3, rank + 1, np.float16)), ms.Tensor(np.full(3, rank + 1, np.float32)),
             ms.Tensor(np.full(3, rank + 1, np.float32)))
    total = size * (size + 1) / 2
    for reducer, scale in ((nn.DistributedGradReducer(params), 1 / size),
                           (nn.DistributedGradReducer(params, mean=False), 1),
                           (nn.DistributedGradReducer(params, mean=True, degree=2 * size), 1 / (2 * size))):
        out = reducer(grads)
        assert [g.dtype for g in out] == [ms.float16, ms.float32, ms.float32], out
        np.testing.assert_allclose(out[0].asnumpy(), np.full(3, total * scale, np.float16), rtol=1e-3)
        np.testing.assert_allclose(out[1].asnumpy(), np.full(3, total * scale, np.float32), rtol=1e-6)
        np.testing.assert_array_equal(out[2].asnumpy(), np.full(3, rank + 1, np.float32))
    half = [ms.Parameter(ms.Tensor(np.zeros(3, np.float16)), name=f"h{i}") for i in range(2)]
    big = (ms.Tensor(np.full(3, 40000, np.float16)), ms.Tensor(np.full(3, 40000, np.float16)))
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        for sync in (True, False):
            ms.set_auto_parallel_context(gradient_fp32_sync=sync)
            # The mean's 1 / size is applied before the sum: a float16 mean overflows only where the mean does.
            out = nn.DistributedGradReducer(half)(big)
            assert [g.dtype for g in out] == [ms.float16, ms.float16], out
            np.testing.assert_array_equal(out[0].asnumpy(), np.full(3, 40000, np.float16))
            out = nn.DistributedGradReducer(half, mean=False)(big)  # a sum of 40000 per rank is past float16
            assert np.isinf(out[0].asnumpy()).all(), out[0]
    ms.set_auto_parallel_context(gradient_fp32_sync=True)
    ms.set_context(mode=ms.PYNATIVE_MODE)


def main():
    global OUT, SINGLE
    OUT, SINGLE = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "single"
    if SINGLE:
        rank, size = 0, int(sys.argv[3])
    else:
        from msrt.communication import get_group_size, get_rank, init
        init()
        rank, size = get_rank(), get_group_size()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        check_reducer(rank, size)
    done = set()
    for run in RUNS:
        if SINGLE:  # one stand-alone run per reference
            if reference(run) in done:
                continue
            done.add(reference(run))
        train(run, rank, size)
    print("worker", rank, "of", size, "OK", flush=True)


if __name__ == "__main__":
    main()
