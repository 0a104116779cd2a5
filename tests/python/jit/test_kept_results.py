"""Weight-derived results kept across graph runs (Note [Kept weight-derived results] in
src/runtime/graph_executor.cc): amp's casts of the weights run once while the weights keep their contents, and again
after any write to them."""
import csv
import glob
import os

import numpy as np

import msrt as ms
from msrt import amp, nn


class TwoDense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(6, 5)
        self.fc2 = nn.Dense(5, 3)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def _calls(folder, run, times):
    """Kernel launches by op type over `times` calls of run, from the profiler."""
    profiler = ms.Profiler(output_path=str(folder))
    for _ in range(times):
        run()
    profiler.analyse()
    path = sorted(glob.glob(os.path.join(str(folder), "profiler", "op_summary_*.csv")))[0]
    with open(path, newline="") as f:
        return {row["op_type"]: int(row["calls"]) for row in csv.DictReader(f)}


def _model():
    ms.set_seed(3)
    model = amp.auto_mixed_precision(TwoDense(), "O2", ms.bfloat16)
    model.set_train(False)
    return model


def _x():
    return ms.Tensor(np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32))


def test_weight_casts_run_once_while_the_weights_are_unchanged(tmp_path, graph_mode):
    model, x = _model(), _x()
    f = ms.jit(model.construct)
    first = f(x).asnumpy()
    calls = _calls(tmp_path, lambda: f(x).asnumpy(), 5)
    # Per call: the input's cast to bfloat16 and the output's to float32; the four weight casts ran at the first call.
    assert calls["cast"] == 5 * 2, calls
    assert calls["dense"] == 5 * 2, calls
    np.testing.assert_array_equal(f(x).asnumpy(), first)


def test_a_written_weight_is_cast_again(graph_mode):
    model, x = _model(), _x()
    f = ms.jit(model.construct)
    before = f(x).asnumpy()
    weight = model._backbone.fc1.weight
    # An in-place write through a kernel (as an optimizer's) and a new value bound with set_data.
    ms.ops.assign(weight, weight * 2)
    after_assign = f(x).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    expected = model(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    assert not np.array_equal(after_assign, before)
    np.testing.assert_array_equal(after_assign, expected)
    bias = model._backbone.fc2.bias
    bias.set_data(ms.Tensor(np.full(3, 5.0, np.float32)))
    after_set = f(x).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    expected = model(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(after_set, expected)
    assert not np.array_equal(after_set, after_assign)


def test_a_training_step_that_updates_the_weights_casts_them_each_step(tmp_path, graph_mode):
    ms.set_seed(4)
    net = TwoDense()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    step = amp.build_train_network(net, opt, loss, level="O2", dtype=ms.bfloat16)
    x, y = _x(), ms.Tensor(np.array([0, 2], np.int32))
    losses = [float(step(x, y)[0].asnumpy()) for _ in range(3)]
    assert len(set(losses)) == 3  # each step saw the weights the previous one wrote
    calls = _calls(tmp_path, lambda: step(x, y), 3)
    assert calls["cast"] >= 3 * 4, calls
