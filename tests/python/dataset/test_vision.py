"""Vision transforms and TypeCast/Compose: values against NumPy references, the
vectorised path against the one-image path, argument and input errors."""
import math

import numpy as np
import pytest

import msrt.dataset.transforms as transforms
from msrt.dataset import vision
from msrt.dataset.transforms import c_transforms as legacy_transforms
from msrt.dataset.vision import Inter
from msrt.dataset.vision import c_transforms as legacy_vision

RNG = np.random.default_rng(1234)


# --------------------------------------------------------------------------
# Slow, independent references: one output pixel at a time, in float64.

def _source_coordinate(d, src, dst):
    """OpenCV INTER_LINEAR: centre-aligned position, clamped to the image."""
    position = float(np.float32((d + 0.5) * (src / dst) - 0.5))
    left = math.floor(position)
    fraction = position - left
    if left < 0:
        left, fraction = 0, 0.0
    if left >= src - 1:
        left, fraction = src - 1, 0.0
    return left, min(left + 1, src - 1), fraction


def reference_bilinear(image, out_h, out_w):
    src_h, src_w = image.shape[:2]
    out = np.zeros((out_h, out_w) + image.shape[2:])
    for y in range(out_h):
        y0, y1, fy = _source_coordinate(y, src_h, out_h)
        for x in range(out_w):
            x0, x1, fx = _source_coordinate(x, src_w, out_w)
            top = image[y0, x0] * (1 - fx) + image[y0, x1] * fx
            bottom = image[y1, x0] * (1 - fx) + image[y1, x1] * fx
            out[y, x] = top * (1 - fy) + bottom * fy
    return out


