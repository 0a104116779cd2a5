"""ms.data_sink: runs a function over the next sink_size rows of a looping dataset, eagerly or compiled."""
import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import nn


def _data(n=5):
    return ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.float32), "y": np.ones(n, np.float32)}, shuffle=False)


def test_each_call_runs_sink_size_rows_and_loops_over_epochs():
    seen = []

    def fn(x, y):
        seen.append(float(x.asnumpy()))
        return x + y

    sink = ms.data_sink(fn, _data(), sink_size=3)
    outs = [float(sink().asnumpy()) for _ in range(4)]
    assert seen == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    assert outs == [3.0, 1.0, 4.0, 2.0]  # the last row's output of each call
    assert ms.train.data_sink is ms.data_sink
    one = ms.data_sink(lambda x, y: x * 2, _data(2))
    assert [float(one().asnumpy()) for _ in range(3)] == [0.0, 2.0, 0.0]


@pytest.mark.parametrize("jit_config", [None, ms.JitConfig(jit_level="O1")])
def test_training_steps_match_a_hand_written_loop(jit_config):
    xs = np.random.default_rng(0).normal(size=(12, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-1.0], [0.5]], np.float32)
    data = ds.NumpySlicesDataset((xs, ys), ["x", "y"], shuffle=False).batch(4)

    def train(sinking):
        ms.set_seed(1)
        net = nn.Dense(3, 1)
        opt = nn.SGD(net.trainable_params(), 0.1)
        grad_fn = ms.value_and_grad(lambda x, y: nn.MSELoss()(net(x), y), None, opt.parameters)

        def step(x, y):
            loss, grads = grad_fn(x, y)
            opt(grads)
            return loss

        if sinking:
            sink = ms.data_sink(step, data, sink_size=3, jit_config=jit_config)
            losses = [float(sink().asnumpy()) for _ in range(2)]
        else:
            all_losses = [float(step(*row).asnumpy()) for _ in range(2) for row in data.create_tuple_iterator()]
            losses = [all_losses[2], all_losses[5]]
        return losses, net.weight.asnumpy()

    (l1, w1), (l2, w2) = train(True), train(False)
    np.testing.assert_allclose(l1, l2, rtol=1e-5)
    np.testing.assert_allclose(w1, w2, rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="sink_size"):
        ms.data_sink(lambda x, y: x, _data(), sink_size=0)
    with pytest.raises(ValueError, match="sink_size"):
        ms.data_sink(lambda x, y: x, _data(), sink_size=1.5)
    with pytest.raises(TypeError, match="fn"):
        ms.data_sink(3, _data())
    with pytest.raises(TypeError, match="dataset"):
        ms.data_sink(lambda x: x, [1, 2])
    with pytest.raises(TypeError, match="jit_config"):
        ms.data_sink(lambda x, y: x, _data(), jit_config={"jit_level": "O1"})
    empty = ms.data_sink(lambda x, y: x, _data().take(1).skip(1))
    with pytest.raises(RuntimeError, match="no rows"):
        empty()
