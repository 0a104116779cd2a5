"""runtime_num_threads / inter_op_parallel_num size the runtime's threads
(Note [Thread plan] in src/core/thread_pool.h), and the threads the process
really runs are observable: counted here from /proc/self/task."""
import math
import warnings

import numpy as np
import pytest

import msrt as ms


def expected_plan(rt, iop, hardware):
    rt = hardware if rt == 0 else min(rt, hardware)
    iop = min(iop, hardware)
    if iop == 0:
        scheduler = max(math.floor(rt * 0.18), 1)
        total = rt if rt > scheduler else scheduler + 1
    else:
        scheduler, total = iop, rt + iop
    return {"scheduler_threads": scheduler, "kernel_threads": total - scheduler, "total_threads": total,
            "oversubscribed": total > hardware}


@pytest.mark.parametrize("rt,iop", [(30, 0), (1, 0), (2, 0), (0, 0), (1, 1), (2, 2), (64, 64)])
def test_thread_info_follows_the_rule(rt, iop):
    hardware = ms.runtime.thread_info()["hardware_threads"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oversubscription
        ms.set_context(runtime_num_threads=rt, inter_op_parallel_num=iop)
    info = ms.runtime.thread_info()
    for key, value in expected_plan(rt, iop, hardware).items():
        assert info[key] == value, (key, info)
    assert info["intra_op_threads"] == info["kernel_threads"] + 1
    assert info["runtime_num_threads"] == (hardware if rt == 0 else min(rt, hardware))


def test_oversubscription_warns():
    hardware = ms.runtime.thread_info()["hardware_threads"]
    with pytest.warns(ms.MsrtWarning, match="compete for the cores"):
        ms.set_context(runtime_num_threads=hardware, inter_op_parallel_num=hardware)


def test_the_process_runs_the_planned_threads(python_subprocess):
    # Threads are named: msrt-kernel (pool workers), msrt-dispatch (eager
    # scheduler; threads it starts, such as OpenMP's, inherit the name),
    # msrt-watchdog (op_timeout).
    proc = python_subprocess(
        """
        import glob, warnings
        import numpy as np
        warnings.simplefilter("ignore")

        def named():
            counts = {}
            for path in glob.glob("/proc/self/task/*/comm"):
                try:
                    name = open(path).read().strip()
                except OSError:
                    continue
                counts[name] = counts.get(name, 0) + 1
            return counts

        x = ms.Tensor(np.ones((1024, 1024), np.float32))
        out = {"before": named()}
        for rt, iop in ((2, 2), (1, 0), (2, 3)):
            ms.set_context(runtime_num_threads=rt, inter_op_parallel_num=iop)
            (x + 1).asnumpy()                      # a loop big enough for every thread
            info = ms.runtime.thread_info()
            out[f"{rt},{iop}"] = [info["kernel_threads"], info["kernel_workers_running"], named(),
                                  info["os_threads"]]
        print("RESULT=" + json.dumps(out))
        """
    )
    out = proc.result
    assert out["before"].get("msrt-kernel", 0) == 0
    for key in ("2,2", "1,0", "2,3"):
        kernel, running, names, os_threads = out[key]
        assert running == kernel, key
        assert names.get("msrt-kernel", 0) == kernel, (key, names)
        assert names.get("msrt-dispatch", 0) >= 1, names
        assert names.get("msrt-watchdog") == 1, names
        assert os_threads == sum(names.values())


def test_results_match_across_thread_plans():
    x = np.random.default_rng(3).standard_normal((700, 1000)).astype(np.float32)
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rt, iop in ((1, 0), (2, 2)):
            ms.set_context(runtime_num_threads=rt, inter_op_parallel_num=iop)
            outs.append((ms.Tensor(x) * 2 + 1).asnumpy())
    np.testing.assert_array_equal(outs[0], outs[1])
