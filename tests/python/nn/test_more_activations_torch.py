"""ELU, SeLU, CELU, Softplus, Softsign, LogSigmoid, Hardtanh, HShrink, SoftShrink, Tanhshrink, Threshold,
GLU and Softmin against PyTorch (outputs and input gradients, PYNATIVE and GRAPH_MODE, large inputs
included), and MindSpore's errors for bad arguments."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn

from .test_layers_torch import MODES, compare

torch = pytest.importorskip("torch")
tnn = torch.nn

CASES = {
    "ELU": (lambda: nn.ELU(), lambda: tnn.ELU()),
    "ELU_alpha": (lambda: nn.ELU(0.5), lambda: tnn.ELU(0.5)),
    "SeLU": (lambda: nn.SeLU(), lambda: tnn.SELU()),
    "CELU": (lambda: nn.CELU(2.0), lambda: tnn.CELU(2.0)),
    "Softplus": (lambda: nn.Softplus(), lambda: tnn.Softplus()),
    "Softplus_beta": (lambda: nn.Softplus(beta=2, threshold=5), lambda: tnn.Softplus(beta=2, threshold=5)),
    "Softsign": (lambda: nn.Softsign(), lambda: tnn.Softsign()),
    "LogSigmoid": (lambda: nn.LogSigmoid(), lambda: tnn.LogSigmoid()),
    "Hardtanh": (lambda: nn.Hardtanh(-2.0, 1.5), lambda: tnn.Hardtanh(-2.0, 1.5)),
    "HShrink": (lambda: nn.HShrink(0.7), lambda: tnn.Hardshrink(0.7)),
    "SoftShrink": (lambda: nn.SoftShrink(0.3), lambda: tnn.Softshrink(0.3)),
    "Tanhshrink": (lambda: nn.Tanhshrink(), lambda: tnn.Tanhshrink()),
    "Threshold": (lambda: nn.Threshold(0.2, -1.0), lambda: tnn.Threshold(0.2, -1.0)),
    "GLU": (lambda: nn.GLU(), lambda: tnn.GLU()),
    "GLU_axis": (lambda: nn.GLU(axis=0), lambda: tnn.GLU(dim=0)),
    "Softmin": (lambda: nn.Softmin(), lambda: tnn.Softmin(dim=-1)),
    "Softmin_axis": (lambda: nn.Softmin(axis=0), lambda: tnn.Softmin(dim=0)),
}


def _input():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
    x[0, :2] = [95.0, -95.0]  # exp would overflow in a branch `where` does not pick
    # away from the kinks (0, thresholds) where the one-sided gradients differ
    x[np.abs(x) < 0.05] = 0.4
    for edge in (0.2, 0.3, 0.7, 1.5, 2.0):
        x[np.abs(np.abs(x) - edge) < 0.02] += 0.1
    return x


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_activation_against_torch(mode, name):
    make, make_torch = CASES[name]
    x = _input()
    if name.startswith("Softmin"):
        x[0, :2] = [3.0, -3.0]
    compare(make(), make_torch(), [x], {}, mode, rtol=1e-4, atol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(1.0, 1.0)
    with pytest.raises(ValueError, match="lambd"):
        nn.SoftShrink(-0.1)
    with pytest.raises(ValueError, match="alpha"):
        nn.CELU(0.0)
    with pytest.raises(TypeError, match="alpha"):
        nn.ELU("1")
    with pytest.raises(TypeError, match="axis"):
        nn.GLU(axis=1.0)
    with pytest.raises(ValueError, match="even"):
        nn.GLU()(Tensor(np.ones((2, 3), np.float32)))
    assert isinstance(nn.get_activation("logsigmoid"), nn.LogSigmoid)
    assert isinstance(nn.Dense(2, 2, activation="elu").activation, nn.ELU)
    assert float(nn.Softplus()(Tensor(np.float32(100.0))).asnumpy()) == 100.0
    big = Tensor(np.array([200.0, -200.0], np.float32))
    assert np.isfinite(ms.grad(lambda t: nn.ELU()(t).sum())(big).asnumpy()).all()
