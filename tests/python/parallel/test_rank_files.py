"""Per-rank places (Note [Per-rank places] in src/runtime/rank.h): in a job of
2 workers started by msrun, every rank writes save_graphs IR, kernel dumps,
profiler traces, its print_file_path file, ModelCheckpoint's checkpoints,
BackupAndRestore's backup and the summary file to a place of its own, and only rank 0's callbacks print; one
process without init() writes where it always did."""
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

import msrt as ms
import msrt.dataset as ds
from msrt import nn, ops
from msrt._files import rank_place
from msrt.train import BackupAndRestore, LossMonitor, Model, ModelCheckpoint, SummaryRecord

WORKER = pathlib.Path(__file__).with_name("rank_files_worker.py")
JOB_TIMEOUT = 90


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_worker(tmp_path, workers):
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    env.pop("RANK_ID", None)
    if workers is None:
        argv = [sys.executable, str(WORKER), str(out), "single"]
    else:
        argv = [sys.executable, "-m", "msrt.parallel.cluster.run", f"--worker_num={workers}",
                f"--local_worker_num={workers}", "--master_addr=127.0.0.1", f"--master_port={free_port()}",
                f"--log_dir={tmp_path / 'logs'}", "--join=True", "--cluster_time_out=30", str(WORKER), str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=JOB_TIMEOUT, env=env)
    logs = {int(p.stem.split("_")[1]): p.read_text() for p in (tmp_path / "logs").glob("worker_*.log")} \
        if workers else {0: done.stdout}
    assert done.returncode == 0, done.stdout + done.stderr + "\n".join(logs.values())
    return out, logs


def files(folder):
    return sorted(p.name for p in folder.iterdir() if p.is_file())


def printed_inputs(path):
    values = ms.parse_print(str(path))
    return [v.asnumpy() for v in values if not isinstance(v, str)]


def test_two_ranks_write_their_own_files_and_only_rank_0_prints(tmp_path):
    out, logs = run_worker(tmp_path, 2)
    for rank in (0, 1):
        # save_graphs: <save_graphs_path>/rank_<id>/, nothing beside the rank folders
        assert any(name.endswith(".ir") for name in files(out / "ir" / f"rank_{rank}"))
        # kernel dumps: <save_dump_path>/rank_<id>/
        assert (out / "dump" / f"rank_{rank}" / "index.jsonl").is_file()
        # profiler: <output_path>/profiler/trace_<rank>.json
        assert (out / "prof" / "profiler" / f"trace_{rank}.json").is_file()
        assert (out / "prof" / "profiler" / f"op_summary_{rank}.csv").is_file()
        # ModelCheckpoint: <directory>/rank_<id>/
        assert files(out / "ckpt" / f"rank_{rank}") == ["CKP-1_2.ckpt"]
        # BackupAndRestore: <backup_dir>/rank_<id>/backup.ckpt
        assert files(out / "backup" / f"rank_{rank}") == ["backup.ckpt"]
        # summary: <log_dir>/rank_<id>/
        assert len(files(out / "summary" / f"rank_{rank}")) == 1
        # print_file_path <folder>/values.pb: <folder>/rank_<id>/values.pb, each rank's own values
        inputs = printed_inputs(out / f"rank_{rank}" / "values.pb")
        assert len(inputs) >= 1 and all(np.all(x == rank) for x in inputs), inputs
    assert files(out / "ir") == [] and files(out / "ckpt") == [] and files(out / "summary") == []
    assert files(out / "backup") == []
    assert not (out / "values.pb").exists()
    # Both ranks trained the same parameters: the checkpoints agree.
    a = ms.load_checkpoint(str(out / "ckpt" / "rank_0" / "CKP-1_2.ckpt"))
    b = ms.load_checkpoint(str(out / "ckpt" / "rank_1" / "CKP-1_2.ckpt"))
    for name in ("fc.weight", "fc.bias"):
        np.testing.assert_array_equal(a[name].asnumpy(), b[name].asnumpy())
    # Callbacks print on rank 0 only; the script's own print is its own.
    assert "loss is" in logs[0] and "epoch time" in logs[0] and "callback of rank 0" in logs[0]
    assert "loss is" not in logs[1] and "epoch time" not in logs[1] and "callback of rank 1" not in logs[1]
    assert "script of rank 1 done" in logs[1]


