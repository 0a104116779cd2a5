"""FileWriter: writes rows into MindSpore's MindRecord files (Note [MindRecord layout] in
_format.py; the page layout in _writer.py)."""
import math
import os
import re
import warnings

import numpy as np

from .. import _files
from .._warnings import MsrtWarning
from . import _format, _msgpack, _writer
from .common_exceptions import (
    MRMDefineIndexError,
    MRMInvalidHeaderSizeError,
    MRMInvalidPageSizeError,
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
    return sorted(schema)


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
        if kind == "string":
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "the string is not valid Unicode (it holds a lone surrogate)"
        return None
    if type_name != "ndarray":
        return f"data type: '{type_name}' is not matched with an array of '{kind}'"
    if value.dtype.kind not in "biuf":
        return f"array dtype '{value.dtype}' is not numeric"
    fixed = math.prod(d for d in shape if d != -1)
    if (-1 in shape and value.size % fixed) or (-1 not in shape and value.size != fixed):
        return f"array of {value.size} elements cannot take the shape {shape}"
    return None


def _python_scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def _shard_paths(file_name, shard_num):
    """The data files: `file_name`, or with shard_num > 1 `file_name` and the shard number,
    zero-padded to the width of the largest (MindSpore's names)."""
    if shard_num == 1:
        return [file_name]
    width = len(str(shard_num - 1))
    return [f"{file_name}{str(k).rjust(width, '0')}" for k in range(shard_num)]


def _check_size(value, low, high, name, error):
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParamTypeError(f"The type of {name} should be int, but got {type(value).__name__}.")
    if not low <= value <= high or value % 4:
        raise error(f"Invalid data, {name}: {value} should be in range [{low} bytes, {high} bytes] and divisible "
                    f"by four.")
    return value


class FileWriter:
    """Writes user rows into MindRecord files, as `mindspore.mindrecord.FileWriter`; the
    files are MindSpore's (Note [MindRecord layout] in _format.py), read by MindSpore's
    MindDataset as by msrt's.

    Args:
        file_name (str): the data file; with `shard_num` > 1 the files are `file_name`
            followed by 0, 1, ... (zero-padded to one width). Each data file gets its
            index `<file>.db` beside it.
        shard_num (int): number of files, in [1, 1000]. Default: 1.
        overwrite (bool): replace files that exist. Default: False.

    Rows go to temporary files beside the targets as they are written (placed in
    pages as MindSpore places them); `commit` writes each header and puts each data
    file in place atomically (fsync, rename; a symlink at the path is replaced, never
    written through), then writes its `.db` index the same way. Without `commit` the
    temporary files are removed and the targets are left as they were. Each
    `write_raw_data` call spreads its rows over the shards in contiguous runs, the
    first `len(rows) % shard_num` shards taking one row more (MindSpore picks those
    shards at random). `parallel_writer=True` writes as False does.

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
        if file_name.endswith(os.sep):
            raise ParamValueError(f"File path can not end with '{os.sep}': {file_name}.")
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
        self._paths = _shard_paths(file_name, shard_num)
        self._overwrite = overwrite
        existing = self._existing()
        if existing and not overwrite:
            raise RuntimeError(f"Invalid file, mindrecord files already exist. Please check file path: "
                               f"{existing[0]} (pass overwrite=True to replace them).")
        self._schema = None
        self._desc = ""
        self._index_fields = []
        self._header_size = _format.DEFAULT_HEADER_SIZE
        self._page_size = _format.DEFAULT_PAGE_SIZE
        self._compression_size = 0
        self._version = _format.VERSION
        self._shards = None  # the ShardWriters, made by the first write_raw_data or commit
        self._committed = False
        self._append = False

    def _existing(self):
        return [p for path in self._paths for p in (path, path + _format.INDEX_SUFFIX) if os.path.lexists(p)]

    @classmethod
    def open_for_append(cls, file_name):
        """A FileWriter that adds rows to the existing set of files `file_name` belongs to
        (its schema, index fields, header and page sizes kept); `commit` replaces every
        file of the set, each atomically.

        Raises ParamTypeError/ParamValueError for a bad or missing file name, and
        MindRecordFormatError for a file (or index) that is not a valid MindRecord file.
        """
        if isinstance(file_name, os.PathLike):
            file_name = os.fspath(file_name)
        if not isinstance(file_name, str):
            raise ParamTypeError(f"The type of file_name should be str, but got {type(file_name).__name__}.")
        if not os.path.isfile(file_name):
            raise ParamValueError(f"Invalid file, MindRecord file '{file_name}' does not exist.")
        shards = _format.open_set(file_name)
        first = shards[0]
        writer = cls.__new__(cls)
        writer._paths = [shard.path for shard in shards]
        writer._overwrite = True
        writer._schema = first.schema
        writer._desc = first.desc
        writer._index_fields = list(first.index_fields)
        writer._header_size, writer._page_size = first.header_size, first.page_size
        writer._compression_size = first.compression_size
        writer._version = first.version  # a "2.0" set stays "2.0": its int arrays are not compressed
        writer._committed = False
        writer._append = True
        writer._shards = []
        try:
            for shard in shards:
                writer._shards.append(_writer.ShardWriter.reopen(shard))
        except BaseException:
            writer._discard()
            raise
        return writer

    def _discard(self):
        for shard in self._shards or []:
            shard.discard()

    def _check_open(self, what):
        if self._committed:
            raise MRMValidateDataError(f"Failed to {what}: the FileWriter has been committed. To add rows, open the "
                                       f"files again with FileWriter.open_for_append.")

    def set_header_size(self, header_size):
        """Sets the size of the header region of each file, in [16 KB, 128 MB] and divisible by
        four (default 16 MB); before any row is written. MRMInvalidHeaderSizeError otherwise."""
        self._check_open("set the header size")
        _check_size(header_size, _format.MIN_HEADER_SIZE, _format.MAX_HEADER_SIZE, "header size",
                    MRMInvalidHeaderSizeError)
        if self._shards is not None:
            raise MRMInvalidHeaderSizeError("Failed to set the header size: rows were written already.")
        self._header_size = header_size
        return 0

    def set_page_size(self, page_size):
        """Sets the size of the pages rows are stored in, in [32 KB, 256 MB] and divisible by
        four (default 32 MB); a row's blob or other fields must fit one page. Before any
        row is written; MRMInvalidPageSizeError otherwise."""
        self._check_open("set the page size")
        _check_size(page_size, _format.MIN_PAGE_SIZE, _format.MAX_PAGE_SIZE, "page size", MRMInvalidPageSizeError)
        if self._shards is not None:
            raise MRMInvalidPageSizeError("Failed to set the page size: rows were written already.")
        self._page_size = page_size
        return 0

    def add_schema(self, content, desc=None):
        """Declares the fields: `content` maps a name to {"type": ...} (int32, int64, float32,
        float64, string, bytes), with "shape" (a list, -1 for one free dim) for arrays of a
        numeric type. Returns the schema id, 0. MRMInvalidSchemaError for a bad schema."""
        if desc is not None and not isinstance(desc, str):
            raise ParamTypeError(f"The type of desc should be str, but got {type(desc).__name__}.")
        schema = _validate_schema(content)
        if self._schema is not None:
            raise MRMInvalidSchemaError("The schema is added repeatedly: a MindRecord file holds one schema.")
        self._schema = schema
        self._desc = desc or ""
        return 0

    def add_index(self, index_fields):
        """Makes `index_fields` (names of scalar or string fields) index columns of the `.db`
        index; a later call adds more. Without it every scalar and string field is one.
        MRMDefineIndexError for a field that is not in the schema, not a scalar or repeated."""
        if not isinstance(index_fields, list) or not index_fields:
            raise ParamTypeError(f"The type of index_fields should be a non-empty list of str, got {index_fields!r}.")
        if self._schema is None:
            raise MRMDefineIndexError("Failed to set index fields: call add_schema first.")
        if self._shards is not None:
            raise MRMDefineIndexError("Failed to set index fields: rows were written already.")
        kinds = {name: (kind, shape) for name, kind, shape in self._schema}
        for field in index_fields:
            if not isinstance(field, str):
                raise ParamTypeError(f"An index field should be a str, got {type(field).__name__}.")
            if field not in kinds:
                raise MRMDefineIndexError(f"Failed to set field {field} since it's not in schema.")
            kind, shape = kinds[field]
            if kind == "bytes" or shape is not None:
                raise MRMDefineIndexError(f"Failed to set field {field} since it's not primitive type.")
        fields = self._index_fields + list(index_fields)
        if len(set(fields)) != len(fields):
            raise MRMDefineIndexError(f"The index fields {fields} repeat a field: add each field once.")
        self._index_fields = fields
        return 0

    def _open(self):
        """Makes the shard writers (temporary files) and fixes the index fields."""
        if self._shards is not None:
            return
        if not self._index_fields:
            self._index_fields = [name for name, kind, shape in self._schema if shape is None and kind != "bytes"]
        self._shards = []
        try:
            for k, path in enumerate(self._paths):
                self._shards.append(_writer.ShardWriter(path, k, self._header_size, self._page_size))
        except BaseException:
            self._discard()
            self._shards = None
            raise

    def _encode(self, row):
        """(MessagePack of the raw fields, blob, bytes saved by compression, index values) of a row."""
        raw = {}
        for name, kind, shape in self._schema:
            if shape is None and kind != "bytes":
                value = _python_scalar(row[name])
                raw[name] = float(value) if kind in ("float32", "float64") else value
        blob, saved = _format.encode_blob(row, self._schema, _format.uses_compression(self._schema, self._version))
        return _msgpack.encode(raw or _format.DUMMY_RAW), blob, saved, tuple(raw[f] for f in self._index_fields)

    def write_raw_data(self, raw_data, parallel_writer=False):
        """Adds `raw_data`, a list of dicts (field name -> value), spread over the shards in
        contiguous runs. As in MindSpore, a row that does not match the schema is dropped
        with a warning naming it and why; an array is stored in its field's type."""
        if not isinstance(raw_data, list):
            raise ParamTypeError(f"The type of raw_data should be list, but got {type(raw_data).__name__}.")
        if not isinstance(parallel_writer, bool):
            raise ParamTypeError(f"The type of parallel_writer should be bool, but got "
                                 f"{type(parallel_writer).__name__}.")
        if self._schema is None:
            raise MRMValidateDataError("Failed to write data: call add_schema first.")
        self._check_open("write data")
        self._open()
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
            good.append(self._encode(row))
        for column, what in ((0, "raw fields"), (1, "blob")):
            largest = max((8 + len(c[column]) for c in good), default=0)
            if largest > self._page_size:
                raise MRMValidateDataError(f"Page size {self._page_size} is too small to save the {what} of a row "
                                           f"({largest} bytes); call set_page_size with a larger value (at most "
                                           f"{_format.MAX_PAGE_SIZE}) before writing.")
        count, extra = divmod(len(good), len(self._shards))
        start = 0
        for k, shard in enumerate(self._shards):
            chunk = good[start:start + count + (k < extra)]
            start += len(chunk)
            shard.write([c[0] for c in chunk], [c[1] for c in chunk], [c[3] for c in chunk])
        self._compression_size += sum(c[2] for c in good)
        return 0

    def commit(self):
        """Writes each file's header, puts the data files in place and writes their `.db`
        indexes. After it, the writer takes no more rows."""
        if self._schema is None:
            raise MRMValidateDataError("Failed to commit: call add_schema first.")
        self._check_open("commit")
        if not self._overwrite and self._existing():
            raise RuntimeError(f"Invalid file, mindrecord files already exist. Please check file path: "
                               f"{self._existing()[0]} (pass overwrite=True to replace them).")
        self._open()
        names = [os.path.basename(p) for p in self._paths]
        kinds = {name: kind for name, kind, _ in self._schema}
        try:
            for shard in self._shards:
                shard.header(_format.header_text(self._header_size, self._page_size, self._compression_size,
                                                 self._schema, self._desc, self._index_fields, shard.pages, names,
                                                 shard.shard_id, self._version))
        except ValueError as error:
            raise MRMValidateDataError(str(error)) from None
        self._committed = True
        try:
            for shard in self._shards:
                shard.commit([(name, kinds[name]) for name in self._index_fields])
        finally:
            self._discard()
        return 0
