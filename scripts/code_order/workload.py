"""The runs whose calls order libmsrt's code (scripts/code_order/order.py), one scenario per process:

    workload.py import                      import msrt, nothing else
    workload.py demo                        the LeNet demo in GRAPH_MODE on a slice of Fashion-MNIST
    workload.py NETWORK MODE PHASE BATCH    a network of the benchmark suite (benchmarks/networks.py)

`scenarios()` lists the set order.py runs: the demo, and each suite network as a GRAPH, GRAPH O1, PYNATIVE and
amp O2 training step and as GRAPH and PYNATIVE inference."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))

NETWORKS = ("lenet", "mlp", "resnet", "transformer")
DATA = "/usr/share/datasets/fashion-mnist"


def scenarios():
    out = [["import"]]
    if os.path.isdir(DATA):
        out.append(["demo"])
    for mode in ("graph", "graph-o1", "pynative", "graph-bf16", "graph-fp16"):
        out += [[network, mode, "train", "8"] for network in NETWORKS]
    for mode in ("graph", "pynative"):
        out += [[network, mode, "infer", "1"] for network in NETWORKS]
    return out


def main(argv):
    import msrt  # noqa: F401
    if argv == ["import"]:
        return
    if argv == ["demo"]:
        from msrt.examples import lenet
        with tempfile.TemporaryDirectory() as ckpt:
            lenet.main(["--mode", "graph", "--epochs", "1", "--data-dir", DATA, "--train-samples", "256",
                        "--ckpt-dir", ckpt])
        return
    import networks
    network, mode, phase, batch = argv
    run, _, _ = networks.session(network, int(batch), phase, mode)
    for _ in range(2):
        run()


if __name__ == "__main__":
    main(sys.argv[1:])
