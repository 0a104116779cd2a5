"""Checkpoints: round trips, loading into nets, and files in msrt's own format
that are truncated, corrupt or not checkpoints at all (they raise ValueError,
never crash). MindSpore's format: test_mindspore_checkpoint.py."""
import os
import struct
import zlib

import numpy as np
import pytest

import msrt as ms
from msrt import nn
from msrt.train import serialization


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.scale = ms.Parameter(ms.Tensor(np.array([1.5], np.float16)), name="scale")
        self.steps = ms.Parameter(ms.Tensor(np.array(7, np.int64)), name="steps", requires_grad=False)

    def construct(self, x):
        return self.fc(x) * self.scale


def values(net):
    return {p.name: p.asnumpy().copy() for p in net.get_parameters()}


def test_round_trip_of_a_cell(tmp_path):
    net = Net()
    path = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, path)
    loaded = ms.load_checkpoint(path)
    assert list(loaded) == [p.name for p in net.get_parameters()]
    for name, value in values(net).items():
        p = loaded[name]
        assert isinstance(p, ms.Parameter) and p.name == name
        assert p.dtype == net.parameters_dict()[name].dtype
        np.testing.assert_array_equal(p.asnumpy(), value)
    other = Net()
    assert ms.load_param_into_net(other, loaded) == ([], [])
    for name, value in values(net).items():
        np.testing.assert_array_equal(other.parameters_dict()[name].asnumpy(), value)


def test_load_checkpoint_with_net_and_filters(tmp_path):
    net = Net()
    path = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, path)
    other = Net()
    loaded = ms.load_checkpoint(path, net=other)
    np.testing.assert_array_equal(other.fc.weight.asnumpy(), net.fc.weight.asnumpy())
    assert set(loaded) == set(values(net))
    assert set(ms.load_checkpoint(path, filter_prefix="fc.")) == {"scale", "steps"}
    assert set(ms.load_checkpoint(path, filter_prefix=["fc.", "scale"])) == {"steps"}
    assert set(ms.load_checkpoint(path, specify_prefix="fc.")) == {"fc.weight", "fc.bias"}
    assert set(ms.load_checkpoint(path, choice_func=lambda n: n.endswith("weight"))) == {"fc.weight"}


def test_save_list_dict_append_dict_and_suffix(tmp_path):
    data = [{"name": "a", "data": ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))},
            {"name": "b", "data": ms.Parameter(ms.Tensor([True, False]), name="ignored")}]
    base = str(tmp_path / "list")
    ms.save_checkpoint(data, base, append_dict={"epoch": 3, "lr": 0.5, "flag": True})
    assert os.path.exists(base + ".ckpt")
    loaded = ms.load_checkpoint(base + ".ckpt")
    np.testing.assert_array_equal(loaded["a"].asnumpy(), np.arange(6).reshape(2, 3))
    assert loaded["b"].dtype == ms.bool_ and loaded["b"].asnumpy().tolist() == [True, False]
    assert loaded["epoch"].dtype == ms.int64 and int(loaded["epoch"].asnumpy()) == 3
    assert loaded["lr"].dtype == ms.float32 and float(loaded["lr"].asnumpy()) == 0.5
    assert loaded["flag"].dtype == ms.bool_
    ms.save_checkpoint({"x": ms.Tensor(np.ones((0, 2), np.float32)), "y": ms.Tensor([1.5, 2.5], ms.bfloat16)},
                       str(tmp_path / "dict.ckpt"), choice_func=lambda n: True)
    loaded = ms.load_checkpoint(str(tmp_path / "dict.ckpt"))
    assert loaded["x"].shape == (0, 2)
    assert loaded["y"].dtype == ms.bfloat16 and loaded["y"].asnumpy().tolist() == [1.5, 2.5]


def test_save_errors(tmp_path):
    with pytest.raises(TypeError, match="save_obj"):
        ms.save_checkpoint(3, str(tmp_path / "x.ckpt"))
    with pytest.raises(TypeError, match="'name' and 'data'"):
        ms.save_checkpoint([{"name": "a"}], str(tmp_path / "x.ckpt"))
    with pytest.raises(TypeError, match="must be a Tensor"):
        ms.save_checkpoint([{"name": "a", "data": object()}], str(tmp_path / "x.ckpt"))
    with pytest.raises(ValueError, match="appears twice"):
        ms.save_checkpoint({"a": ms.Tensor([1.0])}, str(tmp_path / "x.ckpt"), append_dict={"a": 1})
    with pytest.raises(TypeError, match="ckpt_file_name"):
        ms.save_checkpoint({"a": ms.Tensor([1.0])}, 3)
    assert not os.listdir(tmp_path)  # nothing half-written is left behind


