"""`ms.ops.composite`: GradOperation and the gradient functions."""
from .._grad import GradOperation, grad, value_and_grad

__all__ = ["GradOperation", "grad", "value_and_grad"]
