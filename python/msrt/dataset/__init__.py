"""The data pipeline, as `mindspore.dataset`: sources, lazy dataset operations, iterators.

    import msrt.dataset as ds
    from msrt.dataset import vision, transforms

    data = ds.MnistDataset("/usr/share/datasets/fashion-mnist", usage="train")
    data = data.map([vision.Resize((32, 32)), vision.Rescale(1 / 255, 0),
                     vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()], "image")
    data = data.map(transforms.TypeCast(np.int32), "label")
    data = data.shuffle(10000).batch(32, drop_remainder=True)
    for image, label in data.create_tuple_iterator(output_numpy=True):
        ...

The pipeline runs in the calling thread on NumPy; transforms with a vectorised
path process hundreds of rows per call. A GeneratorDataset over a random-access
source can read it with worker threads or forked worker processes.
"""
from . import config, samplers, text, transforms, vision
from .cifar import Cifar10Dataset, Cifar100Dataset, CifarFileNotFoundError, CifarFormatError
from .datasets import Dataset, DictIterator, MappableDataset, TupleIterator
from .map_batch import BatchDataset, BatchInfo, MapDataset
from .row_ops import (ConcatDataset, ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset,
                      SkipDataset, TakeDataset, ZipDataset)
from .row_ops import zip_datasets as zip  # noqa: A001 - MindSpore's name
from .generator import GeneratorDataset, NumpySlicesDataset
from .imagefolder import ImageFolderDataset
from .minddataset import MindDataset, Shuffle
from .mnist import MnistDataset, MnistFileNotFoundError, MnistFormatError
from .samplers import (
    BuiltinSampler,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    SubsetSampler,
)

__all__ = [
    "BatchDataset",
    "BatchInfo",
    "BuiltinSampler",
    "Cifar100Dataset",
    "Cifar10Dataset",
    "CifarFileNotFoundError",
    "CifarFormatError",
    "ConcatDataset",
    "Dataset",
    "DictIterator",
    "DistributedSampler",
    "GeneratorDataset",
    "ImageFolderDataset",
    "MapDataset",
    "MindDataset",
    "MappableDataset",
    "MnistDataset",
    "MnistFileNotFoundError",
    "MnistFormatError",
    "NumpySlicesDataset",
    "ProjectDataset",
    "RandomSampler",
    "RenameDataset",
    "RepeatDataset",
    "SequentialSampler",
    "Shuffle",
    "ShuffleDataset",
    "SkipDataset",
    "SubsetRandomSampler",
    "SubsetSampler",
    "TakeDataset",
    "TupleIterator",
    "ZipDataset",
    "config",
    "samplers",
    "text",
    "transforms",
    "vision",
    "zip",
]
