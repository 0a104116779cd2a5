"""MindRecord files, as `mindspore.mindrecord`: `FileWriter` writes them,
`msrt.dataset.MindDataset` and `FileReader` read them.

The files are MindSpore's MindRecord format (Note [MindRecord layout] in
_format.py): MindSpore reads the files msrt writes, and msrt reads MindSpore's.
"""
from ._format import MindRecordFormatError
from .common_exceptions import (
    MindRecordException,
    MRMDefineIndexError,
    MRMInvalidHeaderSizeError,
    MRMInvalidPageSizeError,
    MRMInvalidSchemaError,
    MRMValidateDataError,
    ParamTypeError,
    ParamValueError,
)
from .filereader import FileReader
from .filewriter import FileWriter

SUCCESS = 0

__all__ = [
    "FileReader",
    "FileWriter",
    "MRMDefineIndexError",
    "MRMInvalidHeaderSizeError",
    "MRMInvalidPageSizeError",
    "MRMInvalidSchemaError",
    "MRMValidateDataError",
    "MindRecordException",
    "MindRecordFormatError",
    "ParamTypeError",
    "ParamValueError",
    "SUCCESS",
]
