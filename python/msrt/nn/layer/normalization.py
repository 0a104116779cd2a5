"""BatchNorm1d/2d/3d, LayerNorm and GroupNorm."""
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm"]


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


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input."""

    _ranks = (5,)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, dtype=mstype.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, "NCHW", dtype)


class LayerNorm(Cell):
    """Layer normalization (the layer_norm op) over the axes from begin_norm_axis, with gamma and beta
    of shape `normalized_shape` (x's axes from begin_params_axis), as MindSpore 2.3's `nn.LayerNorm`."""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
                 beta_init="zeros", epsilon=1e-7, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"For '{name}', the type of 'normalized_shape' must be tuple[int] or list[int], "
                            f"but got {normalized_shape} and the type is {type(normalized_shape)}.")
        for arg, value in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
        if not isinstance(epsilon, (int, float)) or isinstance(epsilon, bool) or not epsilon > 0:
            raise ValueError(f"For '{name}', the 'epsilon' must be a positive float, but got {epsilon}.")
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis = begin_norm_axis
        self.begin_params_axis = begin_params_axis
        self.epsilon = float(epsilon)
        self.gamma = Parameter(initializer(gamma_init, list(normalized_shape), dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, list(normalized_shape), dtype), name="beta")
        self._attrs = {"begin_norm_axis": begin_norm_axis, "begin_params_axis": begin_params_axis,
                       "epsilon": self.epsilon}

    def construct(self, input_x):
        return _op("layer_norm", input_x, self.gamma, self.beta, **self._attrs)[0]

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma}, beta={self.beta}")


class GroupNorm(Cell):
    """Group normalization of (N, C, ...) input (the group_norm op), as MindSpore 2.3's `nn.GroupNorm`."""

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, gamma_init="ones", beta_init="zeros",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        for arg, value in (("num_groups", num_groups), ("num_channels", num_channels)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
            if value < 1:
                raise ValueError(f"For '{name}', the argument '{arg}' must be positive, but got {value}.")
        if num_channels % num_groups != 0:
            raise ValueError(f"For '{name}', the 'num_channels' must be divided by 'num_groups', "
                             f"but got 'num_channels': {num_channels}, 'num_groups': {num_groups}.")
        if not isinstance(affine, bool):
            raise TypeError(f"For '{name}', the argument 'affine' must be bool, but got {type(affine).__name__}.")
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not eps > 0:
            raise ValueError(f"For '{name}', the 'eps' must be a positive float, but got {eps}.")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, float(eps), affine
        self.gamma = Parameter(initializer(gamma_init, [num_channels], dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, [num_channels], dtype), name="beta", requires_grad=affine)

    def construct(self, x):
        if len(x.shape) < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"For '{self.cls_name}', the input must be (N, {self.num_channels}, ...), "
                             f"but got shape {x.shape}.")
        return _op("group_norm", x, self.gamma, self.beta, num_groups=self.num_groups, epsilon=self.eps)

    def extend_repr(self):
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}, eps={self.eps}, affine={self.affine}"
