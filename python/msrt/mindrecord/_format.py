"""msrt's MindRecord layout: one data file per shard and a SQLite index beside it.

Note [MindRecord layout]: MindSpore's own MindRecord files (a JSON header,
fixed-size raw and blob pages, msgpack-encoded raw fields) are not
reproduced byte for byte: msrt writes a layout of its own with the same API
(`FileWriter` -> `MindDataset`), and reads only that layout. A data file is,
all integers little-endian:

    magic        8 bytes  b"MSRTMRD\\x01"
    header_len   u32      length of the header
    header_crc   u32      CRC-32C of the header
    header       JSON     version, shard_id, shard_addresses (file names of
                          all shards, in shard order), schema (a list of
                          [name, type, shape or null]), desc, index_fields,
                          row_count, table_crc (CRC-32C of the row table,
                          8 hex digits)
    row table    row_count x (u64 offset from the file start, u32 length,
                          u32 CRC-32C of the row)
    rows         each row: its fields in schema order --
                 int32/int64/float32/float64 scalar: the value's bytes;
                 string/bytes: u64 length, then the bytes (UTF-8 for string);
                 array: u32 ndim, ndim x i64 dims, then the elements' bytes.

The index `<data file>.db` is a SQLite database with the tables
SHARD_NAME(NAME) and INDEXES(ROW_ID, ROW_OFFSET, ROW_LENGTH, then one column
per index field), as MindSpore's index names them. Every part read is checked
(magic, lengths, CRCs, JSON keys); nothing read is executed (JSON and raw
bytes, no pickle). Both files are written whole through msrt's safe-write
helper (unique temporary file, fsync, rename; a symlink is replaced, never
written through).
"""
import json
import os
import sqlite3
import struct

import numpy as np

from .. import _C, _files

MAGIC = b"MSRTMRD\x01"
VERSION = 1
INDEX_SUFFIX = ".db"

SCALAR_TYPES = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}
ALL_TYPES = tuple(SCALAR_TYPES) + ("string", "bytes")
_PREAMBLE = struct.Struct("<8sII")
_TABLE_ENTRY = np.dtype([("offset", "<u8"), ("length", "<u4"), ("crc", "<u4")])
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")


class MindRecordFormatError(RuntimeError):
    """A MindRecord data file or index is not a well-formed msrt MindRecord file."""


def _crc(data):
    return _C._crc32c(bytes(data))


# --------------------------------------------------------------------------
# Rows to bytes

def encode_row(row, schema):
    """The bytes of one row (a dict already checked against `schema`)."""
    parts = []
    for name, kind, shape in schema:
        value = row[name]
        if shape is not None:
            array = np.ascontiguousarray(value, dtype=np.dtype(SCALAR_TYPES[kind]).newbyteorder("<"))
            parts.append(_U32.pack(array.ndim))
            parts.append(np.asarray(array.shape, "<i8").tobytes())
            parts.append(array.tobytes())
        elif kind in SCALAR_TYPES:
            parts.append(np.asarray(value, np.dtype(SCALAR_TYPES[kind]).newbyteorder("<")).tobytes())
        else:
            data = value.encode("utf-8") if kind == "string" else bytes(value)
            parts.append(_U64.pack(len(data)))
            parts.append(data)
    return b"".join(parts)


def encode_shard(header, rows):
    """(bytes of a data file holding `rows`, a list of encoded rows; row offsets; row lengths)."""
    table = np.zeros(len(rows), _TABLE_ENTRY)
    table["length"] = [len(r) for r in rows]
    table["crc"] = [_crc(r) for r in rows]
    header = dict(header, row_count=len(rows), table_crc="0" * 8)
    # table_crc is 8 hex digits whatever its value, so the header's length is known before the offsets.
    start = _PREAMBLE.size + len(json.dumps(header, sort_keys=True).encode()) + table.nbytes
    if rows:
        table["offset"] = start + np.concatenate([[0], np.cumsum(table["length"], dtype=np.uint64)[:-1]])
    text = json.dumps(dict(header, table_crc=f"{_crc(table.tobytes()):08x}"), sort_keys=True).encode()
    data = b"".join([_PREAMBLE.pack(MAGIC, len(text), _crc(text)), text, table.tobytes()] + rows)
    return data, table["offset"], table["length"]


def encode_index(shard_name, schema, index_fields, index_values, offsets, lengths):
    """The bytes of the SQLite index of one shard; `index_values` holds each row's index fields."""
    kinds = {name: kind for name, kind, _ in schema}
    sql_type = {"int32": "INTEGER", "int64": "INTEGER", "float32": "REAL", "float64": "REAL", "string": "TEXT"}
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE TABLE SHARD_NAME (NAME TEXT NOT NULL, PRIMARY KEY(NAME))")
        connection.execute("INSERT INTO SHARD_NAME VALUES (?)", (shard_name,))
        columns = "".join(f', "{name}" {sql_type[kinds[name]]}' for name in index_fields)
        connection.execute(f"CREATE TABLE INDEXES (ROW_ID INTEGER PRIMARY KEY, ROW_OFFSET INTEGER NOT NULL, "
                           f"ROW_LENGTH INTEGER NOT NULL{columns})")
        marks = ", ".join("?" * (3 + len(index_fields)))
        connection.executemany(f"INSERT INTO INDEXES VALUES ({marks})",
                               ((i, int(offsets[i]), int(lengths[i]), *values)
                                for i, values in enumerate(index_values)))
        connection.commit()
        return connection.serialize()
    finally:
        connection.close()


