"""MindSpore's MindRecord format: the data file of one shard and its SQLite index.

Note [MindRecord layout]: msrt reads and writes the files MindSpore's
FileWriter writes (format version "3.0"; "2.0" files are read too). Integers
of the layout are little-endian (MindSpore writes them in host order, and its
hosts are little-endian) unless said otherwise.

  data file   bytes [0, 8): u64 length L of the header; [8, 8 + L): the header,
              UTF-8 JSON; the header region is `header_size` bytes. Page p
              starts at header_size + p * page_size and holds `page_size`
              bytes of the page's entry in the header (the rest of the region
              is zeros, usually a hole); the file ends where the last page's
              bytes end.
  header      {"header_size", "index_fields": [{"index_field", "schema_id"}]
              or null, "page": [page entries of this shard] or null,
              "page_size", "compression_size", "schema": [{"blob_fields",
              "desc", "schema"}], "shard_addresses": [file names of the set],
              "shard_id", "statistics": null, "version"}, keys of nested
              objects sorted, no spaces (as MindSpore writes it).
  page entry  {"end_row_id", "page_id", "page_size", "page_type": "RAW_DATA"
              or "BLOB_DATA", "page_type_id", "row_group_ids": [{"id",
              "offset"}], "shard_id", "start_row_id"}. Page ids count from 0
              in file order. Blob pages hold rows start_row_id..end_row_id-1
              of the shard, one "row group" each (its id is the page_type_id).
              Raw pages hold the same rows' other fields; each of their row
              groups starts at `offset` in the page.
  blob row    u64 length, then the row's blob: the blob fields (bytes, and
              every field with a shape), in sorted name order. One blob field:
              its bytes alone; several: per field a big-endian u64 length and
              the bytes. No blob field: 4 zero bytes. An array is its elements
              in the schema's type (C order); in a "3.0" file whose schema has
              an int32/int64 array, each int32/int64 array is compressed:
              big-endian u32 element count, 2 bits per element (first element
              in the high bits of the first byte) giving its stored width
              (0: 1 byte, 1: 2, 2: 4, 3: 8), then each element, little-endian,
              in that width, sign-extended on reading. The header's
              "compression_size" counts the bytes this saved.
  raw row     u64 length, then a MessagePack map of the row's non-blob
              fields (_msgpack.py); {"id": 0} when every field is a blob.
  index       `<data file>.db`, SQLite: SHARD_NAME(NAME) holds the data
              file's name; INDEXES(ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW,
              PAGE_OFFSET_RAW_END, ROW_GROUP_ID, PAGE_ID_BLOB,
              PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END, then per index field
              INC_<k> and <field>_<schema id>) has a row per row, offsets
              into pages, the *_END offsets one past the row.

The format has no checksum. What msrt checks instead, on opening a file: the
header is well-formed JSON with every key of the right type and values in
range, the schema valid and its blob_fields what the schema implies, every
page within the file (a truncated file fails here), blob pages' rows
contiguous, and the index agrees with the header (shard name, one entry per
row, every entry inside its page, blob entries back to back). On reading a
row: the length prefixes agree with the index, the MessagePack and the blob
decode exactly, values fit their types and arrays their shapes. Any failure
raises MindRecordFormatError naming the file; nothing read is executed (JSON,
MessagePack, raw bytes; no pickle). Writing: see filewriter.py.
"""
import json
import math
import os
import sqlite3
import stat
import struct

import numpy as np

from .. import _files
from . import _msgpack

