"""FileWriter -> MindDataset round trips in MindSpore's MindRecord format, the format's
bytes against its specification (Note [MindRecord layout]), schema and data checks,
corrupt files."""
import gc
import json
import os
import sqlite3
import struct

import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import rows
from msrt.mindrecord import _format, _msgpack
from msrt.mindrecord import (
    FileReader,
    FileWriter,
    MindRecordFormatError,
    MRMDefineIndexError,
    MRMInvalidHeaderSizeError,
    MRMInvalidPageSizeError,
    MRMInvalidSchemaError,
    MRMValidateDataError,
    ParamTypeError,
    ParamValueError,
)

SCHEMA = {
    "i32": {"type": "int32"},
    "i64": {"type": "int64"},
    "f32": {"type": "float32"},
    "f64": {"type": "float64"},
    "text": {"type": "string"},
    "blob": {"type": "bytes"},
    "ai32": {"type": "int32", "shape": [2, 3]},
    "ai64": {"type": "int64", "shape": [-1]},
    "af32": {"type": "float32", "shape": [-1, 2]},
    "af64": {"type": "float64", "shape": [4]},
}


def make_rows(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        out.append({
            "i32": int(rng.integers(-2 ** 31, 2 ** 31 - 1)),
            "i64": int(rng.integers(-2 ** 62, 2 ** 62)),
            "f32": float(rng.standard_normal()),
            "f64": float(rng.standard_normal()),
            "text": "row é " * (i % 4) + str(i),
            "blob": rng.bytes(i % 7),
            "ai32": rng.integers(-100, 100, (2, 3)).astype(np.int32),
            "ai64": rng.integers(-10 ** 12, 10 ** 12, i % 5 + 1).astype(np.int64),
            "af32": rng.standard_normal((i % 3 + 1, 2)).astype(np.float32),
            "af64": rng.standard_normal(4),
        })
    return out


HEADER, PAGE = 1 << 14, 1 << 15  # the smallest sizes, to keep test files small


def write(path, data, shard_num=1, schema=SCHEMA, index=None, overwrite=False, page=PAGE):
    writer = FileWriter(str(path), shard_num, overwrite)
    writer.set_header_size(HEADER)
    writer.set_page_size(page)
    writer.add_schema(schema, "test data")
    if index:
        writer.add_index(index)
    writer.write_raw_data(data)
    writer.commit()
    return str(path)


def check_row(row, expected, columns):
    for name, value in zip(columns, row):
        want = expected[name]
        kind = SCHEMA[name]["type"]
        if kind == "string":
            assert value.dtype.kind == "U" and value.shape == () and str(value) == want
        elif kind == "bytes":
            assert value.dtype == np.uint8 and value.ndim == 1 and value.tobytes() == want
        elif "shape" in SCHEMA[name]:
            assert value.dtype == np.dtype(kind)
            np.testing.assert_array_equal(value, np.asarray(want).reshape(SCHEMA[name]["shape"]))
        else:
            assert value.dtype == np.dtype(kind) and value.shape == ()
            assert value == np.asarray(want, np.dtype(kind))  # float32 rounds as NumPy rounds


def read_all(path, **kwargs):
    return rows(ds.MindDataset(path, shuffle=False, **kwargs))


def test_round_trip_every_field_type(tmp_path):
    data = make_rows(30)
    path = write(tmp_path / "all.mindrecord", data)
    dataset = ds.MindDataset(path, shuffle=False)
    columns = sorted(SCHEMA)
    assert dataset.get_col_names() == columns
    assert dataset.get_dataset_size() == 30
    got = rows(dataset)
    assert len(got) == 30
    for row, expected in zip(got, data):
        check_row(row, expected, columns)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shape", [[3], [2, -1], [-1, 2, 2], [1, 1, 5]])
def test_arrays_of_each_dtype_and_shape(tmp_path, dtype, shape):
    kind = np.dtype(dtype).name
    rng = np.random.default_rng(1)
    values = []
    for i in range(5):
        size = int(np.prod([d if d != -1 else i + 1 for d in shape]))
        if kind.startswith("int"):
            info = np.iinfo(dtype)
            # every compressed width: int8, int16, int32 and (for int64) int64 values
            pool = np.array([0, -1, 127, -128, 300, -40000, 2 ** 20, info.max, info.min], np.int64)
            values.append(rng.choice(pool, size).astype(dtype))
        else:
            values.append(rng.standard_normal(size).astype(dtype))
    schema = {"a": {"type": kind, "shape": shape}}
    path = write(tmp_path / "arr.mindrecord", [{"a": v} for v in values], schema=schema)
    for (got,), want in zip(read_all(path), values):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want.reshape(shape))


