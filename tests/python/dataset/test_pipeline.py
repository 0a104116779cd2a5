"""Dataset operations and iterators: map, batch, shuffle, repeat, take, skip, project,
rename, filter, sizes, column information, tuple and dict iterators, epochs."""
import numpy as np
import pytest

import msrt
import msrt.dataset as ds
import msrt.dataset.transforms as transforms
from dsutil import ids, rows, sequential
from msrt.dataset import config, vision


def train(directory, **kwargs):
    return sequential(directory, usage="train", **kwargs)


# --------------------------------------------------------------------------
# map

def test_map_vectorised_transform_equals_row_by_row(mnist_dir, small_blocks):
    images = mnist_dir.data["train"][0]
    resize = vision.Resize((9, 5))
    got = [image for image, _ in rows(train(mnist_dir).map(resize, input_columns="image"))]
    assert len(got) == 20
    for i, image in enumerate(got):
        np.testing.assert_array_equal(image, resize(images[i]))


def test_map_python_function_gets_numpy_rows(mnist_dir):
    seen = []

    def double(label):
        seen.append((type(label), label.shape, label.dtype))
        return label * 2

    labels = [int(label) for _, label in rows(train(mnist_dir).map(double, "label"))]
    assert labels == [2 * (i % 10) for i in range(20)]
    assert seen[0] == (np.ndarray, (), np.uint32)


def test_map_chain_mixes_vectorised_and_python_operations(mnist_dir, small_blocks):
    images = mnist_dir.data["train"][0]
    chain = [vision.Rescale(1 / 255, 0), lambda x: x[:20, :20] + 1, vision.Normalize([0.5], [0.25]), vision.HWC2CHW()]
    got = rows(train(mnist_dir).map(chain, "image"))
    for i, (image, label) in enumerate(got):
        reference = ((images[i][:20, :20].astype(np.float32) / 255 + 1) - 0.5) / 0.25
        np.testing.assert_allclose(image, reference.transpose(2, 0, 1), rtol=1e-6)
        assert image.dtype == np.float32 and int(label) == i % 10


def test_map_defaults_to_the_first_column_and_renames_in_place(mnist_dir):
    data = train(mnist_dir).map(vision.HWC2CHW())
    assert data.get_col_names() == ["image", "label"]
    assert data.output_shapes() == [[1, 28, 28], []]
    renamed = train(mnist_dir).map(transforms.TypeCast(np.int32), "label", "target")
    assert renamed.get_col_names() == ["image", "target"]
    assert renamed.output_types() == [np.uint8, np.int32]


def test_map_with_more_outputs_puts_them_first(mnist_dir):
    data = train(mnist_dir).map(lambda x: (x, x + 100), "label", ["a", "b"])
    assert data.get_col_names() == ["a", "b", "image"]
    a, b, image = rows(data)[3]
    assert (int(a), int(b), int(image[0, 0, 0])) == (3, 103, 3)
    merged = train(mnist_dir).map(lambda image, label: label, ["image", "label"], "label")
    assert merged.get_col_names() == ["label"]
    assert [int(x) for x, in rows(merged)][:3] == [0, 1, 2]


def test_map_errors(mnist_dir):
    data = train(mnist_dir)
    with pytest.raises(RuntimeError, match="'pixels' does not exist"):
        data.map(vision.HWC2CHW(), "pixels")
    with pytest.raises(TypeError, match="operations"):
        data.map([vision.HWC2CHW(), 3], "image")
    with pytest.raises(TypeError, match="input_columns"):
        data.map(vision.HWC2CHW(), 1)
    with pytest.raises(ValueError, match="should not be empty"):
        data.map(vision.HWC2CHW(), [])
    with pytest.raises(RuntimeError, match="duplicate"):
        data.map(lambda x: x, "image", "label")
    with pytest.raises(TypeError, match="unexpected keyword"):
        data.map(vision.HWC2CHW(), "image", column_order=["image"])
    with pytest.raises(RuntimeError, match="number of 'output_columns'"):
        rows(data.map(lambda x: (x, x), "label"))

    def broken(x):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        rows(data.map(broken, "label"))


