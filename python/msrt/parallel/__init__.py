"""`mindspore.parallel`: the auto-parallel strategy-search parameters.

msrt does not search sharding strategies yet: the parameters are checked and
stored (`ms.context.options("algo_parameters")`), and setting one warns that
it has no effect.
"""
from ..context import get_algo_parameters, reset_algo_parameters, set_algo_parameters

__all__ = ["set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]
