"""Inputs mean what they say and never crash the process: nesting limits,
overflow-checked shapes, non-native byte order, boolean mask lengths
(issue "Trust", bullets 4 and 8). The broad sweep is tests/python/probe."""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops


def deep_list(depth):
    value = [1]
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth):
    value = {"a": 1}
    for _ in range(depth):
        value = {"a": value}
    return value


# --- nesting: Python values converted to C++ values ---------------------------------
@pytest.mark.parametrize("value", [deep_list(100000), deep_dict(100000), tuple(deep_list(5000))],
                         ids=["list", "dict", "tuple"])
def test_deeply_nested_context_values_raise_value_error(value):
    before = ms.context.snapshot()
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        ms.set_context(save_graphs=value)
    assert ms.context.snapshot() == before


def test_self_referential_values_raise_value_error():
    items = [1]
    items.append(items)
    mapping = {}
    mapping["a"] = mapping
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        ms.set_context(device_target=items)
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        ms.set_auto_parallel_context(comm_fusion=mapping)
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        ms.Profiler(output_path=items)


def test_nesting_below_the_limit_is_converted():
    # 99 levels inside the keyword dict: converted, then refused for its type.
    with pytest.raises(TypeError):
        ms.set_context(save_graphs=deep_list(97))


def test_deeply_nested_op_attributes_raise_value_error():
    x = ms.Tensor(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="nested deeper"):
        ms._C.call("reshape", [x._t], {"shape": deep_list(100000)})


@pytest.mark.parametrize("text", ["[" * 100000 + "]" * 100000, '{"rdr": ' + '{"a": ' * 100000 + "1" + "}" * 100001,
                                  "[" * 300000])
def test_deeply_nested_env_config_json_raises_value_error(tmp_path, text):
    path = tmp_path / "env.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="deeper than 100 levels"):
        ms.set_context(env_config_path=str(path))


def test_deeply_nested_profiling_options_raise_value_error():
    with pytest.raises(ValueError, match="deeper than 100 levels"):
        ms.set_context(profiling_options='{"a": ' + "[" * 100000 + "]" * 100000 + "}")


# --- shapes: overflow-checked sizes ------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: ops.zeros((2**40, 2**40)),
    lambda: ops.ones((2**31, 2**31, 4), ms.float32),
    lambda: ops.zeros((0, 2**40, 2**40)),
    lambda: ops.broadcast_to(ms.Tensor(np.ones((1, 1), np.float32)), (2**40, 2**40)),
    lambda: ops.tile(ms.Tensor(np.ones((2, 2), np.float32)), (2**40, 2**40)),
    lambda: ops.reshape(ms.Tensor(np.ones(6, np.float32)), (2**62, 4, 0)),
    lambda: ops.concat((ops.zeros((0, 2**62), ms.bool_), ops.zeros((0, 2**62), ms.bool_)), 1),
    lambda: nn.Conv2d(3, 8, 3, pad_mode="pad", padding=2**62)(ms.Tensor(np.ones((1, 3, 4, 4), np.float32))),
], ids=["zeros", "ones", "zero_dim", "broadcast_to", "tile", "reshape", "concat", "conv_padding"])
def test_overflowing_shapes_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


def test_overflowing_shape_error_names_the_shape():
    with pytest.raises(ValueError, match=r"\(1099511627776, 1099511627776\)"):
        ops.zeros((2**40, 2**40))


def test_shapes_that_fit_in_64_bits_but_not_in_memory_raise_memory_error():
    with pytest.raises(MemoryError):
        ops.zeros((2**45,))
    with pytest.raises(MemoryError):
        ops.broadcast_to(ms.Tensor(np.ones(1, np.float32)), (2**44,))


@pytest.mark.parametrize("shape", [(-1, 2), (3, -5)])
def test_negative_dimensions_raise_value_error(shape):
    with pytest.raises(ValueError):
        ops.zeros(shape)


def test_reshape_refuses_negative_sizes_other_than_one_minus_one():
    x = ms.Tensor(np.ones(6, np.float32))
    with pytest.raises(ValueError):
        x.reshape((-2, -3))
    assert x.reshape((-1, 3)).shape == (2, 3)


def test_arange_with_zero_step_raises_value_error():
    with pytest.raises(ValueError, match="step"):
        ops.arange(0, 10, 0)


