"""Helpers for op-parity tests: run an op on NumPy inputs, check gradients
by finite differences, and record which ops a test module covers."""
import numpy as np

import msrt

_C = msrt._C

# Ops with at least one parity test; tests/python/ops/test_coverage.py checks
# that every registered op is here.
COVERED = set()


def covers(*names):
    COVERED.update(names)


def tensor(array, dtype=None):
    """A TensorBase of `array`; None stays None (an optional input left out)."""
    if array is None:
        return None
    # np.asarray keeps 0-d arrays 0-d (np.ascontiguousarray makes them 1-d).
    return _C.TensorBase(np.asarray(array, order="C"), dtype)


def run_op(name, inputs, attrs=None):
    """Calls op `name` on NumPy arrays; returns its outputs as NumPy arrays."""
    outs = _C.call(name, [tensor(a) for a in inputs], attrs or {})
    return [o.asnumpy().copy() for o in outs]


def gradients(name, inputs, attrs=None, wrt=(0,), output_index=0, sens=None):
    """Analytic gradients of sum(sens * output[output_index]) w.r.t. inputs[wrt]."""
    ts = [tensor(a) for a in inputs]
    for i in wrt:
        ts[i].requires_grad = True
    tape = _C.GradTape()
    try:
        outs = _C.call(name, ts, attrs or {})
        out = outs[output_index]
        if sens is None:
            sens = np.ones(out.shape, dtype=np.float64).astype(out.asnumpy().dtype)
        s = [tensor(sens)]
        grads = tape.gradient([out], s, [ts[i] for i in wrt])
    finally:
        tape.end()
    return [g.asnumpy().copy() for g in grads]


def numeric_gradients(name, inputs, attrs=None, wrt=(0,), output_index=0, sens=None, eps=1e-6):
    """Central finite differences of sum(sens * output) (compute in float64)."""
    inputs = [None if a is None else np.array(a, copy=True) for a in inputs]
    out = run_op(name, inputs, attrs)[output_index]
    sens = np.ones_like(out, dtype=np.float64) if sens is None else np.asarray(sens, dtype=np.float64)
    result = []
    for i in wrt:
        x = inputs[i]
        g = np.zeros(x.shape, dtype=np.float64)
        flat = x.reshape(-1)
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            plus = float(np.sum(sens * run_op(name, inputs, attrs)[output_index]))
            flat[j] = orig - eps
            minus = float(np.sum(sens * run_op(name, inputs, attrs)[output_index]))
            flat[j] = orig
            g.reshape(-1)[j] = (plus - minus) / (2 * eps)
        result.append(g)
    return result


def check_grad(name, inputs, attrs=None, wrt=(0,), output_index=0, rtol=1e-5, atol=1e-6):
    """Compares analytic and numeric gradients, with float64 inputs."""
    inputs = [None if a is None else np.asarray(a, dtype=np.float64) if np.issubdtype(np.asarray(a).dtype, np.floating)
              else np.asarray(a) for a in inputs]
    rng = np.random.default_rng(0)
    out = run_op(name, inputs, attrs)[output_index]
    sens = rng.uniform(0.5, 1.5, size=out.shape)
    analytic = gradients(name, inputs, attrs, wrt, output_index, sens=sens)
    numeric = numeric_gradients(name, inputs, attrs, wrt, output_index, sens=sens)
    for i, (a, n) in zip(wrt, zip(analytic, numeric)):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol, err_msg=f"gradient of {name} w.r.t. input {i}")
