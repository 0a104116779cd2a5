"""BatchNorm1d and BatchNorm2d."""
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _BatchNorm(Cell):
    _ranks = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, data_format="NCHW",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not isinstance(num_features, int) or isinstance(num_features, bool):
            raise TypeError(f"For '{name}', the argument 'num_features' must be int, "
                            f"but got {type(num_features).__name__}.")
        if num_features < 1:
            raise ValueError(f"For '{name}', the 'num_features' must be at least 1, but got {num_features}.")
        if not isinstance(momentum, (int, float)) or isinstance(momentum, bool) or not 0.0 <= momentum <= 1.0:
            raise ValueError(f"For '{name}', the 'momentum' must be a number in range [0, 1], but got {momentum}.")
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not eps > 0:  # NaN too
            raise ValueError(f"For '{name}', the 'eps' must be a positive float, but got {eps}.")
        if use_batch_statistics is not None and not isinstance(use_batch_statistics, bool):
            raise TypeError(f"For '{name}', the argument 'use_batch_statistics' must be bool or None, "
                            f"but got {type(use_batch_statistics).__name__}.")
        if data_format != "NCHW":
            raise ValueError(f"For '{name}', the 'data_format' must be 'NCHW' on CPU, but got {data_format!r}.")
        self.num_features = num_features
        self.eps = float(eps)
        # MindSpore's convention: running = momentum * running + (1 - momentum) * batch.
        # The op's momentum weighs the batch, so the cell keeps 1 - momentum (as MindSpore does).
        self.momentum = 1.0 - float(momentum)
        self.affine = affine
        self.use_batch_statistics = use_batch_statistics
        self.format = data_format
        self.moving_mean = Parameter(initializer(moving_mean_init, [num_features], dtype), name="mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, [num_features], dtype), name="variance",
                                         requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, [num_features], dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, [num_features], dtype), name="beta", requires_grad=affine)
        self._train_attrs = {"is_training": True, "epsilon": self.eps, "momentum": self.momentum}
        self._infer_attrs = {"is_training": False, "epsilon": self.eps, "momentum": self.momentum}

    def construct(self, x):
        if len(x.shape) not in self._ranks:
            raise ValueError(f"For '{self.cls_name}', the dimension of input must be one of {list(self._ranks)}, "
                             f"but got {len(x.shape)}.")
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        attrs = self._train_attrs if use_batch else self._infer_attrs
        return _op("batch_norm", x, self.gamma, self.beta, self.moving_mean, self.moving_variance, **attrs)[0]

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma}, "
                f"beta={self.beta}, moving_mean={self.moving_mean}, moving_variance={self.moving_variance}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input."""

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input."""

    _ranks = (4,)
