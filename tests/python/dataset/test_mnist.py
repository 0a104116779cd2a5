"""MnistDataset: reading IDX files, argument checks, malformed files, samplers, sharding."""
import os

import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import FILE_STEMS, idx_images_bytes, idx_labels_bytes, ids, make_split, rows, sequential, write_file
from msrt.dataset import config, mnist

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def assert_tokens(message, *tokens):
    for token in tokens:
        assert token in message, f"{token!r} not in {message!r}"


# --------------------------------------------------------------------------
# Reading

@pytest.mark.parametrize("gz", [False, True])
def test_reads_images_and_labels_in_file_order(make_mnist, gz):
    directory = make_mnist(train=20, test=10, gz=gz)
    images, labels = directory.data["train"]
    got = rows(sequential(directory, usage="train"))
    assert len(got) == 20
    for i, (image, label) in enumerate(got):
        assert image.dtype == np.uint8 and image.shape == (28, 28, 1)
        assert label.dtype == np.uint32 and label.shape == ()
        np.testing.assert_array_equal(image, images[i])
        assert label == labels[i]


def test_columns_sizes_shapes_and_types(mnist_dir):
    data = ds.MnistDataset(str(mnist_dir), usage="test")
    assert data.get_col_names() == ["image", "label"]
    assert data.get_dataset_size() == 10
    assert data.output_shapes() == [[28, 28, 1], []]
    assert data.output_types() == [np.uint8, np.uint32]
    assert data.get_batch_size() == 1 and data.get_repeat_count() == 1


def test_usage_all_reads_test_then_train_and_is_the_default(mnist_dir):
    everything = rows(sequential(mnist_dir, usage="all"))
    assert [int(image[0, 1, 0]) for image, _ in everything] == [1] * 10 + [0] * 20
    assert ids(sequential(mnist_dir)) == ids(sequential(mnist_dir, usage="all"))
    assert ds.MnistDataset(str(mnist_dir)).get_dataset_size() == 30


def test_usage_all_reads_whichever_split_is_present(make_mnist):
    directory = make_mnist(train=None, test=6)
    assert ds.MnistDataset(str(directory)).get_dataset_size() == 6


def test_plain_and_gzipped_files_mix_and_path_objects_are_accepted(make_mnist):
    directory = make_mnist(train=12, test=None, gz=True)
    # Replace the gzipped labels by a plain file: the plain file wins.
    labels = np.arange(12, dtype=np.uint8)[::-1] % 10
    write_file(directory / FILE_STEMS[("train", "labels")], idx_labels_bytes(labels))
    got = [int(label) for _, label in rows(ds.MnistDataset(directory, usage="train", shuffle=False))]
    assert got == labels.tolist()


def test_num_samples_limits_rows_and_zero_means_all(mnist_dir):
    assert ids(sequential(mnist_dir, usage="train", num_samples=5)) == [0, 1, 2, 3, 4]
    assert ds.MnistDataset(str(mnist_dir), usage="train", num_samples=5).get_dataset_size() == 5
    assert ds.MnistDataset(str(mnist_dir), usage="train", num_samples=500).get_dataset_size() == 20
    assert ds.MnistDataset(str(mnist_dir), usage="train", num_samples=0).get_dataset_size() == 20
    shuffled = ids(ds.MnistDataset(str(mnist_dir), usage="train", num_samples=8))
    assert len(shuffled) == 8 and len(set(shuffled)) == 8


def test_decoded_arrays_are_cached_and_refreshed_when_files_change(make_mnist):
    directory = make_mnist(train=8, test=None)
    first = ds.MnistDataset(str(directory), usage="train")._load()
    second = ds.MnistDataset(str(directory), usage="train")._load()
    assert first[0] is second[0] and not first[0].flags.writeable
    images, labels = make_split(9, "train", seed=5)
    path = write_file(directory / FILE_STEMS[("train", "images")], idx_images_bytes(images))
    write_file(directory / FILE_STEMS[("train", "labels")], idx_labels_bytes(labels))
    os.utime(path, ns=(1, 1))
    assert ds.MnistDataset(str(directory), usage="train").get_dataset_size() == 9


