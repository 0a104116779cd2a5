"""Work on a device that cannot run it fails the same way in GRAPH_MODE and
PYNATIVE_MODE: one RuntimeError naming the device and the reason the CUDA
runtime gave (driver missing, no device, device_id out of range)."""
import subprocess
import sys
import textwrap

import pytest

import msrt as ms

SEED_EXAMPLE = textwrap.dedent("""
    import sys, numpy as np, msrt as ms
    from msrt import nn
    mode, target, device_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE, device_target=target,
                   device_id=device_id)
    net = nn.Dense(3, 2)
    try:
        net(ms.Tensor(np.ones((2, 3), np.float32))).asnumpy()
    except Exception as e:
        print(type(e).__name__ + ": " + str(e))
    else:
        print("ran")
""")


def _run(mode, target, device_id=0):
    out = subprocess.run([sys.executable, "-c", SEED_EXAMPLE, mode, target, str(device_id)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


NO_GPU = ms._C.build_info()["cuda_devices"] == 0


@pytest.mark.skipif(not NO_GPU, reason="needs a machine without a usable CUDA device")
@pytest.mark.parametrize("device_id", [0, 3])
def test_gpu_without_a_usable_device_fails_alike_in_both_modes(device_id):
    graph = _run("graph", "GPU", device_id)
    pynative = _run("pynative", "GPU", device_id)
    assert graph == pynative
    assert graph.startswith(f"RuntimeError: The device target is 'GPU' (device_id {device_id}), but "), graph
    assert "set_context(device_target='CPU')" in graph
    reason = ms._C.build_info()["cuda_unavailable_reason"]
    if ms._C.build_info()["cuda"]:
        # The CUDA runtime's error code, named.
        assert "cudaError" in graph, graph
    else:
        assert "built without CUDA" in graph and reason


@pytest.mark.skipif(NO_GPU or ms._C.build_info()["gpu_kernels"],
                    reason="needs a CUDA device and a build without GPU kernels")
def test_gpu_without_gpu_kernels_fails_alike_in_both_modes():
    graph = _run("graph", "GPU")
    pynative = _run("pynative", "GPU")
    assert graph == pynative
    assert graph.startswith("RuntimeError: The device target is 'GPU' (device_id 0), but this build of msrt has no "
                            "GPU kernels yet"), graph


def test_the_default_device_is_one_with_kernels():
    info = ms._C.build_info()
    assert info["best_device"] == ("GPU" if info["gpu_kernels"] and info["cuda_devices"] > 0 else "CPU")
    out = subprocess.run([sys.executable, "-c", "import msrt as ms; print(ms.get_context('device_target'))"],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == info["best_device"], out.stderr


def test_ascend_fails_alike_in_both_modes():
    graph = _run("graph", "Ascend")
    pynative = _run("pynative", "Ascend")
    assert graph == pynative
    assert graph.startswith("RuntimeError: The device target is 'Ascend', but msrt has no Ascend backend"), graph


def test_cpu_runs_in_both_modes():
    assert _run("graph", "CPU") == "ran"
    assert _run("pynative", "CPU") == "ran"
