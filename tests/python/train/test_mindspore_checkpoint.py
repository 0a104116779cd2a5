"""MindSpore's checkpoint format: msrt writes it and reads it, including files
built here without msrt (bytes assembled from the protobuf wire format, and
messages made by the protobuf module from a schema declared in this file),
and it still reads its own older format. Faults raise ValueError naming the
file; load_param_into_net checks as MindSpore does and changes nothing when
it fails."""
import struct
import warnings
import zlib

import numpy as np
import pytest

import msrt as ms
from msrt import _C, nn
from msrt.train import serialization


# --- the wire format, by hand ----------------------------------------------------------------------------
def varint(value):
    out = b""
    while value >= 0x80:
        out += bytes([(value & 0x7F) | 0x80])
        value >>= 7
    return out + bytes([value])


def field(number, payload):
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def tensor_proto(dims, tensor_type, content):
    return b"".join(varint(1 << 3) + varint(d) for d in dims) + field(2, tensor_type.encode()) + field(3, content)


def record(tag, dims, tensor_type, content):
    return field(1, field(1, tag.encode()) + field(2, tensor_proto(dims, tensor_type, content)))


def with_crc(body):
    return body + b"crc_num" + zlib.crc32(body).to_bytes(10, "big")


# The dtypes msrt and MindSpore share, with MindSpore's tensor_type names.
DTYPES = [("bool_", "Bool", np.bool_), ("uint8", "UInt8", np.uint8), ("int8", "Int8", np.int8),
          ("int16", "Int16", np.int16), ("int32", "Int32", np.int32), ("int64", "Int64", np.int64),
          ("float16", "Float16", np.float16), ("bfloat16", "BFloat16", np.float32),
          ("float32", "Float32", np.float32), ("float64", "Float64", np.float64), ("uint16", "UInt16", np.uint16),
          ("uint32", "UInt32", np.uint32), ("uint64", "UInt64", np.uint64), ("complex64", "Complex64", np.complex64),
          ("complex128", "Complex128", np.complex128)]


def sample(np_type, shape, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(-3, 4, size=shape) * (0.5 if np.dtype(np_type).kind == "f" else 1)
    if np_type is np.bool_:
        values = values > 0
    if np_type is np.uint8:
        values = np.abs(values)
    return np.asarray(values).astype(np_type)


@pytest.mark.parametrize("name,_ms_name,np_type", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (2, 0, 3), (5,)])
def test_round_trip_of_every_dtype_and_shape(tmp_path, name, _ms_name, np_type, shape):
    array = sample(np_type, shape)
    path = str(tmp_path / "t.ckpt")
    ms.save_checkpoint({"t": ms.Tensor(array, getattr(ms, name))}, path)
    loaded = ms.load_checkpoint(path)["t"]
    assert loaded.dtype == getattr(ms, name) and loaded.shape == shape
    np.testing.assert_array_equal(loaded.asnumpy(), array)


def test_the_bytes_are_the_ones_mindspore_writes(tmp_path):
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    path = tmp_path / "net.ckpt"
    ms.save_checkpoint([{"name": "fc.weight", "data": ms.Tensor(weight)},
                        {"name": "step", "data": ms.Tensor(np.array(7, np.int64))},
                        {"name": "h", "data": ms.Tensor(np.array([1.5, -2.0]), ms.bfloat16)}], str(path))
    body = (record("fc.weight", [2, 3], "Float32", weight.tobytes())
            + record("step", [], "Int64", struct.pack("<q", 7))  # a scalar has no dims
            + record("h", [2], "BFloat16", struct.pack("<2H", 0x3FC0, 0xC000)))
    assert path.read_bytes() == with_crc(body)
    ms.save_checkpoint([{"name": "fc.weight", "data": ms.Tensor(weight)}], str(path), crc_check=False)
    assert path.read_bytes() == record("fc.weight", [2, 3], "Float32", weight.tobytes())
    # append_dict strings: dims [0], "str", NumPy's UTF-32 ('U' array bytes).
    ms.save_checkpoint({}, str(path), append_dict={"net_name": "LeNet5é", "empty": ""}, crc_check=False)
    assert path.read_bytes() == (record("net_name", [0], "str", np.array("LeNet5é").tobytes())
                                 + record("empty", [0], "str", np.array("").tobytes()))
    assert ms.load_checkpoint(str(path)) == {"net_name": "LeNet5é", "empty": ""}
    with pytest.raises(ValueError, match="not valid UTF-8"):
        ms.save_checkpoint({}, str(path), append_dict={"bad": "\ud800"})