def test_blob_layouts_one_field_none_all(tmp_path):
    only_bytes = write(tmp_path / "b.mindrecord", [{"img": b"\x00\x01abc"}, {"img": b""}],
                       schema={"img": {"type": "bytes"}})
    assert [r[0].tobytes() for r in read_all(only_bytes)] == [b"\x00\x01abc", b""]
    no_blob = write(tmp_path / "s.mindrecord", [{"x": 1.5, "t": "é"}],
                    schema={"x": {"type": "float64"}, "t": {"type": "string"}})
    ((t, x),) = read_all(no_blob)
    assert str(t) == "é" and float(x) == 1.5
    shard = _format.Shard(no_blob)
    blob_page = shard.pages[0]
    assert blob_page.page_type == "BLOB_DATA"
    data = open(no_blob, "rb").read()
    # no blob field: each row's blob is 4 zero bytes
    assert data[HEADER:HEADER + 12] == struct.pack("<Q", 4) + b"\0\0\0\0"
    all_blob = write(tmp_path / "a.mindrecord", [{"v": np.arange(3, dtype=np.float32)}],
                     schema={"v": {"type": "float32", "shape": [3]}})
    data = open(all_blob, "rb").read()
    # every field a blob: the raw fields are MindSpore's dummy {"id": 0}
    assert data[HEADER + PAGE:] == struct.pack("<Q", 5) + b"\x81\xa2id\x00"
    assert data[HEADER:HEADER + 20] == struct.pack("<Q", 12) + np.arange(3, dtype="<f4").tobytes()


def test_golden_bytes_of_a_small_file(tmp_path):
    """The bytes of a one-row file, spelled out from the format's description."""
    path = str(tmp_path / "g.mindrecord")
    writer = FileWriter(path)
    writer.set_header_size(HEADER)
    writer.set_page_size(PAGE)
    writer.add_schema({"label": {"type": "int32"}, "name": {"type": "string"}, "img": {"type": "bytes"},
                       "arr": {"type": "int64", "shape": [-1]}}, "d")
    writer.add_index(["label"])
    writer.write_raw_data([{"label": -200, "name": "a", "img": b"xyz", "arr": np.array([1, 300, -70000, 2 ** 40])}])
    writer.commit()
    data = open(path, "rb").read()
    arr = (b"\x00\x00\x00\x04" + bytes([0b00011011]) + b"\x01" + struct.pack("<h", 300) + struct.pack("<i", -70000)
           + struct.pack("<q", 2 ** 40))
    blob = struct.pack(">Q", len(arr)) + arr + struct.pack(">Q", 3) + b"xyz"
    raw = b"\x82\xa5label\xd1" + struct.pack(">h", -200) + b"\xa4name\xa1a"
    header = ('{"header_size":16384,"index_fields":[{"index_field":"label","schema_id":0}],'
              '"page":[{"end_row_id":1,"page_id":0,"page_size":%d,"page_type":"BLOB_DATA","page_type_id":0,'
              '"row_group_ids":[{"id":0,"offset":0}],"shard_id":0,"start_row_id":0},'
              '{"end_row_id":0,"page_id":1,"page_size":%d,"page_type":"RAW_DATA","page_type_id":0,'
              '"row_group_ids":[{"id":0,"offset":0}],"shard_id":0,"start_row_id":0}],'
              '"page_size":32768,"compression_size":%d,"schema":[{"blob_fields":["arr","img"],"desc":"d",'
              '"schema":{"arr":{"shape":[-1],"type":"int64"},"img":{"type":"bytes"},"label":{"type":"int32"},'
              '"name":{"type":"string"}}}],"shard_addresses":["g.mindrecord"],"shard_id":0,"statistics":null,'
              '"version":"3.0"}') % (8 + len(blob), 8 + len(raw), 32 - len(arr))
    assert data[:8] == struct.pack("<Q", len(header))
    assert data[8:8 + len(header)].decode() == header
    assert data[8 + len(header):HEADER] == bytes(HEADER - 8 - len(header))
    assert data[HEADER:HEADER + 8 + len(blob)] == struct.pack("<Q", len(blob)) + blob
    assert data[HEADER + 8 + len(blob):HEADER + PAGE] == bytes(PAGE - 8 - len(blob))
    assert data[HEADER + PAGE:] == struct.pack("<Q", len(raw)) + raw
    connection = sqlite3.connect(path + ".db")
    try:
        tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        entries = connection.execute("SELECT * FROM INDEXES").fetchall()
        names = connection.execute("SELECT NAME FROM SHARD_NAME").fetchall()
    finally:
        connection.close()
    assert tables == [
        ("INDEXES", "CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL, "
                    "PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL, ROW_GROUP_ID         INT  "
                    "NOT NULL, PAGE_ID_BLOB         INT  NOT NULL, PAGE_OFFSET_BLOB     INT  NOT NULL, "
                    "PAGE_OFFSET_BLOB_END INT  NOT NULL,INC_0 INT, label_0 INTEGER, PRIMARY KEY(ROW_ID,INC_0))"),
        ("SHARD_NAME", "CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL)")]
    # ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, ROW_GROUP_ID, PAGE_ID_BLOB, PAGE_OFFSET_BLOB,
    # PAGE_OFFSET_BLOB_END, INC_0, label_0
    assert entries == [(0, 1, 0, 8 + len(raw), 0, 0, 0, 8 + len(blob), 0, -200)]
    assert names == [("g.mindrecord",)]
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_msgpack_forms():
    cases = [(0, b"\x00"), (127, b"\x7f"), (128, b"\xcc\x80"), (65535, b"\xcd\xff\xff"), (2 ** 32, b"\xcf" +
             struct.pack(">Q", 2 ** 32)), (-32, b"\xe0"), (-33, b"\xd0\xdf"), (-129, b"\xd1\xff\x7f"),
             (-2 ** 63, b"\xd3" + struct.pack(">q", -2 ** 63)), (1.5, b"\xcb" + struct.pack(">d", 1.5)),
             ("x" * 31, b"\xbf" + b"x" * 31), ("x" * 32, b"\xd9\x20" + b"x" * 32),
             ("x" * 256, b"\xda\x01\x00" + b"x" * 256), ({"b": 1, "a": None}, b"\x82\xa1a\xc0\xa1b\x01")]
    for value, encoded in cases:
        assert _msgpack.encode(value) == encoded
        assert _msgpack.decode(encoded) == value
    assert _msgpack.decode(b"\xca" + struct.pack(">f", 0.5)) == 0.5
    assert _msgpack.decode(b"\x92\xc3\xc4\x02ab") == [True, b"ab"]
    for bad in (b"", b"\xd9\x05abc", b"\xdf\xff\xff\xff\xff", b"\x81\x01\x02", b"\xc1", b"\xd4\x00\x00", b"\x00\x00",
                b"\x91" * 100 + b"\x00", b"\xa2\xff\xfe"):
        with pytest.raises(ValueError):
            _msgpack.decode(bad)


