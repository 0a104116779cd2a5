"""dataset.text (Vocab, Lookup, WhitespaceTokenizer, ToNumber, SlidingWindow) and the
padding/slicing transforms (PadEnd, Fill, Slice, Concatenate), against NumPy, and the
tokenize -> Lookup -> PadEnd -> batch pipeline training an Embedding + Dense classifier."""
import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.dataset import text, transforms


def _sentences(sents):
    return ds.GeneratorDataset(lambda: ((np.array(s),) for s in sents), ["text"])


# ---- Vocab

def test_vocab_from_list_special_tokens_first_and_last():
    vocab = text.Vocab.from_list(["a", "b", "c"], ["<pad>", "<unk>"], True)
    assert vocab.vocab() == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4}
    vocab = text.Vocab.from_list(["a", "b", "c"], ["<pad>"], special_first=False)
    assert vocab.vocab() == {"a": 0, "b": 1, "c": 2, "<pad>": 3}
    assert vocab.tokens_to_ids("b") == 1
    assert vocab.tokens_to_ids(["c", "zzz", "a"]) == [2, -1, 0]
    assert vocab.ids_to_tokens(3) == "<pad>"
    assert vocab.ids_to_tokens([0, 2, 99]) == ["a", "c", ""]


def test_vocab_from_list_rejects_duplicates_and_bad_types():
    with pytest.raises(ValueError, match="duplicate word: a"):
        text.Vocab.from_list(["a", "b", "a"])
    with pytest.raises(ValueError, match="special_tokens and word_list contain duplicate word: b"):
        text.Vocab.from_list(["a", "b"], ["b"])
    with pytest.raises(TypeError, match="word_list"):
        text.Vocab.from_list("abc")
    with pytest.raises(TypeError, match=r"word_list\[1\]"):
        text.Vocab.from_list(["a", 3])
    with pytest.raises(TypeError, match="special_first"):
        text.Vocab.from_list(["a"], special_first=1)


def test_vocab_from_dict_and_id_checks():
    vocab = text.Vocab.from_dict({"home": 3, "behind": 2, "the": 4})
    assert vocab.tokens_to_ids(["the", "home"]) == [4, 3]
    assert vocab.ids_to_tokens([2, 0]) == ["behind", ""]
    with pytest.raises(ValueError, match="non-negative"):
        text.Vocab.from_dict({"a": -1})
    with pytest.raises(TypeError, match="word_dict"):
        text.Vocab.from_dict([("a", 1)])
    with pytest.raises(ValueError, match="ids"):
        vocab.ids_to_tokens(-1)
    with pytest.raises(TypeError, match="ids"):
        vocab.ids_to_tokens("a")


def test_vocab_from_dataset_counts_orders_and_filters():
    sents = ["b a c a", "a b d", "e a b c"]
    data = _sentences(sents).map(text.WhitespaceTokenizer(), "text")
    # counts: a 4, b 3, c 2, d 1, e 1 -> descending count, ties by token
    vocab = text.Vocab.from_dataset(data, columns=["text"])
    assert vocab.vocab() == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    vocab = text.Vocab.from_dataset(data, "text", freq_range=(2, 3), special_tokens=["<pad>"])
    assert vocab.vocab() == {"<pad>": 0, "b": 1, "c": 2}
    vocab = text.Vocab.from_dataset(data, None, top_k=2, special_tokens=["<unk>"], special_first=False)
    assert vocab.vocab() == {"a": 0, "b": 1, "<unk>": 2}
    vocab = text.Vocab.from_dataset(data, freq_range=(None, 1))
    assert vocab.vocab() == {"d": 0, "e": 1}
    with pytest.raises(ValueError, match="frequency range"):
        text.Vocab.from_dataset(data, freq_range=(3, 1))
    with pytest.raises(ValueError, match="top_k"):
        text.Vocab.from_dataset(data, top_k=0)
    with pytest.raises(TypeError, match="freq_range"):
        text.Vocab.from_dataset(data, freq_range=[1, 2])
    with pytest.raises(ValueError, match="column 'label' does not exist"):
        text.Vocab.from_dataset(data, "label")
    with pytest.raises(TypeError, match="dataset"):
        text.Vocab.from_dataset(["a"])


# ---- Lookup and tokenizers

