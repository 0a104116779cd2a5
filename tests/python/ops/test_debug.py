"""The print op: what reaches stdout, in which order, and its errors."""
import numpy as np
import pytest

import msrt as ms

from .harness import _C, covers, tensor

covers("print")

CASES = [
    np.array([[1, 2, 3], [10, 20, 30]], np.int32),
    np.array([1.5, -2.0, np.nan, np.inf], np.float32),
    np.array([True, False]),
    np.float32(2.5),
    np.int64(-7),
    np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 5,
    np.arange(2000, dtype=np.float32).reshape(2, 10, 100),  # summarised
    np.arange(40, dtype=np.int16),  # wraps at 75 columns
    np.array([0.5, 1.25], np.float16),
    np.zeros((0,), np.float32),
    np.array([[True, False], [False, True]]),
    np.arange(-1500, 1500, dtype=np.int32),  # summarised and wrapped
]


@pytest.mark.parametrize("array", CASES, ids=lambda a: f"{a.dtype}{a.shape}")
def test_tensors_print_as_their_repr(capfd, array):
    t = ms.Tensor(array)
    capfd.readouterr()
    ms.ops.print_(t)
    assert capfd.readouterr().out == repr(t) + "\n"


def test_values_print_one_per_line_in_call_order(capfd):
    x = ms.Tensor(np.array([1, 2], np.int32))
    print("before", flush=True)
    out = ms.ops.Print()("text", x, 3, 1.5, True, ("a", [x, "b"]))
    print("after", flush=True)
    lines = capfd.readouterr().out.splitlines()
    shown = repr(x)
    assert lines == ["before", "text", shown, "3", "1.5", "True", "a", shown, "b", "after"]
    assert out.dtype == ms.int32 and out.shape == () and int(out.asnumpy()) == 0


def test_print_waits_for_the_ops_before_it(capfd):
    # Eager ops are queued; print must see the values the caller computed.
    x = ms.Tensor(np.ones((64, 64), np.float32))
    y = x
    for _ in range(20):
        y = y + x
    ms.ops.print_(y[0, :2])
    assert "2.10000000e+01" in capfd.readouterr().out


def test_print_with_no_items_prints_the_inputs(capfd):
    outs = _C.call("print", [tensor(np.array([4], np.int64))], {})
    outs[0].asnumpy()
    assert capfd.readouterr().out == "Tensor(shape=[1], dtype=Int64, value= [4])\n"


def test_print_inside_a_recorded_function_does_not_stop_gradients(capfd):
    def f(x):
        ms.ops.print_("x is", x)
        return (x * x).sum()

    g = ms.grad(f)(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_allclose(g.asnumpy(), [2.0, 4.0])
    assert "x is" in capfd.readouterr().out


def test_unsupported_values_raise_type_error():
    with pytest.raises(TypeError, match=r"\[print\].*expected one of those, but got object"):
        ms.ops.print_("ok", object())


def test_items_must_match_the_tensor_inputs():
    with pytest.raises(ValueError, match=r"\[print\] attribute 'items' must hold one None per tensor input; "
                                         r"expected 1, but got 2"):
        _C.call("print", [tensor(np.array([1.0]))], {"items": [None, None]})
    with pytest.raises(TypeError, match=r"\[print\] attribute 'items' must be a list"):
        _C.call("print", [], {"items": "text"})