@pytest.mark.parametrize("fn", [ops.size, ops.rank, ops.numel, ops.shape, ops.dtype, ops.Shape(), ops.Rank(),
                                ops.Size(), ops.DType()])
def test_shape_queries_of_non_tensors_raise_type_error(fn):
    with pytest.raises(TypeError):
        fn(object())


# --- byte order ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, values", [
    (">i2", [1, -2, 300]), (">i4", [1, 2, -3]), (">i8", [1, -2, 2**40]),
    (">f2", [1.5, -2.0, 0.25]), (">f4", [1.5, -2.0, 3.25]), (">f8", [1.5, -2.0, 1e300]),
])
def test_non_native_byte_order_is_converted(dtype, values):
    native = np.array(values, dtype=np.dtype(dtype).newbyteorder("="))
    t = ms.Tensor(np.array(values, dtype=dtype))
    np.testing.assert_array_equal(t.asnumpy(), native)


def test_non_native_byte_order_strided_and_0d():
    source = np.arange(12, dtype=">f4").reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(ms.Tensor(source).asnumpy(), np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2])
    assert ms.Tensor(np.array(2.5, ">f8")).asnumpy() == 2.5
    np.testing.assert_array_equal(ms.Tensor(np.array([1.5, 2], ">f4"), dtype=ms.float64).asnumpy(), [1.5, 2.0])


def test_non_native_byte_order_in_parameters_and_assignment():
    p = ms.Parameter(ms.Tensor(np.array([1.5, 2], ">f4")), name="p")
    np.testing.assert_array_equal(p.asnumpy(), [1.5, 2.0])
    p.set_data(ms.Tensor(np.array([-1.0, 4.0], ">f4")))
    np.testing.assert_array_equal(p.asnumpy(), [-1.0, 4.0])
    x = ms.Tensor(np.zeros(3, np.float32))
    x[0:2] = np.array([1.5, -2], ">f4")
    np.testing.assert_array_equal(x.asnumpy(), [1.5, -2.0, 0.0])
    y = ms.Tensor(np.ones(2, np.float32)) + np.array([1.5, 2], ">f4")
    np.testing.assert_array_equal(y.asnumpy(), [2.5, 3.0])


# --- boolean masks ----------------------------------------------------------------------
X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("index", [
    np.array([True, False]),
    np.array([True, False, True, True]),
    np.ones((4, 3), bool),
    (slice(None), np.array([True, False])),
    (..., np.array([True, False, True])),
], ids=["short", "long", "2d_transposed", "second_axis", "after_ellipsis"])
def test_boolean_mask_of_the_wrong_shape_raises_index_error(index):
    x = ms.Tensor(X)
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[index]  # noqa: B018
    with pytest.raises(IndexError):
        x[index] = -1.0
    np.testing.assert_array_equal(x.asnumpy(), X)


def test_boolean_mask_tensor_of_the_wrong_length_raises_index_error():
    x = ms.Tensor(X)
    mask = ms.Tensor(np.array([True, False]))
    with pytest.raises(IndexError, match="along dimension 0; dimension is 3 but corresponding boolean dimension is 2"):
        x[mask]  # noqa: B018
    with pytest.raises(IndexError):
        x[mask] = 0.0


@pytest.mark.parametrize("index", [
    np.array([True, False, True]),
    (slice(None), np.array([True, False, False, True])),
    (..., np.array([True, False, False, True])),
    X % 2 == 0,
    (np.array([True, False, True]), slice(1, 3)),
], ids=["rows", "columns", "after_ellipsis", "2d", "rows_then_slice"])
def test_boolean_masks_of_the_right_shape_match_numpy(index):
    x = ms.Tensor(X)
    np.testing.assert_array_equal(x[index].asnumpy(), X[index])
    expected = X.copy()
    expected[index] = -1.0
    x[index] = -1.0
    np.testing.assert_array_equal(x.asnumpy(), expected)


# --- silent wrong results found by the probes -------------------------------------------
@pytest.mark.parametrize("loss", [nn.NLLLoss, nn.CrossEntropyLoss])
def test_class_weights_of_the_wrong_length_raise_value_error(loss):
    logits = ms.Tensor(np.ones((2, 3), np.float32))
    labels = ms.Tensor(np.array([0, 1], np.int32))
    with pytest.raises(ValueError, match=r"shape of 'weight' must be \(C,\)"):
        loss(weight=ms.Tensor(np.ones(5, np.float32)))(logits, labels)


