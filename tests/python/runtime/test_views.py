"""Views (Note [Views] in src/core/tensor.cc): reshape, flatten, expand_dims
and squeeze of a tensor share its memory instead of copying, in PYNATIVE and
inside compiled graphs, while every write keeps value semantics: an in-place
op, an optimizer update or a write through an asnumpy() array never shows
through another tensor; memory Python may write (from_numpy, live asnumpy()
arrays) is copied, not viewed."""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops
from msrt.common.parameter import Parameter

MiB = 1 << 20


def _wait(*tensors):
    for t in tensors:
        t._t._sync()


def _fresh(shape=(4, 6)):
    """A tensor in msrt's memory (the constructor copies), with no NumPy array over it."""
    return ms.Tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))


VIEWS = [
    ("reshape", lambda x: ops.reshape(x, (6, 4)), (6, 4)),
    ("Tensor.reshape", lambda x: x.reshape(2, 12), (2, 12)),
    ("Tensor.view", lambda x: x.view(24), (24,)),
    ("flatten", lambda x: ops.flatten(x.reshape(2, 2, 6)), (2, 12)),
    ("expand_dims", lambda x: ops.expand_dims(x, 1), (4, 1, 6)),
    ("squeeze", lambda x: ops.squeeze(ops.expand_dims(x, 0)), (4, 6)),
]


@pytest.mark.parametrize("name, make, shape", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_memory_and_allocate_nothing(name, make, shape):
    x = _fresh()
    _wait(x)
    before = ms.runtime.memory_allocated()
    y = make(x)
    _wait(y)
    assert y.shape == shape
    assert y._t._data_ptr == x._t._data_ptr
    assert ms.runtime.memory_allocated() == before
    np.testing.assert_array_equal(y.asnumpy(), np.arange(24, dtype=np.float32).reshape(shape))


def test_a_large_reshape_is_a_view():
    x = ms.Tensor(np.ones((1024, 1024), np.float32)) * 2  # 4 MiB, written by a queued op
    before = ms.runtime.memory_allocated()
    y = x.reshape(-1)
    assert y._t._data_ptr == x._t._data_ptr
    assert ms.runtime.memory_allocated() - before < MiB
    assert float(y.sum().asnumpy()) == 2.0 * 1024 * 1024  # waits for x's producer


def test_in_place_ops_do_not_show_through_views():
    p = Parameter(_fresh(), name="p")
    v = p.reshape(24)
    ops.assign(p, ops.zeros((4, 6), ms.float32))
    np.testing.assert_array_equal(v.asnumpy(), np.arange(24, dtype=np.float32))
    np.testing.assert_array_equal(p.asnumpy(), np.zeros((4, 6), np.float32))


def test_in_place_ops_on_a_view_leave_its_source():
    x = _fresh()
    v = Parameter(x.reshape(6, 4), name="v")
    ops.assign_add(v, ops.ones((6, 4), ms.float32))
    np.testing.assert_array_equal(x.asnumpy(), np.arange(24, dtype=np.float32).reshape(4, 6))
    np.testing.assert_array_equal(v.asnumpy(), np.arange(1, 25, dtype=np.float32).reshape(6, 4))


def test_set_data_does_not_show_through_views():
    p = Parameter(_fresh(), name="p")
    v = ops.expand_dims(p, 0)
    p.set_data(ms.Tensor(np.full((4, 6), 7, np.float32)))
    np.testing.assert_array_equal(v.asnumpy()[0], np.arange(24, dtype=np.float32).reshape(4, 6))
    np.testing.assert_array_equal(p.asnumpy(), np.full((4, 6), 7, np.float32))


def test_optimizer_updates_do_not_show_through_views():
    ms.set_seed(0)
    net = nn.Dense(3, 2)
    weight_before = net.weight.asnumpy().copy()
    flat = net.weight.reshape(-1)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.5, momentum=0.9)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    train(ms.Tensor(np.ones((4, 3), np.float32)), ms.Tensor(np.zeros((4, 2), np.float32)))
    assert not np.allclose(net.weight.asnumpy(), weight_before)
    np.testing.assert_array_equal(flat.asnumpy(), weight_before.reshape(-1))


def test_writes_through_asnumpy_arrays_do_not_show_through_views():
    x = _fresh()
    v = x.reshape(24)
    array = x.asnumpy()  # shares x's memory: Python may write it
    array[0, 0] = 100.0
    assert float(x[0, 0].asnumpy()) == 100.0
    assert float(v[0].asnumpy()) == 0.0
    del array
    view_array = v.asnumpy()
    view_array[1] = -5.0
    assert float(v[1].asnumpy()) == -5.0
    assert float(x[0, 1].asnumpy()) == 1.0


def test_memory_python_may_write_is_copied():
    source = np.arange(6, dtype=np.float32)
    shared = ms.Tensor.from_numpy(source)
    y = shared.reshape(2, 3)
    assert y._t._data_ptr != shared._t._data_ptr
    source[0] = 42.0  # seen by `shared` (it is the array's memory), not by the copy
    assert float(shared[0].asnumpy()) == 42.0
    assert float(y[0, 0].asnumpy()) == 0.0

    x = _fresh()
    array = x.asnumpy()  # alive: x's memory is shared with the host
    y = x.reshape(24)
    assert y._t._data_ptr != x._t._data_ptr
    array[0, 0] = 9.0
    assert float(y[0].asnumpy()) == 0.0


def test_a_view_of_a_failed_output_raises_its_error():
    params = ms.Tensor(np.ones((3, 2), np.float32))
    out = ops.gather(params, ms.Tensor(np.array([0, 5], np.int32)), 0)
    view = out.reshape(-1)
    with pytest.raises(IndexError, match="index 5"):
        view.asnumpy()


def test_gradients_flow_through_views():
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    weights = ms.Tensor(np.arange(6, dtype=np.float32))

    def f(x):
        return (ops.squeeze(ops.expand_dims(x.reshape(6), 0)) * weights).sum()

    grad = ms.grad(f)(x)
    np.testing.assert_array_equal(grad.asnumpy(), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_graph_views_keep_values_and_need_no_buffer():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        @ms.jit
        def viewed(x):
            y = ops.exp(x)  # an intermediate no step writes: the views below share its buffer
            return ops.reshape(y, (6, 4)).sum(axis=1) + ops.flatten(ops.expand_dims(y, 0)).sum()

        x = _fresh() / 24
        expected = np.exp(x.asnumpy())
        got = viewed(x).asnumpy()
        np.testing.assert_allclose(got, expected.reshape(6, 4).sum(axis=1) + expected.sum(), rtol=1e-5)
        report = ms._jit.compile_report(viewed)[0]
        # exp, the two sums and the division's output: the three views take no buffer
        assert report["intermediates"] == 3, report
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_graph_writes_do_not_show_through_views():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        p = Parameter(_fresh(), name="p")
        eager_view = p.reshape(24)  # made before the graph writes p

        @ms.jit
        def update(p, value):
            flat = p.reshape(24)  # p is the caller's and written below: a copy
            ops.assign(p, value)
            return flat

        flat = update(p, ms.Tensor(np.zeros((4, 6), np.float32)))
        np.testing.assert_array_equal(p.asnumpy(), np.zeros((4, 6), np.float32))
        np.testing.assert_array_equal(flat.asnumpy(), np.arange(24, dtype=np.float32))
        np.testing.assert_array_equal(eager_view.asnumpy(), np.arange(24, dtype=np.float32))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
