"""ImageFolderDataset: classes from folders, raw bytes, extensions, class_indexing, sampling, errors."""
import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import encode_png, rows
from msrt.dataset import vision


@pytest.fixture
def tree(tmp_path):
    """Folders bird (empty), cat (3 .jpg + a .txt), dog (2 .png); file i holds distinct random bytes."""
    rng = np.random.default_rng(0)
    files = {}
    for folder, names in (("dog", ["b.png", "a.png"]), ("cat", ["2.jpg", "1.jpg", "3.jpg", "notes.txt"]),
                          ("bird", [])):
        (tmp_path / folder).mkdir()
        for name in names:
            data = rng.bytes(int(rng.integers(1, 200)))
            (tmp_path / folder / name).write_bytes(data)
            files[(folder, name)] = data
    (tmp_path / "loose.jpg").write_bytes(b"not in a class folder")
    return tmp_path, files


def test_rows_are_raw_bytes_and_int32_labels_in_order(tree):
    root, files = tree
    data = ds.ImageFolderDataset(str(root), shuffle=False)
    assert data.get_col_names() == ["image", "label"]
    assert data.get_dataset_size() == 6
    got = rows(data)
    # The empty folder "bird" still takes label 0: labels follow the sorted folder names.
    expected = [(files[("cat", n)], 1) for n in ("1.jpg", "2.jpg", "3.jpg", "notes.txt")] + \
               [(files[("dog", n)], 2) for n in ("a.png", "b.png")]
    assert [(image.tobytes(), int(label)) for image, label in got] == expected
    for image, label in got:
        assert image.dtype == np.uint8 and image.ndim == 1
        assert label.dtype == np.int32 and label.shape == ()
    assert data.get_class_indexing() == {"bird": 0, "cat": 1, "dog": 2}


def test_extensions_and_class_indexing(tree):
    root, files = tree
    jpg = rows(ds.ImageFolderDataset(str(root), extensions=[".jpg"], shuffle=False))
    assert [image.tobytes() for image, _ in jpg] == [files[("cat", n)] for n in ("1.jpg", "2.jpg", "3.jpg")]
    indexed = rows(ds.ImageFolderDataset(str(root), class_indexing={"dog": 7}, shuffle=False))
    assert [int(label) for _, label in indexed] == [7, 7]
    assert [image.tobytes() for image, _ in indexed] == [files[("dog", "a.png")], files[("dog", "b.png")]]


def test_shuffle_shards_samples_and_batching(tree):
    root, files = tree
    ds.config.set_seed(1)
    every = sorted(image.tobytes() for image, _ in rows(ds.ImageFolderDataset(str(root))))
    assert every == sorted(files.values())
    shards = [rows(ds.ImageFolderDataset(str(root), num_shards=3, shard_id=k)) for k in range(3)]
    assert sorted(image.tobytes() for part in shards for image, _ in part) == sorted(files.values())
    assert ds.ImageFolderDataset(str(root), num_samples=4).get_dataset_size() == 4
    picked = rows(ds.ImageFolderDataset(str(root), sampler=ds.SubsetSampler([5, 0])))
    assert [image.tobytes() for image, _ in picked] == [files[("dog", "b.png")], files[("cat", "1.jpg")]]
    labels = rows(ds.ImageFolderDataset(str(root), shuffle=False).project("label").batch(4))
    assert [b[0].tolist() for b in labels] == [[1, 1, 1, 1], [2, 2]]


def test_errors(tree, tmp_path_factory):
    root, _ = tree
    with pytest.raises(RuntimeError, match="image format is not supported"):  # random bytes, decoded
        rows(ds.ImageFolderDataset(str(root), decode=True))
    with pytest.raises(NotImplementedError, match="no PIL"):
        vision.Decode(to_pil=True)
    with pytest.raises(ValueError, match="does not exist"):
        ds.ImageFolderDataset(str(root / "missing"))
    with pytest.raises(TypeError):
        ds.ImageFolderDataset(str(root), extensions=".jpg")
    with pytest.raises(TypeError):
        ds.ImageFolderDataset(str(root), decode=1)
    with pytest.raises(RuntimeError, match="no valid data"):
        ds.ImageFolderDataset(str(root), extensions=[".bmp"])
    with pytest.raises(RuntimeError, match="do not exist"):
        ds.ImageFolderDataset(str(root), class_indexing={"horse": 0})
    with pytest.raises(RuntimeError, match="no valid data"):
        ds.ImageFolderDataset(str(tmp_path_factory.mktemp("nothing")))
    with pytest.raises(RuntimeError, match="sampler and shuffle"):
        ds.ImageFolderDataset(str(root), shuffle=True, sampler=ds.SequentialSampler())


def test_decrypt_reads_each_file_through_the_users_function(tree):
    root, files = tree
    seen = []

    def decrypt(path):  # an XOR "cipher" applied to the stored bytes
        seen.append(path)
        with open(path, "rb") as f:
            return bytes(b ^ 0x5A for b in f.read())

    data = ds.ImageFolderDataset(str(root), shuffle=False, decrypt=decrypt)
    got = [(image.tobytes(), int(label)) for image, label in rows(data)]
    expected = [(bytes(b ^ 0x5A for b in files[("cat", n)]), 1) for n in ("1.jpg", "2.jpg", "3.jpg", "notes.txt")] + \
               [(bytes(b ^ 0x5A for b in files[("dog", n)]), 2) for n in ("a.png", "b.png")]
    assert got == expected
    assert sorted(seen) == sorted(str(root / f / n) for f, n in files)


def test_decrypt_decodes_what_it_returns(tmp_path):
    (tmp_path / "a").mkdir()
    image = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    (tmp_path / "a" / "x.bin").write_bytes(bytes(b ^ 0xFF for b in encode_png(image, 2)))

    def decrypt(path):
        with open(path, "rb") as f:
            return bytes(b ^ 0xFF for b in f.read())

    data = ds.ImageFolderDataset(str(tmp_path), decode=True, decrypt=decrypt)
    np.testing.assert_array_equal(rows(data)[0][0], image)


def test_decrypt_errors_name_the_file(tree):
    root, _ = tree

    def failing(path):
        raise KeyError("no key for this file")

    with pytest.raises(RuntimeError, match=r"decrypt failed on '.*1\.jpg': KeyError"):
        rows(ds.ImageFolderDataset(str(root), shuffle=False, decrypt=failing))
    with pytest.raises(RuntimeError, match=r"decrypt must return the decrypted bytes of '.*', but got str"):
        rows(ds.ImageFolderDataset(str(root), shuffle=False, decrypt=lambda p: "text"))
    with pytest.raises(TypeError, match="not callable"):
        ds.ImageFolderDataset(str(root), decrypt=b"key")
