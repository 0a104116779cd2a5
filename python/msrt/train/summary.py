"""Summary files, as `mindspore.SummaryRecord` writes them, and a reader.

Layout (MindSpore's summary format, the TFRecord framing TensorBoard also reads):
a file is a sequence of records, each

    uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
    length bytes of data          | uint32 masked CRC-32C of the data

where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32). The data
is a protobuf `Event` (MindSpore's summary.proto): wall_time = 1 (double),
step = 2 (int64), version = 3 (string; the first record, "MindSpore.Event:1") or
summary = 5 (`Summary { repeated Value value = 1 }`, `Value { tag = 1 (string);
scalar_value = 3 (float) | image = 4 | tensor = 8 | histogram = 9 }`; the last
three are described in msrt.train._summary_values). msrt writes and reads the
plugins "scalar", "image", "tensor" and "histogram"; a reader skips the fields it
does not know, as protobuf readers do. The layout was taken from MindSpore's
published summary.proto and anf_ir.proto; no file written by MindSpore or read by
MindInsight has been tried.

Files are created with O_EXCL|O_NOFOLLOW under a fresh name (never through a
symlink, never over an existing file) and only appended to; each record goes
out in one write and `flush()` fsyncs. A crash can leave at most a torn last
record, which `read_summary` reports as ValueError naming the offset.
"""
import os
import socket
import struct
import time
import warnings

import numpy as np

from .. import _C, _files, _summary_data
from .._warnings import MsrtWarning
from . import _summary_values as _values
from ._protobuf import fields as _fields
from ._protobuf import key, length_delimited, varint

__all__ = ["SummaryRecord", "SummaryEvent", "SummaryImage", "SummaryHistogram", "read_summary", "read_scalars",
           "read_values"]

SummaryImage = _values.SummaryImage
SummaryHistogram = _values.SummaryHistogram

_VERSION = "MindSpore.Event:1"
_MASK_DELTA = 0xA282EAD8


def _masked_crc(data):
    crc = _C._crc32c(bytes(data))
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _frame(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data))


def _encode_event(wall_time, step, version=None, values=None):
    """An Event: the version, or the Summary of `values`, (tag, bytes of the Value's oneof field) pairs."""
    out = key(1, 1) + struct.pack("<d", wall_time) + key(2, 0) + varint(step)
    if version is not None:
        return out + length_delimited(3, version.encode("utf-8"))
    summary = b"".join(length_delimited(1, length_delimited(1, tag.encode("utf-8")) + field) for tag, field in values)
    return out + length_delimited(5, summary)


class SummaryEvent:
    """One event of a summary file: wall_time, step, and either version (the
    file's first event) or the values by plugin, each {tag: value}: values (the
    scalars, floats), images (SummaryImage), tensors (numpy arrays) and histograms
    (SummaryHistogram)."""

    __slots__ = ("wall_time", "step", "version", "values", "images", "tensors", "histograms")

    def __init__(self, wall_time, step, version, values, images=None, tensors=None, histograms=None):
        self.wall_time = wall_time
        self.step = step
        self.version = version
        self.values = values
        self.images = {} if images is None else images
        self.tensors = {} if tensors is None else tensors
        self.histograms = {} if histograms is None else histograms

    def __repr__(self):
        extra = "".join(f", {name}={sorted(getattr(self, name))}" for name in ("images", "tensors", "histograms")
                        if getattr(self, name))
        return f"SummaryEvent(step={self.step}, version={self.version!r}, values={self.values}{extra})"


_DECODERS = {4: ("images", _values.decode_image), 8: ("tensors", _values.decode_tensor),
             9: ("histograms", _values.decode_histogram)}


def _decode_event(data):
    event = SummaryEvent(0.0, 0, None, {})
    for field, wire_type, value in _fields(data, 0, len(data)):
        if field == 1 and wire_type == 1:
            event.wall_time = struct.unpack("<d", value)[0]
        elif field == 2 and wire_type == 0:
            event.step = value - (1 << 64) if value >= 1 << 63 else value
        elif field == 3 and wire_type == 2:
            event.version = bytes(data[value[0]:value[1]]).decode("utf-8")
        elif field == 5 and wire_type == 2:
            for vfield, vtype, vvalue in _fields(data, *value):
                if vfield != 1 or vtype != 2:
                    continue
                tag, found = None, []
                for f, t, v in _fields(data, *vvalue):
                    if f == 1 and t == 2:
                        tag = bytes(data[v[0]:v[1]]).decode("utf-8")
                    elif f == 3 and t == 5:
                        found.append(("values", struct.unpack("<f", v)[0]))
                    elif f in _DECODERS and t == 2:
                        name, decode = _DECODERS[f]
                        found.append((name, decode(data, *v)))
                if tag is None:
                    raise ValueError("a Summary.Value has no tag")
                for name, decoded in found[-1:]:  # a oneof: the last one read wins
                    getattr(event, name)[tag] = decoded
    return event


