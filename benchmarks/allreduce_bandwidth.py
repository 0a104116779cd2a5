"""AllReduce bandwidth on local ranks: msrt (Gloo) against torch.distributed (gloo).

    .venv/bin/python benchmarks/allreduce_bandwidth.py [--ranks 2,4] [--max-bytes 268435456]
                                                       [--repeats 10] [--warmup 2]

For each rank count, starts two worlds of that many processes on 127.0.0.1:
msrt's (a rendezvous store served by this process, `init_from_store`, then
`ops.AllReduce()` on a contiguous float32 CPU Tensor, the op a user calls) and
PyTorch's (Debian python3-torch, `init_process_group("gloo")` on a TCP store,
`dist.all_reduce` in place), the PyTorch side in the peer's process setup
(benchmarks/peers.py). For each size from 1 KB to --max-bytes (x4 a step) it
asks msrt's world, then PyTorch's, for one measurement: --warmup calls, then
--repeats timed calls, each after a barrier; rank 0's median is reported.
Prints per size the time per call and the bus bandwidth
(2 (n - 1) / n * bytes / time: what each rank moves) of both sides, their
ratio (msrt time / torch time, below 1: msrt faster) and NumPy's copy
bandwidth on the same size in this process as the ceiling, and the settings
each side ran with. Every child is killed when the run ends or fails; each
step waits at most --timeout seconds.
"""
import argparse
import json
import os
import queue
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import peers

peers.msrt_process()

KB = 1024


# ----------------------------------------------------------------------------------------------------------------
# The ranks: `allreduce_bandwidth.py --worker msrt|torch HOST PORT RANK SIZE`. Each reads one request a line on
# stdin ("BYTES WARMUP REPEATS", or "quit"), measures, and answers one JSON line on stdout (rank 0 with the
# times). stdin closing (the parent gone) ends the rank.

def _msrt_side(host, port, rank, size):
    import numpy as np

    import msrt as ms

    ms._C.parallel.init_from_store(host, port, rank, size, 60.0)
    all_reduce, barrier = ms.ops.AllReduce(), ms.ops.Barrier()
    settings = (f"msrt {ms.__version__}: ops.AllReduce()(Tensor) (sum, out of place), Gloo over TCP on "
                f"{host}, world from _C.parallel.init_from_store; OMP_NUM_THREADS="
                f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, OMP_WAIT_POLICY="
                f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}")

    def prepare(count):
        x = ms.Tensor(np.ones(count, np.float32))
        first = all_reduce(x).asnumpy()
        assert first[0] == size and first[-1] == size, (first[0], first[-1], size)
        return x

    return settings, prepare, lambda x: all_reduce(x), lambda: barrier()


def _torch_side(host, port, rank, size):
    import datetime

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://{host}:{port}", rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=60))
    settings = (f"{peers._describe()}; torch.distributed gloo, dist.all_reduce (sum, in place), "
                f"init_method tcp://{host}")

    def prepare(count):
        x = torch.ones(count, dtype=torch.float32)
        dist.all_reduce(x)
        assert x[0].item() == size and x[-1].item() == size, (x[0].item(), x[-1].item(), size)
        x.zero_()  # in place: zeros stay finite however many calls follow
        return x

    def cleanup():
        dist.destroy_process_group()

    return settings, prepare, lambda x: dist.all_reduce(x), lambda: dist.barrier(), cleanup


