"""print_file_path: Print appends records to a file that parse_print reads back."""
import struct

import numpy as np
import pytest

import msrt as ms
from msrt import _C
from msrt.train.serialization import parse_print


def arrays():
    return [
        np.array([[1, 2, 3], [4, 5, 6]], np.int32),
        np.array([1.5, -2.0], np.float32),
        np.array([True, False, True]),
        np.array(3.25, np.float64),
        np.arange(6, dtype=np.int64).reshape(3, 2, 1),
        np.array([0.5, -1.0], np.float16),
        np.array([7, 8], np.uint8),
        np.array([-1, 2], np.int8),
        np.array([300, -300], np.int16),
        np.array([65535, 1], np.uint16),
        np.array([4294967295, 2], np.uint32),
        np.array([2**64 - 1, 3], np.uint64),
        np.array([1 + 2j, -0.5j], np.complex64),
        np.array([[1e300 - 1j]], np.complex128),
    ]


def test_records_round_trip_through_parse_print(in_tmp, capfd):
    ms.set_context(print_file_path="log.data")
    path = ms.get_context("print_file_path")
    values = arrays()
    ms.ops.print_("first:", ms.Tensor(values[0]))
    ms.ops.Print()(*[ms.Tensor(a) for a in values[1:]], "last", 7, False)
    assert capfd.readouterr().out == ""  # nothing reached the screen
    got = ms.parse_print(path)
    assert got[0] == "first:" and got[-3:] == ["last", "7", "False"]
    tensors = got[1:-3]
    assert len(tensors) == len(values)
    for t, a in zip(tensors, values):
        assert isinstance(t, ms.Tensor)
        assert t.shape == a.shape and t.asnumpy().dtype == a.dtype
        np.testing.assert_array_equal(t.asnumpy(), a)
    assert parse_print(path)[0] == "first:"  # also where MindSpore has it


def test_the_file_format_is_the_documented_one(in_tmp):
    ms.set_context(print_file_path="log.data")
    ms.ops.print_("hi", ms.Tensor(np.array([1.0, 2.0], np.float32)))
    data = open(ms.get_context("print_file_path"), "rb").read()
    assert data[:8] == b"MSRTPRNT" and struct.unpack("<II", data[8:16]) == (2, 0)
    assert struct.unpack("<I", data[16:20])[0] == _C._crc32c(data[:16])
    (body_length,) = struct.unpack("<Q", data[20:28])
    assert len(data) == 28 + body_length + 4
    assert struct.unpack("<I", data[-4:])[0] == _C._crc32c(data[20:-4])
    body = data[28:-4]
    count, kind, length = struct.unpack("<IBQ", body[0:13])
    assert (count, kind, length) == (2, 0, 2) and body[13:15] == b"hi"
    assert body[15] == 1 and body[16:17 + 7] == b"\x07float32"
    rank, dim, nbytes = struct.unpack("<BqQ", body[24:41])
    assert (rank, dim, nbytes) == (1, 2, 8)
    assert np.frombuffer(body[41:], np.float32).tolist() == [1.0, 2.0]


def test_an_existing_file_is_kept_and_the_stamped_name_receives_the_output(in_tmp):
    (in_tmp / "out.data").write_bytes(b"precious")
    ms.set_context(print_file_path="out.data")
    stamped = ms.get_context("print_file_path")
    assert stamped != str(in_tmp / "out.data")
    ms.ops.print_("x")
    assert (in_tmp / "out.data").read_bytes() == b"precious"
    assert ms.parse_print(stamped) == ["x"]


def test_switching_files_and_back_to_the_screen(in_tmp, capfd):
    ms.set_context(print_file_path="a.data")
    a = ms.get_context("print_file_path")
    ms.ops.print_("to a")
    ms.set_context(print_file_path="b.data")
    b = ms.get_context("print_file_path")
    ms.ops.print_("to b")
    ms.ops.print_("to b again")
    ms.set_context(print_file_path="")
    ms.ops.print_("to screen")
    assert ms.parse_print(a) == ["to a"]
    assert ms.parse_print(b) == ["to b", "to b again"]
    assert capfd.readouterr().out == "to screen\n"