def test_returned_rows_are_writable_copies(mnist_dir):
    image, _ = rows(sequential(mnist_dir, usage="train"))[1]
    image[...] = 0  # must not reach the cached arrays
    assert rows(sequential(mnist_dir, usage="train"))[1][0][0, 0, 0] == 1


@pytest.mark.skipif(not os.path.isdir(FASHION_MNIST), reason="Debian package dataset-fashion-mnist not installed")
def test_debian_fashion_mnist():
    train = ds.MnistDataset(FASHION_MNIST, usage="train")
    test = ds.MnistDataset(FASHION_MNIST, usage="test")
    assert train.get_dataset_size() == 60000
    assert test.get_dataset_size() == 10000
    images, labels = train._load()
    assert images.shape == (60000, 28, 28, 1) and labels.dtype == np.uint32
    assert labels.min() == 0 and labels.max() == 9
    assert np.bincount(labels).tolist() == [6000] * 10
    image, label = next(iter(test.create_tuple_iterator(output_numpy=True)))
    assert image.shape == (28, 28, 1) and 0 <= int(label) <= 9


# --------------------------------------------------------------------------
# Arguments

@pytest.mark.parametrize(
    "kwargs, error, tokens",
    [
        (dict(usage="valid"), ValueError, ["usage", "['train', 'test', 'all']"]),
        (dict(usage=1), TypeError, ["usage"]),
        (dict(num_samples=-1), ValueError, ["num_samples"]),
        (dict(num_samples="3"), TypeError, ["num_samples"]),
        (dict(num_parallel_workers=0), ValueError, ["num_parallel_workers"]),
        (dict(shuffle="yes"), TypeError, ["shuffle"]),
        (dict(shuffle=1), TypeError, ["shuffle"]),
        (dict(num_shards=2), RuntimeError, ["num_shards", "shard_id"]),
        (dict(shard_id=0), RuntimeError, ["shard_id", "num_shards"]),
        (dict(num_shards=2, shard_id=2), ValueError, ["shard_id", "[0, 1]"]),
        (dict(num_shards=2, shard_id=-1), ValueError, ["shard_id"]),
        (dict(num_shards=0, shard_id=0), ValueError, ["num_shards"]),
        (dict(num_shards=2.0, shard_id=0), TypeError, ["num_shards"]),
        (dict(sampler=ds.SequentialSampler(), shuffle=True), RuntimeError, ["sampler", "shuffle"]),
        (dict(sampler=ds.SequentialSampler(), num_samples=3), RuntimeError, ["sampler", "num_samples"]),
        (dict(sampler=[1, 2], num_shards=2, shard_id=0), RuntimeError, ["sampler", "sharding"]),
        (dict(sampler="0,1"), TypeError, ["sampler"]),
        (dict(cache=object()), ValueError, ["cache", "cache=None"]),
    ],
)
def test_argument_errors(mnist_dir, kwargs, error, tokens):
    with pytest.raises(error) as info:
        ds.MnistDataset(str(mnist_dir), **kwargs)
    assert_tokens(str(info.value), *tokens)


def test_dataset_dir_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        ds.MnistDataset(str(tmp_path / "nowhere"))
    with pytest.raises(TypeError, match="dataset_dir"):
        ds.MnistDataset(3)


# --------------------------------------------------------------------------
# Missing and malformed files

def test_missing_label_file_names_the_file(make_mnist):
    directory = make_mnist(train=5, test=None)
    os.remove(directory / FILE_STEMS[("train", "labels")])
    with pytest.raises(RuntimeError) as info:
        ds.MnistDataset(str(directory), usage="train")
    assert isinstance(info.value, FileNotFoundError)
    assert_tokens(str(info.value), "file not found", "train-labels-idx1-ubyte", str(directory))


def test_missing_split_and_empty_directory(mnist_dir, tmp_path):
    os.remove(mnist_dir / FILE_STEMS[("test", "images")])
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        ds.MnistDataset(str(mnist_dir), usage="test")
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        ds.MnistDataset(str(mnist_dir), usage="all")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ds.MnistFileNotFoundError, match="no MNIST files"):
        ds.MnistDataset(str(tmp_path / "empty"))


def _corrupt(directory, kind, data, gz=False):
    for suffix in ("", ".gz"):
        path = directory / (FILE_STEMS[("train", kind)] + suffix)
        if path.exists():
            path.unlink()
    return write_file(directory / FILE_STEMS[("train", kind)], data, gz)


