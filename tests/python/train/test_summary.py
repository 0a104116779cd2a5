"""History, SummaryCollector and the summary file (msrt.train.summary): the framing and
the Event protobuf checked with an independent CRC-32C and Google's protobuf runtime."""
import os
import struct

import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.train import summary

from .summaryfile import message_class, only_file


def _crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked(data):
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _records(raw):
    """The data of each record, checking both masked CRCs independently."""
    out, pos = [], 0
    while pos < len(raw):
        (length,) = struct.unpack_from("<Q", raw, pos)
        assert struct.unpack_from("<I", raw, pos + 8)[0] == _masked(raw[pos:pos + 8])
        data = raw[pos + 12:pos + 12 + length]
        assert struct.unpack_from("<I", raw, pos + 12 + length)[0] == _masked(data)
        out.append(data)
        pos += 16 + length
    return out


def _event_class():
    """MindSpore's Event/Summary messages (the fields msrt uses, and an image) for Google's protobuf."""
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="msrt_test_summary.proto", package="msrt_test", syntax="proto2")
    F = descriptor_pb2.FieldDescriptorProto  # noqa: N806 - protobuf's own spelling
    event = fdp.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".msrt_test.Summary")
    summ = fdp.message_type.add(name="Summary")
    summ.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                   type_name=".msrt_test.Summary.Value")
    image = summ.nested_type.add(name="Image")
    image.field.add(name="encoded_image", number=4, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    value = summ.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="scalar_value", number=3, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    value.field.add(name="image", number=4, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".msrt_test.Summary.Image")
    return message_class(fdp, "msrt_test.Event")


def test_summary_record_writes_framed_events_protobuf_reads(tmp_path):
    pytest.importorskip("google.protobuf")
    with ms.SummaryRecord(str(tmp_path), file_prefix="run") as record:
        record.add_value("scalar", "loss", ms.Tensor(np.array(0.25, np.float32)))
        record.add_value("scalar", "acc", 0.75)
        assert record.record(3)
        assert not record.record(4)  # nothing queued
        record.add_value("scalar", "loss", np.float64(-1.5))
        record.record(7)
    path = only_file(tmp_path)
    name = os.path.basename(path)
    assert name.startswith("run.out.events.summary.") and name.endswith("_MS") and f".{os.getpid()}_" in name
    event_class = _event_class()
    events = [event_class.FromString(bytes(d)) for d in _records(open(path, "rb").read())]
    assert [e.step for e in events] == [0, 3, 7]
    assert events[0].version == "MindSpore.Event:1" and not events[0].HasField("summary")
    assert [(v.tag, v.scalar_value) for v in events[1].summary.value] == [("loss", 0.25), ("acc", 0.75)]
    assert [(v.tag, v.scalar_value) for v in events[2].summary.value] == [("loss", -1.5)]
    assert read_back(path) == {"loss": [(3, 0.25), (7, -1.5)], "acc": [(3, 0.75)]}


def read_back(path):
    return summary.read_scalars(path)


def test_read_summary_reads_protobuf_written_events_and_skips_unknown_fields(tmp_path):
    pytest.importorskip("google.protobuf")
    event_class = _event_class()
    first = event_class(wall_time=1.0, step=0, version="Mindspore.Event:1")
    second = event_class(wall_time=2.5, step=-3)
    value = second.summary.value.add(tag="lr", scalar_value=0.125)
    value = second.summary.value.add(tag="picture")
    value.image.encoded_image = b"\x89PNG"
    raw = b""
    for event in (first, second):
        data = event.SerializeToString()
        header = struct.pack("<Q", len(data))
        raw += header + struct.pack("<I", _masked(header)) + data + struct.pack("<I", _masked(data))
    path = tmp_path / "events.out.events.summary.1.1_host_MS"
    path.write_bytes(raw)
    events = summary.read_summary(path)
    assert [(e.wall_time, e.step, e.version) for e in events] == [(1.0, 0, "Mindspore.Event:1"), (2.5, -3, None)]
    assert events[1].values == {"lr": 0.125}


def test_read_summary_rejects_damaged_files(tmp_path):
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("scalar", "loss", 1.0)
        record.record(1)
    raw = bytearray(open(only_file(tmp_path), "rb").read())
    damaged = tmp_path / "damaged"
    for position, message in ((len(raw) - 6, "data checksum of the record at byte"),
                              (len(raw) - 1, "data checksum"),
                              (2, "length checksum of the record at byte 0")):
        copy = bytearray(raw)
        copy[position] ^= 0x01
        damaged.write_bytes(bytes(copy))
        with pytest.raises(ValueError, match=message):
            summary.read_summary(damaged)
    damaged.write_bytes(bytes(raw[:-3]))
    with pytest.raises(ValueError, match="truncated"):
        summary.read_summary(damaged)
    damaged.write_bytes(bytes(raw[:5]))
    with pytest.raises(ValueError, match="truncated record header at byte 0"):
        summary.read_summary(damaged)
    with pytest.raises(OSError):
        summary.read_summary(tmp_path / "absent")


def test_summary_record_never_writes_through_a_symlink(tmp_path, monkeypatch):
    monkeypatch.setattr(summary.time, "time", lambda: 1234.0)
    target = tmp_path / "precious"
    target.write_bytes(b"keep")
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    name = f"events.out.events.summary.1234.{os.getpid()}_{summary.socket.gethostname()}_MS"
    os.symlink(target, log_dir / name)
    with pytest.raises(FileExistsError):
        ms.SummaryRecord(str(log_dir))
    assert target.read_bytes() == b"keep"


def test_summary_record_stops_at_max_file_size(tmp_path):
    with ms.SummaryRecord(str(tmp_path), max_file_size=120) as record:
        written = []
        for step in range(1, 6):
            record.add_value("scalar", "loss", float(step))
            written.append(record.record(step))
    path = only_file(tmp_path)
    assert os.path.getsize(path) <= 120
    kept = summary.read_scalars(path)["loss"]
    assert written == [True] * len(kept) + [False] * (5 - len(kept)) and 1 <= len(kept) < 5
    assert kept == [(s, float(s)) for s in range(1, len(kept) + 1)]
    with pytest.raises(ValueError, match="max_file_size"):
        ms.SummaryRecord(str(tmp_path), max_file_size=0)


def test_summary_record_argument_errors(tmp_path):
    record = ms.SummaryRecord(str(tmp_path))
    with pytest.raises(ValueError, match="no such plugin of 'images'"):
        record.add_value("images", "x", 1.0)
    with pytest.raises(ValueError, match="does not record the plugin 'graph'"):
        record.add_value("graph", "x", 1.0)
    with pytest.raises(TypeError, match="to be Tensor"):
        record.add_value("image", "x", np.zeros((1, 3, 2, 2), np.float32))
    with pytest.raises(ValueError, match="valid image"):
        record.add_value("image", "x", ms.Tensor(np.zeros((3, 2, 2), np.float32)))
    with pytest.raises(ValueError, match="1 or 3 channels"):
        record.add_value("image", "x", ms.Tensor(np.zeros((1, 2, 2, 2), np.float32)))
    with pytest.raises(ValueError, match="1 or 3 channels"):
        record.add_value("image", "x", ms.Tensor(np.zeros((0, 3, 2, 2), np.float32)))
    for plugin in ("tensor", "histogram"):
        with pytest.raises(ValueError, match="should not be empty"):
            record.add_value(plugin, "x", ms.Tensor(np.float32(1.0)))
    with pytest.raises(ValueError, match="name"):
        record.add_value("tensor", "", ms.Tensor(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="plugin_filter"):
        record.record(1, plugin_filter="scalar")
    assert not record.record(1)  # the failed calls queued nothing
    with pytest.raises(ValueError, match="shape \\[2\\]"):
        record.add_value("scalar", "x", ms.Tensor(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="Tensor or a number"):
        record.add_value("scalar", "x", "1.0")
    with pytest.raises(TypeError, match="step"):
        record.record(1.5)
    record.close()
    with pytest.raises(ValueError, match="closed"):
        record.add_value("scalar", "x", 1.0)
    with pytest.raises(TypeError, match="file_prefix"):
        ms.SummaryRecord(str(tmp_path), file_prefix=1)
    with pytest.raises(TypeError, match="log_dir"):
        ms.SummaryRecord(3)


def _fit(tmp_path, callbacks, epochs=3):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(40, 2)).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0]], np.float32)).astype(np.float32)
    data = ds.NumpySlicesDataset((xs, ys), ["x", "y"], shuffle=False).batch(10)
    ms.set_seed(0)
    net = nn.Dense(2, 1)
    model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1), metrics={"mae", "mse"})
    step_losses = []
    record = ms.train.LambdaCallback(on_train_step_end=lambda rc: step_losses.append(
        float(rc.original_args().net_outputs.asnumpy())))
    model.fit(epochs, data, data, callbacks=[record] + callbacks)
    return model, data, step_losses


