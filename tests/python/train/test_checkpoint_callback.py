"""ModelCheckpoint writes loadable files as CheckpointConfig says."""
import os

import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn
from msrt.train import CheckpointConfig, Model, ModelCheckpoint

from .mnistdata import make_dataset


class SmallNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(28 * 28, 10)

    def construct(self, x):
        return self.fc(self.flatten(x))


def train_with(ckpt, mnist_dir, epochs=2):
    ms.set_seed(0)
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))
    model.train(epochs, make_dataset(mnist_dir), callbacks=[ckpt])
    return net


def test_files_written_kept_and_loadable(mnist_dir, tmp_path):
    directory = tmp_path / "ckpt"
    ckpt = ModelCheckpoint(prefix="small", directory=str(directory),
                           config=CheckpointConfig(save_checkpoint_steps=8, keep_checkpoint_max=2))
    net = train_with(ckpt, mnist_dir)
    # 20 steps per epoch: saves at global steps 8, 16, 24, 32, 40 -> (1, 8) (1, 16) (2, 4) (2, 12) (2, 20)
    assert sorted(os.listdir(directory)) == ["small-2_12.ckpt", "small-2_20.ckpt"]
    assert ckpt.latest_ckpt_file_name == str(directory / "small-2_20.ckpt")
    params = ms.load_checkpoint(ckpt.latest_ckpt_file_name)
    assert {"fc.weight", "fc.bias", "learning_rate", "momentum", "moments.fc.weight", "moments.fc.bias"} <= set(params)
    np.testing.assert_array_equal(params["fc.weight"].asnumpy(), net.fc.weight.asnumpy())
    fresh = SmallNet()
    not_loaded, _ = ms.load_param_into_net(fresh, params)
    assert not not_loaded
    x = Tensor(np.random.default_rng(0).random((2, 1, 28, 28)).astype(np.float32))
    np.testing.assert_allclose(fresh(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)


def test_final_step_saved_at_end_and_prefix_renamed(mnist_dir, tmp_path):
    directory = tmp_path / "ckpt"
    first = ModelCheckpoint(prefix="run", directory=str(directory),
                            config=CheckpointConfig(save_checkpoint_steps=15, keep_checkpoint_max=10))
    train_with(first, mnist_dir, epochs=1)
    assert sorted(os.listdir(directory)) == ["run-1_15.ckpt", "run-1_20.ckpt"]  # 20 saved by end()
    second = ModelCheckpoint(prefix="run", directory=str(directory),
                             config=CheckpointConfig(save_checkpoint_steps=100))
    train_with(second, mnist_dir, epochs=1)
    assert "run_1-1_20.ckpt" in os.listdir(directory)


def test_default_directory_is_cwd(mnist_dir, in_tmp):
    ckpt = ModelCheckpoint(config=CheckpointConfig(save_checkpoint_steps=20, keep_checkpoint_max=1))
    train_with(ckpt, mnist_dir, epochs=1)
    assert os.path.exists(in_tmp / "CKP-1_20.ckpt")


def test_checkpoint_config_rules():
    config = CheckpointConfig()
    assert config.save_checkpoint_steps == 1 and config.keep_checkpoint_max == 5
    assert config.save_checkpoint_seconds is None and config.keep_checkpoint_per_n_minutes is None
    assert CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=30).save_checkpoint_seconds == 30
    with pytest.raises(ValueError, match="can't be all None or 0"):
        CheckpointConfig(0, 0, 0, 0)
    with pytest.raises(ValueError):
        CheckpointConfig(save_checkpoint_steps=-1)
    with pytest.raises(TypeError):
        CheckpointConfig(save_checkpoint_steps=1.5)
    with pytest.raises(TypeError):
        ModelCheckpoint(config={"save_checkpoint_steps": 1})
    with pytest.raises(ValueError):
        ModelCheckpoint(prefix="a/b")


def test_append_info_is_saved(mnist_dir, tmp_path):
    ckpt = ModelCheckpoint(prefix="info", directory=str(tmp_path),
                           config=CheckpointConfig(save_checkpoint_steps=20, append_info=["epoch_num", "step_num",
                                                                                          {"lr_tag": 7}]))
    train_with(ckpt, mnist_dir, epochs=1)
    params = ms.load_checkpoint(ckpt.latest_ckpt_file_name)
    assert int(params["epoch_num"].asnumpy()) == 1 and int(params["step_num"].asnumpy()) == 20
    assert int(params["lr_tag"].asnumpy()) == 7