_IMAGES, _LABELS = make_split(4, "train")


@pytest.mark.parametrize(
    "kind, data, tokens",
    [
        pytest.param("images", idx_images_bytes(_IMAGES, magic=2049),
                     ["not an MNIST image file", "2049", "label file", "2051"], id="images-label-magic"),
        pytest.param("images", idx_images_bytes(_IMAGES, magic=0x12345678),
                     ["bad magic number 305419896", "0x12345678"], id="images-bad-magic"),
        pytest.param("images", idx_images_bytes(_IMAGES, magic=0x0802),
                     ["dimension", "declares 2", "has 3"], id="images-2-dims"),
        pytest.param("images", idx_images_bytes(_IMAGES)[:-5],
                     ["truncated", "4 images", "3131 bytes"], id="images-truncated"),
        pytest.param("images", idx_images_bytes(_IMAGES) + b"xx",
                     ["longer than its header says"], id="images-trailing-bytes"),
        pytest.param("images", idx_images_bytes(_IMAGES)[:10],
                     ["truncated", "10 bytes", "16-byte"], id="images-short-header"),
        pytest.param("images", idx_images_bytes(_IMAGES.reshape(4, 14, 56)),
                     ["(14, 56)", "(28, 28)"], id="images-not-28x28"),
        pytest.param("labels", idx_labels_bytes(_LABELS, magic=2051),
                     ["not an MNIST label file", "2051", "image file", "2049"], id="labels-image-magic"),
        pytest.param("labels", idx_labels_bytes(_LABELS, magic=0x0802),
                     ["dimension", "declares 2", "has 1"], id="labels-2-dims"),
        pytest.param("labels", idx_labels_bytes(_LABELS, count=9),
                     ["truncated", "9 labels", "4 bytes"], id="labels-truncated"),
        pytest.param("labels", idx_labels_bytes(_LABELS)[:6],
                     ["truncated", "8-byte"], id="labels-short-header"),
        pytest.param("labels", idx_labels_bytes(np.zeros(3, np.uint8)),
                     ["count mismatch", "4 images", "3 labels"], id="labels-count-mismatch"),
    ],
)
@pytest.mark.parametrize("gz", [False, True])
def test_malformed_files(make_mnist, kind, data, tokens, gz):
    directory = make_mnist(train=4, test=None)
    path = _corrupt(directory, kind, data, gz)
    dataset = ds.MnistDataset(str(directory), usage="train")  # files are decoded lazily
    with pytest.raises(ds.MnistFormatError) as info:
        dataset.get_dataset_size()
    assert isinstance(info.value, RuntimeError)
    message = str(info.value)
    assert_tokens(message, *tokens)
    if "count mismatch" not in message:
        assert str(path) in message


def test_bad_gzip_file(make_mnist):
    directory = make_mnist(train=4, test=None)
    _corrupt(directory, "images", b"")
    os.remove(directory / FILE_STEMS[("train", "images")])
    (directory / (FILE_STEMS[("train", "images")] + ".gz")).write_bytes(b"not gzip at all")
    with pytest.raises(RuntimeError, match="not a valid gzip file"):
        rows(ds.MnistDataset(str(directory), usage="train"))


# --------------------------------------------------------------------------
# Samplers and shards

def test_samplers(mnist_dir):
    train = str(mnist_dir)
    assert ids(ds.MnistDataset(train, "train", sampler=ds.SequentialSampler(2, 3))) == [2, 3, 4]
    assert ids(ds.MnistDataset(train, "train", sampler=ds.SubsetSampler([5, 1, 3]))) == [5, 1, 3]
    assert ids(ds.MnistDataset(train, "train", sampler=[7, 0])) == [7, 0]
    assert ids(ds.MnistDataset(train, "train", sampler=np.array([4]))) == [4]
    assert ids(ds.MnistDataset(train, "train", sampler=range(3))) == [0, 1, 2]
    subset = ids(ds.MnistDataset(train, "train", sampler=ds.SubsetRandomSampler([1, 2, 3, 9])))
    assert sorted(subset) == [1, 2, 3, 9]
    drawn = ids(ds.MnistDataset(train, "train", sampler=ds.RandomSampler(replacement=True, num_samples=50)))
    assert len(drawn) == 50 and set(drawn) <= set(range(20))
    assert ds.MnistDataset(train, "train", sampler=ds.RandomSampler(num_samples=7)).get_dataset_size() == 7
    dataset = ds.MnistDataset(train, "train", sampler=ds.DistributedSampler(4, 1, shuffle=False))
    assert ids(dataset) == [1, 5, 9, 13, 17]


