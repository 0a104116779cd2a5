"""`ops.operations.debug_ops`: Print and HookBackward, where MindSpore keeps them."""
from ._primitives import HookBackward, Print

__all__ = ["HookBackward", "Print"]
