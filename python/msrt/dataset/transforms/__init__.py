"""General transforms, as `mindspore.dataset.transforms`:

    import msrt.dataset.transforms as transforms
    label_ds = ds.map(transforms.TypeCast(np.int32), input_columns="label")
"""
from . import transforms  # mindspore.dataset.transforms.transforms
from .transforms import Compose, Concatenate, Fill, OneHot, PadEnd, Slice, TensorOperation, TypeCast

__all__ = ["Compose", "Concatenate", "Fill", "OneHot", "PadEnd", "Slice", "TensorOperation", "TypeCast",
           "transforms"]