def test_integer_compression_round_trip_and_bytes():
    values = np.array([0, 1, -1, 127, -128, 128, -129, 32767, -32768, 32768, 2 ** 31 - 1, -2 ** 31, 2 ** 31,
                       -2 ** 63, 2 ** 63 - 1], np.int64)
    packed = _format.compress_ints(values)
    assert packed[:4] == struct.pack(">I", len(values))
    assert packed[4:8] == bytes([0b00000000, 0b00010101, 0b01101010, 0b11111100])
    np.testing.assert_array_equal(_format.uncompress_ints(packed), values)
    assert _format.compress_ints(np.zeros(0, np.int64)) == b"\0\0\0\0"
    for bad in (packed[:-1], packed + b"\0", b"\0\0\0\x09\x00"):
        with pytest.raises(ValueError):
            _format.uncompress_ints(bad)


def test_sharded_files_read_from_any_shard_in_order(tmp_path):
    data = make_rows(23)
    base = tmp_path / "sharded.mindrecord"
    write(base, data, shard_num=4)
    names = sorted(os.listdir(tmp_path))
    assert names == sorted([f"sharded.mindrecord{i}{suffix}" for i in range(4) for suffix in ("", ".db")])
    for k in (0, 3):
        got = read_all(f"{base}{k}", columns_list=["i64", "text"])
        assert [int(r[0]) for r in got] == [d["i64"] for d in data]
        assert [str(r[1]) for r in got] == [d["text"] for d in data]
    # 23 rows on 4 shards: 6, 6, 6, 5
    only = read_all([f"{base}1"], columns_list=["i64"])
    assert [int(r[0]) for r in only] == [d["i64"] for d in data[6:12]]
    both = read_all([f"{base}3", f"{base}0"], columns_list=["i64"])
    assert [int(r[0]) for r in both] == [d["i64"] for d in data[18:] + data[:6]]
    header = json.loads(open(f"{base}2", "rb").read()[8:8 + struct.unpack("<Q", open(f"{base}2", "rb").read(8))[0]])
    assert header["shard_id"] == 2 and header["shard_addresses"] == [f"sharded.mindrecord{i}" for i in range(4)]


def test_many_shards_are_zero_padded(tmp_path):
    base = tmp_path / "p.mindrecord"
    write(base, [{"i32": i} for i in range(12)], shard_num=12, schema={"i32": {"type": "int32"}})
    data_files = sorted(n for n in os.listdir(tmp_path) if not n.endswith(".db"))
    assert data_files == [f"p.mindrecord{k:02d}" for k in range(12)]
    assert [int(r[0]) for r in read_all(f"{base}07")] == list(range(12))


def test_shuffle_shards_sampler_and_num_samples(tmp_path):
    data = [{"i32": i} for i in range(40)]
    path = write(tmp_path / "ints.mindrecord", data, schema={"i32": {"type": "int32"}})
    ds.config.set_seed(3)
    shuffled = [int(r[0]) for r in rows(ds.MindDataset(path))]
    assert sorted(shuffled) == list(range(40)) and shuffled != list(range(40))
    parts = [[int(r[0]) for r in read_all(path, num_shards=4, shard_id=k)] for k in range(4)]
    assert sorted(sum(parts, [])) == list(range(40))
    subset = rows(ds.MindDataset(path, sampler=ds.SubsetSampler([5, 1, 39])))
    assert [int(r[0]) for r in subset] == [5, 1, 39]
    assert ds.MindDataset(path, num_samples=7).get_dataset_size() == 7


