"""Tutorial-shaped pipelines feeding msrt.train.Model: a linear regression from a
GeneratorDataset, and a CIFAR-10 augmentation pipeline with batches of CHW floats."""
import numpy as np

import msrt as ms
import msrt.dataset as ds
from dsutil import cifar_records
from msrt import nn
from msrt.dataset import transforms, vision


def test_regression_from_a_generator_dataset_learns_the_line():
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    xs = rng.uniform(-10, 10, (160, 1)).astype(np.float32)
    ys = (2 * xs + 3 + rng.normal(0, 0.1, xs.shape)).astype(np.float32)

    def samples():
        yield from zip(xs, ys)

    data = ds.GeneratorDataset(samples, ["data", "label"]).batch(16)
    net = nn.Dense(1, 1)
    model = ms.train.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.005, 0.9))
    model.train(20, data)
    weight, bias = (p.asnumpy().item() for p in net.trainable_params())
    assert abs(weight - 2) < 0.05 and abs(bias - 3) < 0.2


def test_cifar10_augmentation_pipeline_batches_for_a_network(tmp_path):
    raw, images, labels = cifar_records(10, (10,), 0)
    (tmp_path / "data_batch_1.bin").write_bytes(raw)
    ds.config.set_seed(1)
    data = ds.Cifar10Dataset(str(tmp_path), usage="train", shuffle=False)
    data = data.map([vision.RandomCrop((32, 32), (4, 4, 4, 4)), vision.RandomHorizontalFlip(),
                     vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize([0.4914, 0.4822, 0.4465],
                                                                        [0.2023, 0.1994, 0.2010]),
                     vision.HWC2CHW()], "image")
    data = data.map(transforms.TypeCast(ms.int32), "label").batch(4, drop_remainder=True)
    assert data.get_dataset_size() == 2
    batches = list(data.create_dict_iterator(output_numpy=True, num_epochs=1))
    assert batches[0]["image"].shape == (4, 3, 32, 32) and batches[0]["image"].dtype == np.float32
    np.testing.assert_array_equal(batches[1]["label"], labels[4:8, 0].astype(np.int32))
    # Each image is a padded, possibly flipped window of its normalised source.
    mean = np.array([0.4914, 0.4822, 0.4465], np.float32)
    std = np.array([0.2023, 0.1994, 0.2010], np.float32)
    for k, image in enumerate(batches[0]["image"]):
        source = np.pad(images[k], ((4, 4), (4, 4), (0, 0)))
        hwc = image.transpose(1, 2, 0) * std + mean
        found = any(np.allclose(candidate, hwc, atol=1e-4)
                    for t in range(9) for s in range(9)
                    for window in [source[t:t + 32, s:s + 32].astype(np.float32) / 255]
                    for candidate in (window, window[:, ::-1]))
        assert found, f"image {k} is not an augmented window of its source"
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Dense(4 * 32 * 32, 10)])
    model = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                           nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(1, data)