def test_history_records_loss_and_metrics_per_epoch(tmp_path):
    history = ms.History()
    model, data, step_losses = _fit(tmp_path, [history])
    assert history.epoch == [1, 2, 3]
    # the output of each epoch's last step (4 steps an epoch)
    np.testing.assert_allclose(history.history["net_output"], [step_losses[3], step_losses[7], step_losses[11]])
    assert sorted(history.history) == ["mae", "mse", "net_output"]
    final = model.eval(data)
    np.testing.assert_allclose(history.history["mae"][-1], final["mae"], rtol=1e-6)
    np.testing.assert_allclose(history.history["mse"][-1], final["mse"], rtol=1e-6)
    assert history.history["mse"][0] > history.history["mse"][-1]
    model.eval(data, callbacks=[history])  # evaluation neither records nor resets
    assert history.epoch == [1, 2, 3] and len(history.history["net_output"]) == 3
    model.train(1, data, callbacks=[history])
    assert history.epoch == [1] and len(history.history["net_output"]) == 4


def test_summary_collector_writes_loss_lr_and_eval_metrics(tmp_path):
    history = ms.History()
    collector = ms.SummaryCollector(str(tmp_path / "summary"), collect_freq=3)
    with pytest.warns(ms.MsrtWarning, match="not an image"):  # the input data here is (10, 2)
        _, _, step_losses = _fit(tmp_path, [history, collector])
    scalars = summary.read_scalars(only_file(tmp_path / "summary"))
    steps = [1, 3, 6, 9, 12]
    assert [s for s, _ in scalars["loss"]] == steps
    np.testing.assert_allclose([v for _, v in scalars["loss"]], [step_losses[s - 1] for s in steps], rtol=1e-6)
    assert scalars["learning_rate"] == [(s, np.float32(0.1).item()) for s in steps]
    assert [s for s, _ in scalars["eval/mae"]] == [4, 8, 12]
    np.testing.assert_allclose([v for _, v in scalars["eval/mae"]], history.history["mae"], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in scalars["eval/mse"]], history.history["mse"], rtol=1e-6)