def test_a_file_assembled_by_hand_as_mindspore_writes_it(tmp_path):
    big = np.arange(10, dtype=np.int32)
    body = (record("conv.weight", [2, 2], "Float16", np.array([[1, 2], [3, 4]], np.float16).tobytes())
            + record("global_step", [0], "Int32", struct.pack("<i", 1875))  # earlier releases' scalar
            + record("lr", [], "Float32", struct.pack("<f", 0.01))  # current releases' scalar
            + record("big", [10], "Int32", big[:4].tobytes())  # a tensor in three slices
            + record("big", [10], "Int32", big[4:8].tobytes())
            + record("big", [10], "Int32", big[8:].tobytes())
            + record("old_bf16", [2], "BFloat16", np.array([1.5, 3.0], np.float32).tobytes())  # older releases
            + record("net_name", [0], "str", "LeNet5".encode("utf-32-le")))
    path = tmp_path / "mindspore.ckpt"
    for blob in (body, with_crc(body)):
        path.write_bytes(blob)
        loaded = ms.load_checkpoint(str(path))
        assert list(loaded) == ["conv.weight", "global_step", "lr", "big", "old_bf16", "net_name"]
        assert loaded["conv.weight"].dtype == ms.float16
        assert loaded["conv.weight"].asnumpy().tolist() == [[1, 2], [3, 4]]
        assert loaded["global_step"].shape == () and int(loaded["global_step"].asnumpy()) == 1875
        assert loaded["lr"].dtype == ms.float32 and float(loaded["lr"].asnumpy()) == np.float32(0.01)
        np.testing.assert_array_equal(loaded["big"].asnumpy(), big)
        assert loaded["old_bf16"].dtype == ms.bfloat16 and loaded["old_bf16"].asnumpy().tolist() == [1.5, 3.0]
        assert loaded["net_name"] == "LeNet5"
        assert isinstance(loaded["big"], ms.Parameter) and loaded["big"].name == "big"


def schema():
    """MindSpore's checkpoint.proto, declared here for the protobuf module."""
    descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    from google.protobuf import descriptor_pool, message_factory

    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="msrt_test_checkpoint.proto", package="mstest", syntax="proto2")
    checkpoint = proto.message_type.add(name="Checkpoint")
    value = checkpoint.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=f.TYPE_STRING, label=f.LABEL_REQUIRED)
    value.field.add(name="tensor", number=2, type=f.TYPE_MESSAGE, type_name=".mstest.TensorProto",
                    label=f.LABEL_OPTIONAL)
    checkpoint.field.add(name="value", number=1, type=f.TYPE_MESSAGE, type_name=".mstest.Checkpoint.Value",
                         label=f.LABEL_REPEATED)
    tensor = proto.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, type=f.TYPE_INT64, label=f.LABEL_REPEATED)
    tensor.field.add(name="tensor_type", number=2, type=f.TYPE_STRING, label=f.LABEL_REQUIRED)
    tensor.field.add(name="tensor_content", number=3, type=f.TYPE_BYTES, label=f.LABEL_REQUIRED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("mstest.Checkpoint"))


def test_the_protobuf_module_reads_what_msrt_writes_and_msrt_reads_what_it_writes(tmp_path):
    checkpoint_class = schema()
    net = nn.Dense(3, 2)
    path = tmp_path / "dense.ckpt"
    ms.save_checkpoint(net, str(path), append_dict={"epoch_num": 3})
    blob = path.read_bytes()
    assert blob[-17:-10] == b"crc_num" and int.from_bytes(blob[-10:], "big") == zlib.crc32(blob[:-17])
    parsed = checkpoint_class()
    parsed.ParseFromString(blob[:-17])
    assert [v.tag for v in parsed.value] == ["weight", "bias", "epoch_num"]
    weight = parsed.value[0].tensor
    assert list(weight.dims) == [2, 3] and weight.tensor_type == "Float32"
    np.testing.assert_array_equal(np.frombuffer(weight.tensor_content, np.float32).reshape(2, 3),
                                  net.weight.asnumpy())
    assert list(parsed.value[2].tensor.dims) == [] and parsed.value[2].tensor.tensor_type == "Int64"

    # A file the protobuf module writes, one message per record as MindSpore does.
    written = b""
    for tag, dims, tensor_type, content in [("a", [2], "Int64", np.array([5, -6], np.int64).tobytes()),
                                            ("b", [1, 2], "Float64", np.array([[0.25, 8]]).tobytes()),
                                            ("c", [3], "Bool", bytes([1, 0, 1]))]:
        message = checkpoint_class()
        value = message.value.add()
        value.tag = tag
        value.tensor.dims.extend(dims)
        value.tensor.tensor_type = tensor_type
        value.tensor.tensor_content = content
        written += message.SerializeToString()
    path.write_bytes(with_crc(written))
    loaded = ms.load_checkpoint(str(path), crc_check=True)
    assert loaded["a"].asnumpy().tolist() == [5, -6] and loaded["a"].dtype == ms.int64
    assert loaded["b"].asnumpy().tolist() == [[0.25, 8]] and loaded["c"].asnumpy().tolist() == [True, False, True]


