"""FileWriter -> MindDataset round trips, schema and data checks, corrupt files."""
import os
import sqlite3

import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import rows
from msrt.mindrecord import (
    FileWriter,
    MindRecordFormatError,
    MRMDefineIndexError,
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


def write(path, data, shard_num=1, schema=SCHEMA, index=None, overwrite=False):
    writer = FileWriter(str(path), shard_num, overwrite)
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


def test_sharded_files_read_from_any_shard_in_order(tmp_path):
    data = make_rows(23)
    base = tmp_path / "sharded.mindrecord"
    write(base, data, shard_num=4)
    names = sorted(os.listdir(tmp_path))
    assert names == sorted([f"sharded.mindrecord{i}{suffix}" for i in range(4) for suffix in ("", ".db")])
    for k in (0, 3):
        got = rows(ds.MindDataset(f"{base}{k}", columns_list=["i64", "text"], shuffle=False))
        assert [int(r[0]) for r in got] == [d["i64"] for d in data]
        assert [str(r[1]) for r in got] == [d["text"] for d in data]
    only = rows(ds.MindDataset([f"{base}1"], columns_list=["i64"], shuffle=False))
    assert [int(r[0]) for r in only] == [d["i64"] for d in data[5:10]]


def test_shuffle_shards_sampler_and_num_samples(tmp_path):
    data = [{"i32": i} for i in range(40)]
    path = write(tmp_path / "ints.mindrecord", data, schema={"i32": {"type": "int32"}})
    ds.config.set_seed(3)
    shuffled = [int(r[0]) for r in rows(ds.MindDataset(path))]
    assert sorted(shuffled) == list(range(40)) and shuffled != list(range(40))
    parts = [[int(r[0]) for r in rows(ds.MindDataset(path, num_shards=4, shard_id=k, shuffle=False))]
             for k in range(4)]
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
        got = connection.execute('SELECT ROW_ID, "i64", "text" FROM INDEXES ORDER BY ROW_ID').fetchall()
        name = connection.execute("SELECT NAME FROM SHARD_NAME").fetchone()[0]
    finally:
        connection.close()
    assert got == [(i, d["i64"], d["text"]) for i, d in enumerate(data)]
    assert name == "idx.mindrecord"


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
    writer.add_schema({"a": {"type": "int32"}, "v": {"type": "float32", "shape": [2]}})
    good = {"a": 1, "v": np.ones(2, np.float32)}
    bad = [{"v": np.ones(2, np.float32)},  # missing field
           {"a": "1", "v": np.ones(2, np.float32)},  # wrong type
           {"a": 2 ** 31, "v": np.ones(2, np.float32)},  # out of int32
           {"a": 1, "v": np.ones(2, np.float64)},  # wrong dtype
           {"a": 1, "v": np.ones(3, np.float32)}]  # wrong size
    with pytest.warns(UserWarning) as record:
        writer.write_raw_data([good] + bad + [good])
    assert len(record) == len(bad)
    assert "there is not field: 'a'" in str(record[0].message)
    writer.commit()
    assert len(rows(ds.MindDataset(str(tmp_path / "w.mindrecord")))) == 2


def corrupt(path, offset, value=None):
    data = bytearray(open(path, "rb").read())
    if value is None:
        del data[offset:]
    else:
        data[offset] ^= value
    open(path, "wb").write(bytes(data))


def test_corrupt_files_raise_typed_errors_naming_the_file(tmp_path):
    data = make_rows(5)
    path = write(tmp_path / "c.mindrecord", data)
    size = os.path.getsize(path)
    # magic, header, last row's bytes (its checksum), truncation
    for offset, value in ((0, 1), (20, 1), (size - 3, 0xFF), (size - 10, None)):
        write(path, data, overwrite=True)
        corrupt(path, offset, value)
        with pytest.raises(MindRecordFormatError, match="c.mindrecord"):
            rows(ds.MindDataset(path, shuffle=False))
    assert issubclass(MindRecordFormatError, RuntimeError)


def test_missing_or_mismatched_index(tmp_path):
    path = write(tmp_path / "m.mindrecord", [{"i32": 1}], schema={"i32": {"type": "int32"}})
    other = write(tmp_path / "n.mindrecord", [{"i32": 1}, {"i32": 2}], schema={"i32": {"type": "int32"}})
    os.replace(other + ".db", path + ".db")
    with pytest.raises(MindRecordFormatError, match="describes 2 rows"):
        ds.MindDataset(path)
    os.remove(path + ".db")
    with pytest.raises(MindRecordFormatError, match="index file .* is missing"):
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
    with pytest.raises(MindRecordFormatError, match="magic"):
        ds.MindDataset(str(not_ours))


def test_open_for_append_adds_rows_to_every_shard(tmp_path):
    data = make_rows(9)
    base = tmp_path / "app.mindrecord"
    write(base, data[:5], shard_num=2, index=["i64", "text"])
    writer = FileWriter.open_for_append(f"{base}1")
    with pytest.raises(MRMInvalidSchemaError, match="added already"):
        writer.add_schema(SCHEMA)
    writer.write_raw_data(data[5:])
    writer.commit()
    got = rows(ds.MindDataset(f"{base}0", shuffle=False))
    # shard 0: rows 0-1 then 5-6; shard 1: rows 2-4 then 7-8
    order = [0, 1, 5, 6, 2, 3, 4, 7, 8]
    assert len(got) == 9
    for row, i in zip(got, order):
        check_row(row, data[i], sorted(SCHEMA))
    connection = sqlite3.connect(f"{base}1.db")
    try:
        indexed = connection.execute('SELECT "i64", "text" FROM INDEXES ORDER BY ROW_ID').fetchall()
    finally:
        connection.close()
    assert indexed == [(data[i]["i64"], data[i]["text"]) for i in (2, 3, 4, 7, 8)]
    with pytest.raises(ParamValueError, match="does not exist"):
        FileWriter.open_for_append(str(tmp_path / "nope.mindrecord"))


def test_any_damaged_byte_or_truncation_is_a_format_error(tmp_path):
    """Every byte of a data file is covered by a checksum: flipping any one, or cutting the
    file anywhere, raises MindRecordFormatError (never another error, never wrong rows)."""
    path = write(tmp_path / "f.mindrecord", make_rows(4))
    original = open(path, "rb").read()
    rng = np.random.default_rng(7)
    cuts = rng.integers(0, len(original), 40).tolist()
    flips = rng.integers(0, len(original), 150).tolist()
    cases = [original[:n] for n in cuts]
    cases += [original[:i] + bytes([original[i] ^ int(rng.integers(1, 256))]) + original[i + 1:] for i in flips]
    for damaged in cases:
        open(path, "wb").write(damaged)
        with pytest.raises(MindRecordFormatError, match="f.mindrecord"):
            rows(ds.MindDataset(path, shuffle=False))


def test_damaged_index_is_a_format_error(tmp_path):
    path = write(tmp_path / "g.mindrecord", make_rows(3))
    index = open(path + ".db", "rb").read()
    open(path + ".db", "wb").write(index[:len(index) // 2])
    with pytest.raises(MindRecordFormatError, match="g.mindrecord.db"):
        ds.MindDataset(path)
    open(path + ".db", "wb").write(b"not a database at all" * 50)
    with pytest.raises(MindRecordFormatError, match="g.mindrecord.db"):
        ds.MindDataset(path)


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
