"""Helpers of the dataset tests: small MNIST-format IDX files, CIFAR binary records, row readers.

Image i of a split has pixel (0, 0) = i and pixel (0, 1) = 1 for the test
split, 0 for train, so a test can tell which row it received; label i is
i % 10. The other pixels are random.
"""
import gzip
import pathlib
import struct

import numpy as np

import msrt.dataset as ds

FILE_STEMS = {
    ("train", "images"): "train-images-idx3-ubyte",
    ("train", "labels"): "train-labels-idx1-ubyte",
    ("test", "images"): "t10k-images-idx3-ubyte",
    ("test", "labels"): "t10k-labels-idx1-ubyte",
}


def idx_images_bytes(images, magic=2051, count=None, rows=None, cols=None):
    n, h, w = images.shape[:3]
    header = struct.pack(">IIII", magic, n if count is None else count, h if rows is None else rows,
                         w if cols is None else cols)
    return header + np.ascontiguousarray(images, np.uint8).tobytes()


def idx_labels_bytes(labels, magic=2049, count=None):
    header = struct.pack(">II", magic, len(labels) if count is None else count)
    return header + np.asarray(labels, np.uint8).tobytes()


def write_file(path, data, gz=False):
    if gz:
        path = path.with_name(path.name + ".gz")
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return path


def make_split(n, split, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[:, 0, 0] = np.arange(n) % 256
    images[:, 0, 1] = 1 if split == "test" else 0
    labels = (np.arange(n) % 10).astype(np.uint8)
    return images, labels


class MnistDir(type(pathlib.Path())):
    """A directory of MNIST files; `.data` maps each split written to its (images, labels)."""


def write_mnist(directory, train=20, test=10, gz=False, seed=0):
    """Writes the splits with the given sizes (None: no files) into `directory`;
    returns it as a MnistDir."""
    directory = MnistDir(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data = {}
    for split, n in (("train", train), ("test", test)):
        if n is None:
            continue
        images, labels = make_split(n, split, seed)
        write_file(directory / FILE_STEMS[(split, "images")], idx_images_bytes(images), gz)
        write_file(directory / FILE_STEMS[(split, "labels")], idx_labels_bytes(labels), gz)
        data[split] = (images[..., None], labels.astype(np.uint32))
    directory.data = data
    return directory


def rows(dataset, **kwargs):
    """Every row of one epoch, as lists of NumPy arrays."""
    return list(dataset.create_tuple_iterator(output_numpy=True, num_epochs=1, **kwargs))


def ids(dataset):
    """Pixel (0, 0) of each row's image: which source row it was."""
    return [int(image[0, 0, 0]) for image, *_ in rows(dataset)]


def sequential(directory, **kwargs):
    return ds.MnistDataset(str(directory), shuffle=False, **kwargs)


def cifar_records(n, labels, seed):
    """(file bytes, images N x 32 x 32 x 3, labels N x len(labels)) of n records."""
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)  # the file stores R, G, B planes
    label_values = np.stack([rng.integers(0, limit, n) for limit in labels], 1).astype(np.uint8)
    data = np.concatenate([label_values, planes.reshape(n, -1)], 1)
    return data.tobytes(), planes.transpose(0, 2, 3, 1), label_values.astype(np.uint32)
