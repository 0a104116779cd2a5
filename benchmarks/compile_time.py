"""LeNet-5 training step in GRAPH_MODE: compile time in a fresh process, and
the time to load the same graph from the persistent compile cache in a second
process (enable_compile_cache). Medians of 3 process pairs.

    .venv/bin/python benchmarks/compile_time.py
"""
import json
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import json, sys, time
import numpy as np
import msrt as ms
from msrt import nn
from msrt.examples.lenet import LeNet5
ms.set_context(mode=ms.GRAPH_MODE, runtime_num_threads=2, enable_compile_cache=True, compile_cache_path=sys.argv[1])
net = LeNet5()
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                           nn.Momentum(net.trainable_params(), 0.01, 0.9))
x = ms.Tensor(np.zeros((32, 1, 32, 32), np.float32)); y = ms.Tensor(np.zeros(32, np.int32))
start = time.perf_counter()
step(x, y).asnumpy()
first = time.perf_counter() - start
start = time.perf_counter()
step(x, y).asnumpy()
second = time.perf_counter() - start
report = ms._jit.compile_report(step)[0]
print(json.dumps({"cache": report["compile_cache"], "prepare": report["seconds"], "first_call": first,
                  "step": second, "ops": report["final_ops"]}))
'''


def main():
    compiled, loaded = [], []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as cache:
            runs = []
            for _ in range(2):
                out = subprocess.run([sys.executable, "-c", CHILD, cache], capture_output=True, text=True,
                                     check=True)
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            assert runs[0]["cache"] == "stored" and runs[1]["cache"] == "loaded", runs
            compiled.append(runs[0]["prepare"])
            loaded.append(runs[1]["prepare"])
    c, l = statistics.median(compiled), statistics.median(loaded)
    print(f"LeNet-5 training step, batch 32, {runs[0]['ops']} kernels: capture + compile {c * 1e3:.1f} ms; "
          f"load from the compile cache {l * 1e3:.1f} ms; ratio load/compile {l / c:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
