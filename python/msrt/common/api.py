"""`common.api`: `jit` (and its older name `ms_function`), where MindSpore keeps them."""
from .._jit import jit, ms_function

__all__ = ["jit", "ms_function"]