def test_crc_check(tmp_path):
    path = tmp_path / "c.ckpt"
    ms.save_checkpoint({"w": ms.Tensor(np.ones(3, np.float32))}, str(path), crc_check=False)
    with pytest.warns(UserWarning, match="does not contain the crc code"):
        ms.load_checkpoint(str(path), crc_check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ms.load_checkpoint(str(path))
    ms.save_checkpoint({"w": ms.Tensor(np.ones(3, np.float32))}, str(path))
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))
    # Checked whenever present, with or without crc_check.
    for crc_check in (False, True):
        with pytest.raises(ValueError, match=f"'{path}' is corrupt: the CRC-32 in its crc_num trailer"):
            ms.load_checkpoint(str(path), crc_check=crc_check)
    with pytest.raises(TypeError, match="crc_check"):
        ms.save_checkpoint({"w": ms.Tensor([1.0])}, str(path), crc_check=1)
    with pytest.raises(TypeError, match="crc_check"):
        ms.load_checkpoint(str(path), crc_check="yes")
    with pytest.raises(ValueError, match="format must be"):
        ms.save_checkpoint({"w": ms.Tensor([1.0])}, str(path), format="h5")


@pytest.mark.parametrize("blob,message", [
    (b"", "is empty"),
    (b"PK\x03\x04 a zip file", "is not a checkpoint"),
    (record("w", [2, 3], "Float32", bytes(20)), "should hold 24 bytes, but its content has 20"),
    (record("w", [2], "Int4", bytes(1)), "tensor_type 'Int4', which msrt does not support"),
    (record("w", [2], "Complex64", bytes(15)), "should hold 16 bytes, but its content has 15"),
    (record("w", [2], "Bool", b"\x01\x05"), "booleans are 0 or 1"),
    (record("w", [2**62, 2**62], "Float32", b""), "overflows"),
    (record("w", [2], "Int8", b"\x01\x02")[:-1], "is truncated"),
    (record("w", [1], "Int8", b"\x01") + b"\x10\x01", "holds field 2"),
    (record("w", [1], "Int8", b"\x01") * 2 + record("v", [1], "Int8", b"\x01") + record("w", [1], "Int8", b"\x01"),
     "appears twice"),
    (field(1, field(1, b"w") + field(2, field(3, b""))), "lacks required fields"),
])
def test_faults_raise_value_error_naming_the_file(tmp_path, blob, message):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(blob)
    with pytest.raises(ValueError, match=message) as info:
        ms.load_checkpoint(str(path))
    assert str(path) in str(info.value)


def test_unsigned_and_complex_tensor_types_as_mindspore_names_them(tmp_path):
    arrays = {"u16": np.array([1, 65535], np.uint16), "u32": np.array([7], np.uint32),
              "u64": np.array([2**64 - 1], np.uint64), "c64": np.array([1 + 2j], np.complex64),
              "c128": np.array([[3 - 4j]], np.complex128)}
    names = {"u16": "UInt16", "u32": "UInt32", "u64": "UInt64", "c64": "Complex64", "c128": "Complex128"}
    path = tmp_path / "hand.ckpt"
    path.write_bytes(b"".join(record(k, list(v.shape), names[k], v.tobytes()) for k, v in arrays.items()))
    loaded = ms.load_checkpoint(str(path))
    for k, v in arrays.items():
        assert loaded[k].dtype == getattr(ms, v.dtype.name)
        np.testing.assert_array_equal(loaded[k].asnumpy(), v)
    out = tmp_path / "written.ckpt"
    ms.save_checkpoint({k: ms.Tensor(v) for k, v in arrays.items()}, str(out), crc_check=False)
    assert out.read_bytes() == path.read_bytes()


def test_an_empty_result_is_an_error_as_in_mindspore(tmp_path):
    path = str(tmp_path / "e.ckpt")
    ms.save_checkpoint({}, path)
    with pytest.raises(ValueError, match="parameter dict is empty"):
        ms.load_checkpoint(path)
    ms.save_checkpoint({"a.w": ms.Tensor([1.0])}, path)
    with pytest.raises(ValueError, match="parameter dict is empty"):
        ms.load_checkpoint(path, filter_prefix="a.")


