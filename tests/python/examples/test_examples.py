"""The tutorial-style programs of examples/ run to the end, each in a fresh
interpreter with a time limit, and print the result they promise: a loss
that went down, an accuracy above a bar, a checkpoint that restores it.

Each program is written as a MindSpore user writes it, `import msrt as ms`
(and `msrt.*` modules) being the only change.
"""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np

import msrt

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


def run_example(name, *args, cwd=None, timeout=240):
    """Runs examples/`name` with `args`; returns its standard output."""
    env = dict(os.environ)
    package_root = str(pathlib.Path(msrt.__file__).resolve().parents[1])  # the msrt this suite imports
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"{name} failed\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    return proc.stdout


def number(pattern, text):
    match = re.search(pattern, text, re.M)
    assert match, f"no line matching {pattern!r} in:\n{text[-2000:]}"
    return float(match.group(1))


def write_cifar10_bin(directory, train=512, test=128, seed=0):
    """A CIFAR-10 binary folder (data_batch_1.bin, test_batch.bin: records of
    one label byte and the R, G, B planes of a 32 x 32 image) whose classes
    can be learned: each class has its own colour, under pixel noise."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    colours = rng.integers(0, 256, (10, 3, 1, 1))
    for name, n in (("data_batch_1.bin", train), ("test_batch.bin", test)):
        labels = rng.integers(0, 10, n)
        planes = np.clip(colours[labels] + rng.normal(0, 40, (n, 3, 32, 32)), 0, 255).astype(np.uint8)
        records = np.concatenate([labels[:, None].astype(np.uint8), planes.reshape(n, -1)], 1)
        (directory / name).write_bytes(records.tobytes())
    return directory


def test_linear_regression():
    out = run_example("linear_regression.py", "--epochs", "5")
    steps = re.findall(r"^epoch: (\d+) step: (\d+), loss is ([0-9.e+-]+)$", out, re.M)
    assert [int(s[0]) for s in steps] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]  # LossMonitor(50), 100 steps per epoch
    before = number(r"^eval mse before training: ([0-9.]+)$", out)
    after = number(r"^eval mse after training: ([0-9.]+)$", out)
    assert after < 0.05 * before and after < 2.0  # the noise has variance 1
    weight = number(r"^learned: y = ([0-9.-]+) \* x", out)
    bias = number(r"\* x \+ ([0-9.-]+)$", out)
    assert abs(weight - 2.0) < 0.1 and abs(bias - 3.0) < 0.3
    assert "loss went down" in out


def test_cifar10_resnet(tmp_path):
    data = write_cifar10_bin(tmp_path / "cifar-10-batches-bin")
    out = run_example("cifar10_resnet.py", "--data_path", str(data), "--epochs", "3")
    losses = [float(v) for v in re.findall(r"^epoch: \d+ step: 16, loss is ([0-9.e+-]+)$", out, re.M)]
    assert len(losses) == 3
    assert len(re.findall(r"^Train epoch time: ", out, re.M)) == 3  # TimeMonitor
    before = number(r"^test accuracy before training: ([0-9.]+)$", out)
    after = number(r"^test accuracy after training: ([0-9.]+)$", out)
    assert after > 0.6 and after > before + 0.3


def test_lstm_text_classifier():
    out = run_example("lstm_text_classifier.py", "--epochs", "5")
    losses = [float(v) for v in re.findall(r"^epoch \d: loss ([0-9.]+)$", out, re.M)]
    assert len(losses) == 5 and losses[-1] < 0.5 * losses[0]
    after = number(r"^test accuracy after training: ([0-9.]+)$", out)
    assert after > 0.85


def test_transformer_classifier():
    out = run_example("transformer_classifier.py", "--epochs", "3")
    losses = [float(v) for v in re.findall(r"^epoch: \d step: 32, loss is ([0-9.e+-]+)$", out, re.M)]
    assert len(losses) == 3
    before = number(r"^test accuracy before training: ([0-9.]+)$", out)
    after = number(r"^test accuracy after training: ([0-9.]+)$", out)
    assert before < 0.5 and after > 0.9


def test_transformer_reverse(tmp_path):
    out = run_example("transformer_reverse.py", "--epochs", "3", "--summary_dir", str(tmp_path))
    losses = [float(v) for v in re.findall(r"^epoch: \d step: 64, loss is ([0-9.e+-]+)$", out, re.M)]
    assert len(losses) == 3 and losses[-1] < losses[0]
    before = number(r"^token accuracy before training: ([0-9.]+)$", out)
    after = number(r"^token accuracy after training: ([0-9.]+)$", out)
    assert before < 0.3 and after > 0.95
    decoded = re.findall(r"^source \[.*\] -> decoded (\[.*\]) \(expected (\[.*\])\)$", out, re.M)
    assert len(decoded) == 2 and all(got == want for got, want in decoded)
    first, last = (number(p, out) for p in (r"token accuracy ([0-9.]+) at step 1 ->", r"-> ([0-9.]+) at step 192$"))
    assert first < 0.3 and last > 0.9  # ops.ScalarSummary's values, read back from the summary file
    assert "summary: histograms of 12 parameters" in out


def _varint(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _fields(data):
    """(field number, value) of a protobuf message: varints, or bytes for
    length-delimited fields; stops at what is not a field of those two kinds
    (the CRC trailer MindSpore appends)."""
    pos = 0
    while pos < len(data):
        key, after = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0 or wire not in (0, 2):
            return
        if wire == 0:
            value, pos = _varint(data, after)
        else:
            size, start = _varint(data, after)
            if start + size > len(data):
                return
            value, pos = data[start:start + size], start + size
        yield number, value


def mindspore_checkpoint(path):
    """{tag: (dims, tensor_type, content size)} of a file in MindSpore's format:
    Checkpoint { repeated Value value = 1 }, Value { string tag = 1;
    TensorProto tensor = 2 }, TensorProto { repeated int64 dims = 1;
    string tensor_type = 2; bytes tensor_content = 3 }."""
    entries = {}
    for number, value in _fields(path.read_bytes()):
        if number != 1:
            break
        parts = dict(_fields(value))
        dims, tensor_type, content = [], None, b""
        for n, v in _fields(parts[2]):
            if n == 1:
                dims.append(v)
            elif n == 2:
                tensor_type = v.decode()
            elif n == 3:
                content = v
        entries[parts[1].decode()] = (tuple(dims), tensor_type, len(content))
    return entries


def test_checkpoint_load(tmp_path):
    out = run_example("checkpoint_load.py", "--ckpt_path", "blobs.ckpt", cwd=tmp_path)
    entries = mindspore_checkpoint(tmp_path / "blobs.ckpt")
    layers = "dense_relu_sequential"
    for index, (n_in, n_out) in {0: (2, 32), 2: (32, 32), 4: (32, 3)}.items():
        assert entries[f"{layers}.{index}.weight"] == ((n_out, n_in), "Float32", 4 * n_out * n_in)
        assert entries[f"{layers}.{index}.bias"] == ((n_out,), "Float32", 4 * n_out)
    assert "parameters not loaded: []" in out
    trained = number(r"^accuracy of the trained network: ([0-9.]+)$", out)
    fresh = number(r"^accuracy of a fresh network: ([0-9.]+)$", out)
    loaded = number(r"^accuracy of the fresh network after loading the checkpoint: ([0-9.]+)$", out)
    assert trained > 0.85 and fresh < 0.7
    assert loaded == trained  # the same parameters give the same predictions


def test_amp_dynamic_loss_scale():
    """O2 with a DynamicLossScaleManager through Model."""
    out = run_example("amp_dynamic_loss_scale.py", "--epochs", "3")
    epochs = re.findall(r"^epoch (\d): mean loss ([0-9.]+), loss scale (\d+), dropped steps so far (\d+)$", out, re.M)
    assert [int(e[0]) for e in epochs] == [1, 2, 3]
    losses = [float(e[1]) for e in epochs]
    assert losses[-1] < 0.7 * losses[0]
    assert int(epochs[0][3]) >= 1 and int(epochs[0][2]) < 2 ** 16  # 2**16 overflowed float16 and was halved
    assert "first layer computes in Float16, BatchNorm in Float32, master weights Float32" in out
