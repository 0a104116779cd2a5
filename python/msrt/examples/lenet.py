"""LeNet-5 on (Fashion-)MNIST, written as MindSpore's model zoo and LeNet
tutorial write it; only the import differs.

The network, data pipeline, loss and Momentum(0.9) optimizer are the
tutorial's. The tutorial's fixed learning rate 0.01 reaches about 86% on
Fashion-MNIST in 3 epochs; by default the rate follows nn.CosineDecayLR from
0.02 to 0 over the run, which reaches about 89% (--lr-schedule constant
--lr 0.01 gives the tutorial's setting).

    python -m msrt.examples.lenet --mode graph --epochs 3 \
        --data-dir /usr/share/datasets/fashion-mnist --batch-size 32

With --data-parallel, run under msrun (one process per rank), each rank
trains on its shard of the images with batch-size / world-size rows per step
and the gradients are averaged over the ranks (gradients_mean=True), so the
job takes the same steps as one process with --batch-size; rank 0 prints:

    msrun --worker_num=2 --local_worker_num=2 --join=True --log_dir=msrun_log \
        python/msrt/examples/lenet.py --data-parallel --mode graph --epochs 3 --batch-size 32
"""
import argparse
import os
import sys
import time

import msrt as ms
import msrt.dataset as ds
import msrt.dataset.transforms as transforms
import msrt.dataset.vision as vision
from msrt import nn
from msrt.common.initializer import Normal
from msrt.dataset.vision import Inter
from msrt.train import Accuracy, Model, ProgressBar, TimeMonitor

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"


