"""`python -m msrt.examples.lenet` end to end on a small synthetic dataset."""
import re

from msrt.examples import lenet


def test_example_runs_in_graph_mode_and_reports_accuracy(mnist_dir, capsys):
    code = lenet.main(["--mode", "graph", "--epochs", "2", "--data-dir", str(mnist_dir), "--batch-size", "32"])
    assert code == 0
    out = capsys.readouterr().out
    assert "mode GRAPH" in out
    assert "msrt context" in out  # the context summary
    assert "Training: 10 steps per epoch, Momentum(0.9), learning rate cosine 0.02 -> 0" in out
    assert len(re.findall(r"^Train epoch time: ", out, re.M)) == 2
    accuracy = float(re.search(r"^Test accuracy after 2 epoch\(s\): ([0-9.]+)$", out, re.M).group(1))
    assert 0.0 <= accuracy <= 1.0


def test_example_reports_a_missing_directory(tmp_path, capsys):
    assert lenet.main(["--data-dir", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
