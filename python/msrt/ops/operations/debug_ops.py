"""`ops.operations.debug_ops`: Print, where MindSpore keeps it."""
from ._primitives import Print

__all__ = ["Print"]
