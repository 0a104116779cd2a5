"""Tensor.from_numpy and Tensor.asnumpy share memory with NumPy, as MindSpore's do
(Note [Foreign and host-shared memory] in src/core/tensor.cc)."""
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops


def values(t):
    return np.array(t.asnumpy())  # a copy: later writes do not change it


# --- from_numpy -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
                                   np.float32, np.float64, np.uint16, np.uint32, np.uint64, np.complex64,
                                   np.complex128])
def test_from_numpy_shares_the_arrays_memory(dtype):
    a = (np.arange(6) % 2 if dtype is np.bool_ else np.arange(6)).astype(dtype).reshape(2, 3)
    t = ms.Tensor.from_numpy(a)
    assert t.shape == (2, 3) and t.asnumpy().dtype == a.dtype
    assert t._t._foreign and t._t._host_shared
    assert np.shares_memory(t.asnumpy(), a)
    a[1, 2] = 0
    assert values(t)[1, 2] == 0


def test_writes_through_numpy_are_seen_by_later_ops_and_not_by_earlier_ones():
    a = np.arange(4, dtype=np.float32)
    t = ms.Tensor.from_numpy(a)
    doubled = t * 2  # runs now: the write below comes after it
    a[:] = 10
    plus_one = t + 1
    a[:] = -1
    np.testing.assert_array_equal(values(doubled), [0, 2, 4, 6])
    np.testing.assert_array_equal(values(plus_one), [11, 11, 11, 11])
    np.testing.assert_array_equal(values(t), [-1, -1, -1, -1])


def test_ops_making_new_tensors_never_write_the_array():
    a = np.arange(4, dtype=np.float32)
    t = ms.Tensor.from_numpy(a)
    y = ops.relu(t - 2) * 3
    y = ops.assign(y, ms.Tensor(np.full(4, 7, np.float32)))  # in place on y, a tensor of its own
    assert not y._t._foreign
    t += 1  # rebinds t to a new tensor, as in MindSpore
    np.testing.assert_array_equal(a, [0, 1, 2, 3])
    np.testing.assert_array_equal(values(t), [1, 2, 3, 4])


def test_in_place_ops_write_the_array():
    a = np.zeros(3, np.float32)
    t = ms.Tensor.from_numpy(a)
    out = ops.assign(t, ms.Tensor(np.array([1, 2, 3], np.float32)))
    np.testing.assert_array_equal(a, [1, 2, 3])  # seen at once, no read of the tensor needed
    assert out._t._same(t._t)
    t[1] = 9  # __setitem__ writes in place
    np.testing.assert_array_equal(a, [1, 9, 3])
    p = ms.Parameter(ms.Tensor.from_numpy(a), name="w")
    p.set_data(ms.Tensor(np.array([4, 5, 6], np.float32)))  # the Parameter shares the from_numpy tensor
    np.testing.assert_array_equal(a, [4, 5, 6])
    p.set_data(ms.Tensor(np.array([1, 1, 1], np.int32)))  # converted to the parameter's dtype, still in place
    np.testing.assert_array_equal(a, [1, 1, 1])


@pytest.mark.parametrize("make", [
    lambda params: nn.SGD(params, learning_rate=0.5),
    lambda params: nn.Momentum(params, learning_rate=0.5, momentum=0.9),
])
def test_optimizer_updates_land_in_the_array(make):
    w = np.array([1.0, -2.0, 3.0], np.float32)
    param = ms.Parameter(ms.Tensor.from_numpy(w), name="w")
    opt = make([param])
    grad = np.array([0.5, 0.25, -1.0], np.float32)
    opt((ms.Tensor(grad),))
    ms.runtime.synchronize()
    # The first step of both is w -= lr * g (momentum's accumulator starts at zero).
    np.testing.assert_allclose(w, np.array([1.0, -2.0, 3.0], np.float32) - 0.5 * grad, rtol=1e-6)
    np.testing.assert_allclose(values(param), w)


def test_graph_mode_reads_and_writes_the_array():
    a = np.array([1.0, 2.0], np.float32)
    t = ms.Tensor.from_numpy(a)

    @ms.jit
    def f(x):
        return x * x + 1

    np.testing.assert_array_equal(values(f(t)), [2, 5])
    a[:] = [3, 4]
    np.testing.assert_array_equal(values(f(t)), [10, 17])


def test_non_contiguous_arrays_are_copied_as_mindspore_does():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    for a in (base.T, base[:, ::2], np.asfortranarray(base)):
        t = ms.Tensor.from_numpy(a)
        np.testing.assert_array_equal(values(t), a)
        assert not t._t._foreign
        before = a.copy()
        ops.assign(t, ms.Tensor(np.zeros(a.shape, np.float32)))
        np.testing.assert_array_equal(a, before)