def test_strict_and_non_strict_loading():
    net = Net()
    good = {p.name: ms.Parameter(ms.Tensor(p.asnumpy() + 1), name=p.name) for p in net.get_parameters()}
    extra = dict(good, unused=ms.Parameter(ms.Tensor([1.0]), name="unused"))
    del extra["steps"]
    param_not_load, ckpt_not_load = ms.load_param_into_net(net, extra)
    assert param_not_load == ["steps"] and ckpt_not_load == ["unused"]
    np.testing.assert_array_equal(net.fc.bias.asnumpy(), good["fc.bias"].asnumpy())
    # A prefix on the checkpoint names still matches when not strict.
    prefixed = {"network." + k: v for k, v in good.items()}
    assert ms.load_param_into_net(Net(), prefixed) == ([], [])
    assert ms.load_param_into_net(Net(), prefixed, strict_load=True)[0] == [p.name for p in net.get_parameters()]
    # dtypes convert unless strict.
    converted = dict(good, scale=ms.Parameter(ms.Tensor(np.array([2.0], np.float32)), name="scale"))
    target = Net()
    ms.load_param_into_net(target, converted)
    assert target.scale.dtype == ms.float16 and target.scale.asnumpy().tolist() == [2.0]
    with pytest.raises(RuntimeError, match="same type"):
        ms.load_param_into_net(Net(), converted, strict_load=True)
    wrong = dict(good, **{"fc.weight": ms.Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="fc.weight")})
    with pytest.raises(RuntimeError, match="same shape"):
        ms.load_param_into_net(Net(), wrong)
    with pytest.raises(TypeError, match="parameter_dict"):
        ms.load_param_into_net(Net(), [1, 2])
    with pytest.raises(TypeError, match="net"):
        ms.load_param_into_net(object(), {})


def write_valid(path):
    """A file in msrt's own format (save_checkpoint writes MindSpore's)."""
    items = [("w", ms.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))),
             ("b", ms.Tensor(np.array([1, 2, 3], np.int64))), ("flag", ms.Tensor([True]))]
    ms._C._save_checkpoint(str(path), serialization._entries(items, "test"), "msrt")
    return path.read_bytes()


def test_the_file_format_is_the_documented_one(tmp_path):
    blob = write_valid(tmp_path / "f.ckpt")
    magic, version, count, payload_size = struct.unpack_from("<8sIIQ", blob)
    assert magic == b"MSRTCKPT" and version == 2 and count == 3
    assert len(blob) == 24 + payload_size + 4
    payload = blob[24:24 + payload_size]
    # CRC-32C of the header and the payload (version 1 had a CRC-32 of the payload alone).
    assert struct.unpack_from("<I", blob, 24 + payload_size)[0] == ms._C._crc32c(blob[:24 + payload_size])
    (name_len,) = struct.unpack_from("<I", payload)
    assert payload[4:4 + name_len] == b"w"
    code, ndim = struct.unpack_from("<BB", payload, 4 + name_len)
    assert code == 8 and ndim == 2  # float32, 2-D
    dims = struct.unpack_from("<2Q", payload, 6 + name_len)
    (nbytes,) = struct.unpack_from("<Q", payload, 22 + name_len)
    assert dims == (3, 4) and nbytes == 48


