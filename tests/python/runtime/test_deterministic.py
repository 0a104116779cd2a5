"""deterministic="ON": results are bit-identical across runs and across
thread plans (msrt's reductions cut their work by the shape alone; oneDNN
primitives run on one thread)."""
import hashlib
import warnings

import numpy as np
import msrt as ms

# Two plans whose kernel loops run on 2 and 3 threads (Note [Thread plan]).
PLANS = ({"runtime_num_threads": 1, "inter_op_parallel_num": 0},
         {"runtime_num_threads": 2, "inter_op_parallel_num": 2})

LENET_STEPS = """
import hashlib
import numpy as np
from msrt import nn
from msrt.examples.lenet import LeNet5
warnings.simplefilter("ignore")
ms.set_context(deterministic={det!r}, **{plan!r})
ms.set_seed(0)
net = LeNet5()
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
train.set_train()
rng = np.random.default_rng(0)
x = ms.Tensor(rng.standard_normal((64, 1, 32, 32)).astype(np.float32))
y = ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))
for _ in range(3):
    train(x, y).asnumpy()
h = hashlib.sha256()
for p in net.trainable_params():
    h.update(p.asnumpy().tobytes())
print("RESULT=" + json.dumps([h.hexdigest(), ms.runtime.thread_info()["intra_op_threads"]]))
"""


def test_lenet_training_is_bitwise_identical_across_thread_counts(python_subprocess):
    runs = [python_subprocess(LENET_STEPS.format(det="ON", plan=plan)).result for plan in PLANS]
    runs.append(python_subprocess(LENET_STEPS.format(det="ON", plan=PLANS[0])).result)
    (first, threads_a), (second, threads_b), (again, _) = runs
    assert threads_a != threads_b, "the plans must differ in threads for the test to mean anything"
    assert first == second == again


def _sum_bits(x):
    return hashlib.sha256(ms.ops.sum(ms.Tensor(x), 1).asnumpy().tobytes()).hexdigest()


def test_long_reductions_do_not_depend_on_the_thread_count():
    # Few outputs over long rows: the reduction is cut into chunks; with
    # deterministic="ON" the cut does not follow the thread count.
    x = np.random.default_rng(5).standard_normal((2, 3_000_001)).astype(np.float32)
    ms.set_context(deterministic="ON")
    bits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the second plan oversubscribes small machines
        for plan in PLANS:
            ms.set_context(**plan)
            bits += [_sum_bits(x), _sum_bits(x)]
    assert len(set(bits)) == 1
    np.testing.assert_allclose(ms.ops.sum(ms.Tensor(x), 1).asnumpy(), x.astype(np.float64).sum(1), rtol=1e-4)
