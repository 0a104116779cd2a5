"""ImageFolderDataset: image files from a tree of folders, one folder per class.

Classes are the sub-folders of `dataset_dir` (sorted by name, labelled 0, 1, ...
unless `class_indexing` says otherwise); each class's files are the regular
files directly inside its folder, sorted by name. Rows come class by class.
Images are read as their encoded bytes, or decoded to RGB arrays with decode=True.
"""
import os

import numpy as np

from ._validate import check_bool, check_dir, type_check
from ._blocks import _BLOCK_ROWS, _stack
from .datasets import MappableDataset
from .vision.transforms import decode_image


def _check_extensions(extensions):
    if extensions is None:
        return None
    type_check(extensions, (list,), "extensions")
    for i, extension in enumerate(extensions):
        type_check(extension, (str,), f"extensions[{i}]")
    return set(extensions)


def _check_class_indexing(class_indexing):
    if class_indexing is None:
        return None
    type_check(class_indexing, (dict,), "class_indexing")
    for name, index in class_indexing.items():
        type_check(name, (str,), "class_indexing's key")
        type_check(index, (int,), f"class_indexing['{name}']")
        if index < 0:
            raise ValueError(f"class_indexing['{name}'] should be a non-negative int, got {index}.")
    return dict(class_indexing)


def _scan(dataset_dir, extensions, class_indexing):
    """(paths, labels) of every image, class by class, and the folder -> label map."""
    folders = sorted(n for n in os.listdir(dataset_dir) if os.path.isdir(os.path.join(dataset_dir, n)))
    if class_indexing is None:
        labels = {name: i for i, name in enumerate(folders)}
    else:
        missing = sorted(set(class_indexing) - set(folders))
        if missing:
            raise RuntimeError(f"Invalid class_indexing: the folders {missing} do not exist in '{dataset_dir}'.")
        labels = class_indexing
        folders = [name for name in folders if name in labels]
    paths, label_of_row = [], []
    for folder in folders:
        directory = os.path.join(dataset_dir, folder)
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            if extensions is not None and os.path.splitext(name)[1] not in extensions:
                continue
            paths.append(path)
            label_of_row.append(labels[folder])
    if not paths:
        raise RuntimeError(f"Invalid data, no valid data matching the dataset API ImageFolderDataset. Please check "
                           f"dataset API or file path: {dataset_dir}"
                           + (f" (extensions {sorted(extensions)})." if extensions is not None else "."))
    return paths, np.asarray(label_of_row, np.int32), dict(labels)


class ImageFolderDataset(MappableDataset):
    """Images from a tree of folders, as `mindspore.dataset.ImageFolderDataset`.

    Columns "image" (the file's bytes as a 1-D uint8 array, or with decode=True the
    decoded <H, W, 3> uint8 RGB image) and "label" (an int32 scalar, as MindSpore
    produces; its docs say uint32).

    Args:
        dataset_dir (str): the root folder; each sub-folder holds one class.
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache:
            as every random-access source (shuffled by default).
        extensions (list[str], optional): file extensions to read, with their dot, e.g.
            [".JPEG", ".png"] (compared exactly). Default: every file.
        class_indexing (dict, optional): folder name -> label; only these folders are
            read. Default: the sorted folder names, labelled from 0.
        decode (bool, optional): decode each JPEG or PNG file to RGB, as vision.Decode
            does. Default: False.
        decrypt (callable, optional): reads an encrypted image: called with a file's path, it returns
            the file's decrypted bytes, which stand for the file's contents. Default: None (read the file).

    Raises:
        ValueError: `dataset_dir` is not a readable folder; a negative class index.
        TypeError: an argument has the wrong type.
        RuntimeError: no file matches; a class_indexing folder is missing; inconsistent
            sampler/shuffle/shard arguments; with decode=True, a file that is not a
            valid JPEG or PNG image (when it is read).
        TypeError: decrypt is not callable.
        RuntimeError: decrypt raises or returns something other than bytes (when the file is read).
    """

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, cache=None,
                 decrypt=None):
        dataset_dir = check_dir(dataset_dir)
        extensions = _check_extensions(extensions)
        class_indexing = _check_class_indexing(class_indexing)
        check_bool(decode, "decode")
        if decrypt is not None and not callable(decrypt):
            raise TypeError(f"Argument decrypt with value {decrypt!r} is not callable, but got {type(decrypt)}.")
        super().__init__(num_parallel_workers=num_parallel_workers, sampler=sampler, num_samples=num_samples,
                         shuffle=shuffle, num_shards=num_shards, shard_id=shard_id, cache=cache)
        self.dataset_dir = dataset_dir
        self.extensions = extensions
        self.class_indexing = class_indexing
        self.decode = decode
        self.decrypt = decrypt
        self._paths, self._labels, self._class_indexing = _scan(dataset_dir, extensions, class_indexing)
        self._columns = ["image", "label"]

    def _source_size(self):
        return len(self._paths)

    def _read(self, path):
        if self.decrypt is not None:
            data = self._decrypted(path)
        else:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as error:
                raise RuntimeError(f"ImageFolderDataset: cannot read '{path}': {error.strerror or error}.") from None
        if not self.decode:
            return np.frombuffer(data, np.uint8)
        try:
            return decode_image(data)
        except RuntimeError as error:
            raise RuntimeError(f"ImageFolderDataset: '{path}': {error}") from None

    def _decrypted(self, path):
        try:
            data = self.decrypt(path)
        except Exception as error:  # noqa: BLE001 - any failure of the user's function names the file
            raise RuntimeError(f"ImageFolderDataset: decrypt failed on '{path}': {type(error).__name__}: "
                               f"{error}") from error
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise RuntimeError(f"ImageFolderDataset: decrypt must return the decrypted bytes of '{path}', but got "
                               f"{type(data).__name__}.")
        return bytes(data)

    def _blocks(self, indices):
        for start in range(0, len(indices), _BLOCK_ROWS):
            part = indices[start:start + _BLOCK_ROWS]
            if len(part):
                yield [_stack([self._read(self._paths[i]) for i in part.tolist()]), self._labels[part]]

    def get_class_indexing(self):
        """Folder name -> label."""
        return dict(self._class_indexing)