def test_lookup_maps_tokens_and_unknowns():
    vocab = text.Vocab.from_list(["?", "##", "with", "the", "test"])
    assert text.Lookup(vocab)("with") == 2
    out = text.Lookup(vocab, "test", ms.int64)(np.array(["the", "nope", "?"]))
    np.testing.assert_array_equal(out, np.array([3, 4, 0], np.int64))
    assert out.dtype == np.int64
    out = text.Lookup(vocab, data_type=ms.float32)(np.array([["with", "##"]]))
    assert out.dtype == np.float32 and out.tolist() == [[2.0, 1.0]]
    with pytest.raises(RuntimeError, match="\"nope\" doesn't exist in vocab and no unknown token"):
        text.Lookup(vocab)(np.array(["the", "nope"]))
    with pytest.raises(RuntimeError, match="\"<unk>\" doesn't exist in vocab"):
        text.Lookup(vocab, "<unk>")(np.array(["the"]))
    with pytest.raises(RuntimeError, match="string type"):
        text.Lookup(vocab)(np.array([1, 2]))


def test_lookup_argument_types():
    vocab = text.Vocab.from_list(["a"])
    with pytest.raises(TypeError, match="vocab"):
        text.Lookup({"a": 0})
    with pytest.raises(TypeError, match="unknown_token"):
        text.Lookup(vocab, 0)
    with pytest.raises(TypeError, match="data_type"):
        text.Lookup(vocab, data_type=np.int32)
    with pytest.raises(TypeError, match="numeric"):
        text.Lookup(vocab, data_type=ms.string)


def test_whitespace_tokenizer_tokens_and_offsets():
    tokens = text.WhitespaceTokenizer()(" Welcome  to\tBeijing!\n")
    assert tokens.tolist() == ["Welcome", "to", "Beijing!"]
    tokens, starts, ends = text.WhitespaceTokenizer(with_offsets=True)("北京 is 大")
    assert tokens.tolist() == ["北京", "is", "大"]
    assert starts.dtype == np.uint32 and starts.tolist() == [0, 7, 10] and ends.tolist() == [6, 9, 13]
    assert text.WhitespaceTokenizer()("   ").tolist() == [""]
    with pytest.raises(RuntimeError, match="scalar with string datatype"):
        text.WhitespaceTokenizer()(np.array(["a b", "c"]))
    with pytest.raises(TypeError, match="with_offsets"):
        text.WhitespaceTokenizer(1)


