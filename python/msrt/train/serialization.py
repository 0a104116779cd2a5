"""Checkpoints: `ms.save_checkpoint`, `ms.load_checkpoint`, `ms.load_param_into_net`.

The file format is msrt's own, documented in docs/checkpoint.md: a header
(magic, version, tensor count, payload size), the tensors (name, dtype,
shape, raw little-endian data) and a CRC32 of the payload. Reading checks
every length against the bytes present, so a truncated or corrupt file
raises ValueError naming the file and the fault; it never crashes.
"""
import os
import struct
import zlib
from collections import OrderedDict

import numpy as np

from .._tensor import Tensor, _TensorBase, _wrap
from ..common import dtype as mstype
from ..common.parameter import Parameter

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "parse_print"]

MAGIC = b"MSRTCKPT"
VERSION = 1
_HEADER = struct.Struct("<8sIIQ")  # magic, version, count, payload bytes
_CRC = struct.Struct("<I")
# dtype codes, in the order of the core's DType enum; bfloat16 is stored as float32 values.
_CODES = ("bool_", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
_CODE_OF = {name: i for i, name in enumerate(_CODES)}
_NUMPY = {"bool_": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "int64": np.int64, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
          "float64": np.float64}
_MAX_NDIM = 64


def _items_of(save_obj, op):
    """(name, Tensor) pairs of a Cell, a list of {"name", "data"} dicts or a dict."""
    if hasattr(save_obj, "parameters_and_names"):
        return [(param.name, param) for _, param in save_obj.parameters_and_names()]
    if isinstance(save_obj, dict):
        return list(save_obj.items())
    if isinstance(save_obj, (list, tuple)):
        out = []
        for entry in save_obj:
            if not isinstance(entry, dict) or "name" not in entry or "data" not in entry:
                raise TypeError(f"For '{op}', each element of a list 'save_obj' must be a dict with keys 'name' and "
                                f"'data', but got {entry!r}.")
            out.append((entry["name"], entry["data"]))
        return out
    raise TypeError(f"For '{op}', the argument 'save_obj' should be a Cell, a list of dicts or a dict, "
                    f"but got {type(save_obj).__name__}.")


def _as_array(name, value, op):
    """(dtype name, contiguous little-endian array) of a value to save."""
    if isinstance(value, Tensor):
        core = value._t.dtype_name
        array = value.asnumpy()
    elif isinstance(value, np.ndarray):
        core = mstype._core_name(value.dtype, f"dtype of '{name}'")
        array = value
    elif isinstance(value, bool):
        core, array = "bool_", np.array(value)
    elif isinstance(value, int):
        core, array = "int64", np.array(value, np.int64)
    elif isinstance(value, float):
        core, array = "float32", np.array(value, np.float32)
    else:
        raise TypeError(f"For '{op}', the value of '{name}' must be a Tensor, a NumPy array or a number, "
                        f"but got {type(value).__name__}.")
    array = np.asarray(array, dtype=np.dtype(_NUMPY[core]).newbyteorder("<"))  # tobytes() writes C order
    return core, array


def _encode(items, op):
    chunks = []
    seen = set()
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"For '{op}', every name must be a str, but got {type(name).__name__}.")
        if name in seen:
            raise ValueError(f"For '{op}', the name '{name}' appears twice.")
        seen.add(name)
        core, array = _as_array(name, value, op)
        encoded = name.encode("utf-8")
        chunks.append(struct.pack("<I", len(encoded)))
        chunks.append(encoded)
        chunks.append(struct.pack("<BB", _CODE_OF[core], array.ndim))
        chunks.append(struct.pack(f"<{array.ndim}Q", *array.shape))
        chunks.append(struct.pack("<Q", array.nbytes))
        chunks.append(array.tobytes())
    return len(seen), b"".join(chunks)


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, **kwargs):
    """Saves the parameters of a Cell (or a list of {"name", "data"} dicts, or a
    dict name → Tensor) to `ckpt_file_name` (".ckpt" is appended if missing).
    `append_dict` adds more name → value entries; `choice_func(name)` filters."""
    op = "save_checkpoint"
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise TypeError(f"For '{op}', the argument 'ckpt_file_name' must be a str, "
                        f"but got {type(ckpt_file_name).__name__}.")
    if enc_key is not None:
        raise NotImplementedError(f"For '{op}', encrypted checkpoints (enc_key) are not supported by msrt.")
    path = os.fspath(ckpt_file_name)
    if not path.endswith(".ckpt"):
        path += ".ckpt"
    items = _items_of(save_obj, op)
    if append_dict is not None:
        if not isinstance(append_dict, dict):
            raise TypeError(f"For '{op}', the argument 'append_dict' must be a dict, "
                            f"but got {type(append_dict).__name__}.")
        items += list(append_dict.items())
    if choice_func is not None:
        items = [(n, v) for n, v in items if choice_func(n)]
    count, payload = _encode(items, op)
    data = _HEADER.pack(MAGIC, VERSION, count, len(payload)) + payload + _CRC.pack(zlib.crc32(payload))
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


