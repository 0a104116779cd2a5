"""msrun: starts a job's scheduler and this node's workers.

    msrun --worker_num=4 --local_worker_num=4 --master_port=8118 --log_dir=logs --join=True train.py ARGS

Each worker runs `python train.py ARGS` with MindSpore's dynamic-cluster
variables (MS_ROLE=MS_WORKER, MS_SCHED_HOST, MS_SCHED_PORT, MS_WORKER_NUM,
MS_TOPO_TIMEOUT, MS_NODE_ID, RANK_ID, RANK_SIZE); its output goes to
<log_dir>/worker_<rank>.log. Node 0 (or, without --node_rank, the node whose
address is --master_addr, or the only node) also runs the scheduler, `msrt.communication.init()` under
MS_ROLE=MS_SCHED, logging to <log_dir>/scheduler.log.

With --join=True msrun waits: when a process fails it names it, prints the
end of its log, stops every other process and exits with status 1; Ctrl-C
stops them all too. With --join=False (MindSpore's default) it returns once
the processes are started, leaving them running.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

_POLL_SECONDS = 0.05
_TERMINATE_GRACE_SECONDS = 2.0
_TAIL_LINES = 20
# How long the scheduler may take to see the last release after the workers ended.
_SCHEDULER_DRAIN_SECONDS = 10.0


def _bool(text):
    lowered = str(text).lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected True or False, but got '{text}'")


def _parser():
    parser = argparse.ArgumentParser(
        prog="msrun", description="Start a distributed msrt job: the scheduler and this node's workers.")
    parser.add_argument("--worker_num", type=int, default=8, help="total number of workers (default 8)")
    parser.add_argument("--local_worker_num", type=int, default=8, help="workers started on this node (default 8)")
    parser.add_argument("--master_addr", default="127.0.0.1", help="address of the scheduler (default 127.0.0.1)")
    parser.add_argument("--master_port", type=int, default=8118, help="port of the scheduler (default 8118)")
    parser.add_argument("--node_rank", type=int, default=-1,
                        help="index of this node; its workers get ranks node_rank*local_worker_num + i (default: "
                             "ranks in order of registration)")
    parser.add_argument("--log_dir", default=".", help="folder of scheduler.log and worker_<rank>.log (default .)")
    parser.add_argument("--join", type=_bool, default=False,
                        help="wait for the processes, stop them all when one fails (default False)")
    parser.add_argument("--cluster_time_out", type=int, default=600,
                        help="seconds to wait for every worker to register (default 600)")
    parser.add_argument("task_script", help="the Python script each worker runs")
    parser.add_argument("task_script_args", nargs=argparse.REMAINDER, help="arguments of the script")
    return parser


def _check(args, parser):
    if args.worker_num < 1:
        parser.error(f"--worker_num must be positive, but got {args.worker_num}")
    if not 1 <= args.local_worker_num <= args.worker_num:
        parser.error(f"--local_worker_num must be in [1, worker_num={args.worker_num}], but got "
                     f"{args.local_worker_num}")
    if not 1 <= args.master_port <= 65535:
        parser.error(f"--master_port must be in [1, 65535], but got {args.master_port}")
    if args.cluster_time_out < 1:
        parser.error(f"--cluster_time_out must be positive, but got {args.cluster_time_out}")
    single_node = args.local_worker_num == args.worker_num
    if args.node_rank >= 0 and not single_node and \
            (args.node_rank + 1) * args.local_worker_num > args.worker_num:
        parser.error(f"--node_rank {args.node_rank} with --local_worker_num {args.local_worker_num} gives ranks "
                     f"beyond --worker_num {args.worker_num}")


def _is_local_address(address):
    if address in ("127.0.0.1", "localhost", "0.0.0.0"):
        return True
    try:
        target = socket.gethostbyname(address)
    except OSError:
        return False
    if target.startswith("127."):
        return True
    names = {socket.gethostname(), socket.getfqdn()}
    local = set()
    for name in names:
        try:
            local.update(socket.gethostbyname_ex(name)[2])
        except OSError:
            pass
    return target in local


class _Job:
    """The processes msrun started; every wait is bounded."""

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.processes = []  # (name, log path, Popen)

    def start(self, name, log_name, argv, env):
        path = os.path.join(self.log_dir, log_name)
        with open(path, "wb") as log:
            # Its own process group: stopping the job stops what it started too.
            process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        self.processes.append((name, path, process))
        print(f"msrun: started {name} (pid {process.pid}), log {path}", flush=True)
        return process

    def stop(self):
        """Stops every process still running: SIGTERM, then SIGKILL after a grace period."""
        for _, _, process in self.processes:
            if process.poll() is None:
                _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + _TERMINATE_GRACE_SECONDS
        for _, _, process in self.processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for _, _, process in self.processes:
            _signal_group(process, signal.SIGKILL)  # also what a process left behind in its group
            if process.poll() is None:
                try:
                    process.wait(timeout=_TERMINATE_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    print(f"msrun: pid {process.pid} did not stop after SIGKILL", file=sys.stderr)


def _signal_group(process, sig):
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path, lines=_TAIL_LINES):
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - 64 * 1024))
            text = log.read().decode("utf-8", errors="replace")
    except OSError as error:
        return f"(could not read {path}: {error})"
    return "\n".join(text.splitlines()[-lines:])


def _report(name, path, code):
    how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    print(f"msrun: {name} {how}; the last lines of {path}:", file=sys.stderr)
    print(_tail(path), file=sys.stderr, flush=True)


def _wait(job, scheduler):
    """Waits for the job; the exit status of msrun."""
    workers = [entry for entry in job.processes if entry[2] is not scheduler]
    workers_done_at = None
    while True:
        # Workers first: when a worker dies the scheduler fails after it.
        for name, path, process in workers + [entry for entry in job.processes if entry[2] is scheduler]:
            code = process.poll()
            if code is not None and code != 0:
                _report(name, path, code)
                job.stop()
                return 1
        if all(process.poll() == 0 for _, _, process in workers):
            if scheduler is None or scheduler.poll() == 0:
                return 0
            workers_done_at = workers_done_at or time.monotonic()
            if time.monotonic() - workers_done_at > _SCHEDULER_DRAIN_SECONDS:
                print(f"msrun: every worker finished but the scheduler did not end within "
                      f"{_SCHEDULER_DRAIN_SECONDS} s; the last lines of {job.processes[0][1]}:", file=sys.stderr)
                print(_tail(job.processes[0][1]), file=sys.stderr, flush=True)
                job.stop()
                return 1
        time.sleep(_POLL_SECONDS)


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    _check(args, parser)
    os.makedirs(args.log_dir, exist_ok=True)
    single_node = args.local_worker_num == args.worker_num
    # Node 0 runs the scheduler; without node ranks, the node that has the address does.
    runs_scheduler = single_node or args.node_rank == 0 or (args.node_rank < 0 and _is_local_address(args.master_addr))
    base = dict(os.environ)
    for name in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "MS_NODE_ID", "RANK_ID"):
        base.pop(name, None)
    base.update({
        "MS_SCHED_HOST": args.master_addr,
        "MS_SCHED_PORT": str(args.master_port),
        "MS_WORKER_NUM": str(args.worker_num),
        "MS_TOPO_TIMEOUT": str(args.cluster_time_out),
        "RANK_SIZE": str(args.worker_num),
    })
    job = _Job(args.log_dir)
    previous = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        scheduler = None
        if runs_scheduler:
            env = dict(base, MS_ROLE="MS_SCHED")
            scheduler = job.start("the scheduler", "scheduler.log",
                                  [sys.executable, "-c", "import msrt.communication as c; c.init()"], env)
        for i in range(args.local_worker_num):
            env = dict(base, MS_ROLE="MS_WORKER")
            if single_node:
                rank = i
            elif args.node_rank >= 0:
                rank = args.node_rank * args.local_worker_num + i
            else:
                rank = None
            if rank is not None:
                env.update(MS_NODE_ID=str(rank), RANK_ID=str(rank))
            label = rank if rank is not None else i
            job.start(f"worker {label}", f"worker_{label}.log",
                      [sys.executable, args.task_script] + list(args.task_script_args), env)
        if not args.join:
            return 0
        code = _wait(job, scheduler)
        if code == 0:
            print("msrun: every process finished", flush=True)
        return code
    except KeyboardInterrupt:
        print("msrun: interrupted; stopping every process", file=sys.stderr, flush=True)
        job.stop()
        return 130
    except BaseException:
        job.stop()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