class LeNet5(nn.Cell):
    """LeNet-5 as MindSpore's model zoo defines it."""

    def __init__(self, num_class=10, num_channel=1, include_top=True):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if self.include_top:
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
            self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
            self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))

    def construct(self, x):
        x = self.conv1(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        x = self.conv2(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def create_dataset(data_path, usage="train", batch_size=32, shuffle=True, num_samples=None, drop_remainder=True,
                   num_shards=None, shard_id=None):
    """The LeNet tutorial's pipeline: MnistDataset -> Resize(32, 32) ->
    Rescale(1/255) -> Rescale(1/0.3081, -0.1307/0.3081) -> HWC2CHW, labels
    cast to int32, shuffled and batched; with `num_shards`, only shard
    `shard_id` of the images."""
    mnist_ds = ds.MnistDataset(data_path, usage=usage, num_samples=num_samples, shuffle=False,
                               num_shards=num_shards, shard_id=shard_id)
    resize_op = vision.Resize((32, 32), interpolation=Inter.LINEAR)
    rescale_op = vision.Rescale(1.0 / 255.0, 0.0)
    rescale_nml_op = vision.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081)
    hwc2chw_op = vision.HWC2CHW()
    type_cast_op = transforms.TypeCast(ms.int32)
    mnist_ds = mnist_ds.map(operations=type_cast_op, input_columns="label")
    mnist_ds = mnist_ds.map(operations=[resize_op, rescale_op, rescale_nml_op, hwc2chw_op], input_columns="image")
    if shuffle:
        mnist_ds = mnist_ds.shuffle(buffer_size=10000)
    mnist_ds = mnist_ds.batch(batch_size, drop_remainder=drop_remainder)
    return mnist_ds


def build_model(lr=0.01, momentum=0.9, decay_steps=None):
    """LeNet-5, loss and Momentum as the tutorial builds them; with
    `decay_steps`, the learning rate follows a cosine from `lr` to 0."""
    network = LeNet5()
    net_loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    learning_rate = nn.CosineDecayLR(0.0, lr, decay_steps) if decay_steps else lr
    net_opt = nn.Momentum(network.trainable_params(), learning_rate=learning_rate, momentum=momentum)
    return network, Model(network, net_loss, net_opt, metrics={"accuracy": Accuracy()})


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train LeNet-5 on (Fashion-)MNIST with msrt.")
    parser.add_argument("--mode", choices=("pynative", "graph"), default="pynative",
                        help="execution mode: eager (pynative) or a compiled graph per training step (graph)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                        help="directory with the four MNIST-format IDX files (.gz or not)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.02, help="learning rate (the peak of the cosine schedule)")
    parser.add_argument("--lr-schedule", choices=("cosine", "constant"), default="cosine",
                        help="cosine: decay to 0 over the run (default); constant: the tutorial's fixed rate "
                             "(use --lr 0.01)")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--train-samples", type=int, default=None, help="use only this many training images")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="runtime_num_threads")
    parser.add_argument("--ckpt-dir", default=None, help="save checkpoints there after each epoch")
    parser.add_argument("--data-parallel", action="store_true",
                        help="one rank of a data-parallel job started by msrun: init(), a shard of the images per "
                             "rank, batch-size / world-size rows per rank and step, averaged gradients")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    mode = ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE
    settings = {"mode": mode, "device_target": "CPU"}
    if args.threads is not None:
        settings["runtime_num_threads"] = args.threads
    ms.set_context(**settings)
    # Every rank starts from the same parameters: the same seed.
    ms.set_seed(args.seed)
    ds.config.set_seed(args.seed)
    if not os.path.isdir(args.data_dir):
        print(f"error: data directory {args.data_dir!r} does not exist (Debian: apt install dataset-fashion-mnist)",
              file=sys.stderr)
        return 2
    rank, world, batch_size = 0, 1, args.batch_size
    if args.data_parallel:
        from msrt.communication import get_group_size, get_rank, init

        init()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        rank, world = get_rank(), get_group_size()
        if args.batch_size % world:
            print(f"error: --batch-size {args.batch_size} is not a multiple of the {world} ranks", file=sys.stderr)
            return 2
        batch_size = args.batch_size // world
    say = print if rank == 0 else (lambda *_, **__: None)

    ranks = f", {world} ranks of batch {batch_size} (data parallel)" if args.data_parallel else ""
    say(f"msrt {ms.__version__}: LeNet-5 on {args.data_dir}, {args.epochs} epoch(s), batch {args.batch_size}{ranks}, "
        f"mode {args.mode.upper()}")
    say("Context (keys that differ from their defaults):")
    say(ms.context.summary())

    shards = {"num_shards": world, "shard_id": rank} if args.data_parallel else {}
    train_ds = create_dataset(args.data_dir, "train", batch_size, shuffle=True, num_samples=args.train_samples,
                              **shards)
    test_ds = create_dataset(args.data_dir, "test", args.batch_size, shuffle=False, drop_remainder=False)
    steps = train_ds.get_dataset_size()
    decay_steps = steps * args.epochs if args.lr_schedule == "cosine" else None
    _, model = build_model(args.lr, args.momentum, decay_steps)
    callbacks = [ProgressBar(), TimeMonitor()]
    if args.ckpt_dir:
        from msrt.train import CheckpointConfig, ModelCheckpoint

        callbacks.append(ModelCheckpoint(prefix="lenet", directory=args.ckpt_dir,
                                         config=CheckpointConfig(save_checkpoint_steps=steps, keep_checkpoint_max=3)))
    schedule = f"cosine {args.lr} -> 0" if decay_steps else f"constant {args.lr}"
    say(f"Training: {steps} steps per epoch, Momentum({args.momentum}), learning rate {schedule}", flush=True)
    start = time.perf_counter()
    model.train(args.epochs, train_ds, callbacks=callbacks)
    train_seconds = time.perf_counter() - start
    say(f"Training time: {train_seconds:.1f} s ({train_seconds / args.epochs:.1f} s per epoch)", flush=True)
    if rank == 0:  # every rank holds the same parameters; one evaluates
        metrics = model.eval(test_ds, callbacks=[ProgressBar()])
        print(f"Test accuracy after {args.epochs} epoch(s): {metrics['accuracy']:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
