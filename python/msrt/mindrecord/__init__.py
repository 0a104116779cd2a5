"""MindRecord files, as `mindspore.mindrecord`: `FileWriter` writes them and
`msrt.dataset.MindDataset` reads them.

msrt writes and reads a layout of its own (Note [MindRecord layout] in
_format.py), with MindSpore's API: files written by MindSpore cannot be read,
nor files written by msrt by MindSpore.
"""
from ._format import MindRecordFormatError
from .common_exceptions import (
    MindRecordException,
    MRMDefineIndexError,
    MRMInvalidSchemaError,
    MRMValidateDataError,
    ParamTypeError,
    ParamValueError,
)
from .filewriter import FileWriter

SUCCESS = 0

__all__ = [
    "FileWriter",
    "MRMDefineIndexError",
    "MRMInvalidSchemaError",
    "MRMValidateDataError",
    "MindRecordException",
    "MindRecordFormatError",
    "ParamTypeError",
    "ParamValueError",
    "SUCCESS",
]
