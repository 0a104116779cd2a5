"""nn.Cell: registration, names, traversal, modes, scopes, hooks, graph mode."""
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import Parameter, Tensor, nn


def t(a):
    return Tensor(np.asarray(a, dtype=np.float32))


class LeNetLike(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=True)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc1(self.flatten(self.relu(self.conv1(x))))


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.net = LeNetLike()
        self.scale = Parameter(t(1.0), name="scale", requires_grad=False)

    def construct(self, x):
        return self.net(x) * self.scale


def test_parameter_names_follow_attribute_paths():
    net = LeNetLike()
    assert [p.name for p in net.get_parameters()] == ["conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"]
    assert [n for n, _ in net.parameters_and_names()] == ["conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"]
    outer = Outer()
    assert [p.name for p in outer.get_parameters()] == [
        "scale", "net.conv1.weight", "net.conv1.bias", "net.fc1.weight", "net.fc1.bias"]
    assert list(outer.parameters_dict()) == [p.name for p in outer.get_parameters()]
    assert [p.name for p in outer.trainable_params()] == [
        "net.conv1.weight", "net.conv1.bias", "net.fc1.weight", "net.fc1.bias"]
    assert [p.name for p in outer.untrainable_params()] == ["scale"]
    assert [p.name for p in outer.get_parameters(expand=False)] == ["scale"]


def test_wrappers_do_not_prefix():
    net = LeNetLike()
    loss_net = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True))
    assert [p.name for p in loss_net.get_parameters()][:2] == ["conv1.weight", "conv1.bias"]
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    train = nn.TrainOneStepCell(loss_net, opt)
    names = [p.name for p in train.get_parameters()]
    assert names[:4] == ["conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"]
    assert "learning_rate" in names and "momentum" in names and "moments.fc1.bias" in names
    assert len(names) == len(set(names))


def test_cells_and_names_and_name_cells():
    outer = Outer()
    names = [n for n, _ in outer.cells_and_names()]
    assert names == ["", "net", "net.conv1", "net.relu", "net.flatten", "net.fc1"]
    assert list(outer.name_cells()) == ["net"]
    assert list(outer.net.name_cells()) == ["conv1", "relu", "flatten", "fc1"]
    shared = nn.ReLU()

    class Twice(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = shared
            self.b = shared

    assert [n for n, _ in Twice().cells_and_names()] == ["", "a"]  # each cell once


def test_set_train_and_training_flag():
    outer = Outer()
    assert not outer.training and not outer.net.conv1.training
    assert outer.set_train() is outer
    assert all(c.training for _, c in outer.cells_and_names())
    outer.set_train(False)
    assert not any(c.training for _, c in outer.cells_and_names())
    assert outer.set_grad() is outer and outer.requires_grad


def test_attribute_rules():
    net = nn.Cell()
    net.w = Parameter(t([1.0, 2.0]))
    assert net.w.name == "w"  # a default-named Parameter takes the attribute's name
    net.w = t([3.0, 4.0])  # a Tensor assigned to a parameter attribute sets its data
    np.testing.assert_array_equal(net.w.asnumpy(), [3.0, 4.0])
    with pytest.raises(TypeError):
        net.w = "text"
    net.sub = nn.ReLU()
    with pytest.raises(TypeError):
        net.sub = 3
    net.sub = None
    assert net.sub is None and [n for n, _ in net.cells_and_names()] == [""]
    del net.w
    assert list(net.get_parameters()) == []
    with pytest.raises(AttributeError, match="no attribute"):
        net.missing  # noqa: B018

    class Bad(nn.Cell):
        def __init__(self):
            self.x = 1  # before super().__init__()

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_insert_child_and_param_and_update_names():
    net = nn.Cell()
    dense = nn.Dense(2, 2)
    net.insert_child_to_cell("fc", dense)
    assert net.fc is dense
    assert [p.name for p in net.get_parameters()] == ["weight", "bias"]  # insert does not rename
    net.update_parameters_name("model.")
    assert [p.name for p in net.get_parameters()] == ["model.fc.weight", "model.fc.bias"]
    with pytest.raises(KeyError):
        net.insert_child_to_cell("a.b", nn.ReLU())
    with pytest.raises(TypeError):
        net.insert_child_to_cell("x", 3)
    net.insert_param_to_cell("p", Parameter(t(0.0)))
    assert net.p.name == "p"
    with pytest.raises(KeyError):
        net.insert_param_to_cell("a.b", Parameter(t(0.0)))


def test_parameter_list_attribute():
    net = nn.Cell()
    net.ws = [Parameter(t(1.0), name="w0"), Parameter(t(2.0), name="w1")]
    assert [p.name for p in net.get_parameters()] == ["w0", "w1"]


def test_scope_names_follow_reserve_class_name_in_scope():
    outer = Outer()
    outer(t(np.zeros((1, 1, 4, 4))))
    assert outer.scope == "Default"
    assert outer.net.scope == "Default/net-LeNetLike"
    assert outer.net.conv1.scope == "Default/net-LeNetLike/conv1-Conv2d"
    assert outer.net.conv1.cls_name == "Conv2d"
    ms.set_context(reserve_class_name_in_scope=False)
    outer(t(np.zeros((1, 1, 4, 4))))
    assert outer.net.conv1.scope == "Default/net/conv1"
    # A cell never called scopes itself as a root.
    assert nn.Dense(1, 1).scope == "Default"


def test_forward_hooks():
    net = nn.ReLU()
    seen = []
    h1 = net.register_forward_pre_hook(lambda cell, inputs: seen.append(("pre", cell.cls_name)))
    h2 = net.register_forward_hook(lambda cell, inputs, outputs: outputs * 2)
    out = net(t([-1.0, 3.0]))
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 6.0])
    assert seen == [("pre", "ReLU")]
    h1.remove()
    h2.remove()
    np.testing.assert_array_equal(net(t([-1.0, 3.0])).asnumpy(), [0.0, 3.0])
    assert seen == [("pre", "ReLU")]