def read_summary(path):
    """The events of the summary file `path`, in order (a list of SummaryEvent).

    ValueError, naming the path and byte offset, for a record whose length or
    data checksum does not match, a truncated record, or a malformed Event;
    OSError for a file that cannot be read.
    """
    path = _files.fspath(path, "read_summary", "path")
    data = memoryview(_files.read(path))
    events, pos = [], 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError(f"Summary file '{path}': truncated record header at byte {pos}.")
        header = data[pos:pos + 8]
        if struct.unpack("<I", data[pos + 8:pos + 12])[0] != _masked_crc(header):
            raise ValueError(f"Summary file '{path}': the length checksum of the record at byte {pos} "
                             f"does not match.")
        length = struct.unpack("<Q", header)[0]
        start = pos + 12
        if length > len(data) - start - 4:
            raise ValueError(f"Summary file '{path}': the record at byte {pos} is truncated "
                             f"({length} bytes of data announced, {max(len(data) - start - 4, 0)} present).")
        record = data[start:start + length]
        if struct.unpack("<I", data[start + length:start + length + 4])[0] != _masked_crc(record):
            raise ValueError(f"Summary file '{path}': the data checksum of the record at byte {pos} "
                             f"does not match.")
        try:
            events.append(_decode_event(record))
        except (ValueError, UnicodeDecodeError, struct.error) as e:
            raise ValueError(f"Summary file '{path}': the record at byte {pos} is not a valid Event: {e}.") from None
        pos = start + length + 4
    return events


def read_scalars(path):
    """{tag: [(step, value), ...]} of the scalars in the summary file `path`."""
    return read_values(path, "scalar")


_EVENT_FIELD = {"scalar": "values", "image": "images", "tensor": "tensors", "histogram": "histograms"}


def read_values(path, plugin):
    """{tag: [(step, value), ...]} of the values of `plugin` ("scalar", "image", "tensor" or
    "histogram") in the summary file `path`."""
    if plugin not in _EVENT_FIELD:
        raise ValueError(f"For 'read_values', the argument 'plugin' must be one of {list(_EVENT_FIELD)}, "
                         f"but got {plugin!r}.")
    out = {}
    for event in read_summary(path):
        for tag, value in getattr(event, _EVENT_FIELD[plugin]).items():
            out.setdefault(tag, []).append((event.step, value))
    return out


def _scalar_value(name, value):
    from .._tensor import Tensor

    if isinstance(value, Tensor):
        value = value.asnumpy()
    if isinstance(value, bool) or not isinstance(value, (int, float, np.ndarray, np.number)):
        raise TypeError(f"For 'add_value', the value of '{name}' must be a Tensor or a number, "
                        f"but got {type(value).__name__}.")
    array = np.asarray(value)
    if array.dtype.kind not in "iuf" or array.size != 1 or array.ndim > 1:
        raise ValueError(f"For 'add_value', a scalar must be a number or a Tensor of one element (0-D or 1-D), "
                         f"but '{name}' has shape {list(array.shape)} and dtype {array.dtype}.")
    return key(3, 5) + struct.pack("<f", float(array.reshape(())))


def _array_value(plugin, name, value):
    """The bytes of the Value field of a Tensor `value` for the plugin "image", "tensor" or "histogram"."""
    from .._tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError(f"For 'add_value', expect the value of '{name}' to be Tensor for the plugin {plugin!r}, "
                        f"but got {type(value).__name__}.")
    array = value.asnumpy()
    if plugin == "image":
        _values.check_image(name, array)
        return _values.encode_image(array)
    _values.check_tensor(name, array)
    return _values.encode_tensor(array) if plugin == "tensor" else _values.encode_histogram(array)


_PLUGINS = ("scalar", "image", "tensor", "histogram")
# MindSpore's other plugins, which msrt does not record
_UNSUPPORTED_PLUGINS = ("graph", "train_lineage", "eval_lineage", "dataset_graph", "custom_lineage_data",
                        "LossLandscape")


