"""Image, tensor and histogram values of summary files (msrt.train.summary): what SummaryRecord writes,
checked with Google's protobuf runtime against MindSpore's summary.proto / anf_ir.proto field numbers,
with libpng (msrt's image decoder) and with NumPy; the reader; SummaryCollector collecting input images
and parameter histograms in Model.train."""
import struct
import warnings

import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.dataset.vision.transforms import decode_image
from msrt.train import summary

from .summaryfile import message_class, only_file


def _records(raw):
    out, pos = [], 0
    while pos < len(raw):
        (length,) = struct.unpack_from("<Q", raw, pos)
        out.append(raw[pos + 12:pos + 12 + length])
        pos += 16 + length
    return out


def _event_class():
    """MindSpore's Event, Summary (with Image and Histogram) and TensorProto for Google's protobuf."""
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="msrt_test_summary_values.proto", package="t", syntax="proto2")
    F = descriptor_pb2.FieldDescriptorProto  # noqa: N806 - protobuf's own spelling
    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED

    def add(message, name, number, kind, label=opt, type_name=None, packed=False, oneof=None):
        field = message.field.add(name=name, number=number, type=kind, label=label)
        if oneof is not None:
            field.oneof_index = oneof
        if type_name:
            field.type_name = type_name
        if packed:
            field.options.packed = True

    tensor = fdp.message_type.add(name="TensorProto")
    add(tensor, "dims", 1, F.TYPE_INT64, rep)
    add(tensor, "data_type", 2, F.TYPE_INT32)
    add(tensor, "float_data", 3, F.TYPE_FLOAT, rep, packed=True)
    event = fdp.message_type.add(name="Event")
    add(event, "wall_time", 1, F.TYPE_DOUBLE)
    add(event, "step", 2, F.TYPE_INT64)
    add(event, "version", 3, F.TYPE_STRING)
    add(event, "summary", 5, F.TYPE_MESSAGE, type_name=".t.Summary")
    summ = fdp.message_type.add(name="Summary")
    add(summ, "value", 1, F.TYPE_MESSAGE, rep, ".t.Summary.Value")
    image = summ.nested_type.add(name="Image")
    for number, name in enumerate(("height", "width", "colorspace"), 1):
        add(image, name, number, F.TYPE_INT32)
    add(image, "encoded_image", 4, F.TYPE_BYTES)
    hist = summ.nested_type.add(name="Histogram")
    bucket = hist.nested_type.add(name="bucket")
    add(bucket, "left", 1, F.TYPE_DOUBLE)
    add(bucket, "width", 2, F.TYPE_DOUBLE)
    add(bucket, "count", 3, F.TYPE_INT64)
    add(hist, "buckets", 1, F.TYPE_MESSAGE, rep, ".t.Summary.Histogram.bucket")
    for number, name in ((2, "nan_count"), (3, "pos_inf_count"), (4, "neg_inf_count"), (8, "count")):
        add(hist, name, number, F.TYPE_INT64)
    for number, name in ((5, "max"), (6, "min"), (7, "sum")):
        add(hist, name, number, F.TYPE_DOUBLE)
    value = summ.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    add(value, "tag", 1, F.TYPE_STRING)
    add(value, "scalar_value", 3, F.TYPE_FLOAT, oneof=0)
    add(value, "image", 4, F.TYPE_MESSAGE, type_name=".t.Summary.Image", oneof=0)
    add(value, "tensor", 8, F.TYPE_MESSAGE, type_name=".t.TensorProto", oneof=0)
    add(value, "histogram", 9, F.TYPE_MESSAGE, type_name=".t.Summary.Histogram", oneof=0)
    return message_class(fdp, "t.Event")


def _expected_histogram(array):
    """MindSpore's histogram of `array`, computed here from its definition with numpy's masked arrays."""
    masked = np.ma.masked_invalid(array)
    valid = masked.count()
    out = dict(count=array.size, nan_count=int(np.isnan(array).sum()) if array.dtype.kind == "f" else 0,
               pos_inf_count=int(np.isposinf(array).sum()) if array.dtype.kind == "f" else 0,
               neg_inf_count=int(np.isneginf(array).sum()) if array.dtype.kind == "f" else 0, buckets=[])
    if not valid:
        out.update(min=0.0, max=0.0, sum=0.0)
        return out
    low, high = float(masked.min()), float(masked.max())
    out.update(min=low, max=high, sum=float(masked.sum(dtype=np.float64)))
    bins = 1 if not valid else 2 if valid <= 5 else 3 if valid <= 10 else valid // 10 + 1 if valid <= 880 else 90
    first, last = (low, high) if low < high else (low - 0.5, high + 0.5)
    counts, edges = np.histogram(masked.compressed(), bins=np.linspace(first, last, bins + 1, dtype=array.dtype))
    out["buckets"] = [(float(a), float(b - a), int(c)) for a, b, c in zip(edges, edges[1:], counts)]
    return out


