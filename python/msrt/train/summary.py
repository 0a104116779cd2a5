"""Summary files, as `mindspore.SummaryRecord` writes them, and a reader.

Layout (MindSpore's summary format, the TFRecord framing TensorBoard also reads):
a file is a sequence of records, each

    uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
    length bytes of data          | uint32 masked CRC-32C of the data

where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32). The data
is a protobuf `Event` (MindSpore's summary.proto): wall_time = 1 (double),
step = 2 (int64), version = 3 (string; the first record, "Mindspore.Event:1") or
summary = 5 (`Summary { repeated Value value = 1 }`, `Value { tag = 1 (string);
scalar_value = 3 (float) }`). msrt writes and reads scalars only; a reader
skips the fields it does not know, as protobuf readers do. The layout was taken
from MindSpore's published summary.proto; no file written by MindSpore or read
by MindInsight has been tried, and the tags SummaryCollector uses ("loss",
"learning_rate", "eval/<metric>") are msrt's choice.

Files are created with O_EXCL|O_NOFOLLOW under a fresh name (never through a
symlink, never over an existing file) and only appended to; each record goes
out in one write and `flush()` fsyncs. A crash can leave at most a torn last
record, which `read_summary` reports as ValueError naming the offset.
"""
import os
import socket
import struct
import time

import numpy as np

from .. import _C, _files

__all__ = ["SummaryRecord", "SummaryEvent", "read_summary", "read_scalars"]

_VERSION = "Mindspore.Event:1"
_MASK_DELTA = 0xA282EAD8


def _masked_crc(data):
    crc = _C._crc32c(bytes(data))
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _frame(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data))


# ---- protobuf wire format, the few types the Event needs

def _varint(value):
    out = bytearray()
    value &= 0xFFFFFFFFFFFFFFFF  # negative int64 as two's complement, as protobuf does
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wire_type):
    return _varint(field << 3 | wire_type)


def _length_delimited(field, payload):
    return _key(field, 2) + _varint(len(payload)) + payload


def _encode_event(wall_time, step, version=None, scalars=None):
    out = _key(1, 1) + struct.pack("<d", wall_time) + _key(2, 0) + _varint(step)
    if version is not None:
        return out + _length_delimited(3, version.encode("utf-8"))
    summary = b"".join(
        _length_delimited(1, _length_delimited(1, tag.encode("utf-8")) + _key(3, 5) + struct.pack("<f", value))
        for tag, value in scalars)
    return out + _length_delimited(5, summary)


def _read_varint(data, pos, end):
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("a varint runs past its message")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def _fields(data, start, end):
    """(field number, wire type, value) of a message in data[start:end]; a
    length-delimited value is its (start, end)."""
    pos = start
    while pos < end:
        key, pos = _read_varint(data, pos, end)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = _read_varint(data, pos, end)
        elif wire_type == 1:
            if pos + 8 > end:
                raise ValueError("a 64-bit field runs past its message")
            value, pos = data[pos:pos + 8], pos + 8
        elif wire_type == 5:
            if pos + 4 > end:
                raise ValueError("a 32-bit field runs past its message")
            value, pos = data[pos:pos + 4], pos + 4
        elif wire_type == 2:
            size, pos = _read_varint(data, pos, end)
            if pos + size > end:
                raise ValueError("a length-delimited field runs past its message")
            value, pos = (pos, pos + size), pos + size
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        yield field, wire_type, value


class SummaryEvent:
    """One event of a summary file: wall_time, step, and either version (the
    file's first event) or values ({tag: float} of the scalars)."""

    __slots__ = ("wall_time", "step", "version", "values")

    def __init__(self, wall_time, step, version, values):
        self.wall_time = wall_time
        self.step = step
        self.version = version
        self.values = values

    def __repr__(self):
        return f"SummaryEvent(step={self.step}, version={self.version!r}, values={self.values})"


def _decode_event(data):
    wall_time, step, version, values = 0.0, 0, None, {}
    for field, wire_type, value in _fields(data, 0, len(data)):
        if field == 1 and wire_type == 1:
            wall_time = struct.unpack("<d", value)[0]
        elif field == 2 and wire_type == 0:
            step = value - (1 << 64) if value >= 1 << 63 else value
        elif field == 3 and wire_type == 2:
            version = bytes(data[value[0]:value[1]]).decode("utf-8")
        elif field == 5 and wire_type == 2:
            for vfield, vtype, vvalue in _fields(data, *value):
                if vfield != 1 or vtype != 2:
                    continue
                tag, scalar = None, None
                for f, t, v in _fields(data, *vvalue):
                    if f == 1 and t == 2:
                        tag = bytes(data[v[0]:v[1]]).decode("utf-8")
                    elif f == 3 and t == 5:
                        scalar = struct.unpack("<f", v)[0]
                if tag is None:
                    raise ValueError("a Summary.Value has no tag")
                if scalar is not None:
                    values[tag] = scalar
    return SummaryEvent(wall_time, step, version, values)


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
    scalars = {}
    for event in read_summary(path):
        for tag, value in event.values.items():
            scalars.setdefault(tag, []).append((event.step, value))
    return scalars


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
    return float(array.reshape(()))


class SummaryRecord:
    """Writes scalars to a summary file in `log_dir`, named as MindSpore names
    it: {file_prefix}.out.events.summary.{seconds}.{pid}_{hostname}{file_suffix}.

        with SummaryRecord("./summary") as record:
            record.add_value("scalar", "loss", loss)
            record.record(step)

    Only the "scalar" plugin is supported; other plugins raise ValueError.
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
        _files.make_dirs(log_dir)
        self.log_dir = log_dir
        self._max_file_size = max_file_size
        self._pending = []
        self._closed = True  # until the file is open
        self._raise = bool(raise_exception)
        name = f"{file_prefix}.out.events.summary.{int(time.time())}.{os.getpid()}_{socket.gethostname()}{file_suffix}"
        self.full_file_name = os.path.join(os.path.realpath(log_dir), name)
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
        """Queues `value` (a number or one-element Tensor) under tag `name` for the next record()."""
        if self._closed:
            raise ValueError("The SummaryRecord has been closed.")
        if not isinstance(plugin, str):
            raise TypeError(f"For 'add_value', the argument 'plugin' must be a str, but got {type(plugin).__name__}.")
        if plugin != "scalar":
            raise ValueError(f"For 'add_value', msrt supports the plugin 'scalar' only, but got {plugin!r}.")
        if not isinstance(name, str) or not name:
            raise ValueError(f"For 'add_value', the argument 'name' must be a non-empty str, but got {name!r}.")
        self._pending.append((name, _scalar_value(name, value)))

    def record(self, step, train_network=None, plugin_filter=None):
        """Writes the queued values as one event at `step`; False when nothing
        was written (nothing queued, or max_file_size reached)."""
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise TypeError(f"For 'record', the argument 'step' must be an int, but got {type(step).__name__}.")
        if self._closed:
            raise ValueError("The SummaryRecord has been closed.")
        pending, self._pending = self._pending, []
        if not pending:
            return False
        return self._write(_encode_event(time.time(), int(step), scalars=pending))

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
