"""PyTorch's side of the benchmark suite (suite.py), run in the peer's process (peers.py: OpenBLAS's OpenMP
build, PyTorch's own thread defaults): the twins of networks.py's networks, with the same attribute names, and
the training step (eager or TorchScript) and inference call the suite times."""
import os
import time

import numpy as np
import torch
from torch import nn

import peers
import suite_spec as spec

peers.require_peer_blas()  # a peer on any BLAS but OpenBLAS's OpenMP build is not a peer

if os.environ.get("MSRT_BENCH_TORCH_THREADS"):  # suite.py --torch-threads
    torch.set_num_threads(int(os.environ["MSRT_BENCH_TORCH_THREADS"]))


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        cells = []
        for i in range(len(sizes) - 1):
            cells.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                cells.append(nn.ReLU())
        self.layers = nn.Sequential(*cells)

    def forward(self, x):
        return self.layers(x)


def _conv(cin, cout, k, stride):
    return nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = _conv(cin, cout, 3, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = _conv(cout, cout, 3, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(_conv(cin, cout, 1, stride), nn.BatchNorm2d(cout))
        else:
            self.shortcut = nn.Identity()

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class ResNet(nn.Module):
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
        self.blocks = nn.Sequential(*cells)
        self.fc = nn.Linear(cin, spec.CLASSES)

    def forward(self, x):
        x = self.blocks(self.relu(self.bn1(self.conv1(x))))
        return self.fc(x.mean((2, 3)))


class Encoder(nn.Module):
    def __init__(self, vocab, seq, d_model, heads, ffn, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(seq, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, spec.CLASSES)

    def forward(self, tokens):
        x = self.encoder(self.embedding(tokens) + self.pos)
        return self.head(x.mean(1))


def build(network):
    """The network with suite_spec's initial weights; (net, [(name, shape)]) of its parameters (and BatchNorm's
    running statistics, as msrt counts them among its parameters)."""
    cfg = spec.NETWORKS[network]
    if network == "lenet":
        net = peers.torch_lenet5()
    elif network == "mlp":
        net = MLP(cfg["sizes"])
    elif network == "resnet":
        net = ResNet(cfg["widths"], cfg["blocks"])
    else:
        net = Encoder(cfg["vocab"], cfg["seq"], cfg["d_model"], cfg["heads"], cfg["ffn"], cfg["layers"])
    names = []
    with torch.no_grad():
        for name, tensor in list(net.named_parameters()) + list(net.named_buffers()):
            if name.endswith("num_batches_tracked"):
                continue
            tensor.copy_(torch.from_numpy(spec.init_value(name, tuple(tensor.shape))))
            names.append((name, list(tensor.shape)))
    return net, names


def _eval_equals_train(net):
    """Whether training mode computes what eval mode does: no batch norm, every dropout 0."""
    for m in net.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            return False
        if isinstance(m, nn.Dropout) and m.p != 0:
            return False
        if hasattr(m, "dropout") and isinstance(m.dropout, float) and m.dropout != 0:
            return False
    return True


def session(network, batch, phase, mode):
    """As networks.session, for PyTorch; mode "eager", "script" (torch.jit.script of the network) or
    "autocast-bf16" (eager under torch.autocast("cpu", torch.bfloat16): PyTorch's mixed precision on CPU)."""
    net, names = build(network)
    x, y = (torch.from_numpy(a) for a in spec.inputs(network, batch))
    autocast = mode == "autocast-bf16"

    def forward(model, inputs):
        if autocast:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return model(inputs).float()
        return model(inputs)

    if phase == "train":
        net.train()
        model = torch.jit.script(net) if mode == "script" else net
        opt = torch.optim.SGD(net.parameters(), lr=spec.LEARNING_RATE, momentum=spec.MOMENTUM)
        loss_fn = nn.CrossEntropyLoss()

        def run():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(forward(model, x), y)
            loss.backward()
            opt.step()
            return loss.item()

        return run, [run() for _ in range(3)], names
    net.eval()
    if autocast and _eval_equals_train(net):
        # PyTorch 1.13's fused inference path of nn.TransformerEncoder fails under
        # CPU autocast ("expected scalar type BFloat16 but found Float"); in training
        # mode it takes the path autocast supports, with the same outputs here.
        net.train()
    model = torch.jit.script(net) if mode == "script" else net

    def infer():
        with torch.no_grad():
            return forward(model, x).numpy()

    out = infer().astype(np.float64)
    return infer, [float(out.sum()), float(abs(out).sum())] + [float(v) for v in out.ravel()[:4]], names


def matmul_gflops(n=2048, reps=10):
    """Best GFLOP/s of an n x n x n float32 torch.mm (OpenBLAS) on PyTorch's threads."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9


def describe():
    """PyTorch's version and threads (torch.__config__.parallel_info()) and the thread pools its process loaded."""
    info = [line.strip() for line in torch.__config__.parallel_info().splitlines()
            if "get_num" in line or "backend" in line or "omp_get_max_threads" in line]
    return (f"PyTorch {torch.__version__}: {', '.join(info)}; "
            f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}, "
            f"OpenMP spin count {peers.openmp_spin_count()}; {peers.threadpools()}")