HISTOGRAM_CASES = {
    "normal_1000": np.random.default_rng(1).normal(size=(10, 100)).astype(np.float32),
    "normal_5000": np.random.default_rng(2).normal(size=5000).astype(np.float32),
    "four": np.array([1.0, 2.0, 2.5, 4.0], np.float64),
    "eight": np.arange(8, dtype=np.float32) ** 2,
    "ints": np.arange(-7, 40, dtype=np.int32),
    "constant": np.full((3, 3), 2.5, np.float32),
    "with_nan_inf": np.array([np.nan, 1.0, np.inf, -np.inf, 3.0, 2.0, np.nan], np.float32),
    "all_nan": np.array([np.nan, np.nan], np.float32),
    "float16": np.linspace(-2, 2, 37).astype(np.float16),
}


@pytest.mark.parametrize("case", sorted(HISTOGRAM_CASES))
def test_histogram_buckets_follow_mindspore_definition(tmp_path, case):
    pytest.importorskip("google.protobuf")
    array = HISTOGRAM_CASES[case]
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("histogram", "h", ms.Tensor(array))
        record.record(5)
    path = only_file(tmp_path)
    want = _expected_histogram(array)
    # read with Google's protobuf
    event = _event_class().FromString(bytes(_records(open(path, "rb").read())[1]))
    (value,) = event.summary.value
    assert value.tag == "h" and value.WhichOneof("value") == "histogram"
    h = value.histogram
    got = dict(count=h.count, nan_count=h.nan_count, pos_inf_count=h.pos_inf_count, neg_inf_count=h.neg_inf_count,
               min=h.min, max=h.max, sum=h.sum, buckets=[(b.left, b.width, b.count) for b in h.buckets])
    assert got == want
    assert sum(c for _, _, c in got["buckets"]) + got["nan_count"] + got["pos_inf_count"] + got["neg_inf_count"] \
        == array.size
    # and with msrt's reader
    [(step, read)] = summary.read_values(path, "histogram")["h"]
    assert step == 5
    assert read.buckets == want["buckets"] and read.count == array.size and read.sum == want["sum"]
    assert (read.min, read.max, read.nan_count) == (want["min"], want["max"], want["nan_count"])


def test_histogram_bucket_numbers():
    from msrt.train._summary_values import bucket_count

    counts = [bucket_count(n) for n in (0, 1, 5, 6, 10, 11, 879, 880, 881, 10 ** 6)]
    assert counts == [1, 2, 2, 3, 3, 2, 88, 89, 90, 90]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_tensor_values_round_trip(tmp_path, dtype):
    pytest.importorskip("google.protobuf")
    array = (np.random.default_rng(3).normal(size=(2, 3, 4)) * 50).astype(dtype)
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("tensor", "t", ms.Tensor(array))
        record.record(2)
    path = only_file(tmp_path)
    event = _event_class().FromString(bytes(_records(open(path, "rb").read())[1]))
    tensor = event.summary.value[0].tensor
    data_types = {np.float32: 11, np.float64: 12, np.float16: 10, np.int32: 4, np.int64: 5, np.uint8: 6, np.bool_: 1}
    assert list(tensor.dims) == [2, 3, 4] and tensor.data_type == data_types[dtype]
    np.testing.assert_array_equal(np.array(tensor.float_data, np.float32), array.reshape(-1).astype(np.float32))
    [(step, read)] = summary.read_values(path, "tensor")["t"]
    assert step == 2 and read.dtype == array.dtype
    np.testing.assert_array_equal(read, array.astype(np.float32).astype(dtype))  # float_data is float32


