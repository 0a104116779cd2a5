"""The PyTorch peer the benchmarks measure msrt against, and the process it runs in.

The peer is Debian's python3-torch on OpenBLAS's OpenMP build
(libopenblas0-openmp) with PyTorch's own thread defaults. Both are fixed when
a process starts (the loader's library path, libgomp's wait policy), so the
PyTorch side of a benchmark runs in its own process: `in_peer(fn, *args)`
imports fn's module there, with LD_LIBRARY_PATH naming OpenBLAS's OpenMP
build, OMP_WAIT_POLICY unset and PyTorch loaded before the module (so an
`import msrt` in it cannot change PyTorch's OpenMP settings), and returns
fn's (JSON) result; both sides print the spin count their OpenMP runtime
took (`openmp_spin_count`). msrt's side
runs in the benchmark's process (or processes it starts with the caller's
environment) with msrt imported first (`msrt_process()`), so its OpenMP
workers wait passively as msrt's import asks.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
_PEER_FLAG = "MSRT_BENCH_PEER_PROCESS"
IN_PEER = os.environ.get(_PEER_FLAG) == "1"


def msrt_process():
    """Call at the top of a benchmark (and of any process that runs msrt's side), before numpy or torch can load
    libgomp: outside the peer's process it imports msrt first, whose import asks libgomp for passive waits, as
    every msrt program gets them when it imports msrt first. libgomp reads its wait policy once, when it loads,
    and NumPy on OpenBLAS's OpenMP build loads it too. Benchmarks set no OpenMP settings of their own."""
    if not IN_PEER:
        import msrt  # noqa: F401


def peer_env():
    """The environment of the peer's process."""
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    env[_PEER_FLAG] = "1"
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (OPENBLAS_OPENMP, env.get("LD_LIBRARY_PATH")) if p)
    return env


def in_peer(fn, *args):
    """fn(*args) in the peer's process (fn: a module-level function returning JSON data)."""
    module = sys.modules[fn.__module__]
    path = os.path.dirname(os.path.abspath(module.__file__))
    name = os.path.splitext(os.path.basename(module.__file__))[0]
    # PyTorch loads first, so its OpenMP runtime starts from its own defaults even when fn's module imports msrt
    # (whose import asks for passive waits): libgomp reads OMP_WAIT_POLICY once, when it loads.
    # It refuses to run on any BLAS but OpenBLAS's OpenMP build: a peer on the reference BLAS is not a peer.
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import json, sys; import torch; sys.path.insert(0, {here!r}); import peers; "
            f"peers.require_peer_blas(); sys.path.insert(0, {path!r}); import {name} as m; "
            f"print(json.dumps(m.{fn.__name__}(*json.loads(sys.argv[1]))))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env=peer_env(), capture_output=True,
                         text=True)
    if out.returncode != 0:
        refusal = re.search(r"^(?:\w+\.)*PeerBlasError: (.*)$", out.stderr, re.MULTILINE)
        if refusal:
            raise PeerBlasError(refusal.group(1))
        raise subprocess.CalledProcessError(out.returncode, out.args, out.stdout, out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


class PeerBlasError(RuntimeError):
    """The peer's PyTorch did not load OpenBLAS's OpenMP build."""


def loaded_blas():
    """The BLAS and LAPACK libraries this process has mapped (real paths, from /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if line.rstrip().endswith(".so") or ".so." in line}
    return sorted(os.path.realpath(p) for p in paths if re.search(r"lib(open)?blas|liblapack", os.path.basename(p)))


def require_peer_blas():
    """Raises PeerBlasError unless this process (the peer, PyTorch imported) runs its BLAS from OpenBLAS's
    OpenMP build."""
    blas = loaded_blas()
    home = os.path.realpath(OPENBLAS_OPENMP)
    if not blas or any(os.path.dirname(p) != home for p in blas):
        raise PeerBlasError(f"the PyTorch peer must run on OpenBLAS's OpenMP build ({home}, Debian's "
                            f"libopenblas0-openmp, which `scripts/setup.sh` installs), but it loaded "
                            f"{', '.join(blas) or 'no BLAS library'}")


def torch_version():
    """PyTorch's version (call through in_peer: a CalledProcessError there means no PyTorch)."""
    import torch

    return torch.__version__


def peer_description():
    """What the peer ran on: PyTorch's version, its threads and the BLAS it loaded."""
    return in_peer(_describe)


def msrt_description():
    """msrt's version, thread plan (ms.runtime.thread_info), OpenMP wait policy and the thread pools loaded in
    this process; call it after the benchmark's set_context."""
    import msrt as ms

    info = ms.runtime.thread_info()
    plan = ", ".join(f"{k}={info[k]}" for k in ("runtime_num_threads", "scheduler_threads", "kernel_threads",
                                                "intra_op_threads"))
    return (f"msrt {ms.__version__}: {plan}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}, "
            f"OpenMP spin count {openmp_spin_count()}; {threadpools()}")


def threadpools():
    """The thread pools (BLAS, OpenMP) this process has loaded, as threadpoolctl reports them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed (Debian: python3-threadpoolctl)"
    libs = [f"{i.get('internal_api')} {i.get('version') or ''} ({i.get('user_api')}, {i.get('num_threads')} threads, "
            f"{i.get('threading_layer', '-')}, {os.path.basename(i.get('filepath', ''))})" for i in threadpool_info()]
    return "thread pools: " + ("; ".join(libs) or "none")


def _describe():
    import torch

    blas = "unknown"
    try:
        from threadpoolctl import threadpool_info

        libs = [f"{i.get('internal_api')} {i.get('version')} ({i.get('threading_layer')}, {i.get('filepath')})"
                for i in threadpool_info() if i.get("user_api") == "blas"]
        blas = "; ".join(libs) or blas
    except ImportError:
        pass
    return (f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads (its default), BLAS: {blas}, "
            f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}, OpenMP spin count {openmp_spin_count()}")


def openmp_spin_count():
    """How long this process's OpenMP workers spin before they sleep, as its libgomp runs (GOMP_SPINCOUNT from
    omp_display_env): 0 when they wait passively, 300000 by libgomp's default; None without libgomp. The
    environment says what was asked; this says what the runtime took, fixed when libgomp loaded."""
    import ctypes
    import tempfile

    try:
        gomp = ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
    with tempfile.TemporaryFile() as f:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            gomp.omp_display_env(1)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        found = re.search(r"GOMP_SPINCOUNT = '(\d+)'", f.read().decode(errors="replace"))
    return int(found.group(1)) if found else None


def torch_lenet5():
    """LeNet-5 as msrt.examples.lenet builds it (convolutions without bias), in PyTorch."""
    import torch
    from torch import nn

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, bias=False)
            self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
            self.pool = nn.MaxPool2d(2, 2)
            self.fc1 = nn.Linear(400, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.conv1(x)))
            x = self.pool(torch.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))

    return LeNet5()


def rank_counts(parser, text):
    """The --ranks option of the collective benchmarks: comma-separated counts, each at least 2."""
    try:
        ranks = [int(r) for r in text.split(",")]
    except ValueError:
        parser.error(f"--ranks must be comma-separated integers, got {text!r}")
    if any(r < 2 for r in ranks):
        parser.error(f"--ranks: each count must be at least 2, got {text!r}")
    return ranks


def median_ms(fn, reps, warmup=1):
    """Median milliseconds of `reps` calls of fn, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3