def worker(kind, host, port, rank, size):
    side = (_msrt_side if kind == "msrt" else _torch_side)(host, port, rank, size)
    settings, prepare, call, barrier = side[:4]
    print(json.dumps({"ready": True, "settings": settings}), flush=True)
    for line in sys.stdin:
        request = line.split()
        if not request or request[0] == "quit":
            break
        nbytes, warmup, repeats = (int(v) for v in request)
        x = None
        x = prepare(nbytes // 4)
        for _ in range(warmup):
            call(x)
        times = []
        for _ in range(repeats):
            barrier()
            start = time.perf_counter()
            call(x)
            times.append(time.perf_counter() - start)
        x = None
        print(json.dumps({"bytes": nbytes, "times": times}), flush=True)
    if len(side) > 4:
        side[4]()


# ----------------------------------------------------------------------------------------------------------------
# The parent.

class World:
    """`size` rank processes of one side; every one of them is killed by close()."""

    def __init__(self, kind, size, timeout):
        self.kind, self.size, self.timeout = kind, size, timeout
        self.procs, self.logs, self.server = [], [], None
        self.lines = queue.Queue()
        if kind == "msrt":
            from msrt import _C

            self.server = _C.parallel.StoreServer("127.0.0.1", 0)
            port = self.server.port
            env = dict(os.environ)  # the worker imports msrt first (peers.msrt_process)
        else:
            port = _free_port()
            env = peers.peer_env()
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        try:
            for rank in range(size):
                log = tempfile.TemporaryFile(mode="w+")
                self.logs.append(log)
                proc = subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--worker", kind, "127.0.0.1", str(port),
                     str(rank), str(size)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                    text=True)
                self.procs.append(proc)
                threading.Thread(target=self._read, args=(rank, proc), daemon=True).start()
            self.settings = self._answers("start")[0]["settings"]
        except BaseException:
            self.close()
            raise

    def _read(self, rank, proc):
        for line in proc.stdout:
            self.lines.put((rank, line))
        self.lines.put((rank, None))

    def _answers(self, what):
        """One JSON line from every rank, within the timeout; rank order."""
        got, deadline = {}, time.monotonic() + self.timeout
        while len(got) < self.size:
            try:
                rank, line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"{self.kind} world of {self.size}: no answer to {what} within "
                                   f"{self.timeout} s{self._tails()}") from None
            if line is None:
                raise RuntimeError(f"{self.kind} rank {rank} of {self.size} exited during {what}{self._tails()}")
            try:
                got[rank] = json.loads(line)
            except ValueError:
                continue  # a line the library printed, not an answer
        return [got[r] for r in range(self.size)]

    def _tails(self):
        out = []
        for rank, log in enumerate(self.logs):
            log.seek(0)
            text = log.read()[-2000:].strip()
            if text:
                out.append(f"\n--- {self.kind} rank {rank} stderr ---\n{text}")
        return "".join(out)

    def measure(self, nbytes, warmup, repeats):
        for proc in self.procs:
            proc.stdin.write(f"{nbytes} {warmup} {repeats}\n")
            proc.stdin.flush()
        return statistics.median(self._answers(f"{nbytes} bytes")[0]["times"])

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    proc.stdin.write("quit\n")
                    proc.stdin.close()
                except OSError:
                    pass
        deadline = time.monotonic() + 5
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()
        if self.server is not None:
            self.server.stop()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memcpy_bandwidth(nbytes):
    """NumPy copy of `nbytes` in this process: bytes / median time, GB/s."""
    import numpy as np

    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    calls = max(1, min(1000, (64 << 20) // nbytes))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            np.copyto(dst, src)
        times.append((time.perf_counter() - start) / calls)
    return nbytes / statistics.median(times) / 1e9


def sizes(max_bytes):
    out, nbytes = [], KB
    while nbytes <= max_bytes:
        out.append(nbytes)
        nbytes *= 4
    return out


def human(nbytes):
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def run(ranks, max_bytes, warmup, repeats, timeout):
    for size in ranks:
        worlds = []
        try:
            worlds.append(World("msrt", size, timeout))
            worlds.append(World("torch", size, timeout))
            msrt_world, torch_world = worlds
            print(f"\nAllReduce, float32 sum, {size} ranks on 127.0.0.1 "
                  f"(median of {repeats} calls after {warmup} warm-up, rank 0's clock)")
            print(f"  msrt:  {msrt_world.settings}")
            print(f"  torch: {torch_world.settings}")
            print(f"  bus bandwidth = 2*({size}-1)/{size} * bytes / time; ratio = msrt time / torch time; "
                  "memcpy = NumPy copy of the same size in the parent process")
            print(f"  {'bytes':>10} {'size':>7} | {'msrt us':>10} {'msrt GB/s':>9} | {'torch us':>10} "
                  f"{'torch GB/s':>10} | {'ratio':>6} | {'memcpy GB/s':>11}", flush=True)
            factor = 2 * (size - 1) / size
            for nbytes in sizes(max_bytes):
                t_msrt = msrt_world.measure(nbytes, warmup, repeats)
                t_torch = torch_world.measure(nbytes, warmup, repeats)
                copy = memcpy_bandwidth(nbytes)
                print(f"  {nbytes:>10} {human(nbytes):>7} | {t_msrt * 1e6:>10.1f} "
                      f"{factor * nbytes / t_msrt / 1e9:>9.3f} | {t_torch * 1e6:>10.1f} "
                      f"{factor * nbytes / t_torch / 1e9:>10.3f} | {t_msrt / t_torch:>6.2f} | {copy:>11.2f}",
                      flush=True)
        finally:
            for world in worlds:
                world.close()


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4", help="comma-separated rank counts (default 2,4)")
    parser.add_argument("--max-bytes", type=int, default=256 << 20, help="largest size in bytes (default 256 MB)")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per size (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls per size first (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds each step may take (default 300)")
    args = parser.parse_args(argv)
    ranks = peers.rank_counts(parser, args.ranks)
    if args.max_bytes < KB:
        parser.error(f"--max-bytes must be at least {KB}, got {args.max_bytes}")
    if args.repeats < 1 or args.warmup < 0:
        parser.error(f"--repeats must be >= 1 and --warmup >= 0, got {args.repeats} and {args.warmup}")
    signal.signal(signal.SIGTERM, _terminate)
    run(ranks, args.max_bytes, args.warmup, args.repeats, args.timeout)


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