def test_map_accepts_ignored_mindspore_options(mnist_dir):
    data = train(mnist_dir).map(vision.HWC2CHW(), "image", num_parallel_workers=8, python_multiprocessing=False,
                                max_rowsize=16)
    assert data.get_dataset_size() == 20
    with pytest.raises(ValueError, match="num_parallel_workers"):
        train(mnist_dir).map(vision.HWC2CHW(), "image", num_parallel_workers=0)


def test_ragged_rows_stay_separate_until_batched(mnist_dir, small_blocks):
    data = train(mnist_dir).map(lambda x: x[: 1 + int(x[0, 0, 0]) % 3], "image")
    shapes = [image.shape for image, _ in rows(data)]
    assert shapes[:4] == [(1, 28, 1), (2, 28, 1), (3, 28, 1), (1, 28, 1)]
    with pytest.raises(RuntimeError, match="Inconsistent batch shapes"):
        rows(data.batch(2))
    assert len(rows(data.batch(1))) == 20
    shuffled = rows(data.shuffle(4))
    assert sorted(int(image[0, 0, 0]) for image, _ in shuffled) == list(range(20))
    assert all(image.shape[0] == 1 + int(image[0, 0, 0]) % 3 for image, _ in shuffled)


# --------------------------------------------------------------------------
# batch, repeat, take, skip

@pytest.mark.parametrize("drop_remainder, sizes", [(False, [6, 6, 6, 2]), (True, [6, 6, 6])])
def test_batch_sizes(mnist_dir, small_blocks, drop_remainder, sizes):
    data = train(mnist_dir).batch(6, drop_remainder=drop_remainder)
    got = rows(data)
    assert [len(label) for _, label in got] == sizes
    assert data.get_dataset_size() == len(sizes)
    assert data.get_batch_size() == 6
    images = np.concatenate([image for image, _ in got])
    np.testing.assert_array_equal(images, mnist_dir.data["train"][0][: len(images)])
    assert got[0][1].dtype == np.uint32 and got[0][0].shape == (6, 28, 28, 1)


