"""The fold_precision_casts backend pass (Note [Casts folded into mixed-precision ops] in
src/compiler/precision_casts.h): amp O2 keeps BatchNorm in float32 inside a bfloat16 network; in a graph the casts
around batch_norm and batch_norm_grad go, the ops read and write bfloat16 themselves, and every bit of the step
stays what the casts gave."""
import os
import re

import numpy as np

import msrt as ms
from msrt import amp, nn

OFF = "--disable_pass=fold_precision_casts"


class ConvBnNet(nn.Cell):
    """conv → BatchNorm → relu twice (the second block's BatchNorm output read by an add), then a dense head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 8, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.fc = nn.Dense(8, 3)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)) + x)
        return self.fc(x.mean(axis=(2, 3)))


def _data(steps, batch=4):
    rng = np.random.default_rng(3)
    return [(ms.Tensor(rng.standard_normal((batch, 2, 6, 6)).astype(np.float32)),
             ms.Tensor(rng.integers(0, 3, batch).astype(np.int32))) for _ in range(steps)]


def _backend_ir(folder):
    folder = str(folder)
    names = sorted(f for f in os.listdir(folder) if "_backend_" in f)
    return [open(os.path.join(folder, f)).read() for f in names]


def _train(data, flags, folder):
    """bfloat16 amp O2 training in GRAPH_MODE: the losses' bits, the weights, BatchNorm's running statistics and
    the backend IR."""
    ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags=flags, save_graphs=1, save_graphs_path=str(folder))
    try:
        ms.set_seed(5)
        net = ConvBnNet()
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = amp.build_train_network(net, opt, loss, level="O2", dtype=ms.bfloat16)
        step.set_train()
        losses = [step(x, y)[0].asnumpy().tobytes() for x, y in data]  # (loss, overflow, scale)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE, graph_kernel_flags="", save_graphs=0)
    state = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    return losses, state, "\n".join(_backend_ir(folder))


def _ops_reading_or_writing(text, op, dtype):
    """Lines of `op` nodes whose output types name `dtype`."""
    return [line for line in text.splitlines() if re.search(rf"= {op}\(", line) and dtype in line.split(" : ")[-1]]


def test_bfloat16_training_is_bit_for_bit_the_cast_graph(tmp_path):
    data = _data(4)
    folded = _train(data, "", tmp_path / "folded")
    plain = _train(data, OFF, tmp_path / "plain")
    assert folded[0] == plain[0]
    assert folded[1].keys() == plain[1].keys()
    for name in plain[1]:  # the weights and the running statistics
        assert folded[1][name].tobytes() == plain[1][name].tobytes(), name
    # The steps changed the weights: the comparison is not one of untouched values.
    assert len(set(folded[0])) > 1


def test_batch_norm_and_its_gradient_run_in_bfloat16_without_casts(tmp_path):
    data = _data(1)
    _, _, folded = _train(data, "", tmp_path / "folded")
    _, _, plain = _train(data, OFF, tmp_path / "plain")
    # Without the pass: batch_norm and batch_norm_grad compute float32, between casts.
    assert len(_ops_reading_or_writing(plain, "batch_norm", "Float32(4, 6, 6, 8)")) == 2
    assert len(_ops_reading_or_writing(plain, "batch_norm_grad", "Float32(4, 6, 6, 8)")) == 2
    # With it: both read and write bfloat16 activations (statistics stay float32) ...
    forward = _ops_reading_or_writing(folded, "batch_norm", "BFloat16(4, 6, 6, 8)")
    assert len(forward) == 2 and all("Float32(8,)" in line for line in forward)
    assert len(_ops_reading_or_writing(folded, "batch_norm_grad", "BFloat16(4, 6, 6, 8)")) == 2
    # ... the activation-sized casts are gone (those of the weights, their gradients and the input remain) ...
    activation_casts = [line for line in folded.splitlines() if " cast(" in line and "(4, 6, 6, 8)" in line]
    assert activation_casts == []
    assert plain.count(" cast(") - folded.count(" cast(") == 8
    # ... and the first block's relu runs as BatchNorm's epilogue, as in a float32 graph.
    assert sum("__epilogue: ['relu']" in line for line in forward) == 1


def test_a_float32_result_read_as_float32_keeps_its_casts(tmp_path):
    """The network's float32 output is BatchNorm's: rounding it to bfloat16 would change it, so nothing folds."""
    bn = nn.BatchNorm2d(3)
    bn.set_train(False)
    rng = np.random.default_rng(4)
    x = ms.Tensor(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    low = ms.ops.cast(x, ms.bfloat16)
    expected = bn(ms.ops.cast(low, ms.float32)).asnumpy()
    ms.set_context(save_graphs=1, save_graphs_path=str(tmp_path))
    try:
        @ms.jit
        def f(v):
            return bn(ms.ops.cast(v, ms.float32))

        got = f(low).asnumpy()
    finally:
        ms.set_context(save_graphs=0)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    text = "\n".join(_backend_ir(tmp_path))
    assert " cast(" in text and not _ops_reading_or_writing(text, "batch_norm", "BFloat16")


def test_inference_at_o2_folds_and_matches(tmp_path):
    """An amp O2 network in inference: BatchNorm with its running statistics reads bfloat16; the output is the
    cast graph's."""
    ms.set_seed(6)
    net = ConvBnNet()
    x = _data(1)[0][0]
    model = amp.auto_mixed_precision(net, "O2", ms.bfloat16)
    model.set_train(False)
    outs = {}
    for name, flags in (("folded", ""), ("plain", OFF)):
        ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags=flags, save_graphs=1,
                       save_graphs_path=str(tmp_path / name))
        try:
            outs[name] = ms.jit(model.construct)(x).asnumpy()
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE, graph_kernel_flags="", save_graphs=0)
    assert outs["folded"].tobytes() == outs["plain"].tobytes()
    text = "\n".join(_backend_ir(tmp_path / "folded"))
    assert len(_ops_reading_or_writing(text, "batch_norm", "BFloat16(4, 6, 6, 8)")) == 2
