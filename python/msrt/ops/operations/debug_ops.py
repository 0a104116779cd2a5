"""`ops.operations.debug_ops`: Print, HookBackward and the summary ops, where MindSpore keeps them."""
from ._primitives import HistogramSummary, HookBackward, ImageSummary, Print, ScalarSummary, TensorSummary
from . import _primitives
from .._api import install_module

__all__ = ["HookBackward", "Print", "ScalarSummary", "ImageSummary", "TensorSummary", "HistogramSummary"]
# The declared ones whose form names this module ("debug_ops.Name(...)(...)" in C++).
__all__ += install_module(globals(), "debug_ops", vars(_primitives))