def test_batch_errors(mnist_dir):
    data = train(mnist_dir)
    with pytest.raises(ValueError, match="batch_size"):
        data.batch(0)
    with pytest.raises(TypeError, match="batch_size"):
        data.batch("2")
    with pytest.raises(TypeError, match="drop_remainder"):
        data.batch(2, drop_remainder=1)
    with pytest.raises(TypeError, match="per_batch_map should be callable"):
        data.batch(2, per_batch_map=3)
    with pytest.raises(ValueError, match="input_columns can be given only together with per_batch_map"):
        data.batch(2, input_columns=["label"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'pad'"):
        data.batch(2, pad={})
    with pytest.raises(RuntimeError, match="'labels' does not exist"):
        data.batch(2, per_batch_map=lambda x, info: (x,), input_columns="labels")
    with pytest.raises(TypeError, match="shape in pad_info"):
        data.padded_batch(2, pad_info={"label": ((2,), 0)})
    with pytest.raises(ValueError, match="tuple of size 2"):
        data.padded_batch(2, pad_info={"label": ([2], 0, 1)})
    with pytest.raises(RuntimeError, match="pad_info, column 'x' does not exist"):
        data.padded_batch(2, pad_info={"x": None})


def test_repeat_counts_and_reshuffles_each_pass(mnist_dir, small_blocks):
    config.set_seed(11)
    data = ds.MnistDataset(str(mnist_dir), usage="train").repeat(3)
    order = ids(data)
    assert data.get_dataset_size() == 60 and data.get_repeat_count() == 3
    passes = [order[i * 20:(i + 1) * 20] for i in range(3)]
    assert all(sorted(p) == list(range(20)) for p in passes)
    assert passes[0] != passes[1] != passes[2]


def test_repeat_then_batch_crosses_pass_boundaries(mnist_dir, small_blocks):
    data = train(mnist_dir).repeat(2).batch(8)
    assert [len(label) for _, label in rows(data)] == [8, 8, 8, 8, 8]
    assert data.get_dataset_size() == 5
    batch_then_repeat = train(mnist_dir).batch(8, True).repeat(2)
    assert [len(label) for _, label in rows(batch_then_repeat)] == [8, 8, 8, 8]


def test_infinite_repeat_with_take(mnist_dir):
    data = train(mnist_dir).repeat().take(45)
    assert ids(data) == (list(range(20)) * 3)[:45]
    assert train(mnist_dir).repeat(-1).get_dataset_size() == 20  # MindSpore reports one pass
    assert train(mnist_dir).repeat(-1).get_repeat_count() == -1
    for bad in (0, -2):
        with pytest.raises(ValueError, match="count"):
            train(mnist_dir).repeat(bad)
    with pytest.raises(TypeError, match="repeat"):
        train(mnist_dir).repeat(2.0)


def test_take_and_skip(mnist_dir, small_blocks):
    data = train(mnist_dir)
    assert ids(data.take(9)) == list(range(9))
    assert ids(data.skip(15)) == [15, 16, 17, 18, 19]
    assert ids(data.skip(8).take(3)) == [8, 9, 10]
    assert ids(data.take(-1)) == list(range(20))
    assert ids(data.skip(25)) == [] and data.skip(25).get_dataset_size() == 0
    assert data.take(50).get_dataset_size() == 20 and data.skip(3).get_dataset_size() == 17
    assert data.skip(0).get_dataset_size() == 20
    with pytest.raises(ValueError, match="count"):
        data.take(0)
    with pytest.raises(ValueError, match="count"):
        data.skip(-1)
    with pytest.raises(TypeError, match="count"):
        data.take("3")


def test_filter(mnist_dir, small_blocks):
    data = train(mnist_dir)
    seen = []

    def even(image, label):
        seen.append((type(image), image.shape, label.shape))
        return int(image[0, 0, 0]) % 2 == 0

    kept = data.filter(even)
    assert ids(kept) == list(range(0, 20, 2))
    assert seen[0] == (np.ndarray, (28, 28, 1), ())
    assert kept.get_dataset_size() == 10 and kept.get_col_names() == ["image", "label"]
    by_image = data.filter(lambda image: image[0, 0, 0] >= 17, input_columns=["image"])
    assert ids(by_image) == [17, 18, 19] and by_image.get_dataset_size() == 3
    assert ids(data.filter(lambda image: False, input_columns="image")) == []
    assert [len(b[0]) for b in rows(kept.batch(4))] == [4, 4, 2]
    with pytest.raises(TypeError, match="predicate"):
        data.filter(3)
    with pytest.raises(RuntimeError, match="'pixels' does not exist"):
        data.filter(lambda x: True, input_columns=["pixels"])
    with pytest.raises(ZeroDivisionError):
        rows(data.filter(lambda image: 1 // 0, input_columns="image"))


# --------------------------------------------------------------------------
# shuffle

def test_shuffle_is_a_reproducible_permutation_new_each_epoch(mnist_dir, small_blocks):
    config.set_seed(5)
    data = train(mnist_dir).shuffle(buffer_size=50)
    iterator = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    first = [int(image[0, 0, 0]) for image, _ in iterator]
    second = [int(image[0, 0, 0]) for image, _ in iterator]
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second and first != list(range(20))
    config.set_seed(5)
    assert ids(data) == first


@pytest.mark.parametrize("buffer_size", [2, 5])
def test_shuffle_buffer_keeps_rows_near_their_place(make_mnist, small_blocks, buffer_size):
    directory = make_mnist(train=200, test=None)
    order = ids(train(directory).shuffle(buffer_size))
    assert sorted(order) == list(range(200))
    # Row k can only leave the buffer after it entered: position >= k - buffer_size + 1.
    assert all(row <= position + buffer_size - 1 for position, row in enumerate(order))
    assert order != list(range(200))


def test_shuffle_buffer_larger_than_many_blocks(make_mnist, small_blocks):
    directory = make_mnist(train=100, test=None)
    config.set_seed(9)
    # A 30-row buffer over 7-row blocks compacts its store several times.
    rows_seen = [int(x) for batch in rows(train(directory).shuffle(30).batch(7)) for x in batch[0][:, 0, 0, 0]]
    assert sorted(rows_seen) == list(range(100))


def test_shuffle_errors(mnist_dir):
    with pytest.raises(ValueError, match=r"buffer_size is not within the required interval of \[2, 2147483647\]"):
        train(mnist_dir).shuffle(1)
    with pytest.raises(TypeError, match="buffer_size"):
        train(mnist_dir).shuffle(None)


# --------------------------------------------------------------------------
# project, rename, information

def test_project_and_rename(mnist_dir):
    data = train(mnist_dir).project(["label", "image"])
    assert data.get_col_names() == ["label", "image"]
    label, image = rows(data)[4]
    assert int(label) == 4 and image.shape == (28, 28, 1)
    assert train(mnist_dir).project("label").output_shapes() == [[]]
    renamed = train(mnist_dir).rename(["image", "label"], ["x", "y"])
    assert renamed.get_col_names() == ["x", "y"]
    assert list(next(renamed.create_dict_iterator(output_numpy=True))) == ["x", "y"]
    with pytest.raises(RuntimeError, match="'pixels' does not exist"):
        train(mnist_dir).project(["pixels"])
    with pytest.raises(ValueError, match="not equal"):
        train(mnist_dir).rename(["image", "label"], ["x"])
    with pytest.raises(RuntimeError, match="does not exist"):
        train(mnist_dir).rename("pixels", "x")
    with pytest.raises(RuntimeError, match="duplicate"):
        train(mnist_dir).rename("image", "label")
    with pytest.raises(ValueError, match="same"):
        train(mnist_dir).project(["image", "image"])


def test_information_of_a_lenet_pipeline(mnist_dir):
    data = ds.MnistDataset(str(mnist_dir), usage="train")
    data = data.map([vision.Resize((32, 32)), vision.Rescale(1 / 255, 0), vision.Normalize([0.1307], [0.3081]),
                     vision.HWC2CHW()], input_columns="image")
    data = data.map(transforms.TypeCast(np.int32), input_columns="label")
    data = data.shuffle(buffer_size=10000).batch(8, drop_remainder=True).repeat(2)
    assert data.get_col_names() == ["image", "label"]
    assert data.get_dataset_size() == 4 and data.get_batch_size() == 8 and data.get_repeat_count() == 2
    assert data.output_shapes() == [[8, 1, 32, 32], [8]]
    assert data.output_types() == [np.float32, np.int32]
    images, labels = zip(*rows(data))
    assert len(images) == 4 and all(i.shape == (8, 1, 32, 32) for i in images)


def test_pipeline_values_against_numpy(mnist_dir):
    images = mnist_dir.data["train"][0]
    data = train(mnist_dir).map([vision.Rescale(2.0, -1.0), vision.Normalize([0.5], [2.0]), vision.HWC2CHW()],
                                "image").batch(4)
    expected = ((images.astype(np.float32) * 2 - 1) - 0.5) / 2
    got = np.concatenate([image for image, _ in rows(data)])
    np.testing.assert_allclose(got, expected.transpose(0, 3, 1, 2), rtol=1e-6)


# --------------------------------------------------------------------------
# Iterators

def test_tuple_and_dict_iterators_agree(mnist_dir):
    data = train(mnist_dir).batch(5)
    tuples = list(data.create_tuple_iterator(output_numpy=True, num_epochs=1))
    dicts = list(data.create_dict_iterator(output_numpy=True, num_epochs=1))
    assert len(tuples) == len(dicts) == 4
    for (image, label), row in zip(tuples, dicts):
        assert isinstance(row, dict) and list(row) == ["image", "label"]
        np.testing.assert_array_equal(row["image"], image)
        np.testing.assert_array_equal(row["label"], label)
    assert isinstance(tuples[0], list)


def test_tuple_iterator_columns(mnist_dir):
    label, image = next(train(mnist_dir).create_tuple_iterator(columns=["label", "image"], output_numpy=True))
    assert label.shape == () and image.shape == (28, 28, 1)
    only = next(train(mnist_dir).create_tuple_iterator(columns="label", output_numpy=True))
    assert len(only) == 1
    with pytest.raises(RuntimeError, match="does not exist"):
        train(mnist_dir).create_tuple_iterator(columns=["pixels"])


def test_num_epochs(mnist_dir):
    data = train(mnist_dir).batch(10)
    iterator = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert len(list(iterator)) == 2
    assert len(list(iterator)) == 2
    assert list(iterator) == []  # both epochs done
    with pytest.raises(StopIteration):
        next(iterator)
    unlimited = data.create_dict_iterator(output_numpy=True)
    assert [len(list(unlimited)) for _ in range(5)] == [2] * 5
    stopped = data.create_tuple_iterator(output_numpy=True)
    next(stopped)
    stopped.stop()
    assert list(stopped) == []


def test_iterator_argument_errors(mnist_dir):
    data = train(mnist_dir)
    with pytest.raises(ValueError, match="num_epochs"):
        data.create_tuple_iterator(num_epochs=0)
    with pytest.raises(ValueError, match="num_epochs"):
        data.create_dict_iterator(num_epochs=-2)
    with pytest.raises(TypeError, match="num_epochs"):
        data.create_tuple_iterator(num_epochs=1.5)
    with pytest.raises(TypeError, match="output_numpy"):
        data.create_dict_iterator(output_numpy=1)


def test_epoch_midway_restart_is_not_possible_but_next_epoch_is(mnist_dir):
    iterator = train(mnist_dir).create_tuple_iterator(num_epochs=2, output_numpy=True)
    first = [int(next(iterator)[1]) for _ in range(3)]
    rest = [int(label) for _, label in iterator]  # the same epoch continues
    assert first + rest == [i % 10 for i in range(20)]
    assert len(list(iterator)) == 20


@pytest.mark.skipif(not hasattr(msrt, "Tensor"), reason="msrt.Tensor is not available yet")
def test_iterators_yield_msrt_tensors(mnist_dir):
    # Labels are cast as LeNet scripts do (MnistDataset's labels are uint32).
    data = train(mnist_dir).map(transforms.TypeCast(np.int32), "label")
    image, label = next(iter(data.batch(4)))
    assert isinstance(image, msrt.Tensor) and isinstance(label, msrt.Tensor)
    np.testing.assert_array_equal(image.asnumpy(), mnist_dir.data["train"][0][:4])
    np.testing.assert_array_equal(label.asnumpy(), [0, 1, 2, 3])
    row = next(data.create_dict_iterator(num_epochs=1))
    assert isinstance(row["label"], msrt.Tensor) and row["label"].shape == ()


# --------------------------------------------------------------------------
# batch: per_batch_map, callable sizes, padding; zip, concat, split; failed calls

def slices(data, names="x"):
    return ds.NumpySlicesDataset(data, names, shuffle=False)


def column(dataset, k=0):
    return [row[k].tolist() for row in rows(dataset)]


def test_per_batch_map_gets_lists_of_rows_and_batch_info():
    seen = []

    def per_batch(xs, ys, info):
        seen.append((len(xs), type(xs), info.get_batch_num(), info.get_epoch_num()))
        return [x * 10 for x in xs], [y + x for x, y in zip(xs, ys)]

    data = slices((np.arange(7), np.arange(7) * 100), ["x", "y"])
    data = data.batch(3, per_batch_map=per_batch, input_columns=["x", "y"])
    assert data.get_col_names() == ["x", "y"]
    iterator = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
    first = [[v.tolist() for v in row] for row in iterator]
    assert first == [[[0, 10, 20], [0, 101, 202]], [[30, 40, 50], [303, 404, 505]], [[60], [606]]]
    list(iterator)
    assert seen == [(3, list, 0, 0), (3, list, 1, 0), (1, list, 2, 0), (3, list, 0, 1), (3, list, 1, 1),
                    (1, list, 2, 1)]


def test_per_batch_map_output_columns_and_default_inputs():
    data = slices((np.arange(4), np.arange(4) + 10), ["x", "y"])
    merged = data.batch(2, per_batch_map=lambda x, info: ([v * 2 for v in x], [v + 1 for v in x]),
                        input_columns="x", output_columns=["a", "b"])
    assert merged.get_col_names() == ["a", "b", "y"]
    expected = [[[0, 2], [1, 2], [10, 11]], [[4, 6], [3, 4], [12, 13]]]
    assert [[v.tolist() for v in row] for row in rows(merged)] == expected
    every = data.batch(2, per_batch_map=lambda x, y, info: (x, [a + b for a, b in zip(x, y)]))  # all columns
    assert column(every, 1) == [[10, 12], [14, 16]]
    with pytest.raises(RuntimeError, match="should return a tuple"):
        rows(data.batch(2, per_batch_map=lambda x, y, info: [x, y]))
    with pytest.raises(RuntimeError, match=r"non-empty columns of equal length, got lengths \[2, 1\]"):
        rows(data.batch(2, per_batch_map=lambda x, y, info: (x, y[:1])))
    with pytest.raises(RuntimeError, match="returned 1 columns, but output_columns names 2"):
        rows(data.batch(2, per_batch_map=lambda x, y, info: (x,)))

    def broken(x, y, info):
        raise IndexError("bad batch")

    with pytest.raises(IndexError, match="bad batch"):
        rows(data.batch(2, per_batch_map=broken))


def test_callable_batch_size():
    data = slices(list(range(6))).batch(lambda info: info.get_batch_num() + 1)
    assert column(data) == [[0], [1, 2], [3, 4, 5]]
    assert data.get_dataset_size() == 3
    per_epoch = slices(list(range(4))).batch(lambda info: info.get_epoch_num() + 1)
    iterator = per_epoch.create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [len(x) for x, in iterator] == [1, 1, 1, 1] and [len(x) for x, in iterator] == [2, 2]
    assert column(slices(list(range(5))).batch(lambda info: 2, drop_remainder=True)) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="positive integer, got 0"):
        rows(slices(list(range(5))).batch(lambda info: 0))


def test_padded_batch_against_numpy():
    ragged = [np.arange(1, n + 1, dtype=np.int32).reshape(1, n) for n in (3, 1, 4, 2, 5)]
    data = ds.GeneratorDataset(lambda: ((r, np.int32(len(rows_))) for rows_ in [ragged] for r in rows_),
                               ["seq", "n"])
    batches = rows(data.padded_batch(2, pad_info={"seq": ([2, None], -1)}))
    for b, batch in enumerate(batches):
        part = ragged[2 * b:2 * b + 2]
        width = max(r.shape[1] for r in part)
        expected = np.full((len(part), 2, width), -1, np.int32)
        for i, r in enumerate(part):
            expected[i, :1, :r.shape[1]] = r
        np.testing.assert_array_equal(batch[0], expected)
    cut = rows(data.batch(5, pad_info={"seq": ([1, 2], 0)}))[0][0]  # MindSpore 1.x spelling; cuts to 2
    np.testing.assert_array_equal(cut, np.stack([np.pad(r[:, :2], ((0, 0), (0, 2 - r[:, :2].shape[1])))
                                                 for r in ragged]))
    largest = rows(data.padded_batch(5, pad_info={}))[0][0]  # every column to the batch's largest, with 0
    assert largest.shape == (5, 1, 5) and largest[1].tolist() == [[1, 0, 0, 0, 0]]
    with pytest.raises(RuntimeError, match="ranks of column 'seq'"):
        rows(data.padded_batch(2, pad_info={"seq": ([4], 0)}))


def test_zip_joins_columns_until_the_shortest_ends(small_blocks):
    left = slices((np.arange(20), np.arange(20) * 2), ["a", "b"])
    right = slices(np.arange(100, 112), "c").batch(1).map(lambda c: c[0], "c")  # blocks of other sizes
    zipped = left.zip(right)
    assert zipped.get_col_names() == ["a", "b", "c"] and zipped.get_dataset_size() == 12
    assert [[int(v) for v in row] for row in rows(zipped)] == [[i, 2 * i, 100 + i] for i in range(12)]
    three = ds.zip((slices([1, 2], "p"), slices([3, 4], "q"), slices([5, 6], "r")))
    assert three.get_col_names() == ["p", "q", "r"] and column(three, 2) == [5, 6]
    with pytest.raises(ValueError, match="just one dataset"):
        ds.zip((left,))
    assert column(left.zip((slices([7], "z"),)), 2) == [7]
    with pytest.raises(RuntimeError, match=r"duplicate column names \['a'\]"):
        left.zip(slices([1], "a"))
    with pytest.raises(TypeError, match="datasets"):
        left.zip([right])


def test_concat_and_plus(small_blocks):
    first, second = slices(np.arange(10)), slices(np.arange(50, 53))
    joined = first + second
    assert joined.get_dataset_size() == 13
    assert [int(x) for x, in rows(joined)] == list(range(10)) + [50, 51, 52]
    three = first.concat([second, slices(np.array([7]))])
    assert [int(x) for x, in rows(three)][-4:] == [50, 51, 52, 7]
    assert [int(x) for x, in rows(joined.repeat(2))] == 2 * (list(range(10)) + [50, 51, 52])
    with pytest.raises(RuntimeError, match="same columns"):
        first + slices([1], "y")
    with pytest.raises(TypeError, match="expected Dataset object"):
        first.concat([second, [1, 2]])


def test_split_by_sizes_and_fractions():
    source = slices(np.arange(10))
    a, b = source.split([4, 6], randomize=False)
    assert ([int(x) for x, in rows(a)], [int(x) for x, in rows(b)]) == (list(range(4)), list(range(4, 10)))
    parts = source.split([0.33, 0.33, 0.34], randomize=False)  # rounds to 3, 3, 3; the extra row goes first
    assert [p.get_dataset_size() for p in parts] == [4, 3, 3]
    config.set_seed(5)
    randomized = [[int(x) for x, in rows(p)] for p in source.split([0.5, 0.5])]
    assert sorted(randomized[0] + randomized[1]) == list(range(10))
    assert randomized[0] != list(range(5))
    again = source.split([0.5, 0.5])[0]
    assert [int(x) for x, in rows(again)] == randomized[0]  # the same order every epoch, from the seed
    piped = source.map(lambda x: x + 100).split([7, 3])  # not a source: shuffle, skip and take
    got = [[int(x) for x, in rows(p)] for p in piped]
    assert [len(g) for g in got] == [7, 3] and sorted(got[0] + got[1]) == list(range(100, 110))
    assert [int(x) for x, in rows(piped[1])] == got[1]


def test_split_errors():
    source = slices(np.arange(10))
    with pytest.raises(RuntimeError, match="Sum of split sizes 9 is not equal to dataset size 10"):
        source.split([4, 5])
    with pytest.raises(ValueError, match="do not sum up to 1"):
        source.split([0.5, 0.4])
    with pytest.raises(ValueError, match="list of int or list of float"):
        source.split([5, 0.5])
    with pytest.raises(ValueError, match="no negative or zero"):
        source.split([10, 0])
    with pytest.raises(TypeError, match="sizes"):
        source.split((5, 5))
    with pytest.raises(RuntimeError, match="too small"):
        source.split([0.01, 0.99])
    with pytest.warns(msrt.MsrtWarning, match="shuffled before split"):
        ds.NumpySlicesDataset(np.arange(10)).split([5, 5])
    with pytest.raises(RuntimeError, match="sharded before split"):
        ds.NumpySlicesDataset(np.arange(10), shuffle=False, num_shards=2, shard_id=0).split([2, 3])


def test_a_failed_map_or_batch_leaves_the_pipeline_as_it_was():
    data = slices((np.arange(6), np.arange(6) * 2), ["x", "y"]).map(lambda x: x + 1, "x")
    before = (data.get_col_names(), data.get_dataset_size(), column(data, 0), list(data.children))
    failures = [
        lambda: data.map(lambda x: x, "missing"),
        lambda: data.map(lambda x: x, "x", "y"),
        lambda: data.map([lambda x: x, 5], "x"),
        lambda: data.batch(0),
        lambda: data.batch(2, per_batch_map=lambda x, info: (x,), input_columns="nope"),
        lambda: data.batch(2, per_batch_map=lambda x, info: (x,), input_columns="x", output_columns="y"),
        lambda: data.padded_batch(2, pad_info={"z": None}),
    ]
    for failure in failures:
        with pytest.raises((TypeError, ValueError, RuntimeError)):
            failure()
        assert (data.get_col_names(), data.get_dataset_size(), column(data, 0), list(data.children)) == before
    assert column(data.batch(3), 0) == [[1, 2, 3], [4, 5, 6]]


def test_map_refuses_a_cache_and_callbacks_it_would_not_honour():
    data = ds.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False)
    with pytest.raises(ValueError, match="cache=None"):
        data.map(lambda x: x, cache=object())
    with pytest.raises(ValueError, match="DSCallback"):
        data.map(lambda x: x, callbacks=[object()])
    # Each refusal says what was given and what to pass instead, and leaves the pipeline as it was.
    with pytest.raises(ValueError, match=r"pass callbacks=None, but got \['cb'\]"):
        data.map(lambda x: x, callbacks=["cb"])
    with pytest.raises(TypeError, match=r"decrypt with value 'key' is not callable"):
        ds.ImageFolderDataset(".", decrypt="key")
    assert data.get_col_names() == ["x"] and data.get_dataset_size() == 4