def test_read_only_and_byte_swapped_arrays_are_copied():
    read_only = np.arange(3, dtype=np.float32)
    read_only.flags.writeable = False
    swapped = np.arange(3, dtype=">f4")
    for a in (read_only, swapped):
        t = ms.Tensor.from_numpy(a)
        assert not t._t._foreign
        np.testing.assert_array_equal(values(t), a)
        assert values(t).dtype == np.float32
        before = a.copy()
        ops.assign(t, ms.Tensor(np.full(a.shape, 9, np.float32)))
        np.testing.assert_array_equal(a, before)
        np.testing.assert_array_equal(values(t), np.full(a.shape, 9))


def test_a_misaligned_array_is_copied():
    raw = np.zeros(17, np.uint8)
    a = raw[1:].view(np.float32)  # 4 float32 starting one byte into the buffer
    assert not a.flags.aligned
    a[:] = [1, 2, 3, 4]
    t = ms.Tensor.from_numpy(a)
    assert not t._t._foreign
    np.testing.assert_array_equal(values(t), [1, 2, 3, 4])


def test_empty_and_0d_arrays():
    t = ms.Tensor.from_numpy(np.zeros((0, 3), np.float32))
    assert t.shape == (0, 3) and values(t).shape == (0, 3)
    a = np.array(2.5, np.float64)
    s = ms.Tensor.from_numpy(a)
    assert s.shape == () and s._t._foreign
    a[()] = 4.0
    assert float(s) == 4.0


@pytest.mark.parametrize("bad", [np.array(["a"]), np.array([object()]), np.zeros(2, np.float128),
                                 np.zeros(2, "datetime64[s]")])
def test_unsupported_dtypes_raise_type_error(bad):
    with pytest.raises(TypeError, match="Tensor.from_numpy.*not supported"):
        ms.Tensor.from_numpy(bad)


def test_non_arrays_raise_type_error():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        ms.Tensor.from_numpy([1, 2])


# --- lifetimes --------------------------------------------------------------------
def test_the_tensor_keeps_the_array_alive():
    a = np.arange(1000, dtype=np.float32)
    alive = weakref.ref(a)
    t = ms.Tensor.from_numpy(a)
    view = ms.Tensor(t)  # another handle on the same tensor
    del a
    gc.collect()
    assert alive() is not None
    for _ in range(20):  # pool churn: the pool must not hand out this memory
        ms.Tensor(np.full(1000, -1, np.float32)) + 1
    np.testing.assert_array_equal(values(t * 1), np.arange(1000))
    del t
    gc.collect()
    assert alive() is not None
    del view
    gc.collect()
    assert alive() is None


def test_the_array_keeps_the_tensors_memory_alive():
    t = ms.Tensor(np.arange(256, dtype=np.float32))
    arr = t.asnumpy()
    assert t._t._host_shared
    del t
    gc.collect()
    held = [ms.Tensor(np.full(256, -1, np.float32)) * 2 for _ in range(20)]  # would reuse freed memory
    ms.runtime.synchronize()
    np.testing.assert_array_equal(arr, np.arange(256))
    assert len(held) == 20


def test_a_host_view_lasts_as_long_as_its_array():
    t = ms.Tensor(np.arange(4, dtype=np.float32))
    assert not t._t._host_shared
    arr = t.asnumpy()
    sub = arr[1:]  # a NumPy view keeps the asnumpy() array alive
    del arr
    gc.collect()
    assert t._t._host_shared
    del sub
    gc.collect()
    assert not t._t._host_shared


def test_released_from_a_cpp_worker_thread_under_the_interpreter_lock():
    freed_on = []
    a = np.arange(8, dtype=np.float32)
    alive = weakref.ref(a, lambda _: freed_on.append(threading.get_ident()))
    refs = sys.getrefcount(a)
    t = ms.Tensor.from_numpy(a)
    assert sys.getrefcount(a) == refs + 1
    handle = ms._C.TensorBase(t._t)
    del t
    gc.collect()
    ms._C._testing_release_on_thread(handle)  # the last reference dies on the worker
    assert sys.getrefcount(a) == refs
    del a, handle
    gc.collect()
    assert alive() is None and freed_on == [threading.get_ident()]  # freed here: Python held the last reference

    b = np.arange(8, dtype=np.float32)
    alive = weakref.ref(b, lambda _: freed_on.append(threading.get_ident()))
    base = ms.Tensor.from_numpy(b)._t
    del b
    gc.collect()
    assert alive() is not None
    ms._C._testing_release_on_thread(base)
    del base
    assert alive() is None
    assert len(freed_on) == 2 and freed_on[1] != threading.get_ident()  # freed on the C++ thread


