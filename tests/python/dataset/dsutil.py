"""Helpers of the dataset tests: small MNIST-format IDX files, CIFAR binary records, PNG
files written by hand, row readers.

Image i of a split has pixel (0, 0) = i and pixel (0, 1) = 1 for the test
split, 0 for train, so a test can tell which row it received; label i is
i % 10. The other pixels are random.
"""
import gzip
import pathlib
import struct
import zlib

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


IMAGES = pathlib.Path(__file__).parent / "images"  # the JPEG fixtures (images/README.md)


def gradient(height, width):
    """The (H, W, 3) uint8 pixels of the gradient_*.jpg fixtures."""
    y, x = np.mgrid[0:height, 0:width]
    return np.stack([x * 12 % 256, y * 10 % 256, (100 + x + y) % 256], axis=-1).astype(np.uint8)


def gray_ramp():
    """The (8, 8) uint8 pixels of the gray.jpg fixture."""
    return (np.arange(64) * 3).astype(np.uint8).reshape(8, 8)


def _png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _pack_rows(samples, bit_depth):
    """Scanlines (bytes, without filter byte) of an (H, W, C) array of raw sample values."""
    height, width, channels = samples.shape
    if bit_depth == 16:
        return [row.astype(">u2").tobytes() for row in samples.reshape(height, width * channels)]
    if bit_depth == 8:
        return [row.astype(np.uint8).tobytes() for row in samples.reshape(height, width * channels)]
    per_byte = 8 // bit_depth
    out = []
    for row in samples.reshape(height, width):
        padded = np.zeros(-(-width // per_byte) * per_byte, np.uint8)
        padded[:width] = row
        groups = padded.reshape(-1, per_byte).astype(np.uint16)
        shifts = np.arange(per_byte - 1, -1, -1) * bit_depth
        out.append((groups << shifts).sum(axis=1).astype(np.uint8).tobytes())
    return out


_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def encode_png(samples, color_type, bit_depth=8, palette=None, transparency=None, interlace=False):
    """PNG bytes of `samples`, an (H, W) or (H, W, C) array of raw sample values
    (palette indices for color type 3), written with Python's zlib, filter type 0."""
    samples = np.asarray(samples)
    if samples.ndim == 2:
        samples = samples[:, :, None]
    height, width = samples.shape[:2]
    header = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    if interlace:
        passes = [samples[y0::dy, x0::dx] for x0, y0, dx, dy in _ADAM7]
        scanlines = [line for part in passes if part.size for line in _pack_rows(part, bit_depth)]
    else:
        scanlines = _pack_rows(samples, bit_depth)
    raw = b"".join(b"\0" + line for line in scanlines)
    out = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
    if palette is not None:
        out += _png_chunk(b"PLTE", bytes(np.asarray(palette, np.uint8).ravel()))
    if transparency is not None:
        out += _png_chunk(b"tRNS", bytes(transparency))
    return out + _png_chunk(b"IDAT", zlib.compress(raw)) + _png_chunk(b"IEND", b"")
