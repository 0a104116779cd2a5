"""Memory of a backward walk (Note [Freeing during backward] in src/autodiff/autodiff.cc): each node drops what it
saved once its gradient rule has run, and each intermediate gradient is dropped once consumed; a second gradient
on a tape that freed its values raises instead of walking nodes that no longer hold them."""
import numpy as np
import pytest

import msrt as ms
from msrt import _C, ops

MiB = 1 << 20
DEPTH = 16


def _layers(x, *weights):
    for w in weights:
        x = ops.tanh(ops.matmul(x, w))  # saves x, w, the product and its tanh: 2 MiB of activations a layer
    return ops.sum(x)


def _tensor(a):
    return _C.TensorBase(np.asarray(a, order="C"), None)


def test_backward_frees_saved_values_and_gradients_as_it_goes():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (512, 512)).astype(np.float32)  # 1 MiB, as each weight
    ws = [(rng.standard_normal((512, 512)) / 24).astype(np.float32) for _ in range(DEPTH)]
    args = [ms.Tensor(a) for a in [x] + ws]
    for a in args:
        a.asnumpy()
    ms.runtime.synchronize()
    ms.runtime.reset_peak_memory_stats()
    before = ms.runtime.memory_allocated()
    grads = ms.grad(_layers, grad_position=tuple(range(1, DEPTH + 1)))(*args)
    grads[0].asnumpy()
    ms.runtime.synchronize()
    grown = (ms.runtime.max_memory_allocated() - before) / MiB
    # The forward saves 2 * DEPTH MiB of activations; the backward makes one 1 MiB weight gradient a layer, kept to
    # the end, and frees the layer's 2 MiB as it goes, so the peak stays near the forward's. Kept to the end, the
    # saved values and the weight gradients would peak near 3 * DEPTH MiB; the gradients of the activations kept
    # too, near 5 * DEPTH MiB.
    assert grown <= 2 * DEPTH + 10, grown
    acts, y = [], x.astype(np.float64)
    for w in ws:
        acts.append(y)
        y = np.tanh(y @ w)
        acts.append(y)
    dy = np.ones_like(y)
    expected = []
    for i in reversed(range(DEPTH)):
        dz = dy * (1 - acts[2 * i + 1] ** 2)
        expected.append(acts[2 * i].T @ dz)
        dy = dz @ ws[i].T
    for g, e in zip(grads, reversed(expected)):
        np.testing.assert_allclose(g.asnumpy(), e, rtol=2e-3, atol=2e-4)


def _recorded(x):
    tape = _C.GradTape()
    x.requires_grad = True
    y = _C.call("mul", [_C.call("tanh", [x], {})[0], x], {})[0]
    return tape, y


def test_a_second_gradient_on_a_freed_tape_raises():
    x = _tensor(np.array([0.5, -1.0, 2.0], np.float32))
    tape, y = _recorded(x)
    try:
        sens = [_tensor(np.ones(3, np.float32))]
        (first,) = tape.gradient([y], sens, [x])
        with pytest.raises(RuntimeError, match="retain_graph=True"):
            tape.gradient([y], sens, [x])
    finally:
        tape.end()
    v = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(first.asnumpy(), np.tanh(v) + v * (1 - np.tanh(v) ** 2), rtol=1e-6)


def test_retain_graph_keeps_the_tape_for_another_gradient():
    x = _tensor(np.array([0.5, -1.0, 2.0], np.float32))
    tape, y = _recorded(x)
    try:
        sens = [_tensor(np.ones(3, np.float32))]
        (first,) = tape.gradient([y], sens, [x], retain_graph=True)
        (second,) = tape.gradient([y], [_tensor(np.full(3, 2.0, np.float32))], [x])
        with pytest.raises(RuntimeError, match="already computed"):
            tape.gradient([y], sens, [x])
    finally:
        tape.end()
    np.testing.assert_allclose(second.asnumpy(), 2 * first.asnumpy(), rtol=1e-6)
