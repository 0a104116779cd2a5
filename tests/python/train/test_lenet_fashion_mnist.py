"""LeNet-5 on real Fashion-MNIST for a fraction of an epoch (slow).

It runs in a fresh process so that OpenMP's wait policy can be chosen before
the kernels' OpenMP runtime loads (spinning workers starve the dispatcher on a
busy 2-core machine; see the Makefile's demo target).
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

DATA = "/usr/share/datasets/fashion-mnist"


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(DATA), reason=f"{DATA} is missing (Debian package dataset-fashion-mnist)")
def test_lenet_learns_fashion_mnist_in_a_fraction_of_an_epoch(tmp_path):
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE"))
    if env.get("MSRT_BUILD_DIR"):
        env["MSRT_BUILD_DIR"] = os.path.abspath(env["MSRT_BUILD_DIR"])
    code = textwrap.dedent(f"""
        import json
        import msrt as ms
        import msrt.dataset as ds
        from msrt.examples import lenet

        ms.set_seed(1)
        ds.config.set_seed(1)
        train = lenet.create_dataset({DATA!r}, "train", batch_size=32, num_samples=12800)
        test = lenet.create_dataset({DATA!r}, "test", batch_size=250, shuffle=False, num_samples=2000)
        network, model = lenet.build_model(lr=0.01, momentum=0.9)
        names = [p.name for p in network.trainable_params()]
        model.train(1, train)
        print("RESULT=" + json.dumps({{"names": names, "accuracy": model.eval(test)["accuracy"]}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.split("RESULT=")[-1])
    assert result["names"] == [
        "conv1.weight", "conv2.weight", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
    assert result["accuracy"] > 0.6, result  # chance is 0.1; a full epoch reaches about 0.84