# --------------------------------------------------------------------------
# Reading

def _fail(path, what):
    raise MindRecordFormatError(f"Invalid MindRecord file '{path}': {what}.")


class Shard:
    """One data file, opened and checked (preamble, header, row table); rows decode on demand."""

    def __init__(self, path):
        self.path = path
        try:
            data = _files.read(path)
        except OSError as error:
            raise MindRecordFormatError(f"Invalid MindRecord file '{path}': cannot read it: {error}.") from None
        if len(data) < _PREAMBLE.size:
            _fail(path, f"{len(data)} bytes, too short for a MindRecord header")
        magic, length, crc = _PREAMBLE.unpack_from(data)
        if magic != MAGIC:
            _fail(path, "it does not start with msrt's MindRecord magic bytes (only files written by msrt's "
                        "FileWriter can be read)")
        text = data[_PREAMBLE.size:_PREAMBLE.size + length]
        if len(text) != length or _crc(text) != crc:
            _fail(path, "the header is truncated or its checksum does not match")
        try:
            header = json.loads(text)
            self.schema = [(str(n), str(k), None if s is None else [int(d) for d in s]) for n, k, s in header["schema"]]
            self.row_count = int(header["row_count"])
            self.addresses = [str(a) for a in header["shard_addresses"]]
            self.shard_id = int(header["shard_id"])
            self.index_fields = [str(f) for f in header["index_fields"]]
            self.desc = str(header["desc"])
            table_crc = int(header["table_crc"], 16)
            version = int(header["version"])
        except (ValueError, KeyError, TypeError) as error:
            _fail(path, f"its header is malformed ({type(error).__name__}: {error})")
        if version != VERSION:
            _fail(path, f"layout version {version}, this msrt reads version {VERSION}")
        if any(k not in ALL_TYPES for _, k, _ in self.schema) or self.row_count < 0:
            _fail(path, "its header holds an unknown field type or a negative row count")
        start = _PREAMBLE.size + length
        if len(data) < start + self.row_count * _TABLE_ENTRY.itemsize:
            _fail(path, "the row table is truncated")
        table = np.frombuffer(data, _TABLE_ENTRY, self.row_count, start)
        if _crc(table.tobytes()) != table_crc:
            _fail(path, "the row table's checksum does not match")
        ends = table["offset"].astype(np.uint64) + table["length"]
        if self.row_count and (ends.max() > len(data) or table["offset"].min() < start + table.nbytes):
            _fail(path, "a row lies outside the file (truncated?)")
        self._data = data
        self._table = table

    def raw(self, i):
        """The encoded bytes of row i, checked."""
        offset, length, crc = (int(v) for v in self._table[i])
        raw = self._data[offset:offset + length]
        if _crc(raw) != crc:
            _fail(self.path, f"row {i}'s checksum does not match")
        return raw

    def decode(self, i):
        """Row i as a list of arrays, one per schema field."""
        raw = self.raw(i)
        try:
            return self._fields(raw)
        except (ValueError, struct.error) as error:
            _fail(self.path, f"row {i} is malformed ({error})")

    def _fields(self, raw):
        values, at = [], 0
        for _, kind, shape in self.schema:
            if shape is not None:
                (ndim,) = _U32.unpack_from(raw, at)
                dims = np.frombuffer(raw, "<i8", ndim, at + 4)
                at += 4 + 8 * ndim
                if (dims < 0).any():
                    raise ValueError("negative dimension")
                dtype = np.dtype(SCALAR_TYPES[kind]).newbyteorder("<")
                count = int(np.prod(dims))
                if at + count * dtype.itemsize > len(raw):
                    raise ValueError("array past the end of the row")
                values.append(np.frombuffer(raw, dtype, count, at).astype(dtype.newbyteorder("=")).reshape(dims))
                at += count * dtype.itemsize
            elif kind in SCALAR_TYPES:
                dtype = np.dtype(SCALAR_TYPES[kind])
                values.append(np.frombuffer(raw, dtype.newbyteorder("<"), 1, at).astype(dtype).reshape(()))
                at += dtype.itemsize
            else:
                (size,) = _U64.unpack_from(raw, at)
                at += 8
                if at + size > len(raw):
                    raise ValueError("string past the end of the row")
                chunk = raw[at:at + size]
                at += size
                values.append(np.array(chunk.decode("utf-8")) if kind == "string"
                              else np.frombuffer(chunk, np.uint8).copy())
        if at != len(raw):
            raise ValueError(f"{len(raw) - at} bytes left over")
        return values


def check_index(path, shard):
    """Checks the SQLite index beside data file `path` against its shard."""
    index_path = path + INDEX_SUFFIX
    if not os.path.isfile(index_path):
        raise MindRecordFormatError(f"Invalid MindRecord file '{path}': its index file '{index_path}' is missing.")
    connection = sqlite3.connect(":memory:")
    try:
        connection.deserialize(_files.read(index_path))
        (count,) = connection.execute("SELECT COUNT(*) FROM INDEXES").fetchone()
        (name,) = connection.execute("SELECT NAME FROM SHARD_NAME").fetchone()
    except (sqlite3.Error, TypeError) as error:
        raise MindRecordFormatError(f"Invalid MindRecord index '{index_path}': {error}.") from None
    finally:
        connection.close()
    if count != shard.row_count or name != os.path.basename(path):
        raise MindRecordFormatError(
            f"Invalid MindRecord index '{index_path}': it describes {count} rows of '{name}', but the data file "
            f"'{os.path.basename(path)}' holds {shard.row_count} rows.")