def test_repr_like_mindspore():
    text = repr(LeNetLike())
    assert text.startswith("LeNetLike<\n  (conv1): Conv2d<input_channels=1, output_channels=2")
    assert "(fc1): Dense<input_channels=8, output_channels=3, has_bias=True>" in text
    assert repr(nn.ReLU()) == "ReLU<>"


def test_construct_not_defined():
    with pytest.raises(NotImplementedError, match="construct"):
        nn.Cell()()


def test_graph_mode_compiles_once_without_warnings(python_subprocess):
    proc = python_subprocess("""
        import numpy as np
        from msrt import nn, Tensor
        ms.set_context(mode=ms.GRAPH_MODE)
        net = nn.Dense(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a = net(Tensor(np.ones((1, 2), np.float32))).asnumpy()
            b = net(Tensor(np.ones((1, 2), np.float32))).asnumpy()
        msgs = [str(w.message) for w in caught]
        compiles = len(ms._jit.compile_report(net))
        print("RESULT=" + json.dumps({"msgs": msgs, "same": bool((a == b).all()), "compiles": compiles}))
    """)
    assert proc.result["msgs"] == []
    assert proc.result["same"]
    assert proc.result["compiles"] == 1


def test_pynative_mode_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.ReLU()(t([1.0]))


class DoubleGrad(nn.Cell):
    """Forward: identity. Backward (custom bprop): twice the incoming gradient."""

    def construct(self, x):
        return x * 1.0

    def bprop(self, x, out, dout):
        return (dout * 2.0,)


def test_custom_bprop_inside_a_network_is_used_by_train_one_step():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 1, has_bias=False)
            self.double = DoubleGrad()

        def construct(self, x):
            return self.double(self.fc(x))

    net = Net()
    assert DoubleGrad._has_bprop and not nn.Dense._has_bprop
    x = np.ones((2, 3), np.float32)
    w0 = net.fc.weight.asnumpy().copy()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.L1Loss(reduction="sum")), nn.SGD(net.trainable_params(), 0.1),
                                return_grad=True)
    _, grads = train(t(x), t(np.full((2, 1), -100.0)))
    # d|y - label|/dy = 1 per sample (y > label); the bprop doubles it; dy/dw = x.
    np.testing.assert_allclose(grads["fc.weight"].asnumpy(), 2.0 * x.sum(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(net.fc.weight.asnumpy(), w0 - 0.1 * 2.0 * x.sum(0, keepdims=True), rtol=1e-6)
