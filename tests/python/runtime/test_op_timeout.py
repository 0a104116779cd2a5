"""op_timeout: an operator running past the limit is cancelled and raises
RuntimeError naming it and the limit; the runtime goes on (Note [Op
timeout] in src/runtime/op_timeout.cc)."""
import time

import numpy as np
import pytest

import msrt as ms

# float64 products run on the reference kernel: 3072^3 takes a minute or
# more on two cores, far past a 1 s limit.
N = 3072


def _long_product():
    a = ms.Tensor(np.zeros((N, N), np.float64))
    return ms.ops.matmul(a, a)


@pytest.mark.parametrize("synchronous", [False, True])
def test_a_long_operator_is_cancelled(synchronous):
    ms.set_context(op_timeout=1, pynative_synchronize=synchronous)
    start = time.monotonic()
    with pytest.raises(RuntimeError) as excinfo:
        _long_product().asnumpy()
    elapsed = time.monotonic() - start
    text = str(excinfo.value)
    assert "'matmul'" in text and "op_timeout (1 s)" in text and "cancelled" in text
    assert 1.0 <= elapsed < 30.0, elapsed
    # The runtime goes on: later operators run and give right results.
    small = ms.Tensor(np.arange(4.0).reshape(2, 2))
    np.testing.assert_array_equal(ms.ops.matmul(small, small).asnumpy(), [[2.0, 3.0], [6.0, 11.0]])


def test_short_operators_are_untouched():
    ms.set_context(op_timeout=1)
    x = ms.Tensor(np.ones((256, 256), np.float64))
    for _ in range(3):
        assert ms.ops.matmul(x, x).asnumpy()[0, 0] == 256.0


def test_zero_means_the_default():
    ms.set_context(op_timeout=0)
    assert ms.get_context("op_timeout") == 0
    x = ms.Tensor(np.ones((64, 64), np.float64))
    assert ms.ops.matmul(x, x).asnumpy()[0, 0] == 64.0
