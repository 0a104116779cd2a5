"""Errors only a kernel can find (an index out of range) surface on the next
read, as the right Python type, naming the op and the Python line that
launched it; with pynative_synchronize=True they raise at the call. Errors
inference finds raise at the call in both modes."""
import inspect

import numpy as np
import pytest

import msrt as ms

from .harness import _C, tensor


def bad_gather():
    """Calls gather with an index out of range; returns (output, launching line)."""
    params = tensor(np.ones((3, 2), np.float32))
    indices = tensor(np.array([0, 5], np.int32))
    line = inspect.currentframe().f_lineno + 1
    (out,) = _C.call("gather", [params, indices], {"axis": 0})
    return out, line


def test_kernel_error_surfaces_on_read():
    out, line = bad_gather()  # returns: the kernel runs later, on the dispatcher
    assert out.shape == (2, 2)
    with pytest.raises(IndexError) as info:
        out.asnumpy()
    message = str(info.value)
    assert "[gather] index 5" in message and "size 3" in message
    assert "while running 'gather'" in message and "Float32(3, 2), Int32(2,)" in message
    assert f"test_async_errors.py:{line}" in message
    with pytest.raises(IndexError):  # every read raises it again
        out._sync()


def test_ops_on_a_failed_output_fail_without_running():
    out, line = bad_gather()
    (doubled,) = _C.call("mul", [out, tensor(np.array(2.0, np.float32))], {})
    (total,) = _C.call("reduce_sum", [doubled], {})
    with pytest.raises(IndexError) as info:
        total.asnumpy()
    message = str(info.value)
    assert "'reduce_sum' was not run" in message
    assert "[gather] index 5" in message and f"test_async_errors.py:{line}" in message


def test_later_independent_ops_still_run():
    bad_gather()
    (ok,) = _C.call("add", [tensor(np.ones(3)), tensor(np.ones(3))], {})
    np.testing.assert_array_equal(ok.asnumpy(), [2, 2, 2])


def test_a_large_op_run_at_the_call_still_raises_on_read():
    # Above the inline size, an op whose kernel was quick on these shapes
    # before runs at the call (Note [Kernel cost estimates] in eager.cc): its
    # error still waits for the read and names the launching line.
    params = tensor(np.ones((6000, 2), np.float32))
    good, bad = tensor(np.array([0, 5999], np.int32)), tensor(np.array([0, 6000], np.int32))
    for _ in range(4):
        (out,) = _C.call("gather", [params, good], {"axis": 0})
        np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 2)))
        line = inspect.currentframe().f_lineno + 1
        (out,) = _C.call("gather", [params, bad], {"axis": 0})
        assert out.shape == (2, 2)
        with pytest.raises(IndexError) as info:
            out.asnumpy()
        message = str(info.value)
        assert "[gather] index 6000" in message and "while running 'gather'" in message
        assert f"test_async_errors.py:{line}" in message


def test_synchronous_mode_raises_at_the_call():
    ms.set_context(pynative_synchronize=True)
    params = tensor(np.ones((3, 2), np.float32))
    with pytest.raises(IndexError, match=r"\[gather\] index 5 .*while running 'gather'"):
        _C.call("gather", [params, tensor(np.array([5], np.int64))], {"axis": 0})
    logits = tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match=r"\[sparse_softmax_cross_entropy\] 'labels' 3 of sample 1"):
        _C.call("sparse_softmax_cross_entropy", [logits, tensor(np.array([0, 3], np.int32))], {})


def test_loss_label_error_on_read():
    logits = tensor(np.zeros((2, 3), np.float32))
    (loss,) = _C.call("sparse_softmax_cross_entropy", [logits, tensor(np.array([0, 3], np.int32))], {})
    with pytest.raises(IndexError, match=r"'labels' 3 of sample 1 is out of range for 3 classes"):
        loss.asnumpy()


@pytest.mark.parametrize("synchronize", [False, True])
def test_inference_errors_raise_at_the_call(synchronize):
    ms.set_context(pynative_synchronize=synchronize)
    with pytest.raises(ValueError, match=r"\[add\] shapes \(2,\) and \(3,\) can not be broadcast together"):
        _C.call("add", [tensor(np.ones(2)), tensor(np.ones(3))], {})
    with pytest.raises(TypeError, match=r"\[exp\] input 'x' has an unsupported dtype"):
        _C.call("exp", [tensor(np.ones(2, np.int64))], {})
