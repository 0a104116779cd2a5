"""Gradient fusion buckets: nn.DistributedGradReducer on LeNet's gradients against one AllReduce of the
same bytes, and the share of a data-parallel LeNet step spent reducing gradients.

    .venv/bin/python benchmarks/grad_bucket.py [--ranks 2,4] [--repeats 20] [--warmup 3] [--batch 32]

For each rank count, runs this script's worker under msrun (`--worker_num=N --join=True`, every rank on
127.0.0.1, Gloo). Each rank, in PYNATIVE_MODE and then GRAPH_MODE (the reducer compiled as its own
graph), times --repeats calls after --warmup, each call after a barrier and ended by
`ms.runtime.synchronize()`:

- one: `ops.AllReduce()` of one float32 tensor holding as many elements as LeNet5's 8 gradients;
- the reducer (mean) on LeNet5's gradients under three fusion settings: the default (one bucket: one
  all_reduce_fused operator, which packs, all-reduces in place and unpacks), all_reduce_fusion_config=
  [1, 5] (3 buckets) and comm_fusion openstate=False (an all-reduce per gradient);
- a data-parallel training step of LeNet5 (TrainOneStepCell, SGD, --batch rows per rank, default
  fusion) and, within it, the reducer's time measured alone: their ratio is the share of the step
  spent reducing gradients (no part of the reduction overlaps the backward pass by default, see
  docs/distributed.md);
- GRAPH_MODE with inter_op_parallel_num=2 and a bucket per gradient: the step's time, and from the
  profiler's trace of --repeats steps, how much of the all_reduce kernels' time a backward kernel ran
  beside them on another scheduler thread (the overlap docs/distributed.md describes; an all_reduce
  kernel's time includes waiting for the other ranks).

Prints rank 0's medians, the ratio of each reducer setting to one AllReduce (target: <= 1.2x for
the bucketed settings) and the communication share. A figure, not a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import peers

peers.msrt_process()

CONFIGS = (("default: 1 bucket", {}),
           ("all_reduce_fusion_config=[1, 5]: 3 buckets", {"all_reduce_fusion_config": [1, 5]}),
           ("comm_fusion openstate=False: 8 all-reduces", {"comm_fusion": {"openstate": False}}))


def _timed(call, sync, barrier, warmup, repeats):
    for _ in range(warmup):
        call()
        sync()
    times = []
    for _ in range(repeats):
        barrier()
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def worker(out_path, warmup, repeats, batch):
    import numpy as np

    import msrt as ms
    from msrt import nn
    from msrt.communication import get_group_size, get_rank, init
    from msrt.examples.lenet import LeNet5

    init()
    rank, size = get_rank(), get_group_size()
    barrier, sync = ms.ops.Barrier(), ms.runtime.synchronize
    rng = np.random.default_rng(0)
    params = LeNet5().trainable_params()
    grads = tuple(ms.Tensor(rng.standard_normal(p.shape).astype(np.float32)) for p in params)
    total = sum(int(np.prod(p.shape)) for p in params)
    flat = ms.Tensor(rng.standard_normal(total).astype(np.float32))

    class OneAllReduce(nn.Cell):
        def __init__(self):
            super().__init__()
            self.all_reduce = ms.ops.AllReduce()

        def construct(self, x):
            return self.all_reduce(x)

    def data_parallel(**fusion):
        ms.reset_auto_parallel_context()  # a reset also clears device_num and global_rank: set again
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                     device_num=size, global_rank=rank, **fusion)

    result = {"gradients": len(params), "bytes": total * 4, "modes": {}}
    for mode_name, mode in (("PYNATIVE_MODE", ms.PYNATIVE_MODE), ("GRAPH_MODE", ms.GRAPH_MODE)):
        ms.set_context(mode=mode)
        figures = {}
        one = OneAllReduce()
        figures["one"] = _timed(lambda: one(flat), sync, barrier, warmup, repeats)
        reducers = {}
        for name, fusion in CONFIGS:
            data_parallel(**fusion)
            reducers[name] = reducer = nn.DistributedGradReducer(params)
            figures[name] = _timed(lambda: reducer(grads), sync, barrier, warmup, repeats)
            figures[name + " buckets"] = len(reducer.buckets)
        data_parallel()
        net = LeNet5()
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.01, 0.9))
        x = ms.Tensor(rng.standard_normal((batch, 1, 32, 32)).astype(np.float32))
        y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))
        figures["step"] = _timed(lambda: step(x, y), sync, barrier, warmup, repeats)
        figures["step buckets"] = len(step.grad_reducer.buckets)
        result["modes"][mode_name] = figures
    result["overlap"] = _overlap(ms, nn, LeNet5, data_parallel, x, y, warmup, repeats, rank)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(result, f)


def _overlap(ms, nn, lenet_class, data_parallel, x, y, warmup, repeats, rank):
    """GRAPH_MODE with inter_op_parallel_num=2 and a bucket per gradient: the step time, and the share of
    the all_reduce kernels' time during which a backward kernel ran on another scheduler thread (from
    the profiler's trace of --repeats steps)."""
    import glob

    import numpy as np

    data_parallel(comm_fusion={"openstate": False})
    ms.set_context(mode=ms.GRAPH_MODE, inter_op_parallel_num=2)
    net = lenet_class()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.01))
    y = ms.Tensor(np.zeros((x.shape[0], 10), np.float32))
    barrier, sync = ms.ops.Barrier(), ms.runtime.synchronize
    step_time = _timed(lambda: step(x, y), sync, barrier, warmup, repeats)
    with tempfile.TemporaryDirectory() as tmp:
        profiler = ms.Profiler(output_path=tmp)
        for _ in range(repeats):
            step(x, y)
        profiler.analyse()
        with open(glob.glob(os.path.join(tmp, "**", f"trace_{rank}.json"), recursive=True)[0]) as f:
            trace = json.load(f)
    ms.set_context(inter_op_parallel_num=0)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "op"]
    backward = [e for e in ops if e["args"].get("node", "").startswith("Gradients/")]
    reduce_total = overlapped = 0.0
    for a in (e for e in ops if e["name"] in ("all_reduce", "all_reduce_fused")):
        start, end = a["ts"], a["ts"] + a["dur"]
        spans = sorted((max(start, b["ts"]), min(end, b["ts"] + b["dur"])) for b in backward
                       if b["tid"] != a["tid"] and b["args"]["step"] == a["args"]["step"])
        covered, reach = 0.0, start
        for lo, hi in spans:
            lo = max(lo, reach)
            if hi > lo:
                covered += hi - lo
                reach = hi
        reduce_total += a["dur"]
        overlapped += covered
    return {"step": step_time, "all_reduce_us": reduce_total / repeats, "overlapped_us": overlapped / repeats}