def test_a_foreign_file_at_the_path_is_not_overwritten(in_tmp):
    ms.set_context(print_file_path="late.data")
    (in_tmp / "late.data").write_bytes(b"someone else's")
    with pytest.raises(OSError, match=r"'.*late.data' exists and is not an msrt print file"):
        ms.ops.print_("x")
    assert (in_tmp / "late.data").read_bytes() == b"someone else's"


def test_a_missing_directory_is_an_os_error_from_set_context(in_tmp):
    with pytest.raises(OSError, match=r"print_file_path': the folder of '.*p.data' does not exist"):
        ms.set_context(print_file_path="no/such/dir/p.data")
    assert ms.get_context("print_file_path") == ""
    ms.set_context(print_file_path="p.data")
    # A folder that disappears after the call fails the Print call.
    (in_tmp / "sub").mkdir()
    ms.set_context(print_file_path="sub/p.data")
    (in_tmp / "sub").rmdir()
    with pytest.raises(OSError, match=r"print_file_path: Can not open for appending '.*p.data'"):
        ms.ops.print_("x")


def test_a_directory_is_refused_when_set(in_tmp):
    with pytest.raises(OSError, match=r"'print_file_path' should be a file path, but '.*' is a directory"):
        ms.set_context(print_file_path=str(in_tmp))


def test_parse_print_errors(in_tmp):
    with pytest.raises(ValueError, match=r"For 'parse_print', the print file '.*nope.data' does not exist"):
        ms.parse_print("nope.data")
    (in_tmp / "empty.data").write_bytes(b"")
    with pytest.raises(ValueError, match=r"'.*empty.data' is empty"):
        ms.parse_print("empty.data")
    (in_tmp / "junk.data").write_bytes(b"not a print file at all")
    with pytest.raises(RuntimeError, match=r"failed to read the print file '.*junk.data' at byte 0: it is not an "
                                           r"msrt print file"):
        ms.parse_print("junk.data")
    with pytest.raises(TypeError, match=r"'print_file_name' must be str, but got int"):
        ms.parse_print(3)


def test_parse_print_rejects_truncated_and_future_files(in_tmp):
    ms.set_context(print_file_path="full.data")
    ms.ops.print_(ms.Tensor(np.arange(4, dtype=np.float32)))
    data = open(ms.get_context("print_file_path"), "rb").read()
    (in_tmp / "cut.data").write_bytes(data[:-3])
    with pytest.raises(RuntimeError, match=r"at byte \d+: a record of \d+ bytes does not fit in the file"):
        ms.parse_print("cut.data")
    (in_tmp / "v9.data").write_bytes(data[:8] + struct.pack("<I", 9) + data[12:])
    with pytest.raises(RuntimeError, match=r"format version is 9, but this build reads version 2"):
        ms.parse_print("v9.data")


def test_print_file_in_a_fresh_process_with_graph_mode_set(python_subprocess):
    # GRAPH_MODE networks record Print like any op; the sink is the same.
    proc = python_subprocess("""
        import numpy as np
        ms.set_context(mode=ms.GRAPH_MODE, print_file_path="g.data")

        class Net(ms.nn.Cell):
            def __init__(self):
                super().__init__()
                self.print = ms.ops.Print()

            def construct(self, x):
                self.print("input:", x)
                return x * 2

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Net()(ms.Tensor(np.array([1.0, 2.0], np.float32)))
        got = ms.parse_print(ms.get_context("print_file_path"))
        print("RESULT=" + json.dumps([got[0], got[1].asnumpy().tolist()]))
    """)
    assert proc.result == ["input:", [1.0, 2.0]]
