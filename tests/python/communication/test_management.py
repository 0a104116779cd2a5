"""msrt.communication: errors outside a cluster, argument checks, and small
clusters started by hand (the environment contract without msrun)."""
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import msrt as ms
import msrt.communication as comm

TIMEOUT = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_init_outside_a_cluster_names_the_missing_variables_and_msrun():
    with pytest.raises(RuntimeError) as info:
        comm.init()
    message = str(info.value)
    for name in ("MS_ROLE", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_WORKER_NUM", "msrun --worker_num"):
        assert name in message
    assert not comm.GlobalComm.INITED


def test_parameter_server_role_is_refused(monkeypatch):
    monkeypatch.setenv("MS_ROLE", "MS_PSERVER")
    with pytest.raises(RuntimeError, match="parameter server is not supported yet"):
        comm.init()


def test_queries_before_init_say_to_call_init():
    for call in (comm.get_rank, comm.get_group_size, comm.get_local_rank, comm.get_local_rank_size):
        with pytest.raises(RuntimeError, match=r"call msrt.communication.init\(\) first"):
            call()
    with pytest.raises(RuntimeError, match=r"init\(\) first"):
        comm.create_group("g", [0, 1])
    comm.release()  # nothing to release: no error


def test_argument_types_and_values_are_checked():
    with pytest.raises(TypeError, match="backend_name"):
        comm.init(1)
    with pytest.raises(TypeError, match="group"):
        comm.get_rank(0)
    with pytest.raises(TypeError, match="rank_ids"):
        comm.create_group("g", (0, 1))
    with pytest.raises(ValueError, match="must not be empty"):
        comm.create_group("g", [])
    with pytest.raises(ValueError, match="duplicates"):
        comm.create_group("g", [0, 0])
    with pytest.raises(ValueError, match="world group"):
        comm.get_world_rank_from_group_rank(comm.HCCL_WORLD_COMM_GROUP, 0)
    assert (comm.HCCL_WORLD_COMM_GROUP, comm.NCCL_WORLD_COMM_GROUP, comm.MCCL_WORLD_COMM_GROUP) == (
        "hccl_world_group", "nccl_world_group", "mccl_world_group")
    assert comm.GlobalComm.WORLD_COMM_GROUP == "hccl_world_group"


def start(code, **env):
    full = dict(os.environ, MSRT_HEARTBEAT_TIMEOUT="2", MS_TOPO_TIMEOUT="10")
    full.update(env)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process):
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out, err


SCHEDULER = "import msrt.communication as c; c.init()"


def test_a_worker_with_another_worker_num_is_refused_at_registration():
    port = str(free_port())
    common = dict(MS_SCHED_HOST="127.0.0.1", MS_SCHED_PORT=port)
    scheduler = start(SCHEDULER, MS_ROLE="MS_SCHED", MS_WORKER_NUM="2", **common)
    worker = start("""
        import msrt.communication as c
        try:
            c.init()
        except RuntimeError as e:
            print(e)
        """, MS_ROLE="MS_WORKER", MS_WORKER_NUM="3", **common)
    code, out, _ = finish(worker)
    sched_code, _, sched_err = finish(scheduler)
    assert code == 0
    assert "registration refused" in out and "MS_WORKER_NUM is 3 but the scheduler's is 2" in out, out
    assert sched_code == 1
    assert "MS_WORKER_NUM is 3" in sched_err


def test_device_num_that_disagrees_with_the_cluster_is_refused():
    port = str(free_port())
    common = dict(MS_SCHED_HOST="127.0.0.1", MS_SCHED_PORT=port, MS_WORKER_NUM="1", MS_TOPO_TIMEOUT="2")
    scheduler = start(SCHEDULER, MS_ROLE="MS_SCHED", **common)
    worker = start("""
        import msrt as ms
        import msrt.communication as c
        ms.set_auto_parallel_context(device_num=4)
        try:
            c.init()
        except ValueError as e:
            print(e)
        """, MS_ROLE="MS_WORKER", **common)
    code, out, _ = finish(worker)
    finish(scheduler)  # fails: its worker never registered
    assert code == 0
    assert "device_num=4) does not match the cluster's 1 workers" in out, out


@pytest.mark.parametrize("rank_env", [("RANK_ID", "RANK_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")])
def test_rank_zero_hosts_the_scheduler_under_rank_id_and_mpirun(rank_env):
    port = str(free_port())
    code = """
        import os
        import msrt as ms
        import msrt.communication as c
        c.init()
        assert c.get_group_size() == 2
        assert c.get_rank() == int(os.environ["MY_RANK"])
        assert ms.get_auto_parallel_context("global_rank") == c.get_rank()
        try:
            ms.set_auto_parallel_context(device_num=3)
        except ValueError as e:
            assert "init()" in str(e), e
        else:
            raise AssertionError("device_num changed after init()")
        c.release()
        print("ok")
        """
    rank_name, size_name = rank_env
    procs = [start(code, MS_SCHED_PORT=port, MY_RANK=str(r), **{rank_name: str(r), size_name: "2"})
             for r in range(2)]
    results = [finish(p) for p in procs]
    for returncode, out, err in results:
        assert returncode == 0 and "ok" in out, out + err


def test_a_worker_that_exits_without_release_fails_the_job_and_the_others_learn_why():
    port = str(free_port())
    common = dict(MS_SCHED_HOST="127.0.0.1", MS_SCHED_PORT=port, MS_WORKER_NUM="2")
    scheduler = start(SCHEDULER, MS_ROLE="MS_SCHED", **common)
    code = """
        import os, time
        import msrt.communication as c
        c.init()
        if c.get_rank() == 1:
            os._exit(3)  # no release, no atexit
        time.sleep(30)  # ended by the cluster's failure
        """
    survivor = start(code, MS_ROLE="MS_WORKER", MS_NODE_ID="0", **common)
    leaver = start(code, MS_ROLE="MS_WORKER", MS_NODE_ID="1", **common)
    assert finish(leaver)[0] == 3
    survivor_code, _, survivor_err = finish(survivor)
    sched_code, _, sched_err = finish(scheduler)
    assert sched_code == 1
    assert "rank 1" in sched_err and "exited without msrt.communication.release()" in sched_err, sched_err
    assert survivor_code == 1
    assert "rank 0 stops" in survivor_err and "rank 1" in survivor_err, survivor_err


def test_backends_this_build_lacks_are_refused_before_joining(monkeypatch):
    # No scheduler listens here: the refusals come before any connection.
    for name, value in dict(MS_ROLE="MS_WORKER", MS_SCHED_HOST="127.0.0.1", MS_SCHED_PORT=str(free_port()),
                            MS_WORKER_NUM="1", MS_TOPO_TIMEOUT="1").items():
        monkeypatch.setenv(name, value)
    with pytest.raises(RuntimeError, match="no Ascend backend"):
        comm.init("hccl")
    with pytest.raises(ValueError, match="'mccl'"):
        comm.init("mpi")
    if not ms._C.parallel.built_with_nccl():
        with pytest.raises(RuntimeError, match="built without NCCL"):
            comm.init("nccl")
    assert not comm.GlobalComm.INITED