def test_pipeline_on_minddataset(tmp_path):
    data = make_rows(10)
    path = write(tmp_path / "p.mindrecord", data)
    dataset = ds.MindDataset(path, columns_list=["af64", "i32"], shuffle=False).batch(4)
    batches = rows(dataset)
    np.testing.assert_array_equal(batches[0][0], np.stack([d["af64"] for d in data[:4]]))
    assert batches[-1][1].tolist() == [d["i32"] for d in data[8:]]


def test_index_file_holds_index_fields(tmp_path):
    data = make_rows(6)
    path = write(tmp_path / "idx.mindrecord", data, index=["i64", "text"])
    connection = sqlite3.connect(path + ".db")
    try:
        got = connection.execute("SELECT ROW_ID, INC_0, i64_0, INC_1, text_0 FROM INDEXES ORDER BY ROW_ID").fetchall()
    finally:
        connection.close()
    assert got == [(i, 0, d["i64"], 0, d["text"]) for i, d in enumerate(data)]
    header = _format.Shard(path)
    assert header.index_fields == ["i64", "text"]
    # without add_index every scalar and string field is an index field, in name order
    auto = write(tmp_path / "auto.mindrecord", data)
    assert _format.Shard(auto).index_fields == ["f32", "f64", "i32", "i64", "text"]
    connection = sqlite3.connect(auto + ".db")
    try:
        floats = connection.execute("SELECT f32_0, f64_0 FROM INDEXES ORDER BY ROW_ID").fetchall()
    finally:
        connection.close()
    # as MindSpore stores them: the Python float given, also for a float32 field
    assert floats == [(d["f32"], d["f64"]) for d in data]


def test_pages_fill_and_rows_cross_pages(tmp_path):
    """Rows larger than a page's share spread over several blob and raw pages, each row
    group of a raw page naming its blob page."""
    rng = np.random.default_rng(5)
    data = [{"img": rng.bytes(9000 + i), "name": "n" * 3000 + str(i), "k": i} for i in range(40)]
    schema = {"img": {"type": "bytes"}, "name": {"type": "string"}, "k": {"type": "int64"}}
    path = write(tmp_path / "pg.mindrecord", data[:25], schema=schema)
    writer = FileWriter.open_for_append(path)
    writer.write_raw_data(data[25:])
    writer.commit()
    shard = _format.Shard(path)
    blob_pages = [p for p in shard.pages if p.page_type == "BLOB_DATA"]
    raw_pages = [p for p in shard.pages if p.page_type == "RAW_DATA"]
    assert len(blob_pages) >= 10 and len(raw_pages) >= 3
    assert all(p.page_size <= PAGE for p in shard.pages)
    groups = sorted(g for p in raw_pages for g, _ in p.row_group_ids)
    assert groups == sorted(p.page_type_id for p in blob_pages)
    got = read_all(path)
    assert [r[0].tobytes() for r in got] == [d["img"] for d in data]
    assert [int(r[1]) for r in got] == list(range(40))
    assert [str(r[2]) for r in got] == [d["name"] for d in data]


def test_append_moves_the_last_row_group_when_its_raw_page_is_full(tmp_path):
    """Blob pages of 3 rows and one raw page of 28 KB: the 2 appended rows fit the last
    blob page, so the last raw row group moves to a new raw page to make room."""
    data = [{"img": bytes([i]) * 10000, "name": chr(65 + i) * 4000} for i in range(9)]
    schema = {"img": {"type": "bytes"}, "name": {"type": "string"}}
    path = write(tmp_path / "sh.mindrecord", data[:7], schema=schema)
    before = _format.Shard(path)
    assert [(p.page_type, p.end_row_id - p.start_row_id) for p in before.pages] == [
        ("BLOB_DATA", 3), ("BLOB_DATA", 3), ("BLOB_DATA", 1), ("RAW_DATA", 0)]
    assert before.pages[3].row_group_ids == [[0, 0], [1, 12051], [2, 24102]]
    writer = FileWriter.open_for_append(path)
    writer.write_raw_data(data[7:])
    writer.commit()
    after = _format.Shard(path)
    assert [p.page_type for p in after.pages] == ["BLOB_DATA"] * 3 + ["RAW_DATA"] * 2
    assert after.pages[3].row_group_ids == [[0, 0], [1, 12051]] and after.pages[3].page_size == 24102
    assert after.pages[4].row_group_ids == [[2, 0]] and after.pages[4].page_type_id == 4
    assert after.pages[2].end_row_id == 9
    got = read_all(path)
    assert [(r[0].tobytes(), str(r[1])) for r in got] == [(d["img"], d["name"]) for d in data]


