"""ops.ScalarSummary, ImageSummary, TensorSummary and HistogramSummary: their values reach the
summary file through SummaryRecord.record / SummaryCollector, eagerly and from compiled graphs
(GRAPH_MODE Cells, ms.jit functions, their gradients, Model.train); their errors."""
import os

import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import Tensor, nn, ops
from msrt._warnings import MsrtWarning
from msrt.train import summary

MODES = [ms.PYNATIVE_MODE, ms.GRAPH_MODE]


@pytest.fixture(autouse=True)
def _restore_mode():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _only_file(directory):
    names = os.listdir(directory)
    assert len(names) == 1, names
    return os.path.join(directory, names[0])


class Demo(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scalar = ops.ScalarSummary()
        self.tensor = ops.TensorSummary()
        self.histogram = ops.HistogramSummary()
        self.image = ops.ImageSummary()

    def construct(self, x, y):
        self.scalar("x", x)
        z = x * y + 1
        self.tensor("z", z)
        self.histogram("z", z * 2)
        self.image("picture", ops.reshape(z, (1, 1, 2, 2)))
        return z


@pytest.mark.parametrize("mode", MODES)
def test_summary_ops_in_a_cell(tmp_path, mode, recwarn):
    ms.set_context(mode=mode)
    net = Demo()
    y = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
    with ms.SummaryRecord(str(tmp_path)) as record:
        for step in (1, 2, 3):
            out = net(Tensor(np.float32(step)), Tensor(y))
            assert record.record(step)
        np.testing.assert_allclose(out.asnumpy(), 3 * y + 1)
        assert not record.record(4)  # nothing new
    assert not [w for w in recwarn if "eagerly" in str(w.message)]  # GRAPH_MODE compiled it
    path = _only_file(tmp_path)
    assert summary.read_scalars(path) == {"x": [(1, 1.0), (2, 2.0), (3, 3.0)]}
    tensors = summary.read_values(path, "tensor")["z"]
    assert [s for s, _ in tensors] == [1, 2, 3]
    for step, value in tensors:
        np.testing.assert_allclose(value, step * y + 1)
    histograms = summary.read_values(path, "histogram")["z"]
    assert [(s, h.count, h.min, h.max) for s, h in histograms] == [
        (s, 4, float(((s * y + 1) * 2).min()), float(((s * y + 1) * 2).max())) for s in (1, 2, 3)]
    images = summary.read_values(path, "image")["picture"]
    assert [(s, i.height, i.width) for s, i in images] == [(1, 2, 2), (2, 2, 2), (3, 2, 2)]


def test_summary_ops_in_jit_functions_and_their_gradients(tmp_path):
    scalar = ops.ScalarSummary()
    w = ms.Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w")

    @ms.jit
    def loss_fn(x):
        loss = (x * w).sum()
        scalar("loss", loss)
        return loss

    grad_fn = ms.value_and_grad(loss_fn, grad_position=0, weights=[w])
    with ms.SummaryRecord(str(tmp_path)) as record:
        loss, (gx, gw) = grad_fn(Tensor(np.array([1.0, 1.0], np.float32)))
        record.record(1)
        loss_fn(Tensor(np.array([2.0, 0.0], np.float32)))
        record.record(2)
    assert float(loss.asnumpy()) == 5.0
    np.testing.assert_allclose(gx.asnumpy(), [2.0, 3.0])
    np.testing.assert_allclose(gw[0].asnumpy() if isinstance(gw, tuple) else gw.asnumpy(), [1.0, 1.0])
    assert summary.read_scalars(_only_file(tmp_path)) == {"loss": [(1, 5.0), (2, 4.0)]}


@pytest.mark.parametrize("mode", MODES)
def test_summary_ops_with_model_train_and_summary_collector(tmp_path, mode):
    ms.set_context(mode=mode)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 1)
            self.scalar = ops.ScalarSummary()
            self.histogram = ops.HistogramSummary()

        def construct(self, x):
            out = self.dense(x)
            self.scalar("out_mean", out.mean())
            self.histogram("dense_out", out)
            return out

    xs = np.arange(16, dtype=np.float32).reshape(8, 2) / 10
    ys = xs.sum(1, keepdims=True)
    data = ds.NumpySlicesDataset((xs, ys), ["x", "y"], shuffle=False).batch(2)
    ms.set_seed(0)
    net = Net()
    model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05))
    means = {}

    def watch(run_context):
        cb = run_context.original_args()
        batch = xs[((cb.cur_step_num - 1) % 4) * 2:((cb.cur_step_num - 1) % 4) * 2 + 2]
        means[cb.cur_step_num] = batch

    weights = {}

    def before(run_context):
        step = run_context.original_args().cur_step_num
        weights[step + 1] = (net.dense.weight.asnumpy().copy(), net.dense.bias.asnumpy().copy())

    collector = ms.SummaryCollector(str(tmp_path), collect_freq=3,
                                    collect_specified_data={"collect_metric": False}, keep_default_action=False)
    weights[1] = (net.dense.weight.asnumpy().copy(), net.dense.bias.asnumpy().copy())
    model.train(2, data, callbacks=[ms.train.LambdaCallback(on_train_step_end=watch), collector,
                                    ms.train.LambdaCallback(on_train_step_end=before)])
    path = _only_file(tmp_path)
    scalars = summary.read_scalars(path)["out_mean"]
    assert [s for s, _ in scalars] == [1, 3, 6]
    for step, value in scalars:
        w, b = weights[step]  # the forward of step s ran with the weights before its update
        np.testing.assert_allclose(value, float((means[step] @ w.T + b).mean()), rtol=1e-5)
    assert [s for s, _ in summary.read_values(path, "histogram")["dense_out"]] == [1, 3, 6]