def run(ranks, warmup, repeats, batch, timeout):
    for size in ranks:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            argv = [sys.executable, "-m", "msrt.parallel.cluster.run", f"--worker_num={size}",
                    f"--local_worker_num={size}", f"--master_port={_free_port()}", f"--log_dir={tmp}",
                    "--join=True", f"--cluster_time_out={int(timeout)}", os.path.abspath(__file__), "--worker", out,
                    str(warmup), str(repeats), str(batch)]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
            if done.returncode != 0:
                raise SystemExit(f"grad_bucket: the {size}-rank job failed:\n{done.stdout}{done.stderr}")
            with open(out) as f:
                result = json.load(f)
        print(f"\nLeNet5 gradients: {result['gradients']} float32 tensors, {result['bytes']} bytes; {size} ranks "
              f"on 127.0.0.1 under msrun (Gloo); median of {repeats} calls after {warmup} warm-up, rank 0's clock")
        for mode, figures in result["modes"].items():
            one = figures["one"]
            print(f"  {mode}")
            print(f"    {'one AllReduce of ' + str(result['bytes']) + ' bytes':<48} {one * 1e6:>9.1f} us")
            for name, _ in CONFIGS:
                t = figures[name]
                print(f"    {'reducer, ' + name:<48} {t * 1e6:>9.1f} us  {t / one:>5.2f}x one "
                      f"({figures[name + ' buckets']} AllReduce)")
            reduce_time, step = figures[CONFIGS[0][0]], figures["step"]
            print(f"    data-parallel step (batch {batch} per rank)         {step * 1e6:>9.1f} us; gradient "
                  f"reduction {reduce_time * 1e6:.1f} us = {100 * reduce_time / step:.1f}% of the step", flush=True)
        o = result["overlap"]
        share = 100 * o["overlapped_us"] / o["all_reduce_us"] if o["all_reduce_us"] else 0.0
        print(f"  GRAPH_MODE, inter_op_parallel_num=2, a bucket per gradient: step {o['step'] * 1e6:.1f} us; "
              f"all_reduce kernels {o['all_reduce_us']:.1f} us a step, {o['overlapped_us']:.1f} us of it "
              f"({share:.1f}%) beside a backward kernel on another thread", flush=True)


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4", help="comma-separated rank counts (default 2,4)")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    parser.add_argument("--batch", type=int, default=32, help="rows per rank in the training step (default 32)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds each job may take (default 600)")
    args = parser.parse_args(argv)
    ranks = peers.rank_counts(parser, args.ranks)
    if args.repeats < 1 or args.warmup < 0 or args.batch < 1:
        parser.error(f"--repeats and --batch must be >= 1 and --warmup >= 0, got {args.repeats}, {args.batch} "
                     f"and {args.warmup}")
    run(ranks, args.warmup, args.repeats, args.batch, args.timeout)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
