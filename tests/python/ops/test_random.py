"""dropout and the global generator: masks hold 0 or 1/keep_prob, follow
the seed (set_seed restarts the streams), do not depend on thread counts or
on when the kernel runs, and the gradient is dy * mask."""
import warnings

import numpy as np
import pytest

import msrt

from .harness import _C, covers, run_op, tensor

covers("dropout")

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _restore_seed():
    seed = _C.get_seed()
    yield
    _C.set_seed(seed)


def dropout(x, keep_prob=0.5):
    y, mask = _C.call("dropout", [tensor(x)], {"keep_prob": keep_prob})
    return y.asnumpy().copy(), mask.asnumpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("keep_prob", [0.1, 0.5, 0.9, 1.0])
def test_dropout_values(dtype, keep_prob):
    x = RNG.uniform(-2, 2, size=(200, 300)).astype(dtype)
    y, mask = dropout(x, keep_prob)
    assert y.dtype == dtype and mask.dtype == dtype and mask.shape == x.shape
    scale = dtype(1 / keep_prob)
    assert set(np.unique(mask)) <= {dtype(0), scale}
    if dtype == np.float16:  # computed in float32, rounded once
        np.testing.assert_allclose(y.astype(np.float32), x.astype(np.float32) * mask.astype(np.float32), rtol=1e-3)
    else:
        np.testing.assert_array_equal(y, x * mask)
    kept = np.mean(mask != 0)
    assert abs(kept - keep_prob) < 0.01, kept  # 60000 draws: about 5 standard deviations


def test_dropout_default_and_shapes():
    x = np.ones((4, 5), np.float32)
    y, mask = dropout(x)
    assert set(np.unique(mask)) <= {0.0, 2.0}
    outs = run_op("dropout", [np.array(3.0)], {"keep_prob": 1.0})
    assert outs[0] == 3.0 and outs[1] == 1.0
    assert run_op("dropout", [np.zeros((0, 3))])[0].shape == (0, 3)
    assert run_op("dropout", [np.ones(7)], {"keep_prob": 1})[1].tolist() == [1.0] * 7


def test_seed_makes_masks_reproducible():
    x = np.ones((64, 65), np.float32)
    _C.set_seed(42)
    assert _C.get_seed() == 42
    first = [dropout(x)[1] for _ in range(3)]
    _C.set_seed(42)
    again = [dropout(x)[1] for _ in range(3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # successive calls draw different masks
    _C.set_seed(43)
    assert not np.array_equal(dropout(x)[1], first[0])


def test_stream_is_taken_at_call_time_not_run_time():
    # Queue several ops without reading; set_seed in between must only
    # affect the calls made after it.
    x = tensor(np.ones((300, 300), np.float32))
    _C.set_seed(7)
    a = _C.call("dropout", [x], {})[1]
    _C.set_seed(7)
    b = _C.call("dropout", [x], {})[1]
    c = _C.call("dropout", [x], {})[1]
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert not np.array_equal(b.asnumpy(), c.asnumpy())


def test_masks_do_not_depend_on_threads_or_sync_mode():
    x = np.ones((512, 300), np.float32)
    _C.set_seed(11)
    base = dropout(x)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oversubscribes small machines, on purpose
        msrt.set_context(runtime_num_threads=2, inter_op_parallel_num=2)  # one more loop thread
    _C.set_seed(11)
    np.testing.assert_array_equal(dropout(x)[1], base)
    msrt.set_context(runtime_num_threads=2, inter_op_parallel_num=0, pynative_synchronize=True)
    _C.set_seed(11)
    np.testing.assert_array_equal(dropout(x)[1], base)


def test_mask_depends_on_position_only():
    # Element i of a draw is fixed by (seed, stream, i): a bigger tensor's
    # mask starts with a smaller one's.
    _C.set_seed(5)
    small = dropout(np.ones(10, np.float32))[1]
    _C.set_seed(5)
    big = dropout(np.ones(1000, np.float32))[1]
    np.testing.assert_array_equal(big[:10], small)


def test_dropout_gradient_is_dy_times_mask():
    x = tensor(RNG.uniform(size=(5, 6)))
    x.requires_grad = True
    tape = _C.GradTape()
    try:
        y, mask = _C.call("dropout", [x], {"keep_prob": 0.7})
        sens = RNG.uniform(size=(5, 6))
        (g,) = tape.gradient([y], [tensor(sens)], [x])
    finally:
        tape.end()
    np.testing.assert_allclose(g.asnumpy(), sens * mask.asnumpy())


def test_dropout_errors():
    for bad in [0.0, 1.5, -0.1]:
        with pytest.raises(ValueError, match=r"\[dropout\] attribute 'keep_prob' must be in \(0, 1\]"):
            run_op("dropout", [np.ones(3)], {"keep_prob": bad})
    with pytest.raises(TypeError, match=r"\[dropout\] input 'x'.*Int32"):
        run_op("dropout", [np.ones(3, np.int32)])


def test_set_seed_errors():
    with pytest.raises(TypeError, match="int"):
        _C.set_seed(1.5)
    with pytest.raises(TypeError, match="int"):
        _C.set_seed(True)
    with pytest.raises(ValueError, match="seed"):
        _C.set_seed(-1)