def test_open_for_append_adds_rows_to_every_shard(tmp_path):
    data = make_rows(9)
    base = tmp_path / "app.mindrecord"
    write(base, data[:5], shard_num=2, index=["i64", "text"])
    writer = FileWriter.open_for_append(f"{base}1")
    with pytest.raises(MRMInvalidSchemaError, match="repeatedly"):
        writer.add_schema(SCHEMA)
    writer.write_raw_data(data[5:])
    writer.commit()
    got = read_all(f"{base}0")
    # shard 0: rows 0-2 then 5-6; shard 1: rows 3-4 then 7-8
    order = [0, 1, 2, 5, 6, 3, 4, 7, 8]
    assert len(got) == 9
    for row, i in zip(got, order):
        check_row(row, data[i], sorted(SCHEMA))
    connection = sqlite3.connect(f"{base}1.db")
    try:
        indexed = connection.execute("SELECT i64_0, text_0 FROM INDEXES ORDER BY ROW_ID").fetchall()
    finally:
        connection.close()
    assert indexed == [(data[i]["i64"], data[i]["text"]) for i in (3, 4, 7, 8)]
    assert _format.Shard(f"{base}0").compression_size == _format.Shard(f"{base}1").compression_size > 0
    with pytest.raises(ParamValueError, match="does not exist"):
        FileWriter.open_for_append(str(tmp_path / "nope.mindrecord"))


def test_version_2_files_are_read_and_appended_uncompressed(tmp_path, monkeypatch):
    """Format "2.0" stores int arrays as plain little-endian elements."""
    monkeypatch.setattr(_format, "VERSION", "2.0")
    schema = {"v": {"type": "int64", "shape": [-1]}}
    path = write(tmp_path / "v2.mindrecord", [{"v": np.array([1, -2, 3])}], schema=schema)
    monkeypatch.undo()
    data = open(path, "rb").read()
    assert data[HEADER:HEADER + 32] == struct.pack("<Q", 24) + np.array([1, -2, 3], "<i8").tobytes()
    writer = FileWriter.open_for_append(path)
    writer.write_raw_data([{"v": np.array([2 ** 40])}])
    writer.commit()
    shard = _format.Shard(path)
    assert shard.version == "2.0" and not shard.compress
    assert [r[0].tolist() for r in read_all(path)] == [[1, -2, 3], [2 ** 40]]


def test_default_sizes_leave_holes(tmp_path):
    path = str(tmp_path / "d.mindrecord")
    writer = FileWriter(path)
    writer.add_schema({"img": {"type": "bytes"}, "k": {"type": "int32"}})
    writer.write_raw_data([{"img": b"abc", "k": 1}])
    writer.commit()
    shard = _format.Shard(path)
    assert (shard.header_size, shard.page_size) == (1 << 24, 1 << 25)
    assert os.path.getsize(path) == (1 << 24) + (1 << 25) + 8 + len(b"\x81\xa1k\x01")
    assert [(int(r[1]), r[0].tobytes()) for r in read_all(path)] == [(1, b"abc")]


def test_commit_without_rows_and_uncommitted_writer(tmp_path):
    path = str(tmp_path / "e.mindrecord")
    writer = FileWriter(path)
    writer.add_schema({"k": {"type": "int32"}})
    writer.commit()
    assert _format.Shard(path).row_count == 0
    assert ds.MindDataset(path).get_dataset_size() == 0
    other = str(tmp_path / "u.mindrecord")
    writer = FileWriter(other, 2)
    writer.add_schema({"k": {"type": "int32"}})
    writer.write_raw_data([{"k": 1}, {"k": 2}])
    assert any(name.endswith(".tmp") for name in os.listdir(tmp_path))
    del writer
    gc.collect()
    assert sorted(os.listdir(tmp_path)) == ["e.mindrecord", "e.mindrecord.db"]


def test_sizes_and_rows_that_do_not_fit(tmp_path):
    writer = FileWriter(str(tmp_path / "z.mindrecord"))
    for bad in (1 << 13, (1 << 27) + 4, (1 << 14) + 2):
        with pytest.raises(MRMInvalidHeaderSizeError):
            writer.set_header_size(bad)
    for bad in (1 << 14, (1 << 28) + 4, (1 << 15) + 2):
        with pytest.raises(MRMInvalidPageSizeError):
            writer.set_page_size(bad)
    with pytest.raises(ParamTypeError):
        writer.set_page_size("big")
    writer.set_header_size(HEADER)
    writer.set_page_size(PAGE)
    writer.add_schema({"img": {"type": "bytes"}})
    with pytest.raises(MRMValidateDataError, match="set_page_size"):
        writer.write_raw_data([{"img": b"x" * PAGE}])
    with pytest.raises(MRMInvalidPageSizeError, match="already"):
        writer.set_page_size(PAGE * 2)
    writer.write_raw_data([{"img": b"x" * 20000} for _ in range(300)])  # 300 pages: the header outgrows 16 KB
    with pytest.raises(MRMValidateDataError, match="set_header_size"):
        writer.commit()