class _Reader:
    """Bounds-checked reads from a checkpoint payload."""

    def __init__(self, data, path):
        self.data = data
        self.pos = 0
        self.path = path

    def fail(self, what):
        raise ValueError(f"The checkpoint file '{self.path}' is corrupt: {what}.")

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.data):
            self.fail(f"{what} needs {n} bytes at offset {self.pos}, but the payload has {len(self.data)} bytes")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, what):
        s = struct.Struct(fmt)
        return s.unpack(self.take(s.size, what))


def _read(path, op):
    """name → (dtype name, array) from a checkpoint file."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"For '{op}', the argument 'ckpt_file_name' must be a str, but got {type(path).__name__}.")
    path = os.fspath(path)
    if not path.endswith(".ckpt"):
        raise ValueError(f"For '{op}', the checkpoint file should end with '.ckpt', please input the correct "
                         f"'ckpt_file_name', but got '{path}'.")
    if not os.path.isfile(path):
        raise ValueError(f"For '{op}', the checkpoint file: {path} does not exist, please check whether the "
                         "'ckpt_file_name' is correct.")
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise ValueError(f"For '{op}', failed to read the checkpoint file '{path}': {e}.") from None
    if len(blob) < len(MAGIC) or blob[:len(MAGIC)] != MAGIC:
        raise ValueError(f"The checkpoint file '{path}' is not an msrt checkpoint: it does not start with the magic "
                         f"bytes {MAGIC!r}.")
    if len(blob) < _HEADER.size:
        raise ValueError(f"The checkpoint file '{path}' is truncated: its header needs {_HEADER.size} bytes, "
                         f"but the file has {len(blob)}.")
    _, version, count, payload_size = _HEADER.unpack_from(blob)
    if version != VERSION:
        raise ValueError(f"The checkpoint file '{path}' has format version {version}; this msrt reads version "
                         f"{VERSION}.")
    expected = _HEADER.size + payload_size + _CRC.size
    if len(blob) != expected:
        state = "truncated" if len(blob) < expected else "corrupt (it has trailing bytes)"
        raise ValueError(f"The checkpoint file '{path}' is {state}: its header announces {expected} bytes, "
                         f"but the file has {len(blob)}.")
    payload = memoryview(blob)[_HEADER.size:_HEADER.size + payload_size]
    (stored_crc,) = _CRC.unpack_from(blob, _HEADER.size + payload_size)
    if zlib.crc32(payload) != stored_crc:
        raise ValueError(f"The checkpoint file '{path}' is corrupt: the CRC32 of its data does not match.")
    reader = _Reader(payload, path)
    out = OrderedDict()
    for index in range(count):
        (name_len,) = reader.unpack("<I", f"the name length of tensor {index}")
        try:
            name = bytes(reader.take(name_len, f"the name of tensor {index}")).decode("utf-8")
        except UnicodeDecodeError:
            reader.fail(f"the name of tensor {index} is not UTF-8")
        code, ndim = reader.unpack("<BB", f"the dtype of '{name}'")
        if code >= len(_CODES):
            reader.fail(f"tensor '{name}' has an unknown dtype code {code}")
        if ndim > _MAX_NDIM:
            reader.fail(f"tensor '{name}' has {ndim} dimensions")
        shape = reader.unpack(f"<{ndim}Q", f"the shape of '{name}'")
        (nbytes,) = reader.unpack("<Q", f"the size of '{name}'")
        core = _CODES[code]
        itemsize = np.dtype(_NUMPY[core]).itemsize
        numel = 1
        for d in shape:
            numel *= d
        if numel * itemsize != nbytes:
            reader.fail(f"tensor '{name}' of shape {tuple(shape)} and dtype {core} should hold "
                        f"{numel * itemsize} bytes, but {nbytes} are recorded")
        raw = reader.take(nbytes, f"the data of '{name}'")
        array = np.frombuffer(raw, dtype=np.dtype(_NUMPY[core]).newbyteorder("<")).reshape(shape)
        if name in out:
            reader.fail(f"the name '{name}' appears twice")
        out[name] = (core, array)
    if reader.pos != len(payload):
        reader.fail(f"{len(payload) - reader.pos} bytes follow the last tensor")
    return out


def _keep(name, filter_prefix, specify_prefix, choice_func):
    if filter_prefix is not None and name.startswith(filter_prefix):
        return False
    if specify_prefix is not None and not name.startswith(specify_prefix):
        return False
    return choice_func is None or bool(choice_func(name))


def _prefixes(value, name, op):
    if value is None:
        return None
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) and v for v in value):
        raise TypeError(f"For '{op}', the argument '{name}' must be a non-empty str or a list of them, "
                        f"but got {value!r}.")
    return tuple(value)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                    dec_mode="AES-GCM", specify_prefix=None, choice_func=None, **kwargs):
    """Reads a checkpoint into a dict name → Parameter (loading it into `net`
    too when given). `filter_prefix` drops names with those prefixes,
    `specify_prefix` keeps only names with them, `choice_func(name)` filters."""
    op = "load_checkpoint"
    if dec_key is not None:
        raise NotImplementedError(f"For '{op}', encrypted checkpoints (dec_key) are not supported by msrt.")
    filter_prefix = _prefixes(filter_prefix, "filter_prefix", op)
    specify_prefix = _prefixes(specify_prefix, "specify_prefix", op)
    entries = _read(ckpt_file_name, op)
    result = OrderedDict()
    for name, (core, array) in entries.items():
        if not _keep(name, filter_prefix, specify_prefix, choice_func):
            continue
        base = _TensorBase(array, core) if core == "bfloat16" else _TensorBase(array)
        result[name] = Parameter(_wrap(base), name=name)
    if net is not None:
        load_param_into_net(net, result, strict_load)
    return result


def _net_parameters(net, op):
    if hasattr(net, "parameters_and_names"):
        return [param for _, param in net.parameters_and_names()]
    if hasattr(net, "get_parameters"):
        return list(net.get_parameters())
    raise TypeError(f"For '{op}', the argument 'net' should be a Cell, but got {type(net).__name__}.")


def load_param_into_net(net, parameter_dict, strict_load=False, **kwargs):
    """Copies checkpoint values into the net's parameters of the same names.

    Returns (param_not_load, ckpt_not_load): the net's parameters that got no
    value, and the checkpoint entries that were not used. With strict_load
    False, dtypes are converted and a name that differs only by a prefix
    ("network.fc.weight" for "fc.weight") still matches when unambiguous.
    """
    op = "load_param_into_net"
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"For '{op}', the argument 'parameter_dict' should be a dict, "
                        f"but got {type(parameter_dict).__name__}.")
    if not isinstance(strict_load, bool):
        raise TypeError(f"For '{op}', the argument 'strict_load' should be a bool, "
                        f"but got {type(strict_load).__name__}.")
    params = _net_parameters(net, op)
    used = set()
    param_not_load = []
    for param in params:
        name = param.name
        key = name if name in parameter_dict else None
        if key is None and not strict_load:
            candidates = [k for k in parameter_dict
                          if k not in used and (k.endswith("." + name) or name.endswith("." + k))]
            if len(candidates) == 1:
                key = candidates[0]
        if key is None:
            param_not_load.append(name)
            continue
        value = parameter_dict[key]
        if not isinstance(value, Tensor):
            raise TypeError(f"For '{op}', the element in the argument 'parameter_dict' should be a Parameter, "
                            f"but '{key}' is a {type(value).__name__}.")
        if value.shape != param.shape:
            raise RuntimeError(f"For '{op}', '{name}' in the argument 'net' should have the same shape as '{key}' in "
                               f"the argument 'parameter_dict'. But got its shape {param.shape} in the argument "
                               f"'net' and shape {value.shape} in the argument 'parameter_dict'. Check whether the "
                               "checkpoint belongs to this network.")
        if value.dtype != param.dtype and strict_load:
            raise RuntimeError(f"For '{op}', '{name}' in the argument 'net' has dtype {param.dtype}, but '{key}' in "
                               f"the argument 'parameter_dict' has dtype {value.dtype}; with strict_load=True they "
                               "must match.")
        param.set_data(value)
        used.add(key)
    ckpt_not_load = [k for k in parameter_dict if k not in used]
    return param_not_load, ckpt_not_load


def parse_print(print_file_name):
    """The values the Print op appended to `print_file_name` (see
    print_file_path), in order: Tensors and strings."""
    from .. import _C

    if not isinstance(print_file_name, str):
        raise TypeError(f"For 'parse_print', the argument 'print_file_name' must be str, "
                        f"but got {type(print_file_name).__name__}.")
    path = os.path.realpath(print_file_name)
    return [_wrap(v) if isinstance(v, _TensorBase) else v for v in _C.parse_print(path)]