VERSION = "3.0"
SUPPORTED_VERSIONS = ("2.0", "3.0")
INDEX_SUFFIX = ".db"
RAW_PAGE, BLOB_PAGE = "RAW_DATA", "BLOB_DATA"
DEFAULT_HEADER_SIZE, MIN_HEADER_SIZE, MAX_HEADER_SIZE = 1 << 24, 1 << 14, 1 << 27
DEFAULT_PAGE_SIZE, MIN_PAGE_SIZE, MAX_PAGE_SIZE = 1 << 25, 1 << 15, 1 << 28
MAX_FILE_COUNT = 4096
NUMBER_TYPES = {"int32": "<i4", "int64": "<i8", "float32": "<f4", "float64": "<f8"}
ALL_TYPES = tuple(NUMBER_TYPES) + ("string", "bytes")
NO_BLOB = b"\0\0\0\0"  # the blob of a row when the schema has no blob field
DUMMY_RAW = {"id": 0}  # the raw fields of a row when every field is a blob
SQL_TYPES = {"int32": "INTEGER", "int64": "INTEGER", "float32": "NUMERIC", "float64": "NUMERIC", "string": "TEXT"}
INDEX_COLUMNS = ("ROW_ID", "ROW_GROUP_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW", "PAGE_OFFSET_RAW_END", "PAGE_ID_BLOB",
                 "PAGE_OFFSET_BLOB", "PAGE_OFFSET_BLOB_END")
_U64 = struct.Struct("<Q")
_BE64 = struct.Struct(">Q")
_BE32 = struct.Struct(">I")


class MindRecordFormatError(RuntimeError):
    """A MindRecord data file or its index is missing, truncated, corrupt or not a MindRecord file."""


def _fail(path, what):
    raise MindRecordFormatError(f"Invalid MindRecord file '{path}': {what}.")


# --------------------------------------------------------------------------
# Schema: a list of (name, type, shape or None) in sorted name order.

def blob_fields(schema):
    """Names of the fields stored in the blob (bytes, and every field with a shape), sorted."""
    return [name for name, kind, shape in schema if kind == "bytes" or shape is not None]


def uses_compression(schema, version):
    """Whether int32/int64 arrays are compressed in a file of `version` with `schema`."""
    return version != "2.0" and any(shape is not None and kind in ("int32", "int64") for _, kind, shape in schema)


def schema_json(schema):
    return {name: ({"type": kind} if shape is None else {"shape": list(shape), "type": kind})
            for name, kind, shape in schema}


def parse_schema(body):
    """The schema of a header's "schema" object; ValueError for one MindSpore does not accept."""
    if not isinstance(body, dict) or not body:
        raise ValueError("the schema is not a non-empty object")
    schema = []
    for name in sorted(body):
        spec = body[name]
        if not name or any(not (c.isascii() and (c.isalnum() or c in "_-")) for c in name):
            raise ValueError(f"field name {name!r} is not made of '0-9', 'a-z', 'A-Z', '_' and '-'")
        if not isinstance(spec, dict) or spec.get("type") not in ALL_TYPES or set(spec) - {"type", "shape"}:
            raise ValueError(f"field {name!r} has no valid type ({spec!r})")
        shape = spec.get("shape")
        if "shape" in spec:
            if spec["type"] not in NUMBER_TYPES or not isinstance(shape, list) or not shape \
                    or any(type(d) is not int or (d < 1 and d != -1) for d in shape) or shape.count(-1) > 1:
                raise ValueError(f"field {name!r} has an invalid shape {shape!r}")
            shape = list(shape)
        schema.append((name, spec["type"], shape))
    return schema


def header_text(header_size, page_size, compression_size, schema, desc, index_fields, pages, addresses, shard_id,
                version=VERSION):
    """The header of one shard as MindSpore writes it (keys in its order, nested keys sorted)."""
    def dump(value):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    index = [{"index_field": name, "schema_id": 0} for name in index_fields] or None
    schemas = [{"blob_fields": blob_fields(schema), "desc": desc, "schema": schema_json(schema)}]
    entries = [p.entry() for p in pages] or None
    return ("{" + f'"header_size":{header_size},"index_fields":{dump(index)},"page":{dump(entries)},'
            f'"page_size":{page_size},"compression_size":{compression_size},"schema":{dump(schemas)},'
            f'"shard_addresses":{dump(addresses)},"shard_id":{shard_id},"statistics":null,"version":"{version}"'
            + "}").encode("utf-8")


