"""One process of the data-parallel tests (test_data_parallel.py).

    dp_worker.py OUT_DIR         under msrun: init(), data_parallel, this rank's rows
    dp_worker.py OUT_DIR single N  one process, stand_alone, rows of rank 0 of N (N=1: the whole batch)

Trains the same MLP from the same initial values with SGD, in GRAPH_MODE and
PYNATIVE_MODE (TrainOneStepCell) and with TrainOneStepWithLossScaleCell, and
saves the final parameters as OUT_DIR/<run>_rank<r>_<i>.npy. The GRAPH_MODE
run saves its IR under OUT_DIR/ir/rank<r>.
"""
import os
import sys

import numpy as np

import msrt as ms
from msrt import nn

OUT, SINGLE = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "single"
STEPS, BATCH, FEATURES, HIDDEN, CLASSES = 4, 16, 6, 8, 3


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(FEATURES, HIDDEN)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(HIDDEN, CLASSES)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def build():
    ms.set_seed(7)
    net = MLP()
    rng = np.random.default_rng(7)  # the same start on every rank and in the single run
    for p in net.trainable_params():
        p.set_data(ms.Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.5))
    return net


def train(run, rank, size):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    y = rng.standard_normal((BATCH, CLASSES)).astype(np.float32)
    chunk = BATCH // size
    xs, ys = ms.Tensor(x[rank * chunk:(rank + 1) * chunk]), ms.Tensor(y[rank * chunk:(rank + 1) * chunk])
    net = build()
    opt = nn.SGD(net.trainable_params(), learning_rate=0.2)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    if run == "loss_scale":
        step = nn.TrainOneStepWithLossScaleCell(loss_net, opt, ms.Tensor(np.float32(64.0)))
    else:
        step = nn.TrainOneStepCell(loss_net, opt)
    assert step.reducer_flag == (not SINGLE)
    for _ in range(STEPS):
        step(xs, ys)
    for i, p in enumerate(net.trainable_params()):
        np.save(os.path.join(OUT, f"{run}_rank{rank}_{i}.npy"), p.asnumpy())


def check_reducer(rank, size):
    """DistributedGradReducer on its own: float16 reduced (in float32) and cast back; sum or mean; a
    layerwise_parallel parameter keeps its local gradient."""
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


def main():
    if SINGLE:
        rank, size = 0, int(sys.argv[3])
    else:
        from msrt.communication import get_group_size, get_rank, init
        init()
        rank, size = get_rank(), get_group_size()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        check_reducer(rank, size)
    for run, mode in (("graph", ms.GRAPH_MODE), ("pynative", ms.PYNATIVE_MODE), ("loss_scale", ms.PYNATIVE_MODE)):
        ms.set_context(mode=mode, save_graphs=2 if run == "graph" else 0,
                       save_graphs_path=os.path.join(OUT, "ir", f"rank{rank}"))
        train(run, rank, size)
    print("worker", rank, "of", size, "OK", flush=True)


if __name__ == "__main__":
    main()
