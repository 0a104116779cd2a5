"""vision.Decode and ImageFolderDataset(decode=True): PNG written by hand (exact round
trips for every colour type and bit depth), committed JPEG fixtures (within JPEG's
tolerance), bad input, and a decode -> Resize -> batch pipeline."""
import struct
import zlib

import numpy as np
import pytest

import msrt.dataset as ds
from dsutil import IMAGES, encode_png, gradient, gray_ramp, rows
from msrt.dataset import vision


def decode(data):
    return vision.Decode()(np.frombuffer(data, np.uint8))


def with_declared_size(png, height, width):
    """`png` with its IHDR (and that chunk's CRC) rewritten to declare height x width."""
    header = struct.pack(">II", width, height) + png[24:29]
    return png[:16] + header + struct.pack(">I", zlib.crc32(b"IHDR" + header)) + png[33:]


def random_samples(shape, high, seed=0):
    return np.random.default_rng(seed).integers(0, high, size=shape)


@pytest.mark.parametrize("interlace", [False, True])
@pytest.mark.parametrize("bit_depth", [8, 16])
def test_rgb_and_rgba_png_round_trip_exactly(bit_depth, interlace):
    high = 1 << bit_depth
    rgb = random_samples((5, 11, 3), high)
    rgba = random_samples((9, 4, 4), high, seed=1)
    shift = 8 if bit_depth == 16 else 0
    got = decode(encode_png(rgb, 2, bit_depth, interlace=interlace))
    assert got.dtype == np.uint8 and got.shape == (5, 11, 3)
    np.testing.assert_array_equal(got, rgb >> shift)
    # Alpha is dropped, not blended.
    np.testing.assert_array_equal(decode(encode_png(rgba, 6, bit_depth, interlace=interlace)), rgba[..., :3] >> shift)


