"""Text transforms (`msrt.dataset.text`, as `mindspore.dataset.text`), on NumPy string arrays."""
import re

import numpy as np

from ...common import dtype as mstype
from .._validate import INT32_MAX, check_value, type_check
from ..transforms.transforms import TensorOperation, _numpy_dtype
from .utils import Vocab

__all__ = ["Lookup", "SlidingWindow", "TextTensorOperation", "ToNumber", "WhitespaceTokenizer"]


class TextTensorOperation(TensorOperation):
    """Base of the text transforms; a Python str or bytes input reads as a string scalar."""

    def __call__(self, *args):
        if len(args) == 1 and isinstance(args[0], (str, bytes, list)):
            args = (np.asarray(args[0]),)
        return super().__call__(*args)


def _strings(array, op_name):
    """`array` as a NumPy str array; RuntimeError for a non-string input."""
    if array.dtype.kind == "S":
        return np.char.decode(array, "utf-8")
    if array.dtype.kind != "U":
        raise RuntimeError(f"{op_name}: the input should be of string type, but got dtype {array.dtype}.")
    return array


def _mstype(data_type, op_name, allow_bool):
    """The NumPy dtype of an msrt numeric dtype; TypeError for anything else."""
    if not isinstance(data_type, mstype.Type):
        raise TypeError(f"Argument data_type with value {data_type!r} is not of type [<class "
                        f"'mindspore._c_expression.typing.Type'>], but got {type(data_type)}.")
    what = "numeric including bool" if allow_bool else "numeric"
    try:
        dtype = _numpy_dtype(data_type)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in ("iuf" + ("b" if allow_bool else "")):
        raise TypeError(f"{op_name}: The parameter data_type must be {what}, but got {data_type}.")
    return dtype


class Lookup(TextTensorOperation):
    """Maps each token to its id in `vocab`; a token not in it maps to the id
    of `unknown_token`, or raises RuntimeError when that is None."""

    def __init__(self, vocab, unknown_token=None, data_type=mstype.int32):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"Argument vocab with value {vocab!r} is not of type [<class "
                            f"'mindspore.dataset.text.utils.Vocab'>], but got {type(vocab)}.")
        if unknown_token is not None:
            type_check(unknown_token, (str,), "unknown_token")
        self._dtype = _mstype(data_type, "Lookup", allow_bool=True)
        self.vocab = vocab
        self.unknown_token = unknown_token
        self.data_type = data_type

    def _apply(self, array):
        tokens = _strings(array, "Lookup")
        table = self.vocab._word_to_id
        default = None
        if self.unknown_token is not None:
            default = table.get(self.unknown_token)
            if default is None:
                raise RuntimeError(f"Lookup: \"{self.unknown_token}\" doesn't exist in vocab.")
        ids = np.empty(tokens.shape, np.int64)
        flat = ids.reshape(-1)
        for i, token in enumerate(tokens.reshape(-1).tolist()):
            index = table.get(token, default)
            if index is None:
                raise RuntimeError(f"Lookup: token: \"{token}\" doesn't exist in vocab and no unknown token "
                                   f"is specified.")
            flat[i] = index
        return ids.astype(self._dtype)


class WhitespaceTokenizer(TextTensorOperation):
    """Splits a string scalar on Unicode whitespace (Python's str.isspace) into a
    1-D array of tokens; an input
    with no token gives [""]. With `with_offsets` it also returns the start
    and end byte offsets (UTF-8, uint32) of each token."""

    def __init__(self, with_offsets=False):
        type_check(with_offsets, (bool,), "with_offsets")
        self.with_offsets = with_offsets

    def _apply(self, array):
        if array.ndim != 0 or array.dtype.kind not in "US":
            raise RuntimeError(f"WhitespaceTokenizer: the input should be scalar with string datatype, "
                               f"but got dtype {array.dtype} and shape {list(array.shape)}.")
        text = str(_strings(array, "WhitespaceTokenizer"))
        tokens, starts, ends = [], [], []
        for match in re.finditer(r"[^\s]+", text):
            token = match.group()
            tokens.append(token)
            start = len(text[:match.start()].encode("utf-8"))
            starts.append(start)
            ends.append(start + len(token.encode("utf-8")))
        if not tokens:
            tokens, starts, ends = [""], [0], [0]
        result = np.array(tokens, dtype=str)
        if not self.with_offsets:
            return result
        return result, np.array(starts, np.uint32), np.array(ends, np.uint32)


class ToNumber(TextTensorOperation):
    """Parses each string as a number of `data_type` (an msrt numeric dtype);
    RuntimeError for a string that is not one or is out of the type's range."""

    def __init__(self, data_type):
        self._dtype = _mstype(data_type, "ToNumber", allow_bool=False)
        self.data_type = data_type

    def _apply(self, array):
        strings = _strings(array, "ToNumber")
        out = np.empty(strings.shape, self._dtype)
        flat = out.reshape(-1)
        integer = self._dtype.kind in "iu"
        info = np.iinfo(self._dtype) if integer else np.finfo(self._dtype)
        for i, text in enumerate(strings.reshape(-1).tolist()):
            try:
                value = int(text.strip(), 10) if integer else float(text)
            except ValueError:
                raise RuntimeError(f"ToNumber: it is invalid to convert \"{text}\" to a number.") from None
            if integer and not info.min <= value <= info.max or (
                    not integer and np.isfinite(value) and abs(value) > info.max):
                raise RuntimeError(f"ToNumber: string input {text} will be out of bounds if cast to "
                                   f"{self._dtype}.")
            flat[i] = value
        return out


class SlidingWindow(TextTensorOperation):
    """The windows of `width` consecutive elements of a 1-D input, as a
    (n - width + 1, width) array; empty (0, width) when width > n."""

    def __init__(self, width, axis=0):
        type_check(width, (int,), "width")
        check_value(width, (1, INT32_MAX), "width")
        type_check(axis, (int,), "axis")
        self.width = width
        self.axis = axis

    def _apply(self, array):
        if array.ndim != 1:
            raise RuntimeError(f"SlidingWindow: SlidingWindow supports 1D input only for now, but got "
                               f"{array.ndim}D.")
        if self.axis not in (0, -1):
            raise RuntimeError(f"SlidingWindow: axis must be 0 or -1 for a 1D input, but got {self.axis}.")
        count = max(array.shape[0] - self.width + 1, 0)
        if count == 0:
            return np.empty((0, self.width), array.dtype)
        return np.lib.stride_tricks.sliding_window_view(array, self.width).copy()
