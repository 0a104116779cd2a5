"""The protobuf wire format, as far as the summary file's messages need it: varints,
64- and 32-bit fields and length-delimited fields; a reader walks a message's fields and
leaves the ones it does not know, as protobuf readers do."""


def varint(value):
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


def key(field, wire_type):
    return varint(field << 3 | wire_type)


def length_delimited(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def read_varint(data, pos, end):
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


def fields(data, start, end):
    """(field number, wire type, value) of a message in data[start:end]; a
    length-delimited value is its (start, end)."""
    pos = start
    while pos < end:
        field_key, pos = read_varint(data, pos, end)
        field, wire_type = field_key >> 3, field_key & 7
        if wire_type == 0:
            value, pos = read_varint(data, pos, end)
        elif wire_type == 1:
            if pos + 8 > end:
                raise ValueError("a 64-bit field runs past its message")
            value, pos = data[pos:pos + 8], pos + 8
        elif wire_type == 5:
            if pos + 4 > end:
                raise ValueError("a 32-bit field runs past its message")
            value, pos = data[pos:pos + 4], pos + 4
        elif wire_type == 2:
            size, pos = read_varint(data, pos, end)
            if pos + size > end:
                raise ValueError("a length-delimited field runs past its message")
            value, pos = (pos, pos + size), pos + size
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        yield field, wire_type, value
