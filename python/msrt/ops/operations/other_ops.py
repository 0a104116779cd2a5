"""`ops.operations.other_ops`: Assign and Depend, where MindSpore keeps them."""
from ._primitives import Assign, Depend

__all__ = ["Assign", "Depend"]
