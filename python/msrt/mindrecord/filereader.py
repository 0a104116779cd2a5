"""FileReader: the rows of MindRecord files as dicts, as `mindspore.mindrecord.FileReader`."""
import math
import os

from . import _format
from .common_exceptions import ParamTypeError, ParamValueError

_MAX_CONSUMERS = 128


def _python(value, kind):
    """A raw field as MindSpore's FileReader gives it: numbers within 1e-7 of a whole
    number as int, other numbers as float, strings as str."""
    if kind == "string" or kind.startswith("int"):
        return value
    number = float(value)
    return int(number) if math.isfinite(number) and abs(number - math.floor(number)) < 1e-7 else number


class FileReader:
    """Reads MindRecord files row by row.

    Args:
        file_name (str or list[str]): one file of a set (every shard of the set is read)
            or a list of data files (exactly those).
        num_consumer (int): number of reader workers in MindSpore, in [1, 128]; checked
            (MindSpore caps it at the CPU count), msrt reads in the calling thread. Default: 4.
        columns (list[str], optional): the fields to read. Default: all.
        operator: reserved, must be None.

    `get_next()` yields each row as a dict: int32/int64 fields as int, float fields as
    float (int when within 1e-7 of a whole number, as MindSpore's reader gives them),
    string as str, bytes as bytes, arrays as NumPy arrays of the schema's type and shape.
    Rows come shard by shard, in order.

    Raises:
        ParamTypeError, ParamValueError: a bad argument or a column not in the schema.
        MindRecordFormatError: a file or its index is missing or not a valid MindRecord file.
    """

    def __init__(self, file_name, num_consumer=4, columns=None, operator=None):
        if isinstance(file_name, os.PathLike):
            file_name = os.fspath(file_name)
        names = file_name if isinstance(file_name, list) else [file_name]
        if not names or not all(isinstance(n, (str, os.PathLike)) and os.fspath(n) for n in names):
            raise ParamValueError(f"File path should be a non-empty str or a list of them, got {file_name!r}.")
        for name in names:
            if not os.path.isfile(name):
                raise ParamValueError(f"Invalid file, MindRecord file '{name}' does not exist.")
        if not isinstance(num_consumer, int) or isinstance(num_consumer, bool):
            raise ParamValueError("Parameter num_consumer is not int.")
        if not 1 <= num_consumer <= _MAX_CONSUMERS:
            raise ParamValueError(f"Parameter num_consumer: {num_consumer} should between 1 and {_MAX_CONSUMERS}.")
        if columns is not None and not isinstance(columns, list):
            raise ParamTypeError(f"The type of columns should be list, but got {type(columns).__name__}.")
        if operator is not None:
            raise ParamValueError("Parameter operator is reserved and should be None.")
        if isinstance(file_name, list):
            self._shards = [_format.Shard(os.fspath(n)) for n in names]
            _format.check_same_set(self._shards)
        else:
            self._shards = _format.open_set(file_name)
        self._fields = self._shards[0].schema
        known = [name for name, _, _ in self._fields]
        for column in columns or []:
            if column not in known:
                raise ParamValueError(f"Invalid data, column '{column}' is not found in schema {known}.")
        self._columns = set(columns) if columns else set(known)

    def get_next(self):
        """Yields every row as a dict (field name -> value)."""
        fields = [(j, name, kind, shape) for j, (name, kind, shape) in enumerate(self._fields)
                  if name in self._columns]
        for shard in self._shards:
            for start in range(0, shard.row_count, 256):
                for values in shard.read_rows(range(start, min(start + 256, shard.row_count)), stored=True):
                    row = {}
                    for j, name, kind, shape in fields:
                        value = values[j]
                        if kind == "bytes":
                            row[name] = value.tobytes()
                        elif shape is not None:
                            row[name] = value
                        else:
                            row[name] = _python(value, kind)
                    yield row

    def close(self):
        """Releases the reader (msrt keeps no file open between rows)."""
        self._shards = []

    def schema(self):
        """The schema, as a dict (field name -> {"type", and "shape" for arrays})."""
        return _format.schema_json(self._fields)

    def len(self):
        """The number of rows."""
        return sum(shard.row_count for shard in self._shards)
