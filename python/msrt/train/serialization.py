"""Checkpoints: `ms.save_checkpoint`, `ms.load_checkpoint`, `ms.load_param_into_net`.

`save_checkpoint` writes MindSpore's `.ckpt` format (protobuf Checkpoint
messages, src/io/mindspore_checkpoint.cc), so MindSpore opens what msrt
saves; `load_checkpoint` tells the format by the bytes and reads MindSpore's
files and msrt's own (src/io/checkpoint.cc). docs/checkpoint.md describes
both. Reading is C++, fuzzed, and checks every length, size and checksum
against the bytes present, so a truncated or corrupt file raises ValueError
naming the file and the fault; it never crashes and nothing read can run
code. Files are written atomically through a unique temporary file
(Note [Safe file writes]).

`export` and `load` (graph files, msrt/_export.py and msrt/_graph_files.py)
are importable from here too, as from MindSpore's `train.serialization`.
"""
import os
import warnings
from collections import OrderedDict

import numpy as np

from .. import _C, _files
from .._tensor import Tensor, _TensorBase, _wrap
from ..common import dtype as mstype
from ..common.parameter import Parameter
from .._export import export
from .._graph_files import load

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "parse_print", "export", "load"]

# dtype codes, in the order of the core's DType enum; bfloat16 is stored as float32 values.
_CODES = ("bool_", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "uint16", "uint32", "uint64", "complex64", "complex128")
_CODE_OF = {name: i for i, name in enumerate(_CODES)}
_NUMPY = {"bool_": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "int64": np.int64, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
          "float64": np.float64, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
          "complex64": np.complex64, "complex128": np.complex128}


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
        # Non-native byte order is converted below (tobytes writes little endian).
        native = value.dtype if value.dtype.isnative else value.dtype.newbyteorder("=")
        core = mstype._core_name(native, f"dtype of '{name}'")
        array = value
    elif isinstance(value, bool):
        core, array = "bool_", np.array(value)
    elif isinstance(value, int):
        core, array = "int64", np.array(value, np.int64)
    elif isinstance(value, float):
        core, array = "float32", np.array(value, np.float32)
    elif isinstance(value, str):
        return "str", np.frombuffer(value.encode("utf-8", "surrogatepass"), np.uint8)
    else:
        raise TypeError(f"For '{op}', the value of '{name}' must be a Tensor, a NumPy array, a number or a str, "
                        f"but got {type(value).__name__}.")
    array = np.asarray(array, dtype=np.dtype(_NUMPY[core]).newbyteorder("<"))  # tobytes() writes C order
    return core, array


def _entries(items, op):
    """(name, dtype code, shape, little-endian C-order array) per item, checked."""
    entries = []
    seen = set()
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"For '{op}', every name must be a str, but got {type(name).__name__}.")
        if name in seen:
            raise ValueError(f"For '{op}', the name '{name}' appears twice.")
        seen.add(name)
        core, array = _as_array(name, value, op)
        if core == "str":  # MindSpore's "str" entry (append_dict strings)
            entries.append((name, -1, (), array))
            continue
        entries.append((name, _CODE_OF[core], tuple(array.shape), np.ascontiguousarray(array).reshape(-1)))
    return entries


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, crc_check=True,
                    format="ckpt", **kwargs):  # noqa: A002
    """Saves the parameters of a Cell (or a list of {"name", "data"} dicts, or a
    dict name → Tensor) to `ckpt_file_name` (".ckpt" is appended if missing),
    in MindSpore's checkpoint format. `append_dict` adds more name → value
    entries; `choice_func(name)` filters. `crc_check` ends the file with
    MindSpore's CRC-32 trailer; unlike MindSpore (default False) msrt writes it
    unless told not to, since every file msrt writes carries a checksum.
    MindSpore releases that predate crc_check can not parse it: pass
    crc_check=False for them (docs/checkpoint.md)."""
    op = "save_checkpoint"
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise TypeError(f"For '{op}', the argument 'ckpt_file_name' must be a str, "
                        f"but got {type(ckpt_file_name).__name__}.")
    if not isinstance(crc_check, bool):
        raise TypeError(f"For '{op}', the argument 'crc_check' must be a bool, but got {type(crc_check).__name__}.")
    if format == "safetensors":
        raise NotImplementedError(f"For '{op}', the 'safetensors' format is not supported by msrt.")
    if format != "ckpt":
        raise ValueError(f"For '{op}', the format must be 'safetensors' or 'ckpt', but got {format}.")
    if enc_key is not None:
        raise NotImplementedError(f"For '{op}', encrypted checkpoints (enc_key) are not supported by msrt.")
    path = _files.fspath(ckpt_file_name, op, "ckpt_file_name")
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
    # Unique temporary file, fsync, atomic rename (Note [Safe file writes]).
    _C._save_checkpoint(path, _entries(items, op), "mindspore", crc_check)