def test_every_truncation_raises_or_is_a_shorter_file_without_its_crc(tmp_path):
    path = tmp_path / "t.ckpt"
    ms.save_checkpoint({"a": ms.Tensor(np.arange(4, dtype=np.float32)), "b": ms.Tensor([True, False])},
                       str(path))
    blob = path.read_bytes()
    for n in range(len(blob)):
        path.write_bytes(blob[:n])
        try:
            loaded = ms.load_checkpoint(str(path))
        except ValueError as e:
            assert str(path) in str(e)
            continue
        # Cut exactly after a record: MindSpore's format can not tell, but the
        # crc_num trailer is gone, which crc_check=True reports.
        assert len(loaded) in (1, 2)
        with pytest.warns(UserWarning, match="crc"):
            ms.load_checkpoint(str(path), crc_check=True)


def test_msrt_format_files_are_still_read(tmp_path):
    path = str(tmp_path / "old.ckpt")
    items = [("w", ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))), ("b", ms.Tensor([1.5], ms.bfloat16))]
    _C._save_checkpoint(path, serialization._entries(items, "test"), "msrt")
    assert open(path, "rb").read(8) == b"MSRTCKPT"
    loaded = ms.load_checkpoint(path, crc_check=True)
    assert loaded["w"].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert loaded["b"].dtype == ms.bfloat16 and loaded["b"].asnumpy().tolist() == [1.5]


# --- load_param_into_net ----------------------------------------------------------------------------------
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.count = ms.Parameter(ms.Tensor(np.array([2], np.int32)), name="count", requires_grad=False)

    def construct(self, x):
        return self.fc(x)


def snapshot(net):
    return {p.name: p.asnumpy().copy() for p in net.get_parameters()}


def param(array, name):
    return ms.Parameter(ms.Tensor(array), name=name)


def test_a_failed_load_changes_nothing():
    net = Net()
    before = snapshot(net)
    # fc.weight would load, fc.bias has the wrong shape: neither is copied.
    bad = {"fc.weight": param(np.ones((3, 4), np.float32), "fc.weight"),
           "fc.bias": param(np.ones(4, np.float32), "fc.bias")}
    with pytest.raises(RuntimeError, match="fc.bias in the argument 'net' should have the same shape"):
        ms.load_param_into_net(net, bad)
    for name, value in snapshot(net).items():
        np.testing.assert_array_equal(value, before[name])
    # An int checkpoint value for a float parameter is refused even when not strict, as in MindSpore.
    bad = {"fc.weight": param(np.ones((3, 4), np.float32), "fc.weight"),
           "fc.bias": param(np.ones(3, np.int32), "fc.bias")}
    for strict in (False, True):
        with pytest.raises(RuntimeError, match="should have the same type"):
            ms.load_param_into_net(net, bad, strict_load=strict)
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), before["fc.weight"])


def test_dtype_conversion_follows_mindspore():
    net = Net()
    values = {"fc.weight": param(np.full((3, 4), 0.5, np.float64), "fc.weight"),
              "fc.bias": param(np.zeros(3, np.float16), "fc.bias"),
              "count": param(np.array([9], np.int64), "count"),
              "extra": param(np.zeros(1, np.float32), "extra")}
    assert ms.load_param_into_net(net, values) == ([], ["extra"])
    assert net.fc.weight.dtype == ms.float32 and net.fc.weight.asnumpy().tolist() == [[0.5] * 4] * 3
    assert net.count.dtype == ms.int32 and net.count.asnumpy().tolist() == [9]
    with pytest.raises(RuntimeError, match="should have the same type"):
        ms.load_param_into_net(Net(), values, strict_load=True)
    # bool and uint8 convert to nothing else.
    with pytest.raises(RuntimeError, match="should have the same type"):
        ms.load_param_into_net(Net(), {"count": param(np.array([1], np.uint8), "count")})


def test_trailing_ones_are_reshaped_and_lists_are_returned(tmp_path):
    net = Net()
    values = {"fc.weight": param(np.ones((3, 4, 1, 1), np.float32), "fc.weight")}
    others = [p.name for p in net.get_parameters() if p.name != "fc.weight"]
    assert ms.load_param_into_net(net, values) == (others, []) and sorted(others) == ["count", "fc.bias"]
    assert net.fc.weight.shape == (3, 4) and net.fc.weight.asnumpy().sum() == 12
    path = str(tmp_path / "n.ckpt")
    ms.save_checkpoint(net, path)
    other = Net()
    ms.load_checkpoint(path, net=other)
    for name, value in snapshot(net).items():
        np.testing.assert_array_equal(snapshot(other)[name], value)


def test_checkpoint_config_crc_check(tmp_path):
    from msrt.train import CheckpointConfig

    assert CheckpointConfig().crc_check is True
    assert CheckpointConfig(crc_check=False).crc_check is False
    with pytest.raises(TypeError, match="crc_check"):
        CheckpointConfig(crc_check=None)
