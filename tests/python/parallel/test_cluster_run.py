"""msrun (msrt.parallel.cluster.run): jobs of 2 and 4 workers on this host,
and jobs that fail: the failing rank is named and no process is left."""
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

# A job that passes finishes in a few seconds; a wedged one is killed here.
JOB_TIMEOUT = 60

WORKER = textwrap.dedent("""
    import os, sys, time
    import msrt as ms
    import msrt.communication as c
    behaviour = os.environ.get("TEST_BEHAVIOUR", "")
    target = int(os.environ.get("TEST_TARGET_RANK", "-1"))
    me = int(os.environ["MS_NODE_ID"])
    if behaviour == "late" and me == target:
        time.sleep(60)
    c.init()
    r, n = c.get_rank(), c.get_group_size()
    assert r == me, (r, me)
    assert n == int(os.environ["MS_WORKER_NUM"])
    assert c.get_local_rank() == r and c.get_local_rank_size() == n
    assert ms.get_auto_parallel_context("device_num") == n
    assert ms.get_auto_parallel_context("global_rank") == r
    # Resetting the context keeps the world's size and rank; the rest resets.
    ms.set_auto_parallel_context(gradients_mean=True)
    ms.reset_auto_parallel_context()
    assert ms.get_auto_parallel_context("device_num") == n
    assert ms.get_auto_parallel_context("global_rank") == r
    assert ms.get_auto_parallel_context("gradients_mean") is False
    ms.set_auto_parallel_context(gradients_mean=True)  # a later set is not refused
    assert c.GlobalComm.WORLD_COMM_GROUP == "mccl_world_group" and c.GlobalComm.INITED
    # The collective ops find the world init() made, under any of its names.
    import numpy as np
    x = ms.Tensor(np.full(3, r + 1, np.float32))
    for group in (c.GlobalComm.WORLD_COMM_GROUP, c.NCCL_WORLD_COMM_GROUP, c.HCCL_WORLD_COMM_GROUP):
        total = ms.ops.AllReduce(group=group)(x).asnumpy()
        assert (total == n * (n + 1) / 2).all(), total
    gathered = c.comm_func.all_gather_into_tensor(ms.Tensor(np.array([r], np.int32))).asnumpy()
    assert list(gathered) == list(range(n)), gathered
    evens = list(range(0, n, 2))
    if r in evens:
        c.create_group("evens", evens)
        picked = ms.ops.AllReduce(ms.ops.ReduceOp.MAX, group="evens")(ms.Tensor(np.int32(r))).asnumpy()
        assert picked == evens[-1], picked
        assert c.get_group_size("evens") == len(evens)
        assert c.get_rank("evens") == evens.index(r)
        assert c.get_process_group_ranks("evens") == evens
        assert c.get_world_rank_from_group_rank("evens", c.get_rank("evens")) == r
        assert c.get_group_rank_from_world_rank(r, "evens") == evens.index(r)
        c.destroy_group("evens")
    if r == target and behaviour == "fail":
        raise ValueError("rank %d fails on purpose" % r)
    if r == target and behaviour == "hang":
        print("hanging", flush=True)
        os.kill(os.getpid(), 19)  # SIGSTOP: no heartbeat any more
    if behaviour in ("fail", "hang"):
        time.sleep(30)  # the others stay until msrun stops them
    print("Global rank id", r, "of", n, "done", flush=True)
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def msrun(tmp_path, workers, *, behaviour="", target=-1, cluster_time_out=20, heartbeat_timeout=2.0):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, TEST_BEHAVIOUR=behaviour, TEST_TARGET_RANK=str(target),
               MSRT_HEARTBEAT_TIMEOUT=str(heartbeat_timeout))
    argv = [sys.executable, "-m", "msrt.parallel.cluster.run", f"--worker_num={workers}",
            f"--local_worker_num={workers}", "--master_addr=127.0.0.1", f"--master_port={free_port()}",
            f"--log_dir={tmp_path / 'logs'}", "--join=True", f"--cluster_time_out={cluster_time_out}", str(script)]
    start = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT)
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", done.stdout)]
    assert len(pids) == workers + 1, done.stdout + done.stderr
    return done, pids, time.monotonic() - start


def assert_gone(pids):
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize("workers", [2, 4])
def test_a_job_runs_and_writes_its_logs(tmp_path, workers):
    done, pids, _ = msrun(tmp_path, workers)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = sorted(os.listdir(tmp_path / "logs"))
    assert logs == ["scheduler.log"] + [f"worker_{r}.log" for r in range(workers)]
    for r in range(workers):
        assert f"Global rank id {r} of {workers} done" in (tmp_path / "logs" / f"worker_{r}.log").read_text()
    assert_gone(pids)


def test_a_failing_worker_stops_the_job_and_is_named(tmp_path):
    done, pids, elapsed = msrun(tmp_path, 2, behaviour="fail", target=1)
    assert done.returncode == 1
    assert "worker 1 exited with status 1" in done.stderr
    assert "rank 1 fails on purpose" in done.stderr  # the end of its log
    assert elapsed < 20
    assert_gone(pids)


def test_a_worker_without_heartbeat_fails_the_job_naming_its_rank(tmp_path):
    done, pids, elapsed = msrun(tmp_path, 2, behaviour="hang", target=0, heartbeat_timeout=1.0)
    assert done.returncode == 1
    assert "rank 0" in done.stderr and "no heartbeat" in done.stderr, done.stderr
    assert elapsed < 20
    assert_gone(pids)


def test_a_worker_that_never_registers_fails_the_job_after_cluster_time_out(tmp_path):
    done, pids, elapsed = msrun(tmp_path, 2, behaviour="late", target=1, cluster_time_out=2)
    assert done.returncode == 1
    assert "rank(s) 1 did not register" in done.stderr, done.stderr
    assert elapsed < 20
    assert_gone(pids)


def running(pid):
    """Whether `pid` runs (a zombie left for an init that does not reap counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_without_join_msrun_returns_and_the_job_runs_to_its_end(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    argv = [sys.executable, "-m", "msrt.parallel.cluster.run", "--worker_num=2", "--local_worker_num=2",
            f"--master_port={free_port()}", f"--log_dir={tmp_path / 'logs'}", "--cluster_time_out=20", str(script)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=JOB_TIMEOUT)
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", done.stdout)]
    assert len(pids) == 3
    deadline = time.monotonic() + JOB_TIMEOUT
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(pid) for pid in pids)
    for r in range(2):
        assert f"Global rank id {r} of 2 done" in (tmp_path / "logs" / f"worker_{r}.log").read_text()


def test_ctrl_c_stops_every_process(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(60)\n")
    argv = [sys.executable, "-m", "msrt.parallel.cluster.run", "--worker_num=2", "--local_worker_num=2",
            f"--master_port={free_port()}", f"--log_dir={tmp_path / 'logs'}", "--join=True",
            "--cluster_time_out=30", str(script)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", "".join(lines))]
        assert len(pids) == 3, lines
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(
                "up" in (tmp_path / "logs" / f"worker_{r}.log").read_text() for r in range(2)):
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=JOB_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert "interrupted" in err
    assert_gone(pids)


def test_bad_flags_are_refused_before_anything_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "msrt.parallel.cluster.run", "--worker_num=2",
                           "--local_worker_num=3", "x.py"], capture_output=True, text=True, timeout=JOB_TIMEOUT)
    assert done.returncode == 2
    assert "--local_worker_num must be in [1, worker_num=2], but got 3" in done.stderr


NODE_WORKER = textwrap.dedent("""
    import numpy as np
    import msrt as ms
    import msrt.communication as c
    c.init()
    r, n = c.get_rank(), c.get_group_size()
    total = ms.ops.AllReduce()(ms.Tensor(np.full(4, r + 1, np.float32))).asnumpy()
    assert (total == n * (n + 1) / 2).all(), total
    print("rank", r, "local", c.get_local_rank(), c.get_local_rank_size(), flush=True)
""")


def can_unshare_pids():
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not can_unshare_pids(), reason="needs unshare --pid (root)")
def test_nodes_whose_host_names_match_are_told_apart(tmp_path):
    # Two nodes of one job on 127.0.0.1, the second in a pid namespace of its
    # own, as a container or a cloned machine with the same host name would
    # be: each has local rank 0 of 1, and the scheduler does not look for the
    # other node's pids among its own (which would fail the job as "exited").
    script = tmp_path / "worker.py"
    script.write_text(NODE_WORKER)
    port = free_port()
    procs = []
    for node in (0, 1):
        argv = [sys.executable, "-m", "msrt.parallel.cluster.run", "--worker_num=2", "--local_worker_num=1",
                "--master_addr=127.0.0.1", f"--master_port={port}", f"--node_rank={node}",
                f"--log_dir={tmp_path / f'logs{node}'}", "--join=True", "--cluster_time_out=20", str(script)]
        if node == 1:
            argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"] + argv
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True))
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=JOB_TIMEOUT)[0])
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert [p.returncode for p in procs] == [0, 0], outputs
    logs = (tmp_path / "logs0" / "worker_0.log").read_text() + (tmp_path / "logs1" / "worker_1.log").read_text()
    assert "rank 0 local 0 1" in logs and "rank 1 local 0 1" in logs, logs