@pytest.mark.parametrize("content, message", [
    ([1], "not a dict"),
    ({}, "empty"),
    ({"a-b": {"type": "int32"}}, "should be composed"),
    ({"a": "int32"}, "value is not a dict"),
    ({"a": {"shape": [2]}}, "miss schema type"),
    ({"a": {"type": "int16"}}, "illegal attribute 'int16'"),
    ({"a": {"type": "string", "shape": [2]}}, "illegal attribute 'string'"),
    ({"a": {"type": "int32", "shape": [0]}}, "positive ints"),
    ({"a": {"type": "int32", "shape": [-1, -1]}}, "at most one -1"),
])
def test_bad_schema(tmp_path, content, message):
    writer = FileWriter(str(tmp_path / "x.mindrecord"))
    with pytest.raises(MRMInvalidSchemaError, match=message):
        writer.add_schema(content)


def test_writer_argument_errors(tmp_path):
    with pytest.raises(ParamTypeError):
        FileWriter(3)
    with pytest.raises(ParamValueError, match="should between 1 and 1000"):
        FileWriter(str(tmp_path / "x"), 1001)
    with pytest.raises(ValueError, match="does not exist"):
        FileWriter(str(tmp_path / "missing" / "x"))
    writer = FileWriter(str(tmp_path / "x.mindrecord"))
    with pytest.raises(MRMValidateDataError, match="add_schema first"):
        writer.write_raw_data([{"a": 1}])
    writer.add_schema({"a": {"type": "int32"}, "b": {"type": "bytes"}, "c": {"type": "int32", "shape": [2]}})
    with pytest.raises(MRMDefineIndexError, match="not in schema"):
        writer.add_index(["z"])
    with pytest.raises(MRMDefineIndexError, match="not primitive"):
        writer.add_index(["b"])
    with pytest.raises(MRMDefineIndexError, match="not primitive"):
        writer.add_index(["c"])
    with pytest.raises(ParamTypeError, match="should be list"):
        writer.write_raw_data({"a": 1})
    writer.write_raw_data([{"a": 1, "b": b"", "c": np.zeros(2, np.int32)}])
    writer.commit()
    with pytest.raises(MRMValidateDataError, match="committed"):
        writer.write_raw_data([{"a": 1, "b": b"", "c": np.zeros(2, np.int32)}])


def test_existing_files_need_overwrite(tmp_path):
    path = write(tmp_path / "e.mindrecord", [{"i32": 1}], schema={"i32": {"type": "int32"}})
    with pytest.raises(RuntimeError, match="already exist"):
        FileWriter(path)
    writer = FileWriter(path, overwrite=True)
    writer.add_schema({"i32": {"type": "int32"}})
    writer.write_raw_data([{"i32": 7}, {"i32": 8}])
    writer.commit()
    assert [int(r[0]) for r in rows(ds.MindDataset(path, shuffle=False))] == [7, 8]


def test_symlink_is_replaced_not_written_through(tmp_path):
    target = tmp_path / "target.txt"
    target.write_bytes(b"keep")
    link = tmp_path / "l.mindrecord"
    link.symlink_to(target)
    writer = FileWriter(str(link), overwrite=True)
    writer.add_schema({"i32": {"type": "int32"}})
    writer.write_raw_data([{"i32": 1}])
    writer.commit()
    assert target.read_bytes() == b"keep" and not link.is_symlink()
    assert [int(r[0]) for r in rows(ds.MindDataset(str(link), shuffle=False))] == [1]


def test_rows_not_matching_schema_are_dropped_with_warning(tmp_path):
    writer = FileWriter(str(tmp_path / "w.mindrecord"))
    writer.set_page_size(PAGE)
    writer.set_header_size(HEADER)
    writer.add_schema({"a": {"type": "int32"}, "v": {"type": "float32", "shape": [2]}})
    good = {"a": 1, "v": np.ones(2, np.float32)}
    bad = [{"v": np.ones(2, np.float32)},  # missing field
           {"a": "1", "v": np.ones(2, np.float32)},  # wrong type
           {"a": 2 ** 31, "v": np.ones(2, np.float32)},  # out of int32
           {"a": 1, "v": np.array(["x", "y"])},  # not numeric
           {"a": 1, "v": np.ones(3, np.float32)}]  # wrong size
    with pytest.warns(UserWarning) as record:
        writer.write_raw_data([good] + bad + [good, {"a": 2, "v": np.array([1.5, 2.5])}])
    assert len(record) == len(bad)
    assert "there is not field: 'a'" in str(record[0].message)
    writer.commit()
    got = read_all(str(tmp_path / "w.mindrecord"))
    assert len(got) == 3
    # as in MindSpore, an array is stored in its field's type
    assert got[2][1].dtype == np.float32 and got[2][1].tolist() == [1.5, 2.5]


def corrupt(path, offset, value=None):
    data = bytearray(open(path, "rb").read())
    if value is None:
        del data[offset:]
    else:
        data[offset] ^= value
    open(path, "wb").write(bytes(data))


