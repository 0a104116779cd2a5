"""The one place where pipeline output becomes an msrt tensor."""
import numpy as np

# msrt has no unsigned types wider than uint8: they widen to int64 (exact).
_WIDEN = {np.dtype(np.uint16): np.int64, np.dtype(np.uint32): np.int64}


def to_tensor(array):
    """Wraps a NumPy array produced by a pipeline as an `msrt.Tensor`."""
    from .._tensor import Tensor  # not `import msrt`: the package imports this module

    array = np.asarray(array)
    target = _WIDEN.get(array.dtype)
    if target is not None:
        array = array.astype(target)
    return Tensor(array)
