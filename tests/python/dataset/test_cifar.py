"""Cifar10Dataset and Cifar100Dataset on small CIFAR binary files written here."""
import pathlib

import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import cifar_records, rows


class CifarDir(type(pathlib.Path())):
    """A directory of CIFAR files; `.parts_written` maps each file to its (images, labels)."""


@pytest.fixture
def cifar10_dir(tmp_path):
    """data_batch_1.bin (4 rows), data_batch_2.bin (3), test_batch.bin (5), and files to ignore."""
    directory = CifarDir(tmp_path / "cifar10")
    directory.mkdir()
    parts = {}
    for seed, (name, n) in enumerate((("data_batch_1.bin", 4), ("data_batch_2.bin", 3), ("test_batch.bin", 5))):
        raw, images, labels = cifar_records(n, (10,), seed)
        (directory / name).write_bytes(raw)
        parts[name] = (images, labels[:, 0])
    (directory / "batches.meta.txt").write_text("airplane\n")
    (directory / "readme.html").write_text("<html>")
    directory.parts_written = parts
    return directory


def joined(parts, names):
    return [np.concatenate([parts[n][k] for n in names]) for k in range(len(parts[names[0]]))]


@pytest.mark.parametrize("usage, names", [
    ("train", ["data_batch_1.bin", "data_batch_2.bin"]),
    ("test", ["test_batch.bin"]),
    ("all", ["data_batch_1.bin", "data_batch_2.bin", "test_batch.bin"]),
    (None, ["data_batch_1.bin", "data_batch_2.bin", "test_batch.bin"]),
])
def test_cifar10_reads_every_split(cifar10_dir, usage, names):
    data = ds.Cifar10Dataset(str(cifar10_dir), usage=usage, shuffle=False)
    images, labels = joined(cifar10_dir.parts_written, names)
    assert data.get_col_names() == ["image", "label"]
    assert data.get_dataset_size() == len(labels)
    got = rows(data)
    np.testing.assert_array_equal(np.stack([image for image, _ in got]), images)
    np.testing.assert_array_equal([label for _, label in got], labels)
    assert got[0][0].shape == (32, 32, 3) and got[0][0].dtype == np.uint8
    assert got[0][1].shape == () and got[0][1].dtype == np.uint32


def test_cifar10_sampling_options(cifar10_dir):
    directory = str(cifar10_dir)
    images, _ = joined(cifar10_dir.parts_written, ["data_batch_1.bin", "data_batch_2.bin"])

    def firsts(data):
        # Which train row each image is, by its first pixels.
        return [next(i for i in range(len(images)) if np.array_equal(images[i], image)) for image, _ in rows(data)]

    assert firsts(ds.Cifar10Dataset(directory, "train", shuffle=False, num_samples=3)) == [0, 1, 2]
    assert firsts(ds.Cifar10Dataset(directory, "train", sampler=[6, 2])) == [6, 2]
    shuffled = firsts(ds.Cifar10Dataset(directory, "train"))
    assert sorted(shuffled) == list(range(7))
    shards = [firsts(ds.Cifar10Dataset(directory, "train", shuffle=False, num_shards=2, shard_id=k)) for k in (0, 1)]
    assert shards == [[0, 2, 4, 6], [1, 3, 5, 0]]  # equal shards: the second wraps around


def test_cifar100_columns_and_usage_order(tmp_path):
    directory = tmp_path / "cifar100"
    directory.mkdir()
    written = {}
    for seed, (name, n) in enumerate((("train.bin", 6), ("test.bin", 2))):
        raw, images, labels = cifar_records(n, (20, 100), seed)
        (directory / name).write_bytes(raw)
        written[name] = (images, labels)
    data = ds.Cifar100Dataset(str(directory), usage="train", shuffle=False)
    assert data.get_col_names() == ["image", "coarse_label", "fine_label"]
    got = rows(data)
    np.testing.assert_array_equal(np.stack([r[0] for r in got]), written["train.bin"][0])
    np.testing.assert_array_equal([[int(r[1]), int(r[2])] for r in got], written["train.bin"][1])
    assert got[0][1].dtype == got[0][2].dtype == np.uint32
    every = rows(ds.Cifar100Dataset(str(directory), shuffle=False))  # "all": sorted names, test.bin first
    assert len(every) == 8
    np.testing.assert_array_equal(every[0][0], written["test.bin"][0][0])


def test_truncated_and_malformed_files_are_named(cifar10_dir):
    path = cifar10_dir / "data_batch_2.bin"
    path.write_bytes(path.read_bytes()[:-1])
    data = ds.Cifar10Dataset(str(cifar10_dir), usage="train")
    with pytest.raises(ds.CifarFormatError, match="data_batch_2.bin.*not a positive multiple of the record size 3073"):
        rows(data)
    (cifar10_dir / "data_batch_2.bin").write_bytes(b"")
    with pytest.raises(ds.CifarFormatError, match="data_batch_2.bin"):
        ds.Cifar10Dataset(str(cifar10_dir), usage="train").get_dataset_size()
    bad_label = bytearray(3073)
    bad_label[0] = 10
    (cifar10_dir / "test_batch.bin").write_bytes(bytes(bad_label))
    with pytest.raises(RuntimeError, match="test_batch.bin.*record 0 has label 10, expected below 10"):
        rows(ds.Cifar10Dataset(str(cifar10_dir), usage="test"))


def test_missing_files_and_argument_errors(tmp_path, cifar10_dir):
    with pytest.raises(ds.CifarFileNotFoundError, match="'data_batch'.*Python-pickle CIFAR format is not supported"):
        ds.Cifar10Dataset(str(tmp_path), usage="train")
    (tmp_path / "train.txt").write_text("not a .bin file")
    with pytest.raises(FileNotFoundError, match="'train' or 'test'"):
        ds.Cifar100Dataset(str(tmp_path))
    with pytest.raises(ValueError, match="does not exist"):
        ds.Cifar10Dataset(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="usage"):
        ds.Cifar10Dataset(str(cifar10_dir), usage="valid")
    with pytest.raises(RuntimeError, match="sampler and shuffle"):
        ds.Cifar10Dataset(str(cifar10_dir), shuffle=False, sampler=[0])
    with pytest.raises(TypeError, match="num_samples"):
        ds.Cifar10Dataset(str(cifar10_dir), num_samples="3")


def test_a_rewritten_file_is_read_again(cifar10_dir):
    directory = str(cifar10_dir)
    assert ds.Cifar10Dataset(directory, usage="test").get_dataset_size() == 5
    raw, _, _ = cifar_records(2, (10,), 9)
    (cifar10_dir / "test_batch.bin").write_bytes(raw)
    assert ds.Cifar10Dataset(directory, usage="test").get_dataset_size() == 2


def test_random_bytes_give_rows_or_a_format_error(tmp_path):
    rng = np.random.default_rng(0)
    for trial in range(40):
        directory = tmp_path / f"random{trial}"
        directory.mkdir()
        records = int(rng.integers(0, 3))
        size = records * 3073 + int(rng.choice([0, 0, 1, -1, 100]))
        raw = rng.integers(0, 256, max(size, 0), dtype=np.uint8)
        raw[::3073] %= 12  # mostly valid labels: some files are well formed
        (directory / "test_batch.bin").write_bytes(raw.tobytes())
        try:
            got = rows(ds.Cifar10Dataset(str(directory), shuffle=False))
        except ds.CifarFormatError as error:
            assert "test_batch.bin" in str(error)
        else:
            assert size % 3073 == 0 and len(got) == size // 3073 > 0
            assert all(int(label) < 10 for _, label in got)
