"""GELU, LayerNorm and activation backward, and a transformer encoder block's training step: msrt vs PyTorch,
same run.

Kernels (PYNATIVE, each call waited for with ms.runtime.synchronize()): GELU forward (erf and tanh forms)
and forward + backward on a (1024, 1024) float32 tensor; ReLU forward + backward; LayerNorm over the last
axis of (1024, 512) forward and forward + backward. The transformer step is one TransformerEncoderLayer
(d_model 256, 4 heads, feed-forward 1024, GELU, dropout 0, batch first) on (8, 64, 256): forward, MSE loss,
backward and an SGD update, in PYNATIVE and GRAPH (the step compiled). msrt runs on 2 threads; PyTorch in
its own process with its thread defaults on OpenBLAS's OpenMP build (peers.py). Rounds alternate msrt and
PyTorch; each figure is the median over rounds of per-round medians, in ms.

    .venv/bin/python benchmarks/eltwise_norm.py [--quick]
"""
import argparse
import functools
import os
import statistics
import sys

import peers

peers.msrt_process()
_median_ms = functools.partial(peers.median_ms, warmup=3)

import numpy as np  # noqa: E402

SIZE = (1024, 1024)
LN_SIZE = (1024, 512)
BLOCK = dict(batch=8, seq=64, d_model=256, nhead=4, ff=1024)


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- msrt ---------------------------------------------------------------------------------------------------

def msrt_kernels(reps):
    import msrt as ms
    from msrt import ops

    ms.set_context(mode=ms.PYNATIVE_MODE, runtime_num_threads=2)
    sync = ms.runtime.synchronize
    x = ms.Tensor(_data(SIZE, 0))
    dy = ms.Tensor(_data(SIZE, 1))
    ln_x = ms.Tensor(_data(LN_SIZE, 2))
    ln_dy = ms.Tensor(_data(LN_SIZE, 3))
    gamma = ms.Parameter(ms.Tensor(np.ones(LN_SIZE[-1:], np.float32)), name="gamma")
    beta = ms.Parameter(ms.Tensor(np.zeros(LN_SIZE[-1:], np.float32)), name="beta")
    layer_norm = ops.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-5)

    def with_sens(f, sens):
        return ms.grad(lambda a: (f(a) * sens).sum())

    gelu_erf_bwd = with_sens(lambda a: ops.gelu(a, approximate="none"), dy)
    gelu_tanh_bwd = with_sens(lambda a: ops.gelu(a, approximate="tanh"), dy)
    relu_bwd = with_sens(ops.relu, dy)
    ln_bwd = ms.grad(lambda a, g, b: (layer_norm(a, g, b)[0] * ln_dy).sum(), grad_position=(0, 1, 2))

    def run(f):
        def call():
            f()
            sync()
        return _median_ms(call, reps)

    return {
        "gelu erf fwd": run(lambda: ops.gelu(x, approximate="none")),
        "gelu tanh fwd": run(lambda: ops.gelu(x, approximate="tanh")),
        "gelu erf fwd+bwd": run(lambda: gelu_erf_bwd(x)),
        "gelu tanh fwd+bwd": run(lambda: gelu_tanh_bwd(x)),
        "relu fwd+bwd": run(lambda: relu_bwd(x)),
        "layernorm fwd": run(lambda: layer_norm(ln_x, gamma, beta)),
        "layernorm fwd+bwd": run(lambda: ln_bwd(ln_x, gamma, beta)),
    }


def msrt_block(mode, reps):
    import msrt as ms
    from msrt import nn

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE, runtime_num_threads=2)
    ms.set_seed(0)
    b = BLOCK
    net = nn.TransformerEncoderLayer(b["d_model"], b["nhead"], dim_feedforward=b["ff"], dropout=0.0,
                                     activation="gelu", batch_first=True)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    train.set_train()
    x = ms.Tensor(_data((b["batch"], b["seq"], b["d_model"]), 4))
    y = ms.Tensor(_data((b["batch"], b["seq"], b["d_model"]), 5))
    t = _median_ms(lambda: train(x, y).asnumpy(), reps)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    return t


# --- PyTorch ------------------------------------------------------------------------------------------------

