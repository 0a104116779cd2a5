"""A small synthetic MNIST-format dataset (IDX files) that a tiny network learns
quickly, and the pipeline the tests read it with."""
import struct

import numpy as np


def _write_idx(path, magic, array):
    with open(path, "wb") as f:
        f.write(struct.pack(">I", magic))
        for d in array.shape:
            f.write(struct.pack(">I", d))
        f.write(np.ascontiguousarray(array, dtype=np.uint8).tobytes())


def synthetic_mnist(n, seed):
    """Class k lights a 7x7 block at a class-specific place, plus noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
    for i, k in enumerate(labels):
        r, c = divmod(int(k), 4)
        images[i, 2 + 7 * r:9 + 7 * r, 1 + 7 * c:8 + 7 * c] = 255
    return images, labels


def write_mnist(directory, n_train=320, n_test=96):
    directory.mkdir(parents=True, exist_ok=True)
    for prefix, n, seed in (("train", n_train, 0), ("t10k", n_test, 1)):
        images, labels = synthetic_mnist(n, seed)
        _write_idx(directory / f"{prefix}-images-idx3-ubyte", 2051, images)
        _write_idx(directory / f"{prefix}-labels-idx1-ubyte", 2049, labels)
    return directory


def make_dataset(directory, usage="train", batch_size=16, shuffle=False):
    import msrt as ms
    import msrt.dataset as ds
    from msrt.dataset import transforms, vision

    data = ds.MnistDataset(str(directory), usage=usage, shuffle=False)
    data = data.map(operations=transforms.TypeCast(ms.int32), input_columns="label")
    data = data.map(operations=[vision.Rescale(1.0 / 255.0, 0.0), vision.HWC2CHW()], input_columns="image")
    if shuffle:
        data = data.shuffle(buffer_size=1000)
    return data.batch(batch_size, drop_remainder=True)