def test_from_numpy_tensors_mixed_with_queued_work():
    # Ops on from_numpy tensors wait for their other inputs' queued ops, then
    # run at the call; every array goes with its last tensor.
    alive = []
    for i in range(50):
        a = np.full(64, i, np.float32)
        alive.append(weakref.ref(a))
        x = ms.Tensor(np.ones(64, np.float32)) * 3
        y = x + ms.Tensor.from_numpy(a)
        del a
        x = y * 2
    ms.runtime.synchronize()
    np.testing.assert_array_equal(values(x), np.full(64, (49 + 3) * 2))
    del x, y
    gc.collect()
    assert all(r() is None for r in alive)


# --- asnumpy ----------------------------------------------------------------------
def test_asnumpy_shares_both_ways_like_mindspores_example():
    x = ms.Tensor(np.array([1, 2], dtype=np.float32))
    y = x.asnumpy()
    y[0] = 11
    assert str(x) == "[11.  2.]"
    np.testing.assert_array_equal(y, [11, 2])
    ops.assign(x, ms.Tensor(np.array([5, 6], np.float32)))
    np.testing.assert_array_equal(y, [5, 6])


def test_asnumpy_waits_for_queued_readers_and_orders_later_ops():
    x = ms.Tensor(np.arange(1 << 16, dtype=np.float32))
    reads = [x * float(k) for k in range(8)]  # queued
    arr = x.asnumpy()
    arr[:] = 0  # every queued read saw the old values
    later = x + 1  # runs now, after the write above
    arr[:] = 5
    for k, r in enumerate(reads):
        np.testing.assert_array_equal(values(r), np.arange(1 << 16, dtype=np.float32) * k)
    np.testing.assert_array_equal(values(later), np.ones(1 << 16))


def test_asnumpy_of_bfloat16_is_a_float32_copy():
    t = ms.Tensor(np.array([1.5, 2.0], np.float32), ms.bfloat16)
    arr = t.asnumpy()
    assert arr.dtype == np.float32
    arr[0] = 9
    np.testing.assert_array_equal(values(t), [1.5, 2.0])


def test_asnumpy_of_a_view_shares_the_same_memory():
    a = np.arange(6, dtype=np.float32)
    t = ms.Tensor.from_numpy(a)
    v = ms._tensor._wrap(t._t._reshaped((2, 3)))
    arr = v.asnumpy()
    assert arr.shape == (2, 3) and np.shares_memory(arr, a)
    arr[1, 1] = 40
    assert a[4] == 40


def test_foreign_memory_is_not_counted_by_the_pool():
    gc.collect()  # tensors of earlier tests' reference cycles go now, not during the test
    ms.runtime.synchronize()
    before = ms.runtime.memory_allocated()
    stats = ms.runtime.memory_stats()
    a = np.ones(1 << 20, np.float32)  # 4 MiB
    t = ms.Tensor.from_numpy(a)
    assert ms.runtime.memory_allocated() == before
    del t
    gc.collect()
    assert ms.runtime.memory_allocated() == before
    assert ms.runtime.memory_stats()["allocations"] == stats["allocations"]
    assert ms.runtime.memory_stats()["live_buffers"] == stats["live_buffers"]


def test_module_level_from_numpy_is_the_same():
    a = np.ones(3, np.int32)
    t = ms.from_numpy(a)
    a[0] = 7
    np.testing.assert_array_equal(values(t), [7, 1, 1])


def test_tensors_over_arrays_alive_at_exit(python_subprocess):
    proc = python_subprocess("""
        import threading
        import numpy as np
        kept = [ms.Tensor.from_numpy(np.arange(4, dtype=np.float32)) for _ in range(3)]
        w = ms.Parameter(ms.Tensor.from_numpy(np.full(4, 2, np.float32)), name="w")

        @ms.jit
        def f(x):
            return x * w

        host = (kept[1] + 1).asnumpy()  # an array over pool memory, alive at exit too
        held = threading.Event()

        def hold():
            t = ms.Tensor.from_numpy(np.ones(8, np.float32))  # never released: its thread never ends
            held.set()
            threading.Event().wait()

        threading.Thread(target=hold, daemon=True).start()
        held.wait()
        print("RESULT=" + json.dumps([f(kept[0]).asnumpy().tolist(), host.tolist()]))
    """)
    assert proc.result == [[0, 2, 4, 6], [1, 2, 3, 4]]