def _grid(images_hwc, cols=8):
    """The expected canvas: images (N, H, W, 3) in rows of `cols`, black where no image falls."""
    n, h, w, _ = images_hwc.shape
    cols = min(n, cols)
    rows = -(-n // cols)
    canvas = np.zeros((rows * h, cols * w, 3), np.uint8)
    for i in range(n):
        canvas[(i // cols) * h:(i // cols + 1) * h, (i % cols) * w:(i % cols + 1) * w] = images_hwc[i]
    return canvas


def test_image_values_png_and_scaling(tmp_path):
    pytest.importorskip("google.protobuf")
    rng = np.random.default_rng(4)
    rgb_u8 = rng.integers(0, 256, size=(10, 3, 5, 4), dtype=np.uint8)  # ten images: a 2 x 8 grid
    gray_unit = rng.uniform(0, 1, size=(2, 1, 3, 6)).astype(np.float32)
    wide = rng.uniform(-3, 7, size=(1, 3, 4, 4)).astype(np.float32)
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("image", "rgb", ms.Tensor(rgb_u8))
        record.add_value("image", "gray", ms.Tensor(gray_unit))
        record.add_value("image", "wide", ms.Tensor(wide))
        record.record(1)
    path = only_file(tmp_path)
    want = {
        "rgb": _grid(rgb_u8.transpose(0, 2, 3, 1)),
        "gray": _grid((np.repeat(gray_unit, 3, 1) * 255).astype(np.uint8).transpose(0, 2, 3, 1)),
        "wide": _grid(((wide - wide.min()) * (255 / (wide.max() - wide.min() + 1))).astype(np.uint8)
                      .transpose(0, 2, 3, 1)),
    }
    event = _event_class().FromString(bytes(_records(open(path, "rb").read())[1]))
    assert [v.tag for v in event.summary.value] == ["rgb", "gray", "wide"]
    images = summary.read_summary(path)[1].images
    for value in event.summary.value:
        image = value.image
        assert image.encoded_image.startswith(b"\x89PNG\r\n\x1a\n")
        assert (image.height, image.width, image.colorspace) == (want[value.tag].shape[0], want[value.tag].shape[1], 3)
        np.testing.assert_array_equal(decode_image(image.encoded_image), want[value.tag])  # libpng reads it
        read = images[value.tag]
        assert (read.height, read.width, read.colorspace, read.encoded_image) == (
            image.height, image.width, 3, image.encoded_image)
        np.testing.assert_array_equal(read.decode(), want[value.tag])
    assert want["rgb"].shape == (10, 32, 3)


def test_mixed_event_duplicate_tags_and_plugin_filter(tmp_path):
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("scalar", "x", 1.0)
        record.add_value("tensor", "x", x)
        record.add_value("histogram", "x", x)
        with pytest.warns(UserWarning, match="'x/scalar' has duplicate values"):
            record.add_value("scalar", "x", 2.0)
        assert record.record(1)
        record.add_value("scalar", "loss", 0.5)
        record.add_value("tensor", "w", x)
        assert record.record(2, plugin_filter=lambda plugin: plugin == "tensor")
        assert not record.record(3)  # the filtered-out scalar was dropped with the rest
        record.add_value("scalar", "loss", 0.5)
        assert not record.record(4, plugin_filter=lambda plugin: False)
    events = summary.read_summary(only_file(tmp_path))
    assert [e.step for e in events] == [0, 1, 2]
    assert events[1].values == {"x": 2.0} and sorted(events[1].histograms) == ["x"]
    np.testing.assert_array_equal(events[1].tensors["x"], x.asnumpy())
    assert events[2].values == {} and sorted(events[2].tensors) == ["w"]
    with pytest.raises(ValueError, match="plugin"):
        summary.read_values(only_file(tmp_path), "graph")


def test_value_is_taken_when_added(tmp_path):
    param = ms.Parameter(ms.Tensor(np.ones(4, np.float32)), name="p")
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("tensor", "p", param)
        param.set_data(ms.Tensor(np.zeros(4, np.float32)))
        record.record(1)
    np.testing.assert_array_equal(summary.read_values(only_file(tmp_path), "tensor")["p"][0][1], np.ones(4))


class ConvNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=True)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(2 * 4 * 4, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.conv(x)))


def _image_data(n=12, batch=4):
    rng = np.random.default_rng(5)
    xs = rng.uniform(0, 1, size=(n, 1, 6, 6)).astype(np.float32)
    ys = rng.integers(0, 3, size=n).astype(np.int32)
    return xs, ds.NumpySlicesDataset((xs, ys), ["image", "label"], shuffle=False).batch(batch)


def _train(tmp_path, epochs, **collector_args):
    ms.set_seed(0)
    net = ConvNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = ms.train.Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))
    snapshots = {}

    def snapshot(run_context):
        step = run_context.original_args().cur_step_num
        snapshots[step] = {p.name: p.asnumpy().copy() for p in net.trainable_params()}

    xs, data = _image_data()
    collector = ms.SummaryCollector(str(tmp_path), **collector_args)
    model.train(epochs, data, callbacks=[ms.train.LambdaCallback(on_train_step_end=snapshot), collector])
    return xs, snapshots, only_file(tmp_path)