def test_sampler_errors(mnist_dir):
    with pytest.raises(RuntimeError, match="out of bound"):
        rows(ds.MnistDataset(str(mnist_dir), "train", sampler=[3, 20]))
    with pytest.raises(RuntimeError, match="start_index"):
        rows(ds.MnistDataset(str(mnist_dir), "train", sampler=ds.SequentialSampler(start_index=20)))
    with pytest.raises(TypeError, match="replacement"):
        ds.RandomSampler(replacement=1)
    with pytest.raises(ValueError, match="shard_id"):
        ds.DistributedSampler(2, 2)
    with pytest.raises(TypeError, match="indices"):
        ds.SubsetSampler([1, "2"])
    with pytest.raises(ValueError, match="num_samples"):
        ds.SequentialSampler(num_samples=-2)


def test_shards_split_round_robin_and_pad_by_wrapping(make_mnist):
    directory = make_mnist(train=10, test=None)
    shards = [ids(sequential(directory, usage="train", num_shards=3, shard_id=k)) for k in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    for k in range(3):
        assert ds.MnistDataset(str(directory), "train", num_shards=3, shard_id=k).get_dataset_size() == 4
    limited = sequential(directory, usage="train", num_shards=3, shard_id=1, num_samples=2)
    assert ids(limited) == [1, 4] and limited.get_dataset_size() == 2


def test_shuffled_shards_agree_on_one_order_without_a_seed(make_mnist):
    directory = make_mnist(train=12, test=None)
    # Separate dataset objects stand for separate processes; sharding shuffles by default.
    shards = [ids(ds.MnistDataset(str(directory), "train", num_shards=4, shard_id=k)) for k in range(4)]
    assert all(len(s) == 3 for s in shards)
    assert sorted(sum(shards, [])) == list(range(12))
    assert sum(shards, []) != [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]


# --------------------------------------------------------------------------
# Shuffling

def test_default_is_shuffled_and_a_seed_makes_it_reproducible(mnist_dir):
    config.set_seed(7)
    first = ids(ds.MnistDataset(str(mnist_dir), usage="train"))
    again = ids(ds.MnistDataset(str(mnist_dir), usage="train"))
    assert first == again
    assert sorted(first) == list(range(20)) and first != list(range(20))
    config.set_seed(8)
    assert ids(ds.MnistDataset(str(mnist_dir), usage="train")) != first


def test_each_epoch_has_a_new_order(mnist_dir):
    config.set_seed(3)
    iterator = ds.MnistDataset(str(mnist_dir), usage="train").create_tuple_iterator(num_epochs=3, output_numpy=True)
    epochs = [[int(image[0, 0, 0]) for image, _ in iterator] for _ in range(3)]
    assert all(sorted(e) == list(range(20)) for e in epochs)
    assert epochs[0] != epochs[1] != epochs[2]
    config.set_seed(3)
    iterator = ds.MnistDataset(str(mnist_dir), usage="train").create_tuple_iterator(num_epochs=3, output_numpy=True)
    assert [[int(image[0, 0, 0]) for image, _ in iterator] for _ in range(3)] == epochs


def test_without_a_seed_iterators_differ(mnist_dir):
    data = ds.MnistDataset(str(mnist_dir), usage="train")
    orders = {tuple(ids(data)) for _ in range(4)}
    assert len(orders) > 1
    assert config.get_seed() == 5489


def test_set_seed_validation():
    with pytest.raises(TypeError, match="seed"):
        config.set_seed("1")
    with pytest.raises(TypeError, match="seed"):
        config.set_seed(True)
    with pytest.raises(ValueError, match="4294967295"):
        config.set_seed(2**32)
    config.set_seed(2**32 - 1)
    assert config.get_seed() == 2**32 - 1
    assert mnist.MnistDataset is ds.MnistDataset
