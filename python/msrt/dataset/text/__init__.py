"""Text transforms and vocabularies, as `mindspore.dataset.text`:

    vocab = text.Vocab.from_dataset(data, columns="text", special_tokens=["<pad>", "<unk>"])
    data = data.map(text.WhitespaceTokenizer(), "text")
    data = data.map(text.Lookup(vocab, "<unk>"), "text")
    data = data.map(transforms.PadEnd([64], vocab.tokens_to_ids("<pad>")), "text")
"""
from . import transforms, utils
from .transforms import Lookup, SlidingWindow, TextTensorOperation, ToNumber, WhitespaceTokenizer
from .utils import Vocab

__all__ = ["Lookup", "SlidingWindow", "TextTensorOperation", "ToNumber", "Vocab", "WhitespaceTokenizer",
           "transforms", "utils"]