def torch_kernels(reps):
    import torch
    import torch.nn.functional as F

    x = torch.from_numpy(_data(SIZE, 0)).requires_grad_()
    dy = torch.from_numpy(_data(SIZE, 1))
    ln_x = torch.from_numpy(_data(LN_SIZE, 2)).requires_grad_()
    ln_dy = torch.from_numpy(_data(LN_SIZE, 3))
    gamma = torch.ones(LN_SIZE[-1:], requires_grad=True)
    beta = torch.zeros(LN_SIZE[-1:], requires_grad=True)

    def bwd(f, a, sens, params=()):
        def call():
            out = f(a)
            return torch.autograd.grad(out, (a,) + tuple(params), sens)
        return call

    with torch.no_grad():
        fwd = {
            "gelu erf fwd": _median_ms(lambda: F.gelu(x), reps),
            "gelu tanh fwd": _median_ms(lambda: F.gelu(x, approximate="tanh"), reps),
            "layernorm fwd": _median_ms(lambda: F.layer_norm(ln_x, LN_SIZE[-1:], gamma, beta, 1e-5), reps),
        }
    return {
        **fwd,
        "gelu erf fwd+bwd": _median_ms(bwd(F.gelu, x, dy), reps),
        "gelu tanh fwd+bwd": _median_ms(bwd(lambda a: F.gelu(a, approximate="tanh"), x, dy), reps),
        "relu fwd+bwd": _median_ms(bwd(F.relu, x, dy), reps),
        "layernorm fwd+bwd": _median_ms(
            bwd(lambda a: F.layer_norm(a, LN_SIZE[-1:], gamma, beta, 1e-5), ln_x, ln_dy, (gamma, beta)), reps),
    }


def torch_block(reps):
    import torch

    torch.manual_seed(0)
    b = BLOCK
    net = torch.nn.TransformerEncoderLayer(b["d_model"], b["nhead"], dim_feedforward=b["ff"], dropout=0.0,
                                           activation="gelu", batch_first=True)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.MSELoss()
    x = torch.from_numpy(_data((b["batch"], b["seq"], b["d_model"]), 4))
    y = torch.from_numpy(_data((b["batch"], b["seq"], b["d_model"]), 5))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return _median_ms(step, reps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repetitions")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401 - only whether the peer is installed
    except ImportError:
        print("PyTorch is not installed (Debian: apt install python3-torch); nothing to compare with.")
        return 1
    import msrt as ms

    rounds = args.rounds or (2 if args.quick else 5)
    reps = 10 if args.quick else 30
    print(f"msrt {ms.__version__} (2 threads, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}); "
          f"peer: {peers.peer_description()}")
    samples = {}

    def add(key, value):
        samples.setdefault(key, []).append(value)

    for _ in range(rounds):
        for name, value in msrt_kernels(reps).items():
            add(("msrt", name), value)
        for name, value in peers.in_peer(torch_kernels, reps).items():
            add(("torch", name), value)
        add(("msrt", "encoder step GRAPH"), msrt_block("graph", max(reps // 2, 5)))
        add(("msrt", "encoder step PYNATIVE"), msrt_block("pynative", max(reps // 2, 5)))
        add(("torch", "encoder step"), peers.in_peer(torch_block, max(reps // 2, 5)))
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"{'case':<24} {'msrt ms':>9} {'torch ms':>9} {'msrt/torch':>10}")
    for name in ["gelu erf fwd", "gelu tanh fwd", "gelu erf fwd+bwd", "gelu tanh fwd+bwd", "relu fwd+bwd",
                 "layernorm fwd", "layernorm fwd+bwd"]:
        m, t = med[("msrt", name)], med[("torch", name)]
        print(f"{name:<24} {m:9.3f} {t:9.3f} {m / t:10.2f}")
    t = med[("torch", "encoder step")]
    for mode in ("GRAPH", "PYNATIVE"):
        m = med[("msrt", f"encoder step {mode}")]
        print(f"{'encoder step ' + mode:<24} {m:9.3f} {t:9.3f} {m / t:10.2f}")
    print(f"kernels: (1024, 1024) float32 (LayerNorm (1024, 512)); encoder block {BLOCK}; medians of {rounds} "
          "alternating rounds; msrt/torch below 1: msrt is faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