class SummaryRecord:
    """Writes scalars, images, tensors and histograms to a summary file in
    `log_dir`, named as MindSpore names it:
    {file_prefix}.out.events.summary.{seconds}.{pid}_{hostname}{file_suffix};
    a rank of a distributed job writes it in `log_dir`/rank_<id>.

        with SummaryRecord("./summary") as record:
            record.add_value("scalar", "loss", loss)
            record.add_value("histogram", "fc.weight", net.fc.weight)
            record.record(step)

    The plugins "graph", "train_lineage", "eval_lineage", "dataset_graph",
    "custom_lineage_data" and "LossLandscape" are not recorded by msrt: add_value
    raises ValueError for them.
    """

    def __init__(self, log_dir, file_prefix="events", file_suffix="_MS", num_process=32, network=None,
                 max_file_size=None, raise_exception=False, export_options=None):
        log_dir = _files.fspath(log_dir, "SummaryRecord", "log_dir")
        for name, value in (("file_prefix", file_prefix), ("file_suffix", file_suffix)):
            if not isinstance(value, str):
                raise TypeError(f"For 'SummaryRecord', the argument '{name}' must be a str, "
                                f"but got {type(value).__name__}.")
            if "/" in value or "\0" in value:
                raise ValueError(f"For 'SummaryRecord', the argument '{name}' must not hold '/' or NUL, "
                                 f"but got {value!r}.")
        if max_file_size is not None and (not isinstance(max_file_size, int) or isinstance(max_file_size, bool)
                                          or max_file_size <= 0):
            raise ValueError(f"For 'SummaryRecord', the argument 'max_file_size' must be a positive int or None, "
                             f"but got {max_file_size!r}.")
        # A rank of a distributed job writes under <log_dir>/rank_<id>.
        place = _files.rank_place(log_dir)
        _files.make_dirs(place)
        _summary_data.take()  # what summary ops stored before this record began is not its own
        self._mode = "train"
        self.log_dir = log_dir
        self._max_file_size = max_file_size
        self._pending = []
        self._closed = True  # until the file is open
        self._raise = bool(raise_exception)
        name = f"{file_prefix}.out.events.summary.{int(time.time())}.{os.getpid()}_{socket.gethostname()}{file_suffix}"
        self.full_file_name = os.path.join(os.path.realpath(place), name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(self.full_file_name, flags, 0o644)
        self._closed = False
        self._size = 0
        try:
            self._write(_encode_event(time.time(), 0, version=_VERSION))
        except BaseException:
            self.close()
            raise

    def _write(self, data):
        record = _frame(data)
        if self._max_file_size is not None and self._size + len(record) > self._max_file_size:
            return False
        view = memoryview(record)
        while view:
            view = view[os.write(self._fd, view):]
        self._size += len(record)
        return True

    def add_value(self, plugin, name, value):
        """Queues `value` under tag `name` for the next record(): for "scalar" a number or a
        one-element Tensor; for "image" a 4-D NCHW Tensor with 1 or 3 channels; for "tensor"
        and "histogram" a Tensor of one dimension or more. The value is converted now, so a
        later change to the Tensor is not recorded. A second value of the same plugin and tag
        before record() replaces the first, with a warning, as in MindSpore."""
        if self._closed:
            raise ValueError("The SummaryRecord has been closed.")
        if not isinstance(plugin, str):
            raise TypeError(f"For 'add_value', the argument 'plugin' must be a str, but got {type(plugin).__name__}.")
        if plugin in _UNSUPPORTED_PLUGINS:
            raise ValueError(f"For 'add_value', msrt does not record the plugin {plugin!r}; it records "
                             f"{list(_PLUGINS)}.")
        if plugin not in _PLUGINS:
            raise ValueError(f"For 'add_value', no such plugin of {plugin!r}; the plugins are {list(_PLUGINS)}.")
        if not isinstance(name, str) or not name:
            raise ValueError(f"For 'add_value', the argument 'name' must be a non-empty str, but got {name!r}.")
        field = _scalar_value(name, value) if plugin == "scalar" else _array_value(plugin, name, value)
        for i, (queued_plugin, queued_name, _) in enumerate(self._pending):
            if (queued_plugin, queued_name) == (plugin, name):
                warnings.warn(f"'{name}/{plugin}' has duplicate values. Only the newest one will be recorded.",
                              stacklevel=2)
                del self._pending[i]
                break
        self._pending.append((plugin, name, field))

    def set_mode(self, mode):
        """'train' or 'eval': in 'eval' mode record() leaves the values of summary ops alone."""
        if mode not in ("train", "eval"):
            raise ValueError(f"{mode!r} is not a recognized mode.")
        self._mode = mode

    def record(self, step, train_network=None, plugin_filter=None):
        """Writes the queued values as one event at `step` and empties the queue; in train
        mode the values the summary ops (ops.ScalarSummary, ...) handed over since the last
        record come first. With `plugin_filter` (a function of the plugin name) only the
        values of the plugins it returns True for are written. False when nothing was
        written (nothing queued or passing the filter, or max_file_size reached)."""
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise TypeError(f"For 'record', the argument 'step' must be an int, but got {type(step).__name__}.")
        if plugin_filter is not None and not callable(plugin_filter):
            raise TypeError(f"For 'record', the argument 'plugin_filter' must be callable or None, "
                            f"but got {type(plugin_filter).__name__}.")
        if self._closed:
            raise ValueError("The SummaryRecord has been closed.")
        if self._mode == "train":
            self._add_summary_op_values()
        pending, self._pending = self._pending, []
        values = [(name, field) for plugin, name, field in pending if plugin_filter is None or plugin_filter(plugin)]
        if not values:
            return False
        return self._write(_encode_event(time.time(), int(step), values=values))

    def _add_summary_op_values(self):
        """Queues what the summary ops handed over; a value add_value refuses (an image of two
        channels) is left out with a warning, as MindSpore logs and leaves it out."""
        for plugin, tag, value in _summary_data.take():
            try:
                self.add_value(plugin, tag, value)
            except (TypeError, ValueError) as e:
                warnings.warn(f"SummaryRecord: the {plugin} summary '{tag}' is not recorded: {e}", MsrtWarning,
                              stacklevel=3)

    def flush(self):
        """Makes what was recorded durable (fsync)."""
        if not self._closed:
            os.fsync(self._fd)

    def close(self):
        if not self._closed:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
                self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *err):
        self.close()

    def __del__(self):
        if getattr(self, "_closed", True) is False:
            self.close()
