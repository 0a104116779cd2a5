"""`ops.operations.other_ops`: Assign and Depend, where MindSpore keeps them."""
from ._primitives import Depend
from . import _primitives
from .._api import install_module

__all__ = ["Depend"]
# The declared ones whose form names this module ("other_ops.Name(...)(...)" in C++).
__all__ += install_module(globals(), "other_ops", vars(_primitives))
