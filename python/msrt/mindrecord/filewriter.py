"""FileWriter: writes rows into MindRecord files (see Note [MindRecord layout] in _format.py)."""
import os
import re
import warnings

import numpy as np

from .. import _files
from .._warnings import MsrtWarning
from . import _format
from .common_exceptions import (
    MRMDefineIndexError,
    MRMInvalidSchemaError,
    MRMValidateDataError,
    ParamTypeError,
    ParamValueError,
)

MIN_SHARD_COUNT = 1
MAX_SHARD_COUNT = 1000
VALID_ATTRIBUTES = ("int32", "int64", "float32", "float64", "string", "bytes")
VALID_ARRAY_ATTRIBUTES = ("int32", "int64", "float32", "float64")
# Which schema types a value of each Python type may fill (MindSpore's VALUE_TYPE_MAP).
VALUE_TYPE_MAP = {"int": ("int32", "int64"), "int32": ("int32",), "int64": ("int64",),
                  "float": ("float32", "float64"), "float32": ("float32",), "float64": ("float64",),
                  "str": ("string",), "bytes": ("bytes",), "ndarray": VALID_ARRAY_ATTRIBUTES}
_LIMITS = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}
_FIELD_NAME = re.compile(r"^[0-9a-zA-Z_]+$")


def _validate_schema(content):
    """MindSpore's schema rules; returns the schema as [(name, type, shape or None)]."""
    if not isinstance(content, dict):
        raise MRMInvalidSchemaError(f"Schema content is not a dict: got {type(content).__name__}.")
    if not content:
        raise MRMInvalidSchemaError("Schema content is empty.")
    schema = []
    for name, spec in content.items():
        if not isinstance(name, str) or not _FIELD_NAME.match(name):
            raise MRMInvalidSchemaError(f"Field '{name}' should be composed of '0-9' or 'a-z' or 'A-Z' or '_'.")
        if not isinstance(spec, dict):
            raise MRMInvalidSchemaError(f"Field '{name}' value is not a dict.")
        if "type" not in spec:
            raise MRMInvalidSchemaError(f"Field '{name}' miss schema type.")
        unknown = set(spec) - {"type", "shape"}
        if unknown:
            raise MRMInvalidSchemaError(f"Field '{name}' contains unknown attributes {sorted(unknown)}; "
                                        f"a field has 'type' and, for arrays, 'shape'.")
        kind = spec["type"]
        if "shape" not in spec:
            if kind not in VALID_ATTRIBUTES:
                raise MRMInvalidSchemaError(f"Field '{name}' contain illegal attribute '{kind}': the type should be "
                                            f"one of {list(VALID_ATTRIBUTES)}.")
            schema.append((name, kind, None))
            continue
        if kind not in VALID_ARRAY_ATTRIBUTES:
            raise MRMInvalidSchemaError(f"Field '{name}' contain illegal attribute '{kind}': an array's type should "
                                        f"be one of {list(VALID_ARRAY_ATTRIBUTES)}.")
        shape = spec["shape"]
        if not isinstance(shape, list) or not shape:
            raise MRMInvalidSchemaError(f"Field '{name}' 'shape' attribute is not a non-empty list: got {shape!r}.")
        if any(not isinstance(d, int) or isinstance(d, bool) or (d <= 0 and d != -1) for d in shape) \
                or shape.count(-1) > 1:
            raise MRMInvalidSchemaError(f"Field '{name}' 'shape' attribute should hold positive ints and at most "
                                        f"one -1, got {shape}.")
        schema.append((name, kind, list(shape)))
    return schema


def _check_value(value, kind, shape):
    """Why `value` cannot fill a field of type `kind` (and `shape`), or None."""
    type_name = type(value).__name__
    if isinstance(value, bool) or kind not in VALUE_TYPE_MAP.get(type_name, ()):
        return f"data type: '{type_name}' is not matched with '{kind}'"
    if shape is None:
        if type_name == "ndarray":
            return f"data type: 'ndarray' is not matched with the scalar type '{kind}'"
        if kind in _LIMITS and not _LIMITS[kind][0] <= int(value) <= _LIMITS[kind][1]:
            return f"value {value} is out of the range of {kind}"
        return None
    if type_name != "ndarray":
        return f"data type: '{type_name}' is not matched with an array of '{kind}'"
    if value.dtype.name != kind:
        return f"array dtype '{value.dtype.name}' is not matched with '{kind}'"
    fixed = int(np.prod([d for d in shape if d != -1]))
    if (-1 in shape and value.size % fixed) or (-1 not in shape and value.size != fixed):
        return f"array of {value.size} elements cannot take the shape {shape}"
    return None


