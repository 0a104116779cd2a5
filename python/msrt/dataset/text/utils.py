"""`Vocab`, as `mindspore.dataset.text.Vocab`: a table from tokens to ids."""
import collections

import numpy as np

from .._validate import INT32_MAX, check_value, type_check

__all__ = ["Vocab"]


def _check_special_tokens(special_tokens, special_first):
    if special_tokens is None:
        special_tokens = []
    type_check(special_tokens, (list, tuple), "special_tokens")
    for i, token in enumerate(special_tokens):
        type_check(token, (str,), f"special_tokens[{i}]")
    if len(set(special_tokens)) != len(special_tokens):
        raise ValueError("special_tokens contains duplicate token.")
    type_check(special_first, (bool,), "special_first")
    return list(special_tokens)


def _token_text(token):
    """A str from a str, bytes or NumPy string scalar; TypeError otherwise."""
    if isinstance(token, (bytes, np.bytes_)):
        return bytes(token).decode("utf-8")
    if isinstance(token, (str, np.str_)):
        return str(token)
    raise TypeError(f"Argument tokens with value {token!r} is not of type [str, list of str], "
                    f"but got {type(token)}.")


class Vocab:
    """Maps tokens (str) to ids (non-negative int) and back.

    Build one with `Vocab.from_list`, `Vocab.from_dict` or `Vocab.from_dataset`;
    `text.Lookup` applies it in a pipeline.
    """

    def __init__(self):
        self._word_to_id = {}
        self._id_to_word = {}

    @classmethod
    def _from_pairs(cls, pairs):
        vocab = cls()
        for word, index in pairs:
            vocab._word_to_id[word] = index
            vocab._id_to_word.setdefault(index, word)
        return vocab

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True):
        """Ids in list order; `special_tokens` take the first ids when
        `special_first`, else the ids after the words."""
        type_check(word_list, (list,), "word_list")
        for i, word in enumerate(word_list):
            type_check(word, (str,), f"word_list[{i}]")
        seen = set()
        for word in word_list:
            if word in seen:
                raise ValueError(f"word_list contains duplicate word: {word}.")
            seen.add(word)
        specials = _check_special_tokens(special_tokens, special_first)
        for token in specials:
            if token in seen:
                raise ValueError(f"special_tokens and word_list contain duplicate word: {token}.")
        order = specials + word_list if special_first else word_list + specials
        return cls._from_pairs((word, i) for i, word in enumerate(order))

    @classmethod
    def from_dict(cls, word_dict):
        """The given {word: id} mapping; ids must be non-negative ints."""
        type_check(word_dict, (dict,), "word_dict")
        for word, index in word_dict.items():
            type_check(word, (str,), "word")
            type_check(index, (int,), "word_id")
            if index < 0:
                raise ValueError(f"word_id of {word} must be non-negative, but got {index}.")
        return cls._from_pairs(word_dict.items())

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None, special_tokens=None,
                     special_first=True):
        """Counts the tokens in `columns` of `dataset` (all columns when None);
        keeps those whose count lies in `freq_range` = (min, max) (inclusive,
        None for an open end), then the `top_k` most frequent; a special
        token found in the data is not counted as a word. Ids follow
        descending count, ties in ascending token order."""
        from ..datasets import Dataset

        if not isinstance(dataset, Dataset):
            raise TypeError(f"Argument dataset with value {dataset!r} is not of type [Dataset], "
                            f"but got {type(dataset)}.")
        if columns is not None:
            type_check(columns, (list, str), "columns")
            columns = [columns] if isinstance(columns, str) else list(columns)
            for i, column in enumerate(columns):
                type_check(column, (str,), f"columns[{i}]")
        if freq_range is not None:
            type_check(freq_range, (tuple,), "freq_range")
            if len(freq_range) != 2:
                raise ValueError(f"freq_range needs to be a tuple of 2 element, got {len(freq_range)}.")
            for i, bound in enumerate(freq_range):
                if bound is not None:
                    type_check(bound, (int,), f"freq_range[{i}]")
                    check_value(bound, (0, INT32_MAX), f"freq_range[{i}]")
            low, high = freq_range
            if low is not None and high is not None and low > high:
                raise ValueError(f"frequency range [a,b] should be 0 <= a <= b (a,b are inclusive), "
                                 f"got {list(freq_range)}.")
        else:
            low = high = None
        if top_k is not None:
            type_check(top_k, (int,), "top_k")
            check_value(top_k, (1, INT32_MAX), "top_k")
        specials = _check_special_tokens(special_tokens, special_first)

        names = dataset.get_col_names()
        if columns is None:
            columns = names
        for column in columns:
            if column not in names:
                raise ValueError(f"from_dataset: column '{column}' does not exist in the dataset, "
                                 f"columns are {names}.")
        indexes = [names.index(column) for column in columns]
        counts = collections.Counter()
        for row in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1):
            for i in indexes:
                array = np.asarray(row[i])
                if array.dtype.kind not in "US":
                    raise RuntimeError(f"from_dataset: column '{names[i]}' should hold strings, "
                                       f"got dtype {array.dtype}.")
                counts.update(_token_text(t) for t in array.reshape(-1))
        special_set = set(specials)
        words = [w for w, n in counts.items() if w not in special_set
                 and (low is None or n >= low) and (high is None or n <= high)]
        words.sort(key=lambda w: (-counts[w], w))
        if top_k is not None:
            words = words[:top_k]
        order = specials + words if special_first else words + specials
        return cls._from_pairs((word, i) for i, word in enumerate(order))

    def vocab(self):
        """The {word: id} dict."""
        return dict(self._word_to_id)

    def tokens_to_ids(self, tokens):
        """The id of a token (-1 when absent), or a list of them for a list."""
        if isinstance(tokens, np.ndarray):
            tokens = tokens.tolist()
        if isinstance(tokens, (list, tuple)):
            return [self._word_to_id.get(_token_text(t), -1) for t in tokens]
        return self._word_to_id.get(_token_text(tokens), -1)

    def ids_to_tokens(self, ids):
        """The token of an id ("" when absent), or a list of them for a list."""
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        single = not isinstance(ids, (list, tuple))
        for index in [ids] if single else ids:
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
                raise TypeError(f"Argument ids with value {ids!r} is not of type [int, list of int], "
                                f"but got {type(index)}.")
            if index < 0:
                raise ValueError(f"Input ids is not within the required interval of [0, {INT32_MAX}], "
                                 f"got {index}.")
        if single:
            return self._id_to_word.get(int(ids), "")
        return [self._id_to_word.get(int(i), "") for i in ids]

    def __len__(self):
        return len(self._word_to_id)

    def __repr__(self):
        return f"Vocab(size={len(self)})"
