"""The values a summary Event carries besides scalars, as MindSpore's summary.proto and
anf_ir.proto define them (field numbers in the comments), and how MindSpore turns a
tensor into each:

- image (Summary.Value field 4): `Image { height = 1, width = 2, colorspace = 3,
  encoded_image = 4 (PNG) }` (int32 fields). An NCHW batch with 1 or 3 channels is laid
  out as a grid of at most 8 images a row, one channel repeated to three, as 8-bit RGB
  (colorspace 3): uint8 values as they are, values within [0, 1] times 255, others
  mapped linearly by (v - min) * 255 / (max - min + 1).
- tensor (field 8): `TensorProto { repeated int64 dims = 1; DataType data_type = 2;
  repeated float float_data = 3 [packed] }`; MindSpore stores every dtype's values as
  float32 in float_data, so integers beyond 2**24 round, as there.
- histogram (field 9): `Histogram { repeated bucket buckets = 1 (bucket { double left = 1;
  double width = 2; int64 count = 3 }); int64 nan_count = 2, pos_inf_count = 3,
  neg_inf_count = 4; double max = 5, min = 6, sum = 7; int64 count = 8 }`. The finite
  values fall into n equal buckets from their min to their max (n = 1 for none, 2 up to 5
  values, 3 up to 10, count // 10 + 1 up to 880, then 90; a min equal to the max widens
  to [min - 0.5, max + 0.5]); the edges are computed in the tensor's dtype (numpy.linspace)
  and counted as numpy.histogram counts (the last bucket closed). With no finite value
  there are no buckets and max, min and sum stay unset (0).
"""
import struct
import zlib

import numpy as np

from ._protobuf import fields, key, length_delimited, read_varint, varint

# anf_ir.proto's DataType numbers for the dtypes a summary tensor may have
_DATA_TYPES = {np.dtype(np.bool_): 1, np.dtype(np.int8): 2, np.dtype(np.int16): 3, np.dtype(np.int32): 4,
               np.dtype(np.int64): 5, np.dtype(np.uint8): 6, np.dtype(np.uint16): 7, np.dtype(np.uint32): 8,
               np.dtype(np.uint64): 9, np.dtype(np.float16): 10, np.dtype(np.float32): 11,
               np.dtype(np.float64): 12}
_DTYPES = {number: dtype for dtype, number in _DATA_TYPES.items()}
_COLUMNS = 8  # images a row in an image summary's grid


# ---- PNG, written with zlib: signature, IHDR, one IDAT, IEND

def _png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(rgb):
    """An (H, W, 3) uint8 array as PNG bytes (8-bit RGB, no interlace, filter 0 on every row)."""
    height, width, _ = rgb.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), np.ascontiguousarray(rgb).reshape(height, width * 3)], 1)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + _png_chunk(b"IEND", b""))


def image_grid(array):
    """An NCHW array (C 1 or 3) as one (H, W, 3) uint8 RGB image: a grid of the N images."""
    n, channels, height, width = array.shape
    values = array.astype(np.float64)
    if channels == 1:
        values = np.repeat(values, 3, axis=1)
    if array.dtype != np.uint8:
        low, high = values.min(), values.max()
        if low >= 0 and high <= 1:
            values = values * 255
        else:
            values = (values - low) * (255 / (high - low + 1) if high != low else 1)
    cols = min(n, _COLUMNS)
    rows = -(-n // cols)
    canvas = np.zeros((rows * height, cols * width, 3), np.float32)
    for i in range(n):
        y, x = divmod(i, cols)
        canvas[y * height:(y + 1) * height, x * width:(x + 1) * width] = values[i].transpose(1, 2, 0)
    return canvas.astype(np.uint8)


def check_image(name, array):
    if array.ndim != 4:
        raise ValueError(f"For 'add_value', the tensor seems not to hold a valid image: '{name}' must be 4-D "
                         f"(N, C, H, W), but got shape {list(array.shape)}.")
    if array.shape[1] not in (1, 3) or 0 in array.shape:
        raise ValueError(f"For 'add_value', an image must have 1 or 3 channels (N, C, H, W) and no empty "
                         f"dimension, but '{name}' has shape {list(array.shape)}.")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"For 'add_value', an image must hold numbers, but '{name}' has dtype {array.dtype}.")


