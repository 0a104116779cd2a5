"""msrt's side of the benchmark suite (suite.py): the networks, with the attribute names their PyTorch twins in
suite_peer.py use, and the training step and inference call the suite times."""
import csv
import glob
import os
import time

import numpy as np

import msrt as ms
from msrt import amp, nn
from msrt.common.parameter import Parameter
from msrt.examples.lenet import LeNet5

import peers
import suite_spec as spec


class MLP(nn.Cell):
    def __init__(self, sizes):
        super().__init__()
        cells = []
        for i in range(len(sizes) - 1):
            cells.append(nn.Dense(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                cells.append(nn.ReLU())
        self.layers = nn.SequentialCell(cells)

    def construct(self, x):
        return self.layers(x)


def _conv(cin, cout, k, stride):
    return nn.Conv2d(cin, cout, k, stride=stride, pad_mode="pad", padding=k // 2)


class BasicBlock(nn.Cell):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = _conv(cin, cout, 3, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = _conv(cout, cout, 3, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.project = stride != 1 or cin != cout
        if self.project:
            self.shortcut = nn.SequentialCell([_conv(cin, cout, 1, stride), nn.BatchNorm2d(cout)])

    def construct(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (self.shortcut(x) if self.project else x))


class ResNet(nn.Cell):
    def __init__(self, widths, blocks):
        super().__init__()
        self.conv1 = _conv(3, widths[0], 3, 1)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU()
        cells, cin = [], widths[0]
        for stage, width in enumerate(widths):
            for block in range(blocks):
                cells.append(BasicBlock(cin, width, 2 if stage > 0 and block == 0 else 1))
                cin = width
        self.blocks = nn.SequentialCell(cells)
        self.fc = nn.Dense(cin, spec.CLASSES)

    def construct(self, x):
        x = self.blocks(self.relu(self.bn1(self.conv1(x))))
        return self.fc(x.mean(axis=(2, 3)))


class Encoder(nn.Cell):
    def __init__(self, vocab, seq, d_model, heads, ffn, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.pos = Parameter(ms.Tensor(np.zeros((seq, d_model), np.float32)), name="pos")
        layer = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Dense(d_model, spec.CLASSES)

    def construct(self, tokens):
        x = self.encoder(self.embedding(tokens) + self.pos)
        return self.head(x.mean(axis=1))


def build(network):
    """The network with suite_spec's initial weights; (net, [(canonical name, shape)])."""
    cfg = spec.NETWORKS[network]
    if network == "lenet":
        net = LeNet5()
    elif network == "mlp":
        net = MLP(cfg["sizes"])
    elif network == "resnet":
        net = ResNet(cfg["widths"], cfg["blocks"])
    else:
        net = Encoder(cfg["vocab"], cfg["seq"], cfg["d_model"], cfg["heads"], cfg["ffn"], cfg["layers"])
    names = []
    for name, param in net.parameters_and_names():
        key = spec.canonical(name)
        # As the PyTorch side's copy_ from torch.from_numpy: the array is read in place, no tensor copy of it first.
        param.set_data(ms.Tensor.from_numpy(spec.init_value(key, param.shape)))
        names.append((key, list(param.shape)))
    return net, names


# The mixed-precision modes: mode -> (execution mode, low-precision dtype name).
AMP_MODES = {"graph-bf16": ("graph", "bfloat16"), "graph-fp16": ("graph", "float16"),
             "pynative-bf16": ("pynative", "bfloat16"), "pynative-fp16": ("pynative", "float16")}


def session(network, batch, phase, mode):
    """(run, check, names): run() does one training step (forward, backward, Momentum update) or one inference
    call and waits for its results; check is the losses of the first three steps (train) or the output's sum, sum
    of magnitudes and first values (infer), for the comparison with PyTorch. mode: "pynative", "graph",
    "graph-o1" (GRAPH_MODE with memory_optimize_level O1) or one of AMP_MODES: the network at amp level O2 in
    bfloat16 or float16 (training: amp.build_train_network's step, float16 with a dynamic loss scale; inference:
    amp.auto_mixed_precision, float32 output)."""
    base, amp_dtype = AMP_MODES.get(mode, (mode, None))
    ms.set_context(mode=ms.PYNATIVE_MODE if base == "pynative" else ms.GRAPH_MODE, device_target="CPU",
                   runtime_num_threads=2, memory_optimize_level="O1" if mode == "graph-o1" else "O0")
    net, names = build(network)
    x, y = spec.inputs(network, batch)
    x = ms.Tensor(x.astype(np.int32) if x.dtype == np.int64 else x)
    y = ms.Tensor(y.astype(np.int32))
    dtype = getattr(ms, amp_dtype) if amp_dtype is not None else None
    if phase == "train":
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        opt = nn.Momentum(net.trainable_params(), learning_rate=spec.LEARNING_RATE, momentum=spec.MOMENTUM)
        if dtype is None:
            step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        else:
            # bfloat16 has float32's exponent range and needs no loss scale; float16 uses a dynamic one
            manager = amp.DynamicLossScaleManager(2 ** 12, 2, 1000) if dtype == ms.float16 else None
            step = amp.build_train_network(net, opt, loss, level="O2", dtype=dtype, loss_scale_manager=manager)
        step.set_train()

        def run():
            out = step(x, y)  # the loss-scaling step returns (loss, overflow, scale)
            return float((out[0] if isinstance(out, tuple) else out).asnumpy())

        return run, [run() for _ in range(3)], names
    model = net if dtype is None else amp.auto_mixed_precision(net, "O2", dtype)
    model.set_train(False)

    def infer():
        return model(x).asnumpy()

    out = infer().astype(np.float64)
    return infer, [float(out.sum()), float(abs(out).sum())] + [float(v) for v in out.ravel()[:4]], names


def profile_session(run, steps, folder):
    """Runs `steps` calls of run under ms.Profiler writing into folder; the op summary's rows."""
    profiler = ms.Profiler(output_path=folder)
    for _ in range(steps):
        run()
    profiler.analyse()
    path = sorted(glob.glob(os.path.join(folder, "profiler", "op_summary_*.csv")))[0]
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def matmul_gflops(n=2048, reps=10):
    """Best GFLOP/s of an n x n x n float32 matmul (oneDNN's sgemm) on msrt's threads."""
    rng = np.random.default_rng(0)
    a = ms.Tensor(rng.standard_normal((n, n)).astype(np.float32))
    b = ms.Tensor(rng.standard_normal((n, n)).astype(np.float32))
    ms.ops.matmul(a, b).asnumpy()
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        ms.ops.matmul(a, b).asnumpy()
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9


def describe():
    """msrt's version, thread plan and wait policy, and the BLAS / OpenMP libraries its process loaded."""
    return peers.msrt_description()