def test_summary_collector_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="collect_freq' must be greater than 0"):
        ms.SummaryCollector(str(tmp_path), collect_freq=0)
    with pytest.raises(TypeError, match="collect_freq"):
        ms.SummaryCollector(str(tmp_path), collect_freq=1.0)
    with pytest.raises(TypeError, match="summary_dir"):
        ms.SummaryCollector(None)
    with pytest.raises(ValueError, match="'collect_everything'"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"collect_everything": True})
    with pytest.raises(TypeError, match="collect_metric"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"collect_metric": 1})
    with pytest.warns(ms.MsrtWarning, match="does not collect 'collect_graph'"):
        ms.SummaryCollector(str(tmp_path), collect_specified_data={"collect_graph": True})
    assert os.listdir(tmp_path) == []  # nothing written before training begins


def test_read_summary_on_random_event_bytes_raises_value_error_only(tmp_path):
    """Random record bodies with valid framing exercise the Event decoder: each
    file reads or raises ValueError, never another exception."""
    rng = np.random.default_rng(7)
    with ms.SummaryRecord(str(tmp_path / "seed")) as record:
        record.add_value("scalar", "loss", 0.5)
        record.record(2)
    valid = _records(open(only_file(tmp_path / "seed"), "rb").read())[1]
    path = tmp_path / "fuzzed"
    outcomes = set()
    for trial in range(300):
        data = bytearray(valid)
        if trial % 2:
            data = bytearray(rng.integers(0, 256, int(rng.integers(0, 40)), dtype=np.uint8).tobytes())
        else:
            for _ in range(int(rng.integers(1, 4))):
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        header = struct.pack("<Q", len(data))
        path.write_bytes(header + struct.pack("<I", _masked(header)) + bytes(data)
                         + struct.pack("<I", _masked(bytes(data))))
        try:
            summary.read_summary(path)
            outcomes.add("read")
        except ValueError:
            outcomes.add("ValueError")
    assert outcomes == {"read", "ValueError"}