def reference_nearest(image, out_h, out_w):
    src_h, src_w = image.shape[:2]
    out = np.zeros((out_h, out_w) + image.shape[2:], image.dtype)
    for y in range(out_h):
        for x in range(out_w):
            out[y, x] = image[min(y * src_h // out_h, src_h - 1), min(x * src_w // out_w, src_w - 1)]
    return out


# --------------------------------------------------------------------------
# Resize

def test_resize_hand_computed_upsample():
    image = np.array([[0, 4], [8, 12]], np.float32)
    got = vision.Resize((4, 4))(image)
    # Columns sample x = -0.25 (clamped), 0.25, 0.75, 1.25 (clamped): weights 0, .25, .75, 1.
    np.testing.assert_allclose(got[0], [0, 1, 3, 4])
    np.testing.assert_allclose(got[:, 0], [0, 2, 6, 8])
    np.testing.assert_allclose(got[1, 1], 0.75 * 1 + 0.25 * 9)
    down = vision.Resize((1, 2))(np.arange(8, dtype=np.float32).reshape(2, 4))
    np.testing.assert_allclose(down, [[2.5, 4.5]])  # means of the 2x2 blocks


@pytest.mark.parametrize("src, dst", [((28, 28), (32, 32)), ((5, 7), (9, 4)), ((13, 6), (3, 11)), ((4, 4), (4, 4))])
def test_resize_bilinear_matches_reference_float(src, dst):
    image = RNG.random(src + (3,), dtype=np.float32) * 100
    got = vision.Resize(dst)(image)
    assert got.dtype == np.float32 and got.shape == dst + (3,)
    np.testing.assert_allclose(got, reference_bilinear(image.astype(np.float64), *dst), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("src, dst", [((28, 28), (32, 32)), ((28, 28), (17, 40)), ((9, 9), (3, 5))])
def test_resize_bilinear_uint8_rounds_like_the_reference(src, dst):
    image = RNG.integers(0, 256, size=src + (1,), dtype=np.uint8)
    got = vision.Resize(dst)(image)
    assert got.dtype == np.uint8 and got.shape == dst + (1,)
    expected = np.floor(reference_bilinear(image.astype(np.float64), *dst) + 0.5)
    difference = np.abs(got.astype(np.int64) - expected)
    assert difference.max() <= 1 and (difference == 0).mean() > 0.99


def test_resize_same_size_is_identity_and_2d_images_work():
    image = RNG.integers(0, 256, size=(6, 5), dtype=np.uint8)
    np.testing.assert_array_equal(vision.Resize((6, 5))(image), image)
    got = vision.Resize((8, 3))(image.astype(np.float64))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, reference_bilinear(image.astype(np.float64), 8, 3), rtol=1e-6)


@pytest.mark.parametrize("src, dst", [((28, 28), (32, 32)), ((7, 5), (3, 12)), ((6, 6), (4, 9))])
def test_resize_nearest_matches_opencv_indexing(src, dst):
    image = RNG.integers(0, 256, size=src + (2,), dtype=np.uint8)
    got = vision.Resize(dst, Inter.NEAREST)(image)
    np.testing.assert_array_equal(got, reference_nearest(image, *dst))


def test_resize_one_number_scales_the_shorter_edge():
    assert vision.Resize(10)(np.zeros((20, 45, 1), np.uint8)).shape == (10, 22, 1)
    assert vision.Resize(10)(np.zeros((45, 20), np.uint8)).shape == (22, 10)
    assert vision.Resize(32)(np.zeros((28, 28, 1), np.uint8)).shape == (32, 32, 1)


@pytest.mark.parametrize("interpolation", [Inter.LINEAR, Inter.NEAREST])
def test_resize_vectorised_path_equals_one_image_path(interpolation):
    images = RNG.integers(0, 256, size=(5, 11, 7, 3), dtype=np.uint8)
    op = vision.Resize((6, 9), interpolation)
    stacked = op._apply_rows(images)
    for i in range(5):
        np.testing.assert_array_equal(stacked[i], op(images[i]))
    gray = images[..., 0]
    np.testing.assert_array_equal(op._apply_rows(gray)[2], op(gray[2]))


def test_resize_argument_and_input_errors():
    with pytest.raises(ValueError, match="interval"):
        vision.Resize(0)
    with pytest.raises(ValueError, match="size at dim 1"):
        vision.Resize((3, 0))
    with pytest.raises(TypeError, match="Size should be a single integer or a list/tuple"):
        vision.Resize((1, 2, 3))
    with pytest.raises(TypeError, match="Size should be"):
        vision.Resize("32")
    with pytest.raises(TypeError, match="size at dim 0"):
        vision.Resize((2.0, 3))
    with pytest.raises(TypeError, match="interpolation"):
        vision.Resize(3, "linear")
    with pytest.raises(NotImplementedError, match="CUBIC"):
        vision.Resize(3, Inter.CUBIC)
    with pytest.raises(RuntimeError, match="Resize.*shape"):
        vision.Resize(3)(np.zeros(5, np.uint8))
    with pytest.raises(TypeError, match="NumPy array"):
        vision.Resize(3)([[1, 2], [3, 4]])


# --------------------------------------------------------------------------
# Rescale, Normalize, HWC2CHW

def test_rescale():
    image = RNG.integers(0, 256, size=(4, 4, 3), dtype=np.uint8)
    got = vision.Rescale(1 / 255, -0.5)(image)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, image / 255 - 0.5, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(vision.Rescale(2, 1)._apply_rows(image[None])[0], vision.Rescale(2, 1)(image))
    floats = np.ones((2, 2), np.float32)
    vision.Rescale(3, 0)(floats)
    assert floats.max() == 1  # the input is not modified
    with pytest.raises(TypeError, match="rescale"):
        vision.Rescale("1", 0)
    with pytest.raises(ValueError, match="shift"):
        vision.Rescale(1, 1e9)


def test_normalize_hwc_chw_and_single_value():
    image = RNG.integers(0, 256, size=(5, 4, 3), dtype=np.uint8)
    mean, std = [10.0, 100.0, 200.0], [2.0, 50.0, 0.5]
    got = vision.Normalize(mean, std)(image)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, (image - np.array(mean)) / np.array(std), rtol=1e-6)
    chw = image.transpose(2, 0, 1)
    np.testing.assert_allclose(vision.Normalize(mean, std, is_hwc=False)(chw), got.transpose(2, 0, 1), rtol=1e-6)
    np.testing.assert_allclose(vision.Normalize([0.5], [0.25])(image), (image - 0.5) / 0.25, rtol=1e-6)
    gray = image[..., 0]
    np.testing.assert_allclose(vision.Normalize([1], [2])(gray), (gray - 1.0) / 2, rtol=1e-6)
    stacked = vision.Normalize(mean, std, is_hwc=False)._apply_rows(np.stack([chw, chw]))
    np.testing.assert_array_equal(stacked[1], vision.Normalize(mean, std, is_hwc=False)(chw))


def test_normalize_errors():
    with pytest.raises(ValueError, match="Length of mean and std must be equal"):
        vision.Normalize([1, 2], [1])
    with pytest.raises(ValueError, match=r"mean\[0\] is not within the required interval of \[0, 255\]"):
        vision.Normalize([-1], [1])
    with pytest.raises(ValueError, match=r"std\[0\] is not within the required interval of \(0, 255\]"):
        vision.Normalize([1], [0])
    with pytest.raises(TypeError, match="mean"):
        vision.Normalize(0.5, 0.5)
    with pytest.raises(TypeError, match="is_hwc"):
        vision.Normalize([1], [1], is_hwc=1)
    with pytest.raises(RuntimeError, match="channels: 4, size of mean: 3"):
        vision.Normalize([1, 2, 3], [1, 1, 1])(np.zeros((2, 2, 4), np.uint8))


def test_hwc2chw():
    image = RNG.integers(0, 256, size=(3, 5, 2), dtype=np.uint8)
    got = vision.HWC2CHW()(image)
    np.testing.assert_array_equal(got, image.transpose(2, 0, 1))
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(vision.HWC2CHW()._apply_rows(np.stack([image, image]))[1], got)
    gray = image[..., 0]
    np.testing.assert_array_equal(vision.HWC2CHW()(gray), gray)
    with pytest.raises(RuntimeError, match="HWC2CHW"):
        vision.HWC2CHW()(np.zeros(3))


# --------------------------------------------------------------------------
# TypeCast, Compose

class _FakeMsrtDtype:
    def to_numpy(self):
        return np.int16


@pytest.mark.parametrize("data_type, expected", [
    (np.int32, np.int32), ("int32", np.int32), (np.dtype("float16"), np.float16), ("bool", np.bool_),
    (_FakeMsrtDtype(), np.int16),
])
def test_type_cast_targets(data_type, expected):
    got = transforms.TypeCast(data_type)(np.array([1.7, -2.9, 0.0]))
    assert got.dtype == expected
    if np.issubdtype(expected, np.integer):
        np.testing.assert_array_equal(got, [1, -2, 0])  # truncation toward zero


def test_type_cast_accepts_msrt_dtypes():
    mstype = pytest.importorskip("msrt.common.dtype")
    got = transforms.TypeCast(mstype.int32)(np.array([1.5, 2.5]))
    assert got.dtype == np.int32
    assert transforms.TypeCast(mstype.float16)(np.array(3)).dtype == np.float16
    with pytest.raises(TypeError, match="TypeCast"):
        transforms.TypeCast(mstype.string)


def test_type_cast_scalars_and_errors():
    label = transforms.TypeCast(np.int32)(np.array(7, np.uint32))
    assert label.shape == () and label.dtype == np.int32 and label == 7
    for bad in (None, "notatype", object(), True):
        with pytest.raises(TypeError, match="data_type"):
            transforms.TypeCast(bad)
    with pytest.raises(TypeError, match="object"):
        transforms.TypeCast(object)


def test_compose_applies_in_order_and_vectorises_when_it_can():
    image = RNG.integers(0, 256, size=(6, 6, 1), dtype=np.uint8)
    composed = transforms.Compose([vision.Resize((3, 3)), vision.Rescale(1 / 255, 0), vision.HWC2CHW()])
    expected = vision.HWC2CHW()(vision.Rescale(1 / 255, 0)(vision.Resize((3, 3))(image)))
    np.testing.assert_array_equal(composed(image), expected)
    assert composed._vectorised
    np.testing.assert_array_equal(composed._apply_rows(image[None])[0], expected)
    with_python = transforms.Compose([vision.HWC2CHW(), lambda x: (x, x.sum())])
    assert not with_python._vectorised
    chw, total = with_python(image)
    assert chw.shape == (1, 6, 6) and total == image.sum()
    with pytest.raises(ValueError, match="empty"):
        transforms.Compose([])
    with pytest.raises(TypeError, match="transforms"):
        transforms.Compose([1])


def test_legacy_module_paths():
    assert legacy_vision.Resize is vision.Resize and legacy_vision.Inter is Inter
    assert legacy_transforms.TypeCast is transforms.TypeCast
    assert vision.transforms.Normalize is vision.Normalize
    assert Inter.BILINEAR is Inter.LINEAR and int(Inter.NEAREST) == 0


# --------------------------------------------------------------------------
# CenterCrop, RandomCrop, RandomResizedCrop, RandomHorizontalFlip, RandomVerticalFlip, OneHot

def windows(padded, crop_h, crop_w):
    """Every crop_h x crop_w window of `padded`."""
    return [padded[t:t + crop_h, s:s + crop_w] for t in range(padded.shape[0] - crop_h + 1)
            for s in range(padded.shape[1] - crop_w + 1)]


def test_center_crop_against_numpy():
    image = RNG.integers(0, 256, size=(7, 10, 3), dtype=np.uint8)
    # Excess 7 - 4 = 3 rows: std::round(1.5) = 2 come off the top; 10 - 5 = 5 columns: 3 off the left.
    np.testing.assert_array_equal(vision.CenterCrop((4, 5))(image), image[2:6, 3:8])
    np.testing.assert_array_equal(vision.CenterCrop(6)(image[:, :, 0]), image[1:7, 2:8, 0])  # round(0.5) = 1
    # Larger than the image: zero padding, the odd extra row/column on the top/left.
    padded = vision.CenterCrop((10, 11))(image)
    expected = np.zeros((10, 11, 3), np.uint8)
    expected[2:9, 1:11] = image
    np.testing.assert_array_equal(padded, expected)
    stack = RNG.random((4, 9, 9, 2)).astype(np.float32)
    crop = vision.CenterCrop((3, 4))
    np.testing.assert_array_equal(crop._apply_rows(stack), np.stack([crop(x) for x in stack]))
    with pytest.raises(ValueError, match="size"):
        vision.CenterCrop(0)
    with pytest.raises(TypeError, match="size"):
        vision.CenterCrop((2, 2, 2))


@pytest.mark.parametrize("mode", list(vision.Border))
def test_random_crop_takes_a_window_of_the_padded_image(mode):
    image = RNG.integers(0, 256, size=(6, 5, 3), dtype=np.uint8)
    crop = vision.RandomCrop((4, 4), padding=(1, 2, 3, 0), fill_value=(7, 8, 9), padding_mode=mode)
    # padding (left, top, right, bottom) = (1, 2, 3, 0)
    if mode == vision.Border.CONSTANT:
        padded = np.empty((8, 9, 3), np.uint8)
        padded[...] = (7, 8, 9)
        padded[2:8, 1:6] = image
    else:
        padded = np.pad(image, ((2, 0), (1, 3), (0, 0)), mode=mode.value)
    candidates = windows(padded, 4, 4)
    seen = set()
    for _ in range(40):
        out = crop(image)
        matches = [k for k, w in enumerate(candidates) if np.array_equal(w, out)]
        assert matches, "the crop is not a window of the padded image"
        seen.add(matches[0])
    assert len(seen) > 5  # random offsets


def test_random_crop_padding_forms_and_pad_if_needed():
    image = RNG.integers(0, 256, size=(3, 4), dtype=np.uint8)
    assert vision.RandomCrop(5, padding=1)(image).shape == (5, 5)  # 3 + 2 rows, 4 + 2 columns
    full = vision.RandomCrop((3, 8), padding=(2, 0))(image)  # left/right 2, top/bottom 0
    np.testing.assert_array_equal(full, np.pad(image, ((0, 0), (2, 2))))
    # pad_if_needed pads both sides by the missing size: 5 - 3 = 2 rows on each side.
    for _ in range(10):
        out = vision.RandomCrop((5, 4), pad_if_needed=True)(image)
        assert any(np.array_equal(out, w) for w in windows(np.pad(image, ((2, 2), (0, 0))), 5, 4))
    with pytest.raises(RuntimeError, match="crop size is bigger than the image dimensions"):
        vision.RandomCrop((5, 4))(image)
    with pytest.raises(TypeError, match="padding"):
        vision.RandomCrop(2, padding=(1, 2, 3))
    with pytest.raises(ValueError, match="fill_value"):
        vision.RandomCrop(2, fill_value=300)
    with pytest.raises(TypeError, match="padding_mode"):
        vision.RandomCrop(2, padding_mode="edge")
    with pytest.raises(TypeError, match="pad_if_needed"):
        vision.RandomCrop(2, pad_if_needed=1)


def test_random_transforms_follow_the_pipeline_seed():
    from msrt.dataset import config

    image = RNG.integers(0, 256, size=(12, 12, 3), dtype=np.uint8)
    makers = [lambda: vision.RandomCrop(5), lambda: vision.RandomResizedCrop(4),
              lambda: vision.RandomHorizontalFlip()]
    for make in makers:
        config.set_seed(11)
        first_op = make()
        first = [first_op(image) for _ in range(8)]
        config.set_seed(11)
        again_op = make()
        assert all(np.array_equal(a, b) for a, b in zip(first, [again_op(image) for _ in range(8)]))
        config.set_seed(12)
        other_op = make()
        assert not all(np.array_equal(a, b) for a, b in zip(first, [other_op(image) for _ in range(8)]))


def test_random_resized_crop_against_resize():
    image = RNG.random((10, 16, 3)).astype(np.float32)
    whole = vision.RandomResizedCrop((5, 8), scale=(1.0, 1.0), ratio=(1.6, 1.6))  # the only fitting box: all
    np.testing.assert_allclose(whole(image), vision.Resize((5, 8))(image), rtol=1e-6)
    square = RNG.random((20, 20)).astype(np.float32)
    # Ratio 10 never fits a square with scale >= 0.5: the fallback is the centre box of ratio 10.
    fallback = vision.RandomResizedCrop(6, scale=(0.5, 1.0), ratio=(10.0, 10.0), interpolation=Inter.NEAREST)
    np.testing.assert_array_equal(fallback(square), vision.Resize((6, 6), Inter.NEAREST)(square[9:11, :]))
    out = vision.RandomResizedCrop(7)(image)
    assert out.shape == (7, 7, 3) and out.dtype == np.float32
    with pytest.raises(ValueError, match="scale"):
        vision.RandomResizedCrop(4, scale=(0.9, 0.1))
    with pytest.raises(ValueError, match="ratio"):
        vision.RandomResizedCrop(4, ratio=(0, 1))
    with pytest.raises(NotImplementedError, match="BICUBIC"):
        vision.RandomResizedCrop(4, interpolation=Inter.BICUBIC)


def test_random_horizontal_flip():
    from msrt.dataset import config

    image = RNG.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    np.testing.assert_array_equal(vision.RandomHorizontalFlip(1.0)(image), image[:, ::-1])
    np.testing.assert_array_equal(vision.RandomHorizontalFlip(0.0)(image), image)
    stack = RNG.integers(0, 256, size=(50, 4, 5), dtype=np.uint8)
    config.set_seed(3)
    rows = vision.RandomHorizontalFlip()._apply_rows(stack)
    config.set_seed(3)
    one_by_one = vision.RandomHorizontalFlip()
    np.testing.assert_array_equal(rows, np.stack([one_by_one(x) for x in stack]))
    flipped = [not np.array_equal(r, x) for r, x in zip(rows, stack)]
    assert 10 < sum(flipped) < 40
    with pytest.raises(ValueError, match="prob"):
        vision.RandomHorizontalFlip(1.5)


def test_random_vertical_flip():
    from msrt.dataset import config

    image = RNG.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    np.testing.assert_array_equal(vision.RandomVerticalFlip(1.0)(image), image[::-1])
    np.testing.assert_array_equal(vision.RandomVerticalFlip(0.0)(image), image)
    gray = RNG.integers(0, 256, size=(4, 5), dtype=np.uint8)
    np.testing.assert_array_equal(vision.RandomVerticalFlip(1)(gray), gray[::-1])
    stack = RNG.integers(0, 256, size=(50, 4, 5), dtype=np.uint8)
    config.set_seed(3)
    rows = vision.RandomVerticalFlip()._apply_rows(stack)
    config.set_seed(3)
    one_by_one = vision.RandomVerticalFlip()
    np.testing.assert_array_equal(rows, np.stack([one_by_one(x) for x in stack]))
    flipped = [not np.array_equal(r, x) for r, x in zip(rows, stack)]
    assert 10 < sum(flipped) < 40
    assert all(np.array_equal(r, x[::-1]) for r, x, f in zip(rows, stack, flipped) if f)
    with pytest.raises(ValueError, match="prob"):
        vision.RandomVerticalFlip(-0.1)
    with pytest.raises(TypeError, match="prob"):
        vision.RandomVerticalFlip("0.5")


def test_one_hot_against_numpy():
    labels = np.array([3, 0, 9, 4], np.int64)
    np.testing.assert_array_equal(transforms.OneHot(10)(labels), np.eye(10, dtype=np.int64)[labels])
    scalar = transforms.OneHot(5)(np.uint32(2))
    assert scalar.dtype == np.uint32 and scalar.tolist() == [0, 0, 1, 0, 0]
    smooth = transforms.OneHot(4, smoothing_rate=0.2)(np.array(1, np.int32))
    np.testing.assert_allclose(smooth, [0.05, 0.85, 0.05, 0.05], rtol=1e-6)
    assert smooth.dtype == np.float32
    one_hot = transforms.OneHot(10)
    np.testing.assert_array_equal(one_hot._apply_rows(labels), np.stack([one_hot(x) for x in labels]))
    with pytest.raises(RuntimeError, match="only supports input of int type"):
        one_hot(np.array([1.0]))
    with pytest.raises(RuntimeError, match=r"labels should lie in \[0, 10\)"):
        one_hot(np.array([10]))
    with pytest.raises(RuntimeError, match="scalars or 1-D"):
        one_hot(np.zeros((2, 2), np.int32))
    with pytest.raises(TypeError, match="num_classes"):
        transforms.OneHot(2.0)
    with pytest.raises(ValueError, match="smoothing_rate"):
        transforms.OneHot(3, smoothing_rate=1.5)
    assert legacy_transforms.OneHot is transforms.OneHot and legacy_vision.RandomCrop is vision.RandomCrop