class FileWriter:
    """Writes user rows into MindRecord files, as `mindspore.mindrecord.FileWriter`.

    Args:
        file_name (str): the data file; with `shard_num` > 1 the files are `file_name`
            followed by 0, 1, ... Each data file gets its index `<file>.db` beside it.
        shard_num (int): number of files, in [1, 1000]. Default: 1.
        overwrite (bool): replace files that exist. Default: False.

    Rows are held in memory (encoded) until `commit`, which writes every file safely
    (temporary file, fsync, rename): a failed or missing commit leaves no partial file.
    The layout is msrt's own, not MindSpore's byte layout (Note [MindRecord layout]).

    Raises:
        ParamTypeError, ParamValueError: a bad argument.
        RuntimeError: the files exist and `overwrite` is False.
    """

    def __init__(self, file_name, shard_num=1, overwrite=False):
        if isinstance(file_name, os.PathLike):
            file_name = os.fspath(file_name)
        if not isinstance(file_name, str):
            raise ParamTypeError(f"The type of file_name should be str, but got {type(file_name).__name__}.")
        if not file_name:
            raise ParamValueError("File path is not allowed None or empty!")
        if not isinstance(shard_num, int) or isinstance(shard_num, bool):
            raise ParamTypeError(f"The type of shard_num should be int, but got {type(shard_num).__name__}.")
        if not MIN_SHARD_COUNT <= shard_num <= MAX_SHARD_COUNT:
            raise ParamValueError(f"Parameter shard_num's value: {shard_num} should between {MIN_SHARD_COUNT} and "
                                  f"{MAX_SHARD_COUNT}.")
        if not isinstance(overwrite, bool):
            raise ParamTypeError(f"The type of overwrite should be bool, but got {type(overwrite).__name__}.")
        _files.fspath(file_name, "FileWriter", "file_name")
        folder = os.path.dirname(os.path.abspath(file_name))
        if not os.path.isdir(folder):
            raise ParamValueError(f"The parent directory of MindRecord file '{file_name}' does not exist: {folder}.")
        self._paths = [file_name] if shard_num == 1 else [f"{file_name}{i}" for i in range(shard_num)]
        existing = [p for path in self._paths for p in (path, path + _format.INDEX_SUFFIX) if os.path.lexists(p)]
        if existing and not overwrite:
            raise RuntimeError(f"Invalid file, mindrecord files already exist. Please check file path: "
                               f"{existing[0]} (pass overwrite=True to replace them).")
        self._schema = None
        self._desc = ""
        self._index_fields = []
        self._rows = [[] for _ in self._paths]  # encoded rows of each shard
        self._index_values = [[] for _ in self._paths]
        self._committed = False

    @classmethod
    def open_for_append(cls, file_name):
        """A FileWriter that adds rows to the existing set of files `file_name` belongs to
        (its schema and index fields kept); `commit` rewrites every file of the set.

        Raises ParamTypeError/ParamValueError for a bad or missing file name, and
        MindRecordFormatError for a file (or index) that is not a valid msrt MindRecord file.
        """
        if isinstance(file_name, os.PathLike):
            file_name = os.fspath(file_name)
        if not isinstance(file_name, str):
            raise ParamTypeError(f"The type of file_name should be str, but got {type(file_name).__name__}.")
        if not os.path.isfile(file_name):
            raise ParamValueError(f"Invalid file, MindRecord file '{file_name}' does not exist.")
        first = _format.Shard(file_name)
        folder = os.path.dirname(file_name)
        paths = [os.path.join(folder, name) for name in first.addresses]
        shards = [first if k == first.shard_id else _format.Shard(path) for k, path in enumerate(paths)]
        writer = cls.__new__(cls)
        writer._paths = paths
        writer._schema = first.schema
        writer._desc = first.desc
        writer._index_fields = list(first.index_fields)
        writer._rows, writer._index_values = [], []
        position = {name: j for j, (name, _, _) in enumerate(first.schema)}
        for shard in shards:
            _format.check_index(shard.path, shard)
            writer._rows.append([shard.raw(i) for i in range(shard.row_count)])
            values = []
            for i in range(shard.row_count):
                row = shard.decode(i)
                values.append({f: row[position[f]].item() for f in first.index_fields})
            writer._index_values.append(values)
        writer._committed = False
        return writer

    def add_schema(self, content, desc=None):
        """Declares the fields: `content` maps a name to {"type": ...} (int32, int64, float32,
        float64, string, bytes), with "shape" (a list, -1 for one free dim) for arrays of a
        numeric type. Returns the schema id, 0. MRMInvalidSchemaError for a bad schema."""
        if desc is not None and not isinstance(desc, str):
            raise ParamTypeError(f"The type of desc should be str, but got {type(desc).__name__}.")
        schema = _validate_schema(content)
        if self._schema is not None:
            raise MRMInvalidSchemaError("A schema was added already: a MindRecord file holds one schema.")
        self._schema = schema
        self._desc = desc or ""
        return 0

    def add_index(self, index_fields):
        """Makes `index_fields` (names of scalar or string fields) index columns of the `.db`
        index. MRMDefineIndexError for a field that is not in the schema or not a scalar."""
        if not isinstance(index_fields, list) or not index_fields:
            raise ParamTypeError(f"The type of index_fields should be a non-empty list of str, got {index_fields!r}.")
        if self._schema is None:
            raise MRMDefineIndexError("Failed to set index fields: call add_schema first.")
        kinds = {name: (kind, shape) for name, kind, shape in self._schema}
        for field in index_fields:
            if not isinstance(field, str):
                raise ParamTypeError(f"An index field should be a str, got {type(field).__name__}.")
            if field not in kinds:
                raise MRMDefineIndexError(f"Failed to set field {field} since it's not in schema.")
            kind, shape = kinds[field]
            if kind == "bytes" or shape is not None:
                raise MRMDefineIndexError(f"Failed to set field {field} since it's not primitive type.")
        if len(set(index_fields)) != len(index_fields):
            raise MRMDefineIndexError(f"Failed to set index fields {index_fields}: a field is repeated.")
        self._index_fields = list(index_fields)
        return 0

    def write_raw_data(self, raw_data, parallel_writer=False):
        """Adds `raw_data`, a list of dicts (field name -> value), spread over the shards in
        contiguous runs. As in MindSpore, a row that does not match the schema is dropped
        with a warning naming it and why."""
        if not isinstance(raw_data, list):
            raise ParamTypeError(f"The type of raw_data should be list, but got {type(raw_data).__name__}.")
        if not isinstance(parallel_writer, bool):
            raise ParamTypeError(f"The type of parallel_writer should be bool, but got "
                                 f"{type(parallel_writer).__name__}.")
        if self._schema is None:
            raise MRMValidateDataError("Failed to write data: call add_schema first.")
        if self._committed:
            raise MRMValidateDataError("Failed to write data: the FileWriter has been committed.")
        good = []
        for i, row in enumerate(raw_data):
            if not isinstance(row, dict):
                raise ParamTypeError(f"The type of raw_data's item should be dict, but got {type(row).__name__} at "
                                     f"position {i}.")
            problem = None
            for name, kind, shape in self._schema:
                if name not in row:
                    problem = f"there is not field: '{name}' in the raw data"
                else:
                    problem = _check_value(row[name], kind, shape)
                    problem = problem and f"field '{name}': {problem}"
                if problem:
                    break
            if problem:
                warnings.warn(f"For schema, {i} th data is wrong, {problem}; the row is not written.", MsrtWarning,
                              stacklevel=2)
                continue
            good.append(row)
        per_shard = len(good) // len(self._paths)
        for k in range(len(self._paths)):
            chunk = good[k * per_shard:(k + 1) * per_shard] if k < len(self._paths) - 1 else good[k * per_shard:]
            for row in chunk:
                self._rows[k].append(_format.encode_row(row, self._schema))
                self._index_values[k].append(row)
        return 0

    def commit(self):
        """Writes every data file and its `.db` index. After it, the writer takes no more rows."""
        if self._schema is None:
            raise MRMValidateDataError("Failed to commit: call add_schema first.")
        if self._committed:
            raise MRMValidateDataError("Failed to commit: the FileWriter has been committed already.")
        index_fields = self._index_fields or [name for name, kind, shape in self._schema
                                              if shape is None and kind != "bytes"]
        names = [os.path.basename(p) for p in self._paths]
        for k, path in enumerate(self._paths):
            header = {"version": _format.VERSION, "shard_id": k, "shard_addresses": names,
                      "schema": [list(f) for f in self._schema], "desc": self._desc, "index_fields": index_fields}
            data, offsets, lengths = _format.encode_shard(header, self._rows[k])
            values = [tuple(_python_scalar(row[f]) for f in index_fields) for row in self._index_values[k]]
            index = _format.encode_index(names[k], self._schema, index_fields, values, offsets, lengths)
            _files.write_atomic(path, data)
            _files.write_atomic(path + _format.INDEX_SUFFIX, index)
        self._committed = True
        self._rows = self._index_values = None
        return 0


def _python_scalar(value):
    return value.item() if isinstance(value, np.generic) else value