class Page:
    """One page's entry in the header."""

    __slots__ = ("page_id", "shard_id", "page_type", "page_type_id", "start_row_id", "end_row_id", "row_group_ids",
                 "page_size")

    def __init__(self, page_id, shard_id, page_type, page_type_id, start_row_id, end_row_id, row_group_ids,
                 page_size):
        self.page_id, self.shard_id, self.page_type, self.page_type_id = page_id, shard_id, page_type, page_type_id
        self.start_row_id, self.end_row_id, self.page_size = start_row_id, end_row_id, page_size
        self.row_group_ids = [list(g) for g in row_group_ids]

    def entry(self):
        groups = self.row_group_ids or [[0, 0]]  # MindSpore writes an empty list as one group 0 at 0
        return {"end_row_id": self.end_row_id, "page_id": self.page_id, "page_size": self.page_size,
                "page_type": self.page_type, "page_type_id": self.page_type_id,
                "row_group_ids": [{"id": i, "offset": o} for i, o in groups], "shard_id": self.shard_id,
                "start_row_id": self.start_row_id}


def _int(value, what, low=0, high=2 ** 63 - 1):
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{what} is {value!r}, not an integer in [{low}, {high}]")
    return value


def _parse_page(entry, k):
    if not isinstance(entry, dict):
        raise ValueError(f"page {k} is not an object")
    try:
        numbers = {key: _int(entry[key], f"page {k}'s {key}", -1 if key == "page_type_id" else 0)
                   for key in ("page_id", "shard_id", "page_type_id", "start_row_id", "end_row_id", "page_size")}
        groups = entry["row_group_ids"]
        if not isinstance(groups, list) or not groups or not all(isinstance(g, dict) for g in groups):
            raise ValueError(f"page {k}'s row_group_ids is not a list of objects")
        groups = [[_int(g["id"], f"page {k}'s row group id", -1), _int(g["offset"], f"page {k}'s row group offset")]
                  for g in groups]
        page_type = entry["page_type"]
    except KeyError as error:
        raise ValueError(f"page {k} has no {error}") from None
    if page_type not in (RAW_PAGE, BLOB_PAGE):
        raise ValueError(f"page {k} has the unknown page_type {page_type!r}")
    return Page(numbers["page_id"], numbers["shard_id"], page_type, numbers["page_type_id"], numbers["start_row_id"],
                numbers["end_row_id"], groups, numbers["page_size"])


def _json_constant(name):
    raise ValueError(f"{name} is not valid JSON")


# --------------------------------------------------------------------------
# Blobs