def _read(path, op, crc_check=False):
    """name → (dtype name, array) from a checkpoint file in either format;
    MindSpore's strings are name → (None, str)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"For '{op}', the argument 'ckpt_file_name' must be a str, but got {type(path).__name__}.")
    path = _files.fspath(path, op, "ckpt_file_name")
    if not path.endswith(".ckpt"):
        raise ValueError(f"For '{op}', the checkpoint file should end with '.ckpt', please input the correct "
                         f"'ckpt_file_name', but got '{path}'.")
    if not os.path.isfile(path):
        raise ValueError(f"For '{op}', the checkpoint file: {path} does not exist, please check whether the "
                         "'ckpt_file_name' is correct.")
    try:
        # Checked in C++ (src/io/checkpoint.cc, src/io/mindspore_checkpoint.cc).
        kind, blob, tensors, has_crc = _C._load_checkpoint(path)
    except OSError as e:
        raise ValueError(f"For '{op}', failed to read the checkpoint file '{path}': {e}") from None
    if crc_check and not has_crc:
        warnings.warn(f"For '{op}', the checkpoint file '{path}' does not contain the crc code, "
                      "please check the file.", stacklevel=3)
    out = OrderedDict()
    for name, code, shape, *data in tensors:
        if code < 0:
            out[name] = (None, data[0])
            continue
        core = _CODES[code]
        dtype = np.dtype(_NUMPY[core]).newbyteorder("<")
        if kind == "msrt":
            offset, size = data
            array = np.frombuffer(blob, dtype=dtype, count=size // dtype.itemsize, offset=offset)
        else:
            array = np.frombuffer(data[0], dtype=dtype)
        out[name] = (core, array.reshape(shape).astype(dtype.newbyteorder("="), copy=False))
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
                    dec_mode="AES-GCM", specify_prefix=None, choice_func=None, crc_check=False, **kwargs):
    """Reads a checkpoint, in MindSpore's format or msrt's own (told by its
    bytes), into a dict name → Parameter (MindSpore's string entries are
    str), loading it into `net` too when given. `filter_prefix` drops names
    with those prefixes, `specify_prefix` keeps only names with them,
    `choice_func(name)` filters. A CRC trailer is checked whenever the file
    has one; `crc_check=True` warns, as MindSpore does, when it has none."""
    op = "load_checkpoint"
    if dec_key is not None:
        raise NotImplementedError(f"For '{op}', encrypted checkpoints (dec_key) are not supported by msrt.")
    if not isinstance(crc_check, bool):
        raise TypeError(f"For '{op}', the argument 'crc_check' must be a bool, but got {type(crc_check).__name__}.")
    filter_prefix = _prefixes(filter_prefix, "filter_prefix", op)
    specify_prefix = _prefixes(specify_prefix, "specify_prefix", op)
    entries = _read(ckpt_file_name, op, crc_check)
    result = OrderedDict()
    for name, (core, array) in entries.items():
        if not _keep(name, filter_prefix, specify_prefix, choice_func):
            continue
        if core is None:
            result[name] = array  # a string
            continue
        base = _TensorBase(array, core) if core == "bfloat16" else _TensorBase(array)
        result[name] = Parameter(_wrap(base), name=name)
    if not result:
        raise ValueError("The loaded parameter dict is empty after filter or specify, please check whether "
                         "'filter_prefix' or 'specify_prefix' are set correctly.")
    if net is not None:
        load_param_into_net(net, result, strict_load)
    return result


def _net_parameters(net, op):
    if hasattr(net, "parameters_and_names"):
        return [param for _, param in net.parameters_and_names()]
    if hasattr(net, "get_parameters"):
        return list(net.get_parameters())
    raise TypeError(f"For '{op}', the argument 'net' should be a Cell, but got {type(net).__name__}.")


_FLOATS = frozenset(("float16", "float32", "float64", "bfloat16"))
_INTS = frozenset(("int8", "int16", "int32", "int64"))


def _value_for(param, value, key, strict_load, op):
    """The checkpoint value `value` checked against `param` as MindSpore's
    load_param_into_net checks it: the same shape (or the shape with trailing
    1s, which is reshaped), and the same dtype unless both are floating or
    both signed integers and strict_load is False (then it is converted)."""
    name = param.name
    if value.shape != param.shape:
        extra = value.shape[len(param.shape):]
        if len(value.shape) > len(param.shape) and value.shape[:len(param.shape)] == param.shape and \
                all(d == 1 for d in extra):
            value = value.reshape(param.shape)
        else:
            raise RuntimeError(f"For '{op}', {name} in the argument 'net' should have the same shape as {key} in "
                               f"the argument 'parameter_dict'. But got its shape {param.shape} in the argument "
                               f"'net' and shape {value.shape} in the argument 'parameter_dict'. May you need to "
                               "check whether the checkpoint you loaded is correct or the batch size and so on in "
                               "the 'net' and 'parameter_dict' are same.")
    if value.dtype != param.dtype:
        pair = {str(value.dtype).lower(), str(param.dtype).lower()}
        convertible = not strict_load and (pair <= _FLOATS or pair <= _INTS)
        if not convertible:
            raise RuntimeError(f"For '{op}', {name} in the argument 'net' should have the same type as {key} in the "
                               f"argument 'parameter_dict'. But got its type {param.dtype} in the argument 'net' and "
                               f"type {value.dtype} in the argument 'parameter_dict'. May you need to check whether "
                               "the checkpoint you loaded is correct.")
    return value


def load_param_into_net(net, parameter_dict, strict_load=False, **kwargs):
    """Copies checkpoint values into the net's parameters of the same names.

    Returns (param_not_load, ckpt_not_load): the net's parameters that got no
    value, and the checkpoint entries that were not used. Shapes must match
    and dtypes too, except that with strict_load False floating types convert
    to one another and so do signed integer types (MindSpore's rule); any
    other mismatch raises RuntimeError. With strict_load False, a name that
    differs only by a prefix ("network.fc.weight" for "fc.weight") still
    matches when unambiguous. Every value is checked before any is copied, so
    a failed load leaves the net as it was.
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
    plan = []
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
            raise TypeError(f"For '{op}', the element in the argument 'parameter_dict' should be a 'Parameter', "
                            f"but '{key}' is a {type(value).__name__}.")
        plan.append((param, _value_for(param, value, key, strict_load, op)))
        used.add(key)
    for param, value in plan:
        param.set_data(value)
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