def test_missing_files_and_wrong_suffix(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        ms.load_checkpoint(str(tmp_path / "nope.ckpt"))
    with pytest.raises(ValueError, match="end with '.ckpt'"):
        ms.load_checkpoint(str(tmp_path / "file.bin"))
    with pytest.raises(TypeError, match="ckpt_file_name"):
        ms.load_checkpoint(None)


def test_wrong_magic(tmp_path):
    path = tmp_path / "other.ckpt"
    path.write_bytes(b"PK\x03\x04 this is a zip file, not a checkpoint")
    with pytest.raises(ValueError, match=f"'{path}' is not a checkpoint"):
        ms.load_checkpoint(str(path))
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty"):
        ms.load_checkpoint(str(path))


def test_truncated_file(tmp_path):
    path = tmp_path / "t.ckpt"
    blob = write_valid(path)
    path.write_bytes(blob[:-10])
    with pytest.raises(ValueError, match=f"'{path}' is truncated"):
        ms.load_checkpoint(str(path))
    path.write_bytes(blob[:12])
    with pytest.raises(ValueError, match="truncated"):
        ms.load_checkpoint(str(path))


def test_corrupt_data_fails_the_crc(tmp_path):
    path = tmp_path / "c.ckpt"
    blob = bytearray(write_valid(path))
    blob[40] ^= 0xFF
    path.write_bytes(bytes(blob))
    with pytest.raises(ValueError, match="CRC32"):
        ms.load_checkpoint(str(path))


def test_wrong_version_and_trailing_bytes(tmp_path):
    path = tmp_path / "v.ckpt"
    blob = bytearray(write_valid(path))
    struct.pack_into("<I", blob, 8, 99)
    path.write_bytes(bytes(blob))
    with pytest.raises(ValueError, match="version 99"):
        ms.load_checkpoint(str(path))
    path.write_bytes(write_valid(path) + b"junk")
    with pytest.raises(ValueError, match="trailing bytes"):
        ms.load_checkpoint(str(path))


def _with_payload(payload, count):
    return struct.pack("<8sIIQ", b"MSRTCKPT", 1, count, len(payload)) + payload + struct.pack("<I", zlib.crc32(payload))


def test_inconsistent_records_with_a_valid_crc(tmp_path):
    path = tmp_path / "r.ckpt"
    cases = {
        "unknown dtype code": struct.pack("<I", 1) + b"x" + struct.pack("<BB", 42, 0) + struct.pack("<Q", 4),
        "should hold": struct.pack("<I", 1) + b"x" + struct.pack("<BBQ", 8, 1, 3) + struct.pack("<Q", 4) + b"\0" * 4,
        "needs": struct.pack("<I", 1000) + b"short",
        "not UTF-8": struct.pack("<I", 2) + b"\xff\xfe" + struct.pack("<BB", 0, 0) + struct.pack("<Q", 1) + b"\0",
    }
    for message, payload in cases.items():
        path.write_bytes(_with_payload(payload, 1))
        with pytest.raises(ValueError, match=message):
            ms.load_checkpoint(str(path))
    one = struct.pack("<I", 1) + b"x" + struct.pack("<BB", 0, 0) + struct.pack("<Q", 1) + b"\1"
    path.write_bytes(_with_payload(one + one, 2))
    with pytest.raises(ValueError, match="appears twice"):
        ms.load_checkpoint(str(path))
    path.write_bytes(_with_payload(one + b"extra", 1))
    with pytest.raises(ValueError, match="follow the last tensor"):
        ms.load_checkpoint(str(path))
    path.write_bytes(_with_payload(one, 2))
    with pytest.raises(ValueError, match="tensor 1"):
        ms.load_checkpoint(str(path))


def test_every_truncation_and_random_corruption_raises_cleanly(tmp_path):
    path = tmp_path / "fuzz.ckpt"
    blob = write_valid(path)
    rng = np.random.default_rng(0)
    lengths = list(range(0, 40)) + sorted(rng.integers(0, len(blob), size=60).tolist())
    for n in lengths:
        path.write_bytes(blob[:n])
        with pytest.raises(ValueError, match=str(path)):
            ms.load_checkpoint(str(path))
    for _ in range(100):
        corrupt = bytearray(blob)
        for position in rng.integers(0, len(blob), size=int(rng.integers(1, 4))):
            corrupt[position] = int(rng.integers(0, 256))
        if bytes(corrupt) == blob:
            continue
        path.write_bytes(bytes(corrupt))
        with pytest.raises(ValueError, match=str(path)):
            ms.load_checkpoint(str(path))


def test_checkpoint_functions_are_on_the_top_level_and_in_train():
    assert ms.save_checkpoint is serialization.save_checkpoint
    assert ms.train.load_checkpoint is serialization.load_checkpoint
    assert ms.load_param_into_net is serialization.load_param_into_net