def compress_ints(values):
    """MindSpore's compressed form of an int32/int64 array (its values as int64)."""
    values = np.asarray(values, np.int64).ravel()
    n = values.size
    if not n or (values.min() >= -128 and values.max() <= 127):  # every element one byte: bitmap all zeros
        return _BE32.pack(n) + bytes((n + 3) // 4) + values.astype(np.int8).tobytes()
    kinds = np.full(n, 3, np.uint8)
    for code, dtype in ((2, np.int32), (1, np.int16), (0, np.int8)):
        info = np.iinfo(dtype)
        kinds[(values >= info.min) & (values <= info.max)] = code
    bitmap = np.zeros((n + 3) // 4, np.uint8)
    np.bitwise_or.at(bitmap, np.arange(n) // 4, (kinds << (2 * (3 - np.arange(n) % 4))).astype(np.uint8))
    data = values.astype("<i8").view(np.uint8).reshape(n, 8)[np.arange(8) < (1 << kinds.astype(np.int64))[:, None]]
    return _BE32.pack(n) + bitmap.tobytes() + data.tobytes()


def uncompress_ints(data):
    """The int64 values of MindSpore's compressed integer array `data`; ValueError when malformed."""
    if len(data) < 4:
        raise ValueError("a compressed integer array is shorter than its count")
    n = _BE32.unpack_from(data)[0]
    if (n + 3) // 4 > len(data) - 4:
        raise ValueError(f"a compressed integer array of {n} elements is cut short")
    full, rest = divmod(n, 4)
    for code, dtype in enumerate(("<i1", "<i2", "<i4", "<i8")):  # fast path: every element of one width
        pattern = 0x55 * code
        if data[4:4 + full] == bytes((pattern,)) * full and \
                (not rest or data[4 + full] == pattern & (0xFF << (8 - 2 * rest)) & 0xFF):
            start = 4 + (n + 3) // 4
            if len(data) - start != n << code:
                raise ValueError(f"a compressed integer array holds {len(data) - start} bytes of values, its bitmap "
                                 f"says {n << code}")
            return np.frombuffer(data, dtype, n, start).astype(np.int64)
    bitmap = np.frombuffer(data, np.uint8, (n + 3) // 4, 4)
    kinds = (bitmap[np.arange(n) // 4] >> (2 * (3 - np.arange(n) % 4)).astype(np.uint8)) & 3
    widths = 1 << kinds.astype(np.int64)
    start = 4 + bitmap.size
    if int(widths.sum()) != len(data) - start:
        raise ValueError(f"a compressed integer array holds {len(data) - start} bytes of values, its bitmap says "
                         f"{int(widths.sum())}")
    matrix = np.zeros((n, 8), np.uint8)
    matrix[np.arange(8) < widths[:, None]] = np.frombuffer(data, np.uint8, len(data) - start, start)
    values = matrix.view("<u8").ravel().astype(np.uint64)
    bits = (8 * widths).astype(np.uint64)
    narrow = bits < 64
    negative = narrow & (((values >> (bits - np.uint64(1))) & np.uint64(1)) == 1)
    values[negative] -= np.left_shift(np.uint64(1), bits[negative])  # wraps: sign extension in two's complement
    return values.view(np.int64)


def _array_bytes(value, kind):
    return np.ascontiguousarray(value, dtype=NUMBER_TYPES[kind]).tobytes()


def encode_blob(row, schema, compress):
    """(The blob of `row`, bytes compression saved) -- the row already checked against `schema`."""
    fields = [(name, kind, shape) for name, kind, shape in schema if kind == "bytes" or shape is not None]
    if not fields:
        return NO_BLOB, 0
    parts, saved = [], 0
    for name, kind, shape in fields:
        data = bytes(row[name]) if kind == "bytes" else _array_bytes(row[name], kind)
        if compress and kind in ("int32", "int64"):
            packed = compress_ints(np.frombuffer(data, NUMBER_TYPES[kind]))
            saved += len(data) - len(packed)
            data = packed
        parts.append(data)
    if len(parts) == 1:
        return parts[0], saved
    return b"".join(_BE64.pack(len(p)) + p for p in parts), saved


def split_blob(blob, names):
    """The bytes of each blob field `names` (in order) within a row's blob."""
    if len(names) == 1:
        return [blob]
    parts, at = [], 0
    for name in names:
        if len(blob) - at < 8:
            raise ValueError(f"the blob ends before the length of field '{name}'")
        size = _BE64.unpack_from(blob, at)[0]
        at += 8
        if size > len(blob) - at:
            raise ValueError(f"field '{name}' ({size} bytes) runs past the end of the blob")
        parts.append(blob[at:at + size])
        at += size
    if at != len(blob):
        raise ValueError(f"{len(blob) - at} bytes follow the last blob field")
    return parts


def blob_value(data, kind, shape, compress):
    """The column value of one blob field from its bytes."""
    if kind == "bytes":
        return np.frombuffer(data, np.uint8).copy()
    dtype = np.dtype(NUMBER_TYPES[kind])
    if compress and kind in ("int32", "int64"):
        values = uncompress_ints(data)
        if kind == "int32" and values.size and (values.min() < -2 ** 31 or values.max() >= 2 ** 31):
            raise ValueError("an int32 array holds a value out of int32's range")
        values = values.astype(dtype.newbyteorder("="))
    else:
        if len(data) % dtype.itemsize:
            raise ValueError(f"{len(data)} bytes are not a whole number of {kind} elements")
        values = np.frombuffer(data, dtype).astype(dtype.newbyteorder("="))
    fixed = math.prod(d for d in shape if d != -1)
    if (-1 in shape and values.size % fixed) or (-1 not in shape and values.size != fixed):
        raise ValueError(f"{values.size} elements do not take the shape {shape}")
    return values.reshape(shape)


def raw_value(value, kind):
    """The column value of a non-blob field from its MessagePack value."""
    if kind in ("int32", "int64"):
        bits = 32 if kind == "int32" else 64
        if type(value) is not int or not -2 ** (bits - 1) <= value < 2 ** (bits - 1):
            raise ValueError(f"{value!r} is not an {kind}")
        return np.array(value, kind)
    if kind in ("float32", "float64"):
        if type(value) not in (int, float):
            raise ValueError(f"{value!r} is not a number")
        return np.array(value, kind)
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return np.array(value)


# --------------------------------------------------------------------------
# Index

def index_table_sql(index_fields):
    """The CREATE statement of INDEXES, as MindSpore's index generator words it."""
    sql = ("CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL"
           ", PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL"
           ", ROW_GROUP_ID         INT  NOT NULL, PAGE_ID_BLOB         INT  NOT NULL"
           ", PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL")
    for k, (name, kind) in enumerate(index_fields):
        sql += f",INC_{k} INT, {name}_0 {SQL_TYPES[kind]}"
    return sql + ", PRIMARY KEY(ROW_ID" + "".join(f",INC_{k}" for k in range(len(index_fields))) + "));"


def encode_index(shard_name, index_fields, locations, values):
    """The bytes of the SQLite index of one shard. `index_fields`: [(name, type)];
    `locations`: per row the INDEX_COLUMNS values; `values`: per row its index fields' values."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute(index_table_sql(index_fields))
        connection.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL);")
        connection.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?);", (shard_name,))
        names = list(INDEX_COLUMNS) + [c for k, (name, _) in enumerate(index_fields) for c in (f"INC_{k}", f"{name}_0")]
        marks = ",".join("?" * len(names))
        connection.executemany(f"INSERT INTO INDEXES ({','.join(names)}) VALUES ({marks})",
                               (tuple(int(v) for v in loc) + tuple(x for value in vals for x in (0, value))
                                for loc, vals in zip(locations, values)))
        connection.commit()
        return connection.serialize()
    finally:
        connection.close()


# --------------------------------------------------------------------------
# Reading

def read_header(path):
    """(Header dict, file size) of data file `path`, the JSON checked for its keys' types."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise MindRecordFormatError(f"Invalid MindRecord file '{path}': cannot open it: {error.strerror}.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _fail(path, "it is not a regular file")
        prefix = os.pread(fd, 8, 0)
        if len(prefix) < 8:
            _fail(path, f"{info.st_size} bytes, too short for a MindRecord header")
        (length,) = _U64.unpack(prefix)
        if length > MAX_HEADER_SIZE - 8 or length + 8 > info.st_size:
            _fail(path, f"the header length {length} exceeds the file ({info.st_size} bytes) or the format's limit "
                        f"(not a MindRecord file, or truncated)")
        text = os.pread(fd, length, 8)
    finally:
        os.close(fd)
    try:
        header = json.loads(text.decode("utf-8"), parse_constant=_json_constant)
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        _fail(path, f"its header is not MindRecord JSON (not a MindRecord file?): {error}")
    return header, info.st_size, length


class Shard:
    """One data file and its index, opened and checked (Note [MindRecord layout]);
    rows are read on demand."""

    def __init__(self, path):
        self.path = path
        header, size, text_length = read_header(path)
        try:
            self._parse(header, size, text_length)
        except (KeyError, TypeError, ValueError) as error:
            text = f"no key {error}" if isinstance(error, KeyError) else str(error)
            _fail(path, f"its header is malformed: {text}")
        self._read_index()

    def _parse(self, header, size, text_length):
        self.version = header["version"]
        if self.version not in SUPPORTED_VERSIONS:
            raise ValueError(f"version {self.version!r}, msrt reads versions {list(SUPPORTED_VERSIONS)}")
        self.header_size = _int(header["header_size"], "header_size", 8 + text_length, MAX_HEADER_SIZE)
        self.page_size = _int(header["page_size"], "page_size", 8, MAX_PAGE_SIZE)
        self.compression_size = _int(header.get("compression_size", 0), "compression_size")
        self.shard_id = _int(header["shard_id"], "shard_id", 0, MAX_FILE_COUNT - 1)
        addresses = header["shard_addresses"]
        if not isinstance(addresses, list) or not 0 < len(addresses) <= MAX_FILE_COUNT \
                or not all(isinstance(a, str) and a and os.path.basename(a) == a for a in addresses):
            raise ValueError("shard_addresses is not a list of file names")
        self.addresses = addresses
        schemas = header["schema"]
        if not isinstance(schemas, list) or len(schemas) != 1 or not isinstance(schemas[0], dict):
            raise ValueError("schema is not a list of one schema")
        self.schema = parse_schema(schemas[0]["schema"])
        self.desc = schemas[0]["desc"]
        if not isinstance(self.desc, str):
            raise ValueError("the schema's desc is not a string")
        self.blob_names = blob_fields(self.schema)
        if schemas[0]["blob_fields"] != self.blob_names:
            raise ValueError(f"blob_fields {schemas[0]['blob_fields']!r} is not what the schema implies "
                             f"({self.blob_names})")
        kinds = {name: (kind, shape) for name, kind, shape in self.schema}
        index = header["index_fields"] or []
        if not isinstance(index, list) or not all(isinstance(f, dict) and f.get("schema_id") == 0 for f in index):
            raise ValueError("index_fields is not a list of {index_field, schema_id: 0}")
        self.index_fields = [f["index_field"] for f in index]
        if any(kinds.get(f, ("bytes",))[0] == "bytes" or kinds[f][1] is not None for f in self.index_fields) \
                or len(set(self.index_fields)) != len(self.index_fields):
            raise ValueError(f"index_fields {self.index_fields} are not distinct scalar fields of the schema")
        pages = header["page"] or []
        if not isinstance(pages, list):
            raise ValueError("page is not a list")
        self.pages = [_parse_page(entry, k) for k, entry in enumerate(pages)]
        self.compress = uses_compression(self.schema, self.version)
        self._check_pages(size)

    def _check_pages(self, size):
        blob_pages = []
        for k, page in enumerate(self.pages):
            if page.page_id != k or page.shard_id != self.pages[0].shard_id:
                raise ValueError(f"page {k} has id {page.page_id} and shard {page.shard_id} (ids must count from "
                                 f"0, one shard per file)")
            if page.page_size > self.page_size:
                raise ValueError(f"page {k} holds {page.page_size} bytes, more than the page size {self.page_size}")
            end = self.header_size + self.page_size * k + page.page_size
            if end > size:
                raise ValueError(f"page {k} ends at byte {end}, past the end of the file ({size} bytes): truncated")
            if page.page_type == BLOB_PAGE:
                blob_pages.append(page)
        blob_pages.sort(key=lambda p: p.page_type_id)
        row = 0
        for page in blob_pages:
            if page.start_row_id != row or page.end_row_id < row:
                raise ValueError(f"blob page {page.page_id} holds rows {page.start_row_id}..{page.end_row_id}, "
                                 f"expected them to start at row {row}")
            row = page.end_row_id
        self.row_count = row
        self._blob_pages = {p.page_id: p for p in blob_pages}
        self._raw_pages = {p.page_id: p for p in self.pages if p.page_type == RAW_PAGE}

    def _query(self, *statements):
        """The rows of each SQL statement over the index (read whole, never written)."""
        index_path = self.path + INDEX_SUFFIX
        if not os.path.isfile(index_path):
            raise MindRecordFormatError(f"Invalid MindRecord file '{self.path}': its index file '{index_path}' is "
                                        f"missing.")
        connection = sqlite3.connect(":memory:")
        try:
            connection.deserialize(_files.read(index_path))
            return [connection.execute(sql).fetchall() for sql in statements]
        except (sqlite3.Error, OSError, OverflowError, MemoryError) as error:
            raise MindRecordFormatError(f"Invalid MindRecord index '{index_path}': {error}.") from None
        finally:
            connection.close()

    def _read_index(self):
        index_path = self.path + INDEX_SUFFIX
        names, rows = self._query("SELECT NAME FROM SHARD_NAME",
                                  f"SELECT {', '.join(INDEX_COLUMNS)} FROM INDEXES ORDER BY ROW_ID")
        if len(names) != 1 or names[0][0] != os.path.basename(self.path):
            raise MindRecordFormatError(
                f"Invalid MindRecord index '{index_path}': it names the data file {[n[0] for n in names]}, not "
                f"'{os.path.basename(self.path)}'.")
        try:
            table = np.array(rows, np.int64).reshape(len(rows), len(INDEX_COLUMNS))
        except (TypeError, ValueError, OverflowError):
            raise MindRecordFormatError(f"Invalid MindRecord index '{index_path}': a location is not an "
                                        f"integer.") from None
        problem = self._check_locations(table)
        if problem:
            raise MindRecordFormatError(f"Invalid MindRecord index '{index_path}': {problem} (the index does not "
                                        f"match the data file '{self.path}').")
        self.locations = table

    def index_values(self):
        """Each row's index fields' values, as the index holds them (checked for type)."""
        if not self.index_fields:
            return [()] * self.row_count
        # MindSpore's column names: '-' and '.' become '_', then the schema id
        columns = ['"' + name.replace("-", "_").replace(".", "_") + '_0"' for name in self.index_fields]
        (values,) = self._query(f"SELECT {', '.join(columns)} FROM INDEXES ORDER BY ROW_ID")
        kinds = {name: kind for name, kind, _ in self.schema}
        for name, column in zip(self.index_fields, zip(*values)):
            want = (str,) if kinds[name] == "string" else (int,) if kinds[name].startswith("int") else (int, float)
            if not all(type(v) in want for v in column):
                raise MindRecordFormatError(f"Invalid MindRecord index '{self.path}{INDEX_SUFFIX}': index field "
                                            f"'{name}' holds a value that is not a {kinds[name]}.")
        if len(values) != self.row_count:
            raise MindRecordFormatError(f"Invalid MindRecord index '{self.path}{INDEX_SUFFIX}': it changed while "
                                        f"being read.")
        return [tuple(v) for v in values]

    def _check_locations(self, table):
        """Why the index entries do not fit the header's pages, or None."""
        n = len(table)
        if n != self.row_count:
            return f"it has {n} rows, the header {self.row_count}"
        if not n:
            return None
        row_id, group, raw_page, raw_off, raw_end, blob_page, blob_off, blob_end = table.T
        if (row_id != np.arange(n)).any():
            return "its ROW_IDs are not 0..n-1"
        if (raw_off < 0).any() or (blob_off < 0).any() or (raw_off + 8 > raw_end).any() \
                or (blob_off + 8 > blob_end).any():
            return "an entry has offsets out of order"
        # Blob pages hold consecutive rows (checked with the header): each row's page is known.
        pages = sorted((p for p in self._blob_pages.values() if p.end_row_id > p.start_row_id),
                       key=lambda p: p.start_row_id)
        starts = np.array([p.start_row_id for p in pages], np.int64)
        k = np.searchsorted(starts, row_id, side="right") - 1
        page_ids = np.array([p.page_id for p in pages], np.int64)[k]
        if (blob_page != page_ids).any() or (group != np.array([p.page_type_id for p in pages], np.int64)[k]).any():
            return "an entry's blob page or row group is not the one the header gives its row"
        first = row_id == starts[k]
        last = row_id == np.array([p.end_row_id - 1 for p in pages], np.int64)[k]
        if (blob_off[first] != 0).any() or (blob_end[last] != np.array([p.page_size for p in pages])[k][last]).any() \
                or (blob_off[1:][~first[1:]] != blob_end[:-1][~first[1:]]).any():
            return "the entries of a blob page are not back to back"
        # Raw entries lie inside raw pages and do not overlap.
        sizes = np.full(len(self.pages), -1, np.int64)
        for page in self._raw_pages.values():
            sizes[page.page_id] = page.page_size
        if (raw_page < 0).any() or (raw_page >= len(self.pages)).any():
            return "an entry names a page the header does not have"
        if (raw_end > sizes[raw_page]).any():
            return "an entry lies outside its raw page (or its page is not a raw page)"
        order = np.lexsort((raw_off, raw_page))
        same = raw_page[order][1:] == raw_page[order][:-1]
        if (raw_off[order][1:][same] < raw_end[order][:-1][same]).any():
            return "entries of a raw page overlap"
        return None

    def read_rows(self, rows, stored=False):
        """Rows `rows` (shard-local numbers) as lists of column values, one per schema field;
        with `stored`, non-blob fields are the values as stored (int, float, str), checked."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as error:
            raise MindRecordFormatError(f"Invalid MindRecord file '{self.path}': cannot open it: "
                                        f"{error.strerror}.") from None
        try:
            return [self._row(fd, int(i), stored) for i in rows]
        finally:
            os.close(fd)

    def _record(self, fd, page, start, end, what, i):
        at = self.header_size + self.page_size * page + start
        data = os.pread(fd, end - start, at)
        if len(data) != end - start:
            _fail(self.path, f"row {i}'s {what} lies past the end of the file (truncated)")
        if _U64.unpack_from(data)[0] != end - start - 8:
            _fail(self.path, f"row {i}'s {what} length {_U64.unpack_from(data)[0]} does not match the index "
                             f"({end - start - 8})")
        return memoryview(data)[8:]

    def _row(self, fd, i, stored):
        _, _, raw_page, raw_off, raw_end, blob_page, blob_off, blob_end = (int(v) for v in self.locations[i])
        raw = self._record(fd, raw_page, raw_off, raw_end, "raw fields", i)
        blob = self._record(fd, blob_page, blob_off, blob_end, "blob", i)
        try:
            fields = _msgpack.decode(raw)
            if not isinstance(fields, dict):
                raise ValueError("its raw fields are not a MessagePack map")
            blobs = dict(zip(self.blob_names, split_blob(blob, self.blob_names))) if self.blob_names else {}
            values = []
            for name, kind, shape in self.schema:
                if name in blobs:
                    values.append(blob_value(blobs[name], kind, shape, self.compress))
                elif name in fields:
                    value = raw_value(fields[name], kind)
                    values.append(fields[name] if stored else value)
                else:
                    raise ValueError(f"field '{name}' is missing")
        except ValueError as error:
            _fail(self.path, f"row {i} is malformed: {error}")
        return values


def open_set(path):
    """The shards of the set data file `path` belongs to, in shard order, each checked;
    the files are looked for beside `path`."""
    first = Shard(path)
    folder = os.path.dirname(path)
    shards = []
    for k, name in enumerate(first.addresses):
        other = os.path.join(folder, name)
        if k == first.shard_id and name == os.path.basename(path):
            shards.append(first)
            continue
        if not os.path.isfile(other):
            _fail(path, f"its shard '{other}' is missing")
        shards.append(Shard(other))
    check_same_set(shards)
    return shards


def check_same_set(shards):
    """MindRecordFormatError when the shards do not share header size, page size, version,
    schema and index fields (MindSpore reads only such sets)."""
    first = shards[0]
    for shard in shards[1:]:
        for what in ("version", "header_size", "page_size", "schema", "index_fields"):
            if getattr(shard, what) != getattr(first, what):
                _fail(shard.path, f"its {what} differs from that of '{first.path}' (files of one dataset share "
                                  f"them)")
