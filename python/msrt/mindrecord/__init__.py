"""MindRecord files, as `mindspore.mindrecord`: `FileWriter` writes them and
`msrt.dataset.MindDataset` reads them.

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
from .filewriter import FileWriter

SUCCESS = 0

__all__ = [
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