def test_one_process_writes_where_it_always_did(tmp_path):
    out, logs = run_worker(tmp_path, None)
    assert any(name.endswith(".ir") for name in files(out / "ir"))
    assert (out / "dump" / "rank_0" / "index.jsonl").is_file()  # dumps use rank_0 even alone, as MindSpore's
    assert (out / "prof" / "profiler" / "trace_0.json").is_file()
    assert files(out / "ckpt") == ["CKP-1_2.ckpt"]
    assert files(out / "backup") == ["backup.ckpt"]
    assert len(files(out / "summary")) == 1
    assert len(printed_inputs(out / "values.pb")) >= 1
    for folder in ("ir", "ckpt", "backup", "summary", "."):
        assert not list((out / folder).glob("rank_*")), folder
    assert "loss is" in logs[0] and "callback of rank 0" in logs[0]


class PrintingNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 1)
        self.print = ops.Print()

    def construct(self, x):
        self.print(x)
        return self.fc(x)


def train_once(tmp_path, print_file):
    ms.set_context(mode=ms.PYNATIVE_MODE, print_file_path=str(print_file))
    try:
        net = PrintingNet()
        data = ds.NumpySlicesDataset({"x": np.ones((2, 2), np.float32), "y": np.zeros((2, 1), np.float32)},
                                     shuffle=False).batch(2)
        model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1))
        model.train(1, data, callbacks=[LossMonitor(), ModelCheckpoint(directory=str(tmp_path / "ckpt")),
                                        BackupAndRestore(str(tmp_path / "backup"), delete_checkpoint=False)])
        ms.runtime.synchronize()
    finally:
        ms.set_context(print_file_path="")


@pytest.mark.parametrize("print_all", [False, True])
def test_rank_id_places_files_and_quiets_callbacks(tmp_path, monkeypatch, capsys, print_all):
    # A process that RANK_ID names rank 1 (as msrun's workers): the same places, without a cluster.
    monkeypatch.setenv("RANK_ID", "1")
    if print_all:
        monkeypatch.setenv("MSRT_PRINT_ALL_RANKS", "1")
    assert rank_place(str(tmp_path)) == str(tmp_path / "rank_1")
    train_once(tmp_path, tmp_path / "values.pb")
    assert ("loss is" in capsys.readouterr().out) == print_all
    assert files(tmp_path / "ckpt" / "rank_1") == ["CKP-1_1.ckpt"] and files(tmp_path / "ckpt") == []
    assert files(tmp_path / "backup" / "rank_1") == ["backup.ckpt"] and files(tmp_path / "backup") == []
    assert len(printed_inputs(tmp_path / "rank_1" / "values.pb")) == 1
    assert not (tmp_path / "values.pb").exists()
    with SummaryRecord(str(tmp_path / "summary")) as record:
        assert pathlib.Path(record.full_file_name).parent == tmp_path / "summary" / "rank_1"


def test_without_a_rank_nothing_moves(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RANK_ID", raising=False)
    assert rank_place(str(tmp_path)) == str(tmp_path)
    train_once(tmp_path, tmp_path / "values.pb")
    assert "loss is" in capsys.readouterr().out
    assert files(tmp_path / "ckpt") == ["CKP-1_1.ckpt"]
    assert files(tmp_path / "backup") == ["backup.ckpt"]
    assert len(printed_inputs(tmp_path / "values.pb")) == 1
    with SummaryRecord(str(tmp_path / "summary")) as record:
        assert pathlib.Path(record.full_file_name).parent == tmp_path / "summary"
