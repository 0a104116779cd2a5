"""The errors of `msrt.mindrecord`, named as `mindspore.mindrecord.common.exceptions` names them.

Each is also the built-in error of its kind (ParamValueError is a ValueError,
ParamTypeError a TypeError, the others RuntimeErrors), so `except ValueError`
catches what it would catch elsewhere in msrt.
"""


class MindRecordException(Exception):
    """Base of the errors FileWriter raises."""


class ParamValueError(MindRecordException, ValueError):
    """An argument has the right type but a wrong value."""


class ParamTypeError(MindRecordException, TypeError):
    """An argument has the wrong type."""


class MRMInvalidSchemaError(MindRecordException, RuntimeError):
    """The schema given to add_schema is not valid."""


class MRMDefineIndexError(MindRecordException, RuntimeError):
    """A field given to add_index cannot be an index field."""


class MRMValidateDataError(MindRecordException, RuntimeError):
    """FileWriter is used out of order (data before a schema, writing after commit)."""


class MRMInvalidHeaderSizeError(MindRecordException, RuntimeError):
    """set_header_size was given a size out of range, or called after rows were written."""


class MRMInvalidPageSizeError(MindRecordException, RuntimeError):
    """set_page_size was given a size out of range, or called after rows were written."""
