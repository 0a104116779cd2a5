"""The one place where pipeline output becomes an msrt tensor."""
import numpy as np


def to_tensor(array):
    """Wraps a NumPy array produced by a pipeline as an `msrt.Tensor` of its dtype."""
    from .._tensor import Tensor  # not `import msrt`: the package imports this module

    return Tensor(np.asarray(array))