def check_tensor(name, array):
    if array.ndim == 0:
        raise ValueError(f"For 'add_value', the value should not be empty: '{name}' must have one dimension or "
                         f"more, but got a 0-D tensor.")
    if array.dtype not in _DATA_TYPES:
        raise TypeError(f"For 'add_value', the dtype of '{name}' must be one of bool, int8-64, uint8-64, float16, "
                        f"float32, float64, but got {array.dtype}.")


# ---- encoders: the bytes of a Summary.Value's field

def encode_image(array):
    rgb = image_grid(array)
    height, width, _ = rgb.shape
    body = (key(1, 0) + varint(height) + key(2, 0) + varint(width) + key(3, 0) + varint(3)
            + length_delimited(4, encode_png(rgb)))
    return length_delimited(4, body)


def encode_tensor(array):
    body = b"".join(key(1, 0) + varint(d) for d in array.shape)
    body += key(2, 0) + varint(_DATA_TYPES[array.dtype])
    body += length_delimited(3, np.ascontiguousarray(array, dtype="<f4").tobytes())
    return length_delimited(8, body)


def bucket_count(valid):
    """MindSpore's number of histogram buckets for `valid` finite values."""
    if not valid:
        return 1
    if valid <= 5:
        return 2
    if valid <= 10:
        return 3
    if valid <= 880:
        return valid // 10 + 1
    return 90


def histogram(array):
    """The histogram of `array` as a dict: buckets [(left, width, count)], nan_count, pos_inf_count,
    neg_inf_count, max, min, sum (None when no value is finite) and count."""
    flat = array.reshape(-1)
    if flat.dtype.kind == "b":
        flat = flat.astype(np.uint8)
    out = {"count": int(flat.size), "nan_count": 0, "pos_inf_count": 0, "neg_inf_count": 0, "buckets": [],
           "max": None, "min": None, "sum": None}
    if flat.dtype.kind == "f":
        out["nan_count"] = int(np.count_nonzero(np.isnan(flat)))
        out["pos_inf_count"] = int(np.count_nonzero(np.isposinf(flat)))
        out["neg_inf_count"] = int(np.count_nonzero(np.isneginf(flat)))
        finite = flat[np.isfinite(flat)]
    else:
        finite = flat
    if not finite.size:
        return out
    low, high = float(finite.min()), float(finite.max())
    out["min"], out["max"] = low, high
    out["sum"] = float(finite.sum(dtype=np.float64))
    first, last = (low, high) if low < high else (low - 0.5, high + 0.5)
    edges = np.linspace(first, last, bucket_count(finite.size) + 1, dtype=finite.dtype)
    counts, edges = np.histogram(finite, bins=edges)
    out["buckets"] = [(float(left), float(right - left), int(c)) for left, right, c in zip(edges, edges[1:], counts)]
    return out


def encode_histogram(array):
    h = histogram(array)
    body = b"".join(length_delimited(1, key(1, 1) + struct.pack("<d", left) + key(2, 1) + struct.pack("<d", width)
                                     + key(3, 0) + varint(count)) for left, width, count in h["buckets"])
    body += key(2, 0) + varint(h["nan_count"]) + key(3, 0) + varint(h["pos_inf_count"])
    body += key(4, 0) + varint(h["neg_inf_count"])
    if h["max"] is not None:
        body += key(5, 1) + struct.pack("<d", h["max"]) + key(6, 1) + struct.pack("<d", h["min"])
        body += key(7, 1) + struct.pack("<d", h["sum"])
    body += key(8, 0) + varint(h["count"])
    return length_delimited(9, body)


# ---- decoders: a Summary.Value field's message (data[start:end]) back into Python values

