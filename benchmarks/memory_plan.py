"""Memory of a compiled LeNet-5 training step under memory_optimize_level O0
(every intermediate its own buffer from the pool) and O1 (a static plan that
shares bytes between intermediates whose lifetimes do not overlap), and the
least any plan can reach (the most bytes alive at once). The step's results
are the same under both levels.

    .venv/bin/python benchmarks/memory_plan.py
"""
import sys

import numpy as np


def planned(level, batch):
    import msrt as ms
    from msrt import nn
    from msrt.examples.lenet import LeNet5

    ms.set_context(mode=ms.GRAPH_MODE, memory_optimize_level=level)
    ms.set_seed(0)
    net = LeNet5()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                               nn.Momentum(net.trainable_params(), 0.01, 0.9))
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((batch, 1, 32, 32)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))
    loss = float(step(x, y).asnumpy())
    report = ms._jit.compile_report(step)[0]
    return report["planned_bytes"], report["peak_live_bytes"], loss


def main():
    print("LeNet-5 training step (forward, backward, Momentum), intermediates in KiB")
    print(f"{'batch':>5} | {'O0':>9} {'O1':>9} {'lower bound':>11} | {'O1/O0':>5}")
    for batch in (32, 256):
        o0, live, loss0 = planned("O0", batch)
        o1, _, loss1 = planned("O1", batch)
        assert loss0 == loss1
        print(f"{batch:>5} | {o0 / 1024:9.1f} {o1 / 1024:9.1f} {live / 1024:11.1f} | {o1 / o0:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
