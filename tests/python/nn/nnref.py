"""NumPy references for layer tests."""
import numpy as np


def same_pads(size, kernel, stride, dilation=1):
    """MindSpore/TensorFlow 'same' padding: (before, after), extra after."""
    out = -(-size // stride)
    needed = max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size)
    return needed // 2, needed - needed // 2


def conv2d(x, w, stride=(1, 1), pad_mode="valid", pad=(0, 0, 0, 0), dilation=(1, 1), group=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if pad_mode == "same":
        top, bottom = same_pads(h, kh, stride[0], dilation[0])
        left, right = same_pads(wd, kw, stride[1], dilation[1])
    elif pad_mode == "pad":
        top, bottom, left, right = pad
    else:
        top = bottom = left = right = 0
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    ekh, ekw = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh = (xp.shape[2] - ekh) // stride[0] + 1
    ow = (xp.shape[3] - ekw) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    og = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(oh):
            for j in range(ow):
                rows = slice(i * stride[0], i * stride[0] + ekh, dilation[0])
                cols = slice(j * stride[1], j * stride[1] + ekw, dilation[1])
                patch = xs[:, :, rows, cols]
                out[:, g * og:(g + 1) * og, i, j] = np.tensordot(patch, ws, axes=([1, 2, 3], [1, 2, 3]))
    return out


def pool2d(x, kernel, stride, pad_mode="valid", kind="max"):
    n, c, h, w = x.shape
    kh, kw = kernel
    if pad_mode == "same":
        top, bottom = same_pads(h, kh, stride[0])
        left, right = same_pads(w, kw, stride[1])
    else:
        top = bottom = left = right = 0
    fill = -np.inf if kind == "max" else np.nan
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    oh = (xp.shape[2] - kh) // stride[0] + 1
    ow = (xp.shape[3] - kw) // stride[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else np.nanmean(win, axis=(2, 3))
    return out


def log_softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=axis, keepdims=True))


def softmax(x, axis=-1):
    return np.exp(log_softmax(x, axis))
