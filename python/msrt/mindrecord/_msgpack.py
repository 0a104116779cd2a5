"""MessagePack, the encoding of the non-blob fields of a MindRecord row.

MindSpore stores each row's scalar and string fields as one MessagePack map
(its JSON library's `to_msgpack`): keys in sorted order, integers in the
smallest of the signed/unsigned forms that holds them, floats as float64,
strings as fixstr/str8/str16/str32. `encode` writes exactly those forms;
`decode` reads any well-formed MessagePack value except extension types, checks
every length against the bytes that are left and limits nesting, so damaged
input raises ValueError and never reads out of bounds. Nothing decoded is
executed.
"""
import struct

_MAX_DEPTH = 32
_FLOAT64 = struct.Struct(">d")
_FLOAT32 = struct.Struct(">f")
# (first byte, struct) of the unsigned and signed integer forms, narrowest first.
_UNSIGNED = ((0xCC, struct.Struct(">B"), 0xFF), (0xCD, struct.Struct(">H"), 0xFFFF),
             (0xCE, struct.Struct(">I"), 0xFFFFFFFF), (0xCF, struct.Struct(">Q"), 0xFFFFFFFFFFFFFFFF))
_SIGNED = ((0xD0, struct.Struct(">b"), -0x80), (0xD1, struct.Struct(">h"), -0x8000),
           (0xD2, struct.Struct(">i"), -0x80000000), (0xD3, struct.Struct(">q"), -0x8000000000000000))


def _encode_int(value, out):
    if value >= 0:
        if value < 0x80:
            out.append(bytes((value,)))
            return
        for tag, form, top in _UNSIGNED:
            if value <= top:
                out.append(bytes((tag,)) + form.pack(value))
                return
    else:
        if value >= -32:
            out.append(bytes((value & 0xFF,)))
            return
        for tag, form, bottom in _SIGNED:
            if value >= bottom:
                out.append(bytes((tag,)) + form.pack(value))
                return
    raise ValueError(f"integer {value} does not fit MessagePack's 64 bits")


def _encode_sized(size, small_tag, small_limit, tags, out):
    """The header of a str/array/map of `size` entries: the fix form below `small_limit`,
    else the narrowest of `tags` (8-, 16-, 32-bit lengths; None where the form does not exist)."""
    if size < small_limit:
        out.append(bytes((small_tag | size,)))
        return
    for tag, form, top in zip(tags, (struct.Struct(">B"), struct.Struct(">H"), struct.Struct(">I")),
                              (0xFF, 0xFFFF, 0xFFFFFFFF)):
        if tag is not None and size <= top:
            out.append(bytes((tag,)) + form.pack(size))
            return
    raise ValueError(f"{size} entries do not fit a MessagePack length")


def _encode(value, out):
    if value is None:
        out.append(b"\xc0")
    elif value is True or value is False:
        out.append(b"\xc3" if value else b"\xc2")
    elif isinstance(value, int):
        _encode_int(int(value), out)
    elif isinstance(value, float):
        out.append(b"\xcb" + _FLOAT64.pack(value))
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _encode_sized(len(data), 0xA0, 32, (0xD9, 0xDA, 0xDB), out)
        out.append(data)
    elif isinstance(value, dict):
        _encode_sized(len(value), 0x80, 16, (None, 0xDE, 0xDF), out)
        for key in sorted(value):
            _encode(str(key), out)
            _encode(value[key], out)
    elif isinstance(value, (list, tuple)):
        _encode_sized(len(value), 0x90, 16, (None, 0xDC, 0xDD), out)
        for item in value:
            _encode(item, out)
    else:
        raise TypeError(f"cannot encode a {type(value).__name__} as MessagePack")


def encode(value):
    """The MessagePack bytes of `value` (None, bool, int, float, str, dict with str keys, list)."""
    out = []
    _encode(value, out)
    return b"".join(out)


class _Reader:
    def __init__(self, data):
        self.data = data
        self.at = 0

    def take(self, size):
        if size > len(self.data) - self.at:
            raise ValueError(f"MessagePack value runs past the end ({size} bytes wanted at offset {self.at}, "
                             f"{len(self.data) - self.at} left)")
        chunk = self.data[self.at:self.at + size]
        self.at += size
        return chunk

    def unpack(self, form):
        return form.unpack(self.take(form.size))[0]

    def count(self, size, per_entry):
        """`size` entries of at least `per_entry` bytes each must fit in what is left."""
        if size * per_entry > len(self.data) - self.at:
            raise ValueError(f"MessagePack container of {size} entries is longer than the {len(self.data) - self.at} "
                             f"bytes left")
        return size


_U8, _U16, _U32 = struct.Struct(">B"), struct.Struct(">H"), struct.Struct(">I")
_LENGTHS = {0xC4: _U8, 0xC5: _U16, 0xC6: _U32, 0xD9: _U8, 0xDA: _U16, 0xDB: _U32,
            0xDC: _U16, 0xDD: _U32, 0xDE: _U16, 0xDF: _U32}
_NUMBERS = {0xCA: _FLOAT32, 0xCB: _FLOAT64}
_NUMBERS.update({tag: form for tag, form, _ in _UNSIGNED})
_NUMBERS.update({tag: form for tag, form, _ in _SIGNED})


def _string(raw):
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"MessagePack string is not UTF-8 ({error})") from None


def _decode(reader, depth):
    if depth > _MAX_DEPTH:
        raise ValueError(f"MessagePack nesting deeper than {_MAX_DEPTH}")
    tag = reader.take(1)[0]
    if tag < 0x80:
        return tag
    if tag >= 0xE0:
        return tag - 0x100
    if 0x80 <= tag <= 0x8F or tag in (0xDE, 0xDF):
        size = tag & 0x0F if tag <= 0x8F else reader.unpack(_LENGTHS[tag])
        out = {}
        for _ in range(reader.count(size, 2)):
            key = _decode(reader, depth + 1)
            if not isinstance(key, str):
                raise ValueError(f"MessagePack map key is a {type(key).__name__}, not a string")
            out[key] = _decode(reader, depth + 1)
        return out
    if 0x90 <= tag <= 0x9F or tag in (0xDC, 0xDD):
        size = tag & 0x0F if tag <= 0x9F else reader.unpack(_LENGTHS[tag])
        return [_decode(reader, depth + 1) for _ in range(reader.count(size, 1))]
    if 0xA0 <= tag <= 0xBF:
        return _string(reader.take(tag & 0x1F))
    if tag in (0xD9, 0xDA, 0xDB):
        return _string(reader.take(reader.unpack(_LENGTHS[tag])))
    if tag in (0xC4, 0xC5, 0xC6):
        return bytes(reader.take(reader.unpack(_LENGTHS[tag])))
    if tag in _NUMBERS:
        return reader.unpack(_NUMBERS[tag])
    if tag == 0xC0:
        return None
    if tag in (0xC2, 0xC3):
        return tag == 0xC3
    raise ValueError(f"MessagePack type byte 0x{tag:02x} is not supported (extension or reserved)")


def decode(data):
    """The value encoded by `data` (bytes), which must hold exactly one MessagePack value.
    ValueError for anything malformed."""
    reader = _Reader(memoryview(data))
    value = _decode(reader, 0)
    if reader.at != len(data):
        raise ValueError(f"{len(data) - reader.at} bytes follow the MessagePack value")
    return value