def test_damaged_structure_raises_format_errors_naming_the_file(tmp_path):
    data = make_rows(5)
    path = write(tmp_path / "c.mindrecord", data)
    size = os.path.getsize(path)
    shard = _format.Shard(path)
    raw_page = HEADER + PAGE * shard.pages[1].page_id
    header_length = struct.unpack("<Q", open(path, "rb").read(8))[0]
    cases = [
        (0, 0x40),  # header length: past the file
        (10, 0x01),  # header JSON
        (8 + header_length - 3, 0x08),  # the version string's last character
        (HEADER, 0x01),  # the first blob length prefix
        (raw_page, 0x01),  # the first raw length prefix
        (raw_page + 8, 0x70),  # the first row's MessagePack map byte
        (size - 1, None),  # truncated
        (HEADER + 100, None),  # truncated inside the pages
        (100, None),  # truncated inside the header
    ]
    for offset, value in cases:
        write(path, data, overwrite=True)
        corrupt(path, offset, value)
        with pytest.raises(MindRecordFormatError, match="c.mindrecord"):
            rows(ds.MindDataset(path, shuffle=False))
    assert issubclass(MindRecordFormatError, RuntimeError)


def test_any_damaged_byte_or_truncation_never_escapes_as_another_error(tmp_path):
    """MindRecord has no checksum: a flipped byte inside a value may go unnoticed. Any
    damage either raises MindRecordFormatError or reads rows of the schema's types;
    every truncation raises."""
    path = write(tmp_path / "f.mindrecord", make_rows(4))
    shard = _format.Shard(path)
    end = max(HEADER + PAGE * p.page_id + p.page_size for p in shard.pages)
    original = open(path, "rb").read()
    header_length = struct.unpack("<Q", original[:8])[0]
    rng = np.random.default_rng(7)
    used = list(range(0, 8 + header_length)) + [i for p in shard.pages
                                                for i in range(HEADER + PAGE * p.page_id,
                                                               HEADER + PAGE * p.page_id + p.page_size)]
    flips = rng.choice(used, 200).tolist()
    cuts = rng.integers(0, end, 40).tolist()
    for n in cuts:
        open(path, "wb").write(original[:n])
        with pytest.raises(MindRecordFormatError, match="f.mindrecord"):
            rows(ds.MindDataset(path, shuffle=False))
    for i in flips:
        open(path, "wb").write(original[:i] + bytes([original[i] ^ int(rng.integers(1, 256))]) + original[i + 1:])
        try:
            got = rows(ds.MindDataset(path, shuffle=False))
        except MindRecordFormatError as error:
            assert "f.mindrecord" in str(error)
            continue
        kinds = {name: spec["type"] for name, spec in SCHEMA.items()}
        for row in got:
            for name, value in zip(sorted(SCHEMA), row):
                want = np.uint8 if kinds[name] == "bytes" else np.str_ if kinds[name] == "string" else kinds[name]
                assert value.dtype.type == np.dtype(want).type


def test_missing_or_mismatched_index(tmp_path):
    schema = {"i32": {"type": "int32"}}
    path = write(tmp_path / "m.mindrecord", [{"i32": 1}], schema=schema)
    other = write(tmp_path / "n.mindrecord", [{"i32": 1}, {"i32": 2}], schema=schema)
    os.replace(other + ".db", path + ".db")
    with pytest.raises(MindRecordFormatError, match="names the data file"):
        ds.MindDataset(path)
    connection = sqlite3.connect(path + ".db")
    connection.execute("UPDATE SHARD_NAME SET NAME = 'm.mindrecord'")
    connection.commit()
    connection.close()
    with pytest.raises(MindRecordFormatError, match="2 rows, the header 1"):
        ds.MindDataset(path)
    write(path, [{"i32": 1}, {"i32": 2}], schema=schema, overwrite=True)
    connection = sqlite3.connect(path + ".db")
    connection.execute("UPDATE INDEXES SET PAGE_OFFSET_BLOB = 3 WHERE ROW_ID = 1")
    connection.commit()
    connection.close()
    with pytest.raises(MindRecordFormatError, match="back to back"):
        ds.MindDataset(path)
    os.remove(path + ".db")
    with pytest.raises(MindRecordFormatError, match="index file .* is missing"):
        ds.MindDataset(path)