@pytest.mark.parametrize("steps, freq, tensor_freq, scalar_steps, tensor_steps", [
    (8, 2, 3, [1, 2, 4, 6, 8], [1, 3, 6]),
    (8, 2, None, [1, 2, 4, 6, 8], [1, 2, 4, 6, 8]),
    (26, 1, None, list(range(1, 27)), list(range(1, 21))),  # at most 20 steps of TensorSummary values
])
def test_summary_collector_collect_tensor_freq(tmp_path, steps, freq, tensor_freq, scalar_steps, tensor_steps):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 1)
            self.scalar = ops.ScalarSummary()
            self.tensor = ops.TensorSummary()

        def construct(self, x):
            out = self.dense(x)
            self.scalar("mean", out.mean())
            self.tensor("out", out)
            return out

    xs = np.ones((steps // 2, 2), np.float32)
    data = ds.NumpySlicesDataset((xs, xs[:, :1]), ["x", "y"], shuffle=False).batch(1)
    net = Net()
    model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01))
    collector = ms.SummaryCollector(str(tmp_path), collect_freq=freq, collect_tensor_freq=tensor_freq,
                                    collect_specified_data={"collect_metric": False}, keep_default_action=False)
    model.train(2, data, callbacks=[collector])
    path = _only_file(tmp_path)
    assert [s for s, _ in summary.read_scalars(path)["mean"]] == scalar_steps
    assert [s for s, _ in summary.read_values(path, "tensor")["out"]] == tensor_steps


def test_values_are_taken_when_the_op_runs_and_eval_mode_keeps_them(tmp_path):
    p = ms.Parameter(Tensor(np.ones(3, np.float32)), name="p")
    with ms.SummaryRecord(str(tmp_path)) as record:
        ops.TensorSummary()("p", p)
        p.set_data(Tensor(np.zeros(3, np.float32)))
        record.set_mode("eval")
        assert not record.record(1)  # eval mode leaves the summary ops' values
        record.set_mode("train")
        ops.ScalarSummary()("s", Tensor(1.0))
        ops.ScalarSummary()("s", Tensor(2.0))  # the last value of a tag counts
        record.add_value("scalar", "added", 0.5)
        assert record.record(2)
        with pytest.raises(ValueError, match="mode"):
            record.set_mode("predict")
    events = summary.read_summary(_only_file(tmp_path))
    assert [e.step for e in events] == [0, 2]
    np.testing.assert_array_equal(events[1].tensors["p"], np.ones(3))
    assert events[1].values == {"added": 0.5, "s": 2.0}


def test_values_before_the_record_began_are_not_its_own(tmp_path):
    ops.ScalarSummary()("stale", Tensor(1.0))
    with ms.SummaryRecord(str(tmp_path)) as record:
        assert not record.record(1)


def test_a_value_add_value_refuses_is_left_out_with_a_warning(tmp_path):
    with ms.SummaryRecord(str(tmp_path)) as record:
        ops.ImageSummary()("two_channels", Tensor(np.zeros((1, 2, 3, 3), np.float32)))
        ops.ScalarSummary()("kept", Tensor(3.0))
        with pytest.warns(ms.MsrtWarning, match="'two_channels' is not recorded"):
            assert record.record(1)
    assert summary.read_scalars(_only_file(tmp_path)) == {"kept": [(1, 3.0)]}


def test_export_leaves_summary_ops_out(tmp_path):
    net = Demo()
    x, y = Tensor(np.float32(2.0)), Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    ms.export(net, x, y, file_name=str(tmp_path / "demo"), file_format="MINDIR")
    graph = nn.GraphCell(ms.load(str(tmp_path / "demo.mindir")))
    np.testing.assert_allclose(graph(x, y).asnumpy(), [3.0, 5.0, 7.0, 9.0])


def test_summary_op_errors():
    with pytest.raises(TypeError, match="name must be valid string"):
        ops.ScalarSummary()(1, Tensor(1.0))
    with pytest.raises(ValueError, match="name must be valid string"):
        ops.ScalarSummary()("", Tensor(1.0))
    with pytest.raises(TypeError, match="expect to be Tensor"):
        ops.ScalarSummary()("x", 1.0)
    with pytest.raises(ValueError, match="one number"):
        ops.ScalarSummary()("x", Tensor(np.ones(2, np.float32)))
    with pytest.raises(ValueError, match="valid image"):
        ops.ImageSummary()("x", Tensor(np.ones((2, 2, 2), np.float32)))
    for op in (ops.TensorSummary(), ops.HistogramSummary()):
        with pytest.raises(ValueError, match="should not be empty"):
            op("x", Tensor(1.0))
    assert ops.operations.debug_ops.ScalarSummary is ops.ScalarSummary


def test_summary_ops_in_a_cell_with_dynamic_inputs_compile_once(tmp_path, recwarn):
    """A Cell with None dimensions keeps its summary values as extra outputs of
    its one graph, as a static graph does: every size records them."""
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.scalar = ops.ScalarSummary()

        def construct(self, x):
            self.scalar("total", x.sum())
            return x * 2

    net = Net()
    net.set_inputs(Tensor(shape=[None], dtype=ms.float32))
    with ms.SummaryRecord(str(tmp_path)) as record:
        out = net(Tensor(np.ones(3, np.float32)))
        assert record.record(1)
        np.testing.assert_allclose(out.asnumpy(), 2 * np.ones(3))
        net(Tensor(np.ones(5, np.float32)))
        assert record.record(2)
    assert not [w for w in recwarn if issubclass(w.category, MsrtWarning)]
    assert len(ms._jit.compile_report(net)) == 1 and ms._jit.compile_report(net)[0]["dynamic"]
    assert summary.read_scalars(_only_file(tmp_path)) == {"total": [(1, 3.0), (2, 5.0)]}