@pytest.mark.parametrize("make", [
    lambda ps: nn.SGD(ps, 0.1),
    lambda ps: nn.Momentum(ps, 0.1, 0.9),
    lambda ps: nn.Adam(ps, 0.1),
    lambda ps: nn.AdamWeightDecay(ps, 0.1),
    lambda ps: nn.RMSProp(ps, 0.1),
    lambda ps: nn.Adagrad(ps, learning_rate=0.1),
    lambda ps: nn.Lamb(ps, 0.1),
], ids=["SGD", "Momentum", "Adam", "AdamWeightDecay", "RMSProp", "Adagrad", "Lamb"])
def test_optimizers_refuse_a_gradient_count_that_differs_from_the_parameters(make):
    net = nn.Dense(3, 2)
    optimizer = make(net.trainable_params())
    before = [p.asnumpy().copy() for p in net.trainable_params()]
    with pytest.raises(ValueError, match="one Tensor per parameter"):
        optimizer((ms.Tensor(np.ones((2, 3), np.float32)),))
    for p, old in zip(net.trainable_params(), before):
        np.testing.assert_array_equal(p.asnumpy(), old)


@pytest.mark.parametrize("source", [np.float64, np.float32])
@pytest.mark.parametrize("target", [ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8])
def test_casting_out_of_range_floats_to_integers_matches_numpy(source, target):
    # The cast used to be undefined behaviour in C++ for these values (UBSan).
    with np.errstate(invalid="ignore", over="ignore"):
        values = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 3e9, -3e9, 300.7, -300.7, 1e19, 2.5, -2.5], source)
        expected = values.astype(ms.dtype_to_nptype(target))
    np.testing.assert_array_equal(ms.Tensor(values).astype(target).asnumpy(), expected)


def test_filling_integers_with_out_of_range_values_is_defined():
    np.testing.assert_array_equal(ops.fill(ms.int32, (2,), 1e300).asnumpy(), [-(2**31)] * 2)
    np.testing.assert_array_equal(ops.fill(ms.int8, (2,), float("nan")).asnumpy(), [0, 0])


@pytest.mark.parametrize("make", [
    lambda: nn.SGD(nn.Dense(3, 2).trainable_params(), float("nan")),
    lambda: nn.SGD(nn.Dense(3, 2).trainable_params(), 0.1, momentum=float("nan")),
    lambda: nn.Adam(nn.Dense(3, 2).trainable_params(), eps=float("nan")),
    lambda: nn.BatchNorm2d(3, eps=float("nan")),
], ids=["sgd_lr", "sgd_momentum", "adam_eps", "batchnorm_eps"])
def test_nan_hyperparameters_raise_value_error(make):
    # `x < 0` is False for NaN: the checks accepted it.
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("begin, size", [((3,), (5,)), ((0,), (-5,)), ((-1,), (1,)), ((0, 0), (1, 1))])
def test_slice_outside_the_tensor_raises_value_error(begin, size):
    # It used to be clipped silently to what the tensor holds.
    with pytest.raises(ValueError, match="For 'Slice'"):
        ops.slice(ms.Tensor(np.arange(4, dtype=np.float32)), begin, size)


def test_slice_with_size_minus_one_reaches_the_end():
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(ops.slice(ms.Tensor(x), (1, 1), (-1, 2)).asnumpy(), x[1:, 1:3])


@pytest.mark.parametrize("begin, end, step", [(0, 2**63 - 1, 2**63 - 1), (2**63 - 1, -(2**63), -(2**63)),
                                              (3, -(2**63), -(2**63) + 1)])
def test_strided_slice_with_extreme_steps_matches_python(begin, end, step):
    # The length was computed with an overflowing step: empty results.
    x = np.arange(4, dtype=np.float32)
    out = ops.strided_slice(ms.Tensor(x), (begin,), (end,), (step,))
    np.testing.assert_array_equal(out.asnumpy(), x[begin:end:step])


@pytest.mark.parametrize("network, optimizer", [(5, "sgd"), ("dense", 5)])
def test_train_one_step_cell_checks_its_arguments(network, optimizer):
    dense = nn.Dense(3, 2)
    network = dense if network == "dense" else network
    optimizer = nn.SGD(dense.trainable_params(), 0.1) if optimizer == "sgd" else optimizer
    with pytest.raises(TypeError, match="TrainOneStepCell"):
        nn.TrainOneStepCell(network, optimizer)