def test_to_number_parses_and_rejects():
    out = text.ToNumber(ms.int32)(np.array(["1", "-20", "300"]))
    assert out.dtype == np.int32 and out.tolist() == [1, -20, 300]
    np.testing.assert_array_equal(text.ToNumber(ms.float32)(np.array([["1.5", "-2e3"]])),
                                  np.array([[1.5, -2000.0]], np.float32))
    with pytest.raises(RuntimeError, match="invalid to convert \"abc\""):
        text.ToNumber(ms.int32)(np.array(["abc"]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        text.ToNumber(ms.int8)(np.array(["200"]))
    with pytest.raises(TypeError, match="numeric"):
        text.ToNumber(ms.bool_)


def test_sliding_window_against_numpy():
    x = np.arange(6, dtype=np.int32)
    out = text.SlidingWindow(3)(x)
    np.testing.assert_array_equal(out, np.stack([x[i:i + 3] for i in range(4)]))
    assert text.SlidingWindow(7)(x).shape == (0, 7)
    with pytest.raises(RuntimeError, match="1D input only"):
        text.SlidingWindow(2)(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="width"):
        text.SlidingWindow(0)


# ---- PadEnd, Fill, Slice, Concatenate

def test_pad_end_pads_and_truncates():
    np.testing.assert_array_equal(transforms.PadEnd([4], 10)(np.array([1, 2, 3])), [1, 2, 3, 10])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = transforms.PadEnd([3, 2])(x)
    expected = np.zeros((3, 2), np.float32)
    expected[:2, :2] = x[:, :2]
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32
    expected = np.pad(x, ((0, 0), (0, 1)), constant_values=-1)
    np.testing.assert_array_equal(transforms.PadEnd([None, 4], -1)(x), expected)
    assert transforms.PadEnd([3])(np.array(["a"])).tolist() == ["a", "", ""]
    assert transforms.PadEnd([2], "<pad>")(np.array(["a"])).tolist() == ["a", "<pad>"]
    with pytest.raises(RuntimeError, match="rank of input is: 2"):
        transforms.PadEnd([4])(x)
    with pytest.raises(TypeError, match="pad_shape"):
        transforms.PadEnd((4,))
    with pytest.raises(ValueError, match=r"pad_shape\[0\]"):
        transforms.PadEnd([0])
    with pytest.raises(TypeError, match="pad_value"):
        transforms.PadEnd([2], [0])


def test_fill_keeps_shape_and_dtype():
    out = transforms.Fill(3)(np.zeros((2, 3), np.float64))
    assert out.dtype == np.float64 and out.shape == (2, 3) and (out == 3).all()
    assert transforms.Fill(2.9)(np.array([1, 2], np.int32)).tolist() == [2, 2]
    assert transforms.Fill("x")(np.array(["a", "b"])).tolist() == ["x", "x"]
    with pytest.raises(RuntimeError, match="both be strings or both be numbers"):
        transforms.Fill("x")(np.array([1]))
    with pytest.raises(TypeError, match="fill_value"):
        transforms.Fill([1])


def test_slice_against_numpy_indexing():
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(transforms.Slice(1)(np.array([1, 2, 3])), [2])
    np.testing.assert_array_equal(transforms.Slice(slice(0, 2), [0, 2])(x), x[0:2][:, [0, 2]])
    np.testing.assert_array_equal(transforms.Slice(None, None, [3, 1])(x), x[:, :, [3, 1]])
    np.testing.assert_array_equal(transforms.Slice(Ellipsis, slice(1, None, 2))(x), x[..., 1::2])
    np.testing.assert_array_equal(transforms.Slice(-1)(x), x[-1:])
    with pytest.raises(RuntimeError, match="out of bounds"):
        transforms.Slice([0, 5])(np.arange(3))
    with pytest.raises(RuntimeError, match="more than the rank"):
        transforms.Slice(0, 0)(np.arange(3))
    with pytest.raises(TypeError, match="slices"):
        transforms.Slice("a")
    with pytest.raises(ValueError, match="empty"):
        transforms.Slice()


def test_concatenate_prepends_and_appends():
    out = transforms.Concatenate(0, np.array([1, 2]), np.array([9]))(np.array([5, 6]))
    np.testing.assert_array_equal(out, [1, 2, 5, 6, 9])
    out = transforms.Concatenate(prepend=np.array(["<s>"]))(np.array(["a", "b"]))
    assert out.tolist() == ["<s>", "a", "b"]
    with pytest.raises(RuntimeError, match="same type"):
        transforms.Concatenate(append=np.array([1.5]))(np.array([1, 2]))
    with pytest.raises(RuntimeError, match="only 1D input"):
        transforms.Concatenate()(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="prepend"):
        transforms.Concatenate(prepend=[1])


# ---- the sentiment-classification pipeline, end to end

def test_tokenize_lookup_pad_batch_trains_an_embedding_classifier():
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    good, bad = ["great", "fine", "superb", "nice"], ["awful", "poor", "bad", "dull"]
    neutral = ["the", "film", "was", "plot", "and"]
    rows = []
    for i in range(64):
        label = i % 2
        words = list(rng.choice(neutral, rng.integers(2, 5))) + list(rng.choice(good if label else bad, 2))
        rng.shuffle(words)
        rows.append((" ".join(words), label))
    seq_len = 8

    def source():
        for sentence, label in rows:
            yield np.array(sentence), np.array(label, np.int32)

    data = ds.GeneratorDataset(source, ["text", "label"])
    data = data.map(text.WhitespaceTokenizer(), "text")
    vocab = text.Vocab.from_dataset(data, "text", special_tokens=["<pad>", "<unk>"])
    pad = vocab.tokens_to_ids("<pad>")
    assert (pad, vocab.tokens_to_ids("<unk>")) == (0, 1) and len(vocab.vocab()) == 2 + 13
    data = data.map(text.Lookup(vocab, "<unk>"), "text")
    data = data.map(transforms.PadEnd([seq_len], pad), "text")
    data = data.map(transforms.TypeCast(ms.int32), "text").batch(16, drop_remainder=True)
    first = next(iter(data.create_tuple_iterator(output_numpy=True, num_epochs=1)))
    assert first[0].shape == (16, seq_len) and first[0].dtype == np.int32
    ids = vocab.tokens_to_ids(rows[0][0].split())
    np.testing.assert_array_equal(first[0][0], ids + [pad] * (seq_len - len(ids)))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(len(vocab.vocab()), 8, padding_idx=pad)
            self.dense = nn.Dense(8, 2)

        def construct(self, x):
            return self.dense(self.embedding(x).mean(axis=1))

    net = Net()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = ms.train.Model(net, loss_fn, nn.Adam(net.trainable_params(), 0.05), metrics={"acc"})
    history = ms.train.History()
    model.train(15, data, callbacks=[history])
    assert history.epoch == list(range(1, 16))
    assert history.history["net_output"][-1] < 0.5 * history.history["net_output"][0]
    assert model.eval(data)["acc"] > 0.95