@pytest.mark.parametrize("bit_depth", [1, 2, 4, 8, 16])
def test_grayscale_png_expands_to_rgb(bit_depth):
    gray = random_samples((7, 13), 1 << bit_depth)
    if bit_depth == 16:
        expected = gray >> 8
    else:
        expected = gray * (255 // ((1 << bit_depth) - 1))  # libpng scales low depths up to 8 bits
    got = decode(encode_png(gray, 0, bit_depth, interlace=bit_depth == 2))
    assert got.shape == (7, 13, 3)
    np.testing.assert_array_equal(got, np.repeat(expected[..., None], 3, axis=-1))
    if bit_depth >= 8:
        with_alpha = np.stack([gray, random_samples((7, 13), 1 << bit_depth, seed=2)], axis=-1)
        np.testing.assert_array_equal(decode(encode_png(with_alpha, 4, bit_depth)),
                                      np.repeat(expected[..., None], 3, axis=-1))


@pytest.mark.parametrize("bit_depth", [1, 2, 4, 8])
def test_palette_png_expands_to_rgb(bit_depth):
    entries = 1 << bit_depth
    palette = random_samples((entries, 3), 256, seed=3).astype(np.uint8)
    indices = random_samples((6, 10), entries, seed=4)
    transparency = [0, 128] if bit_depth > 1 else None
    got = decode(encode_png(indices, 3, bit_depth, palette=palette, transparency=transparency))
    np.testing.assert_array_equal(got, palette[indices])


@pytest.mark.parametrize("name, tolerance", [("gradient_444.jpg", 6), ("gradient_420.jpg", 24),
                                             ("gradient_progressive.jpg", 24)])
def test_jpeg_decodes_within_tolerance(name, tolerance):
    got = decode((IMAGES / name).read_bytes())
    source = gradient(12, 16)
    assert got.dtype == np.uint8 and got.shape == source.shape
    assert np.abs(got.astype(int) - source).max() <= tolerance
    assert np.abs(got.astype(int) - source).mean() < 2


def test_grayscale_jpeg_expands_to_rgb():
    got = decode((IMAGES / "gray.jpg").read_bytes())
    assert got.shape == (8, 8, 3)
    assert (got[..., 0] == got[..., 1]).all() and (got[..., 0] == got[..., 2]).all()
    assert np.abs(got[..., 0].astype(int) - gray_ramp()).max() <= 4


def test_decode_arguments():
    assert vision.Decode().to_pil is False
    assert vision.Decode(to_pil=False).to_pil is False
    with pytest.raises(NotImplementedError, match="no PIL"):
        vision.Decode(to_pil=True)
    with pytest.raises(TypeError):
        vision.Decode(to_pil=1)
    from msrt.dataset.vision import c_transforms
    assert c_transforms.Decode is vision.Decode


def test_bad_input_raises_runtime_error():
    png = encode_png(random_samples((8, 8, 3), 256), 2)
    jpeg = (IMAGES / "gradient_420.jpg").read_bytes()
    for data, message in [(b"", "empty"), (b"plain text, no image", "not supported"),
                          (b"GIF89a\x01\x00\x01\x00\x00\x00\x00", "a GIF image"),
                          (b"BM" + bytes(60), "a BMP image")]:
        with pytest.raises(RuntimeError, match=message):
            decode(data)
    for keep in (8, 16, 33, 50, len(png) - 13):
        with pytest.raises(RuntimeError, match="invalid PNG data"):
            decode(png[:keep])
    for keep in (3, 30, len(jpeg) // 2, len(jpeg) - 2):
        with pytest.raises(RuntimeError, match="invalid JPEG data"):
            decode(jpeg[:keep])
    corrupt = bytearray(png)
    corrupt[40] ^= 0xFF  # inside IDAT: its CRC no longer matches
    with pytest.raises(RuntimeError, match="invalid PNG data"):
        decode(bytes(corrupt))
    # A header declaring a huge image over a few bytes is refused before any allocation.
    for side, message in [(16384, "cannot hold"), (999999, "too large")]:
        with pytest.raises(RuntimeError, match=message):
            decode(with_declared_size(encode_png(np.zeros((1, 1, 3)), 2), side, side))
    with pytest.raises(RuntimeError, match="1-D"):
        vision.Decode()(decode(png))  # already decoded
    with pytest.raises(RuntimeError, match="1-D"):
        vision.Decode()(np.frombuffer(png, np.uint8).astype(np.float32))


def write_tree(root):
    """Folders a (two PNGs of different sizes) and b (two JPEGs); the decoded pixels of each file."""
    (root / "a").mkdir()
    (root / "b").mkdir()
    small, wide = random_samples((6, 5, 3), 256, seed=5), random_samples((4, 10, 3), 256, seed=6)
    (root / "a" / "1.png").write_bytes(encode_png(small, 2))
    (root / "a" / "2.png").write_bytes(encode_png(wide, 2, interlace=True))
    (root / "b" / "1.jpg").write_bytes((IMAGES / "gradient_444.jpg").read_bytes())
    (root / "b" / "2.jpg").write_bytes((IMAGES / "gray.jpg").read_bytes())
    return [small, wide, gradient(12, 16), np.repeat(gray_ramp()[..., None], 3, axis=-1)]


def test_image_folder_decode_matches_vision_decode(tmp_path):
    expected = write_tree(tmp_path)
    decoded = rows(ds.ImageFolderDataset(str(tmp_path), decode=True, shuffle=False))
    mapped = rows(ds.ImageFolderDataset(str(tmp_path), shuffle=False).map(vision.Decode(), "image"))
    assert [int(label) for _, label in decoded] == [0, 0, 1, 1]
    for (image, _), (same, _), source in zip(decoded, mapped, expected):
        np.testing.assert_array_equal(image, same)
        assert image.dtype == np.uint8 and image.shape == source.shape
        assert np.abs(image.astype(int) - source).max() <= 6
    np.testing.assert_array_equal(decoded[0][0], expected[0])  # PNG: exact
    np.testing.assert_array_equal(decoded[1][0], expected[1])


def test_decode_resize_batch_pipeline(tmp_path):
    write_tree(tmp_path)
    data = ds.ImageFolderDataset(str(tmp_path), decode=True, shuffle=False)
    data = data.map([vision.Resize((8, 8)), vision.HWC2CHW()], "image").batch(2)
    batches = rows(data)
    assert len(batches) == 2
    for images, labels in batches:
        assert images.shape == (2, 3, 8, 8) and images.dtype == np.uint8
        assert labels.shape == (2,)
    assert [b[1].tolist() for b in batches] == [[0, 0], [1, 1]]
    # Same pipeline with the Decode transform instead of decode=True.
    by_map = ds.ImageFolderDataset(str(tmp_path), shuffle=False)
    by_map = by_map.map([vision.Decode(), vision.Resize((8, 8)), vision.HWC2CHW()], "image",
                        num_parallel_workers=2).batch(2)
    for (images, _), (same, _) in zip(batches, rows(by_map)):
        np.testing.assert_array_equal(images, same)


def test_image_folder_decode_names_a_bad_file(tmp_path):
    write_tree(tmp_path)
    (tmp_path / "b" / "3.jpg").write_bytes(b"\xff\xd8\xff truncated")
    data = ds.ImageFolderDataset(str(tmp_path), decode=True, shuffle=False)
    with pytest.raises(RuntimeError, match="3.jpg.*invalid JPEG data"):
        rows(data)
