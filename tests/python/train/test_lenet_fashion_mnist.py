"""LeNet-5 on real Fashion-MNIST for a fraction of an epoch (slow)."""
import os

import pytest

from msrt.examples import lenet

DATA = lenet.DEFAULT_DATA_DIR


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(DATA), reason=f"{DATA} is missing (Debian package dataset-fashion-mnist)")
def test_lenet_learns_fashion_mnist_in_a_fraction_of_an_epoch():
    import msrt as ms

    ms.set_seed(1)
    ms.dataset.config.set_seed(1)
    train = lenet.create_dataset(DATA, "train", batch_size=32, num_samples=12800)
    test = lenet.create_dataset(DATA, "test", batch_size=250, shuffle=False, num_samples=2000)
    network, model = lenet.build_model(lr=0.01, momentum=0.9)
    assert [p.name for p in network.trainable_params()] == [
        "conv1.weight", "conv2.weight", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
    model.train(1, train)
    accuracy = model.eval(test)["accuracy"]
    assert accuracy > 0.6, accuracy  # chance is 0.1; a full epoch reaches about 0.85
