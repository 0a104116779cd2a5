"""One process of test_rank_files.py: every writer of per-rank files at once.

    rank_files_worker.py OUT_DIR            under msrun: init(), data_parallel
    rank_files_worker.py OUT_DIR single     one process, no init()

Trains a Dense layer for 2 steps with Model.train in GRAPH_MODE with
save_graphs, enable_dump, print_file_path (a Print in the network prints
this rank's input), the profiler, LossMonitor, TimeMonitor, a LambdaCallback
that prints, ModelCheckpoint, BackupAndRestore and SummaryCollector all
writing under OUT_DIR,
the same paths on every rank.
"""
import os
import sys

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn, ops
from msrt.profiler import Profiler
from msrt.train import (BackupAndRestore, CheckpointConfig, LambdaCallback, LossMonitor, Model, ModelCheckpoint,
                        SummaryCollector, TimeMonitor)

OUT, SINGLE = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "single"


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)
        self.print = ops.Print()

    def construct(self, x):
        self.print("input", x)
        return self.fc(x)


def main():
    ms.set_context(mode=ms.GRAPH_MODE, save_graphs=1, save_graphs_path=os.path.join(OUT, "ir"),
                   enable_dump=True, save_dump_path=os.path.join(OUT, "dump"),
                   print_file_path=os.path.join(OUT, "values.pb"))
    rank = 0
    if not SINGLE:
        from msrt.communication import get_rank, init

        init()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        rank = get_rank()
    ms.set_seed(3)
    net = Net()
    # Rows differ per rank: every value is the rank.
    data = {"x": np.full((4, 4), rank, np.float32), "y": np.zeros((4, 2), np.float32)}
    # The rows are this rank's already: read whole, not the cluster's default shard.
    dataset = ds.NumpySlicesDataset(data, shuffle=False, num_shards=1, shard_id=0).batch(2)
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1))
    profiler = Profiler(output_path=os.path.join(OUT, "prof"))
    callbacks = [LossMonitor(), TimeMonitor(),
                 LambdaCallback(on_train_end=lambda _: print(f"callback of rank {rank}", flush=True)),
                 ModelCheckpoint(directory=os.path.join(OUT, "ckpt"), config=CheckpointConfig(save_checkpoint_steps=2)),
                 BackupAndRestore(os.path.join(OUT, "backup"), delete_checkpoint=False),
                 SummaryCollector(os.path.join(OUT, "summary"), collect_freq=1,
                                  collect_specified_data={"collect_input_data": False})]
    model.train(1, dataset, callbacks=callbacks)
    profiler.stop()
    profiler.analyse()
    print(f"script of rank {rank} done", flush=True)


if __name__ == "__main__":
    main()