class SummaryImage:
    """An image summary value: height, width, colorspace and the PNG bytes (encoded_image);
    `decode()` gives the (H, W, 3) uint8 array."""

    __slots__ = ("height", "width", "colorspace", "encoded_image")

    def __init__(self, height, width, colorspace, encoded_image):
        self.height, self.width, self.colorspace, self.encoded_image = height, width, colorspace, encoded_image

    def decode(self):
        from ..dataset.vision.transforms import decode_image

        return decode_image(self.encoded_image)

    def __repr__(self):
        return f"SummaryImage(height={self.height}, width={self.width}, colorspace={self.colorspace})"


class SummaryHistogram:
    """A histogram summary value: buckets [(left, width, count)], nan_count, pos_inf_count,
    neg_inf_count, max, min, sum and count (protobuf's 0 for an unset field)."""

    __slots__ = ("buckets", "nan_count", "pos_inf_count", "neg_inf_count", "max", "min", "sum", "count")

    def __init__(self):
        self.buckets = []
        self.nan_count = self.pos_inf_count = self.neg_inf_count = self.count = 0
        self.max = self.min = self.sum = 0.0

    def __repr__(self):
        return f"SummaryHistogram(count={self.count}, buckets={len(self.buckets)}, min={self.min}, max={self.max})"


def _int32(value):
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _int64(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _double(wire_type, value):
    if wire_type != 1:
        raise ValueError("a double field has the wrong wire type")
    return struct.unpack("<d", value)[0]


def decode_image(data, start, end):
    height = width = colorspace = 0
    encoded = b""
    for field, wire_type, value in fields(data, start, end):
        if field in (1, 2, 3) and wire_type == 0:
            number = _int32(value)
            if field == 1:
                height = number
            elif field == 2:
                width = number
            else:
                colorspace = number
        elif field == 4 and wire_type == 2:
            encoded = bytes(data[value[0]:value[1]])
    return SummaryImage(height, width, colorspace, encoded)


def decode_tensor(data, start, end):
    dims, data_type, floats = [], 0, []
    for field, wire_type, value in fields(data, start, end):
        if field == 1 and wire_type == 0:
            dims.append(_int64(value))
        elif field == 1 and wire_type == 2:  # packed dims
            pos = value[0]
            while pos < value[1]:
                number, pos = read_varint(data, pos, value[1])
                dims.append(_int64(number))
        elif field == 2 and wire_type == 0:
            data_type = value
        elif field == 3 and wire_type == 2:
            if (value[1] - value[0]) % 4:
                raise ValueError("packed float_data is not a whole number of floats")
            floats.append(np.frombuffer(bytes(data[value[0]:value[1]]), "<f4"))
        elif field == 3 and wire_type == 5:
            floats.append(np.frombuffer(bytes(value), "<f4"))
    if data_type not in _DTYPES:
        raise ValueError(f"a TensorProto has the unknown data_type {data_type}")
    if any(d < 0 for d in dims):
        raise ValueError(f"a TensorProto has a negative dimension in {dims}")
    values = np.concatenate(floats) if floats else np.zeros(0, np.float32)
    if values.size != int(np.prod(dims, dtype=np.int64)):
        raise ValueError(f"a TensorProto holds {values.size} values for dims {dims}")
    return values.reshape(dims).astype(_DTYPES[data_type])


def decode_histogram(data, start, end):
    out = SummaryHistogram()
    for field, wire_type, value in fields(data, start, end):
        if field == 1 and wire_type == 2:
            left = width = 0.0
            count = 0
            for f, t, v in fields(data, *value):
                if f == 1:
                    left = _double(t, v)
                elif f == 2:
                    width = _double(t, v)
                elif f == 3 and t == 0:
                    count = _int64(v)
            out.buckets.append((left, width, count))
        elif field in (2, 3, 4, 8) and wire_type == 0:
            setattr(out, {2: "nan_count", 3: "pos_inf_count", 4: "neg_inf_count", 8: "count"}[field], _int64(value))
        elif field in (5, 6, 7):
            setattr(out, {5: "max", 6: "min", 7: "sum"}[field], _double(wire_type, value))
    return out