def test_damaged_index_is_a_format_error(tmp_path):
    path = write(tmp_path / "g.mindrecord", make_rows(3))
    index = open(path + ".db", "rb").read()
    open(path + ".db", "wb").write(index[:len(index) // 2])
    with pytest.raises(MindRecordFormatError, match="g.mindrecord.db"):
        ds.MindDataset(path)
    open(path + ".db", "wb").write(b"not a database at all" * 50)
    with pytest.raises(MindRecordFormatError, match="g.mindrecord.db"):
        ds.MindDataset(path)


def test_reader_argument_errors(tmp_path):
    path = write(tmp_path / "r.mindrecord", [{"i32": 1}], schema={"i32": {"type": "int32"}})
    with pytest.raises(ValueError, match="does not exist"):
        ds.MindDataset(str(tmp_path / "nope"))
    with pytest.raises(TypeError):
        ds.MindDataset(5)
    with pytest.raises(ValueError, match="not in the MindRecord schema"):
        ds.MindDataset(path, columns_list=["zz"])
    not_ours = tmp_path / "plain.bin"
    not_ours.write_bytes(b"\0" * 64)
    with pytest.raises(MindRecordFormatError, match="not MindRecord JSON"):
        ds.MindDataset(str(not_ours))
    not_ours.write_bytes(b"\xff" * 64)
    with pytest.raises(MindRecordFormatError, match="header length"):
        ds.MindDataset(str(not_ours))
    other = write(tmp_path / "o.mindrecord", [{"f": 1.0}], schema={"f": {"type": "float32"}})
    with pytest.raises(MindRecordFormatError, match="schema differs"):
        ds.MindDataset([path, other])


def test_shuffle_modes(tmp_path):
    base = tmp_path / "s.mindrecord"
    write(base, [{"i32": i} for i in range(40)], shard_num=4, schema={"i32": {"type": "int32"}})
    files = [list(range(k * 10, (k + 1) * 10)) for k in range(4)]

    def ids(**kwargs):
        return [int(r[0]) for r in rows(ds.MindDataset(f"{base}0", **kwargs))]

    ds.config.set_seed(2)
    by_files = ids(shuffle=ds.Shuffle.FILES)
    chunks = [by_files[i:i + 10] for i in range(0, 40, 10)]
    assert sorted(chunks) == files and chunks != files  # whole files, each in order, files reordered
    in_files = ids(shuffle=ds.Shuffle.INFILE)
    chunks = [in_files[i:i + 10] for i in range(0, 40, 10)]
    assert [sorted(c) for c in chunks] == files and chunks != files  # files in order, rows shuffled
    everything = ids(shuffle=ds.Shuffle.GLOBAL)
    assert sorted(everything) == list(range(40))
    assert [sorted(everything[i:i + 10]) for i in range(0, 40, 10)] != files
    assert len(ids(shuffle=ds.Shuffle.INFILE, num_samples=15)) == 15
    with pytest.raises(NotImplementedError, match="shards only"):
        ds.MindDataset(f"{base}0", shuffle=ds.Shuffle.FILES, num_shards=2, shard_id=0)
    with pytest.raises(RuntimeError, match="sampler and shuffle"):
        ds.MindDataset(f"{base}0", shuffle=ds.Shuffle.INFILE, sampler=ds.SequentialSampler())
    with pytest.raises(TypeError):
        ds.MindDataset(f"{base}0", shuffle="files")


def test_file_reader_yields_rows_as_mindspore_gives_them(tmp_path):
    data = make_rows(7)
    base = tmp_path / "fr.mindrecord"
    write(base, data, shard_num=2)
    reader = FileReader(f"{base}1")
    assert reader.len() == 7
    assert reader.schema() == SCHEMA
    got = list(reader.get_next())
    reader.close()
    assert len(got) == 7
    for row, want in zip(got, data):
        assert set(row) == set(SCHEMA)
        for name in ("i32", "i64", "text", "blob"):
            assert row[name] == want[name] and isinstance(row[name], type(want[name]))
        assert row["f64"] == want["f64"] and row["f32"] == want["f32"]  # the stored Python float
        for name in ("ai32", "ai64", "af32", "af64"):
            assert row[name].dtype == want[name].dtype
            np.testing.assert_array_equal(row[name], want[name].reshape(SCHEMA[name]["shape"]))
    whole = write(tmp_path / "w.mindrecord", [{"f": 2.0}, {"f": 2.5}], schema={"f": {"type": "float64"}})
    assert [r["f"] for r in FileReader(whole, columns=["f"]).get_next()] == [2, 2.5]
    only = list(FileReader([f"{base}0"], columns=["text", "blob"]).get_next())
    assert [set(r) for r in only] == [{"text", "blob"}] * 4
    with pytest.raises(ParamValueError, match="not found"):
        FileReader(whole, columns=["zz"])
    with pytest.raises(ParamTypeError):
        FileReader(whole, columns="f")
    with pytest.raises(ParamValueError, match="num_consumer"):
        FileReader(whole, num_consumer=0)
    with pytest.raises(ParamValueError, match="does not exist"):
        FileReader(str(tmp_path / "none"))


def test_append_checks_the_index_values_it_keeps(tmp_path):
    schema = {"k": {"type": "int32"}, "t": {"type": "string"}}
    path = write(tmp_path / "iv.mindrecord", [{"k": 1, "t": "a"}], schema=schema)
    connection = sqlite3.connect(path + ".db")
    connection.execute("UPDATE INDEXES SET k_0 = 'one'")
    connection.commit()
    connection.close()
    assert [int(r[0]) for r in read_all(path)] == [1]  # rows are read from the data file
    with pytest.raises(MindRecordFormatError, match="index field 'k' holds a value that is not a int32"):
        FileWriter.open_for_append(path)
    assert sorted(os.listdir(tmp_path)) == ["iv.mindrecord", "iv.mindrecord.db"]
