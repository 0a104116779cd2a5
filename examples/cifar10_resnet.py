"""A small ResNet on CIFAR-10 with data augmentation, in the style of
MindSpore's ResNet tutorial: only the import differs.

    .venv/bin/python examples/cifar10_resnet.py --data_path DIR [--epochs N]

DIR holds CIFAR-10's binary version (data_batch_*.bin, test_batch.bin). The
training images are padded and randomly cropped, flipped, rescaled to [0, 1],
normalised and transposed to CHW; a ResNet of three basic blocks (16, 32 and
64 channels) learns them with Model.train. The program prints the test
accuracy before and after training.
"""
import argparse

import msrt as ms
import msrt.dataset as ds
import msrt.dataset.transforms as transforms
import msrt.dataset.vision as vision
from msrt import dtype as mstype
from msrt import nn
from msrt.common.initializer import Normal
from msrt.train import LossMonitor, Model, TimeMonitor


def create_dataset_cifar10(dataset_dir, usage, batch_size, workers=1):
    data_set = ds.Cifar10Dataset(dataset_dir=dataset_dir, usage=usage, num_parallel_workers=workers,
                                 shuffle=(usage == "train"))
    trans = []
    if usage == "train":
        trans += [
            vision.RandomCrop((32, 32), (4, 4, 4, 4)),
            vision.RandomHorizontalFlip(prob=0.5)
        ]
    trans += [
        vision.Rescale(1.0 / 255.0, 0.0),
        vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
        vision.HWC2CHW()
    ]
    target_trans = transforms.TypeCast(mstype.int32)
    data_set = data_set.map(operations=trans, input_columns='image', num_parallel_workers=workers)
    data_set = data_set.map(operations=target_trans, input_columns='label', num_parallel_workers=workers)
    data_set = data_set.batch(batch_size, drop_remainder=(usage == "train"))
    return data_set


weight_init = Normal(mean=0, sigma=0.02)
gamma_init = Normal(mean=1, sigma=0.02)


class ResidualBlockBase(nn.Cell):
    expansion = 1

    def __init__(self, in_channel, out_channel, stride=1, down_sample=None):
        super(ResidualBlockBase, self).__init__()
        self.conv1 = nn.Conv2d(in_channel, out_channel, kernel_size=3, stride=stride, weight_init=weight_init)
        self.norm1 = nn.BatchNorm2d(out_channel, gamma_init=gamma_init)
        self.conv2 = nn.Conv2d(out_channel, out_channel, kernel_size=3, weight_init=weight_init)
        self.norm2 = nn.BatchNorm2d(out_channel, gamma_init=gamma_init)
        self.relu = nn.ReLU()
        self.down_sample = down_sample

    def construct(self, x):
        identity = x
        out = self.conv1(x)
        out = self.norm1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.norm2(out)
        if self.down_sample is not None:
            identity = self.down_sample(x)
        out += identity
        out = self.relu(out)
        return out


def make_layer(last_out_channel, channel, stride=1):
    down_sample = None
    if stride != 1 or last_out_channel != channel:
        down_sample = nn.SequentialCell([
            nn.Conv2d(last_out_channel, channel, kernel_size=1, stride=stride, weight_init=weight_init),
            nn.BatchNorm2d(channel, gamma_init=gamma_init)
        ])
    return ResidualBlockBase(last_out_channel, channel, stride=stride, down_sample=down_sample)


class ResNet(nn.Cell):
    def __init__(self, num_classes=10):
        super(ResNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, weight_init=weight_init)
        self.norm = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.layer1 = make_layer(16, 16)
        self.layer2 = make_layer(16, 32, stride=2)
        self.layer3 = make_layer(32, 64, stride=2)
        self.avg_pool = nn.AvgPool2d(kernel_size=8)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.conv1(x)
        x = self.norm(x)
        x = self.relu(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.avg_pool(x)
        x = self.flatten(x)
        x = self.fc(x)
        return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_path", required=True)
    parser.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(1)

    dataset_train = create_dataset_cifar10(args.data_path, "train", args.batch_size)
    dataset_val = create_dataset_cifar10(args.data_path, "test", args.batch_size)
    step_size = dataset_train.get_dataset_size()

    network = ResNet(num_classes=10)
    lr = nn.cosine_decay_lr(min_lr=0.00001, max_lr=0.05, total_step=step_size * args.epochs,
                            step_per_epoch=step_size, decay_epoch=args.epochs)
    opt = nn.Momentum(params=network.trainable_params(), learning_rate=lr, momentum=0.9)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')
    model = Model(network, loss_fn=loss_fn, optimizer=opt, metrics={'accuracy'})

    before = model.eval(dataset_val)['accuracy']
    model.train(args.epochs, dataset_train, callbacks=[LossMonitor(step_size), TimeMonitor()])
    after = model.eval(dataset_val)['accuracy']
    print(f"test accuracy before training: {before:.4f}")
    print(f"test accuracy after training: {after:.4f}")


if __name__ == "__main__":
    main()