def test_summary_collector_collects_input_images_and_histograms(tmp_path):
    xs, snapshots, path = _train(tmp_path, 2, collect_freq=2, collect_specified_data={"histogram_regular": "^conv"})
    steps = [1, 2, 4, 6]
    images = summary.read_values(path, "image")["input_data/auto"]
    assert [s for s, _ in images] == steps
    for step, image in images:
        batch = xs[((step - 1) % 3) * 4:((step - 1) % 3) * 4 + 4]  # 3 batches of 4 an epoch
        want = _grid((np.repeat(batch, 3, 1) * 255).astype(np.uint8).transpose(0, 2, 3, 1))
        np.testing.assert_array_equal(image.decode(), want)
    histograms = summary.read_values(path, "histogram")
    assert sorted(histograms) == ["conv.bias/auto", "conv.weight/auto"]
    for name in ("conv.weight", "conv.bias"):
        assert [s for s, _ in histograms[f"{name}/auto"]] == steps
        for step, h in histograms[f"{name}/auto"]:
            value = snapshots[step][name]
            assert h.count == value.size and h.min == float(value.min()) and h.max == float(value.max())
            np.testing.assert_allclose(h.sum, value.sum(dtype=np.float64), rtol=1e-6)
            assert h.buckets == _expected_histogram(value)["buckets"]
    assert [s for s, _ in summary.read_scalars(path)["loss"]] == steps


def test_summary_collector_default_first_five_parameters_and_keep_default_action(tmp_path):
    _, _, path = _train(tmp_path / "default", 1, collect_freq=100)
    # ConvNet's optimizer parameters: conv.weight, conv.bias, fc.weight, fc.bias (four, all under five)
    assert sorted(summary.read_values(path, "histogram")) == sorted(
        ["conv.weight/auto", "conv.bias/auto", "fc.weight/auto", "fc.bias/auto"])
    assert [s for s, _ in summary.read_values(path, "image")["input_data/auto"]] == [1]
    _, _, path = _train(tmp_path / "metric_only", 1, collect_specified_data={"collect_metric": True},
                        keep_default_action=False)
    events = summary.read_summary(path)
    assert not any(e.images or e.histograms or e.tensors for e in events)
    assert summary.read_scalars(path)["loss"]
    _, _, path = _train(tmp_path / "no_input", 1, collect_specified_data={"collect_input_data": False})
    assert summary.read_values(path, "image") == {} and summary.read_values(path, "histogram")


def test_summary_collector_first_five_of_many_parameters(tmp_path):
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(2, 3), nn.Dense(3, 3), nn.Dense(3, 1)])
    model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01))
    xs = np.ones((4, 2), np.float32)
    data = ds.NumpySlicesDataset((xs, np.ones((4, 1), np.float32)), ["x", "y"], shuffle=False).batch(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ms.MsrtWarning)  # the (2, 2) input is not an image
        model.train(1, data, callbacks=[ms.SummaryCollector(str(tmp_path))])
    names = [p.name for p in net.trainable_params()][:5]
    assert sorted(summary.read_values(only_file(tmp_path), "histogram")) == sorted(f"{n}/auto" for n in names)


def test_summary_collector_specified_data_errors(tmp_path):
    with pytest.raises(TypeError, match="histogram_regular"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"histogram_regular": 3})
    with pytest.raises(ValueError, match="regular expression"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"histogram_regular": "conv("})
    with pytest.raises(TypeError, match="collect_input_data"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"collect_input_data": "yes"})
    with pytest.raises(ValueError, match="collect_tensor_freq"):
        ms.SummaryCollector(str(tmp_path), collect_tensor_freq=0)
    with pytest.warns(ms.MsrtWarning, match="does not collect 'collect_landscape'"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"collect_landscape": {"landscape_size": 40}})
