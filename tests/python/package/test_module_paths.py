"""The module paths MindSpore code imports from exist and hold the same
objects as msrt's own names."""
import importlib

import pytest

import msrt as ms
from msrt import ops
from msrt.ops.operations import array_ops, comm_ops, debug_ops, math_ops, nn_ops, other_ops, random_ops


@pytest.mark.parametrize("module, names", [
    ("msrt.common.api", ["jit", "ms_function"]),
    ("msrt.common.tensor", ["Tensor"]),
    ("msrt.common.parameter", ["Parameter", "ParameterTuple"]),
    ("msrt.ops.primitive", ["Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register",
                            "constexpr"]),
    ("msrt.ops.functional", ["grad", "value_and_grad", "vmap", "add", "stop_gradient"]),
    ("msrt.train.serialization", ["export", "load", "save_checkpoint", "load_checkpoint", "load_param_into_net"]),
    ("msrt.nn.metrics", ["Accuracy", "Loss", "MAE", "MSE", "Precision", "Recall", "F1", "Fbeta",
                         "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
                         "ConfusionMatrix"]),
    ("msrt.train.metrics", ["Accuracy", "Precision", "Recall", "F1", "Fbeta", "ConfusionMatrix"]),
])
def test_mindspore_module_paths_import(module, names):
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_the_paths_hold_msrt_s_own_objects():
    from msrt.common.api import jit
    from msrt.common.tensor import Tensor
    from msrt.nn.metrics import Accuracy
    from msrt.ops.functional import grad, vmap
    from msrt.ops.primitive import Primitive, constexpr
    from msrt.train.serialization import export, load

    assert jit is ms.jit and Tensor is ms.Tensor and grad is ms.grad and vmap is ms.vmap
    assert export is ms.export and load is ms.load and Primitive is ops.Primitive and constexpr is ops.constexpr
    assert Accuracy is ms.train.Accuracy is ms.nn.Accuracy and ms.nn.metrics.F1 is ms.train.F1
    assert ms.common.api.jit is ms.jit and ms.common.tensor.Tensor is ms.Tensor


def test_jit_syntax_levels_at_top_level_set_the_context():
    assert (ms.STRICT, ms.COMPATIBLE, ms.LAX) == (ms.context.STRICT, ms.context.COMPATIBLE, ms.context.LAX)
    for level in (ms.STRICT, ms.COMPATIBLE, ms.LAX):
        ms.set_context(jit_syntax_level=level)
        assert ms.get_context("jit_syntax_level") == level


_OPERATION_MODULES = (nn_ops, math_ops, array_ops, other_ops, debug_ops, random_ops, comm_ops)


def test_the_operations_modules_re_export_primitives_where_mindspore_keeps_them():
    """A Primitive MindSpore code imports from ops.operations.<x>_ops is there,
    in one module only, and it is the class ops has."""
    homes = {}
    for module in _OPERATION_MODULES:
        for name in module.__all__:
            cls = getattr(module, name)
            if name == "ReduceOp":  # comm_ops' constants class, also ops.ReduceOp
                assert cls is ops.ReduceOp
                continue
            assert cls is getattr(ops, name) and issubclass(cls, ops.Primitive), name
            homes.setdefault(name, []).append(module.__name__)
    assert {n: h for n, h in homes.items() if len(h) > 1} == {}
    assert nn_ops.Conv2D is ops.Conv2D and math_ops.MatMul is ops.MatMul and array_ops.Reshape is ops.Reshape
    assert other_ops.Assign is ops.Assign and debug_ops.Print is ops.Print
    assert comm_ops.AllReduce is ops.AllReduce and comm_ops.ReduceOp.SUM == "sum"
    assert ops.operations.nn_ops is nn_ops  # `from mindspore.ops import operations as P; P.nn_ops.Conv2D`


def test_every_declared_primitive_names_its_module():
    """MindSpore's module of a Primitive is part of its declaration, so a new
    Primitive lands in ops.operations.<module> with no list to edit."""
    from msrt.ops import _api
    unplaced = [f["names"] for f in _api.forms("primitive") if not f["module"]]
    assert unplaced == []
    for form in _api.forms("primitive"):
        module = getattr(ops.operations, form["module"])
        assert all(getattr(module, name) is getattr(ops, name) for name in form["names"])


def test_nn_metrics_unknown_name():
    with pytest.raises(AttributeError):
        ms.nn.metrics.NoSuchMetric  # noqa: B018
    with pytest.raises(AttributeError):
        ms.nn.NoSuchLayer  # noqa: B018
