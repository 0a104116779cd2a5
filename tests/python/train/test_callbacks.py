"""BackupAndRestore, LambdaCallback, EarlyStopping, ReduceLROnPlateau, and the
argument checks of the callbacks, as MindSpore documents them."""
import os
import re

import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn
from msrt.train import (BackupAndRestore, CheckpointConfig, EarlyStopping, LambdaCallback, Model, ModelCheckpoint,
                        ReduceLROnPlateau, RunContext, TimeMonitor)
from msrt.train.callback import CallbackParam

RNG = np.random.default_rng(0)
DATA = [(RNG.standard_normal((8, 4)).astype(np.float32), RNG.standard_normal((8, 1)).astype(np.float32))
        for _ in range(3)]


def _model(seed, lr=0.05, metrics=None):
    ms.set_seed(seed)
    net = nn.Dense(4, 1)
    opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    return net, opt, Model(net, nn.MSELoss(), opt, metrics=metrics)


class _Interrupt(Exception):
    pass


def test_backup_and_restore_resumes_where_the_interrupted_run_stopped(tmp_path):
    net, _, model = _model(0)
    model.train(4, DATA)
    reference = {p.name: p.asnumpy().copy() for p in net.trainable_params()}

    def interrupt(run_context):
        cb = run_context.original_args()
        if cb.cur_epoch_num == 3 and cb.cur_step_num == 8:
            raise _Interrupt

    net, _, model = _model(0)
    with pytest.raises(_Interrupt):
        model.train(4, DATA, callbacks=[BackupAndRestore(str(tmp_path)), LambdaCallback(on_train_step_end=interrupt)])
    backup = tmp_path / "backup.ckpt"
    assert backup.exists()  # the end of epoch 2
    assert int(ms.load_checkpoint(str(backup))["epoch_num"].asnumpy()) == 2

    steps = []
    net, _, model = _model(7)  # other initial weights: all of them come from the backup
    model.train(4, DATA, callbacks=[BackupAndRestore(str(tmp_path)), LambdaCallback(
        on_train_step_end=lambda rc: steps.append((rc.original_args().cur_epoch_num,
                                                   rc.original_args().cur_step_num)))])
    assert steps == [(3, 7), (3, 8), (3, 9), (4, 10), (4, 11), (4, 12)]
    for p in net.trainable_params():
        np.testing.assert_allclose(p.asnumpy(), reference[p.name], rtol=1e-6, atol=1e-7)
    assert not backup.exists()  # delete_checkpoint=True


def test_backup_and_restore_save_freq_and_keeping_the_file(tmp_path):
    saved = []
    backup = BackupAndRestore(str(tmp_path / "b"), save_freq=2, delete_checkpoint=False)
    _, _, model = _model(0)
    model.train(3, DATA, callbacks=[backup, LambdaCallback(on_train_epoch_end=lambda rc: saved.append(
        int(ms.load_checkpoint(backup.backup_file)["epoch_num"].asnumpy()) if os.path.exists(backup.backup_file)
        else None))])
    assert saved == [None, 2, 2] and os.path.exists(backup.backup_file)


@pytest.mark.parametrize("kwargs", [{"backup_dir": 1}, {"backup_dir": "d", "save_freq": "step"},
                                    {"backup_dir": "d", "save_freq": 0},
                                    {"backup_dir": "d", "delete_checkpoint": 1}])
def test_backup_and_restore_arguments(kwargs):
    with pytest.raises(ValueError):
        BackupAndRestore(**kwargs)


def test_lambda_callback_calls_its_functions():
    seen = []
    _, _, model = _model(0)
    model.train(2, DATA, callbacks=LambdaCallback(
        on_train_begin=lambda rc: seen.append("begin"),
        on_train_epoch_end=lambda rc: seen.append(rc.original_args().cur_epoch_num),
        on_train_end=lambda rc: seen.append("end")))
    assert seen == ["begin", 1, 2, "end"]
    with pytest.raises(TypeError, match="on_train_end"):
        LambdaCallback(on_train_end=3)


def _epochs(values, callback, network=None, optimizer=None, key="eval_loss"):
    """Feeds `values` as the monitored value of successive epochs; returns
    the epoch that requested a stop (or None)."""
    cb = CallbackParam(train_network=network, optimizer=optimizer, cur_epoch_num=0, net_outputs=None)
    rc = RunContext(cb)
    callback.on_train_begin(rc)
    for epoch, value in enumerate(values, 1):
        cb.cur_epoch_num = epoch
        cb.eval_results = {key: value}
        if network is not None:
            network.weight.set_data(Tensor(np.full((1, 4), epoch, np.float32)))
        callback.on_train_epoch_end(rc)
        if rc.get_stop_requested():
            return epoch
    return None


def test_early_stopping_patience_min_delta_mode_and_baseline():
    assert _epochs([3.0, 2.0, 2.5, 2.6, 1.0], EarlyStopping(patience=2)) == 4
    assert _epochs([3.0, 2.95, 2.9, 2.85], EarlyStopping(patience=2, min_delta=0.1)) == 3
    assert _epochs([0.5, 0.6, 0.7, 0.7, 0.7], EarlyStopping(monitor="accuracy", patience=1), key="accuracy") == 4
    assert _epochs([0.5, 0.4, 0.3], EarlyStopping(monitor="acc", mode="min", patience=1), key="acc") is None
    # Improvements that do not beat the baseline do not reset the wait.
    assert _epochs([3.0, 2.0, 1.5], EarlyStopping(patience=2, baseline=1.0)) == 2
    assert _epochs([3.0, 2.0, 1.5], EarlyStopping(patience=2)) is None


def test_early_stopping_restores_the_best_weights(capsys):
    net = nn.Dense(4, 1)
    stop = EarlyStopping(patience=2, restore_best_weights=True, verbose=True)
    assert _epochs([3.0, 2.0, 2.5, 2.6], stop, network=net) == 4
    np.testing.assert_array_equal(net.weight.asnumpy(), np.full((1, 4), 2, np.float32))
    stop.on_train_end(RunContext(CallbackParam()))
    assert "Epoch 00004: early stopping" in capsys.readouterr().out


def test_early_stopping_in_model_fit_and_on_the_training_loss():
    epochs, results = [], []
    _, _, model = _model(0, lr=0.0, metrics={"mae"})  # nothing changes: no epoch improves on the first
    model.fit(10, DATA, DATA, callbacks=[EarlyStopping(patience=2), LambdaCallback(
        on_train_epoch_end=lambda rc: (epochs.append(1), results.append(rc.original_args().eval_results)))])
    assert len(epochs) == 3
    # fit's evaluation results: the metrics and "eval_loss", the mean of the batches' losses
    net = model.predict_network
    losses = [np.mean((net(Tensor(x)).asnumpy() - y) ** 2) for x, y in DATA]
    assert sorted(results[0]) == ["eval_loss", "mae"]
    assert results[0]["eval_loss"] == pytest.approx(np.mean(losses), rel=1e-5)
    epochs.clear()
    model.train(10, DATA, callbacks=[EarlyStopping(monitor="loss", patience=1),
                                     LambdaCallback(on_train_epoch_end=lambda rc: epochs.append(1))])
    assert len(epochs) == 2


def test_early_stopping_missing_monitor_warns_and_bad_arguments():
    with pytest.warns(UserWarning, match="not available"):
        assert _epochs([1.0, 1.0], EarlyStopping(monitor="f1"), key="accuracy") is None
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="up")
    with pytest.raises(TypeError):
        EarlyStopping(monitor=3)
    with pytest.raises(ValueError):
        EarlyStopping(patience=-1)
    with pytest.raises(TypeError):
        EarlyStopping(restore_best_weights=1)
    with pytest.raises(ValueError, match="scalar"):
        _epochs([np.array([1.0, 2.0])], EarlyStopping())


def test_reduce_lr_on_plateau_against_hand_computed_rates():
    net = nn.Dense(4, 1)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    rates = []
    reduce = ReduceLROnPlateau(factor=0.5, patience=1, cooldown=2, min_lr=0.02)
    cb = CallbackParam(optimizer=opt, cur_epoch_num=0, net_outputs=None)
    rc = RunContext(cb)
    reduce.on_train_begin(rc)
    for epoch, value in enumerate([1.0, 1.0, 1.0, 1.0, 0.5, 0.6, 0.7, 0.8], 1):
        cb.cur_epoch_num, cb.eval_results = epoch, {"eval_loss": value}
        reduce.on_train_epoch_end(rc)
        rates.append(float(opt.learning_rate.asnumpy()))
    # 2: no improvement -> 0.05, cooldown 2; 3: cooling; 4: cooldown over -> 0.025; 5: improves (cooling);
    # 6: -> 0.02 (min_lr); 7: cooling; 8: at min_lr already
    np.testing.assert_allclose(rates, [0.1, 0.05, 0.05, 0.025, 0.025, 0.02, 0.02, 0.02], rtol=1e-6)


def test_reduce_lr_on_plateau_arguments_and_dynamic_rates():
    with pytest.raises(ValueError, match="factor"):
        ReduceLROnPlateau(factor=1.0)
    with pytest.raises(ValueError, match="mode"):
        ReduceLROnPlateau(mode="down")
    with pytest.raises(ValueError):
        ReduceLROnPlateau(cooldown=-1)
    net = nn.Dense(4, 1)
    dynamic = nn.Momentum(net.trainable_params(), learning_rate=Tensor(np.array([0.1, 0.05], np.float32)),
                          momentum=0.9)
    cb = CallbackParam(optimizer=dynamic, cur_epoch_num=1, eval_results={"eval_loss": 1.0})
    with pytest.raises(ValueError, match="dynamic learning rate"):
        ReduceLROnPlateau().on_train_epoch_end(RunContext(cb))


def test_checkpoint_config_and_model_checkpoint_arguments():
    with pytest.raises(TypeError, match="integrated_save"):
        CheckpointConfig(integrated_save=1)
    with pytest.raises(TypeError, match="append_info"):
        CheckpointConfig(append_info="epoch_num")
    with pytest.raises(ValueError, match="append_info"):
        CheckpointConfig(append_info=["epoch"])
    with pytest.raises(TypeError, match="only one dict"):
        CheckpointConfig(append_info=[{"a": 1}, {"b": 2}])
    with pytest.raises(TypeError, match="key type"):
        CheckpointConfig(append_info=[{1: 1}])
    assert CheckpointConfig(append_info=["epoch_num", {"tag": 1.5}]).append_info == ["epoch_num", {"tag": 1.5}]
    with pytest.raises(TypeError, match="prefix"):
        ModelCheckpoint(prefix=1)
    with pytest.raises(ValueError, match="prefix"):
        ModelCheckpoint(prefix="a/b")


def test_time_monitor_arguments_and_data_time(capsys):
    with pytest.raises(TypeError):
        TimeMonitor(2.0)
    with pytest.raises(ValueError):
        TimeMonitor(-1)
    with pytest.raises(TypeError):
        TimeMonitor(data_time=1)
    _, _, model = _model(0)
    model.train(1, DATA, callbacks=TimeMonitor(data_time=True))
    out = capsys.readouterr().out
    assert re.search(r"^Train epoch time: [0-9.]+ ms, per step time: [0-9.]+ ms, avg data time: [0-9.]+ ms$", out,
                     re.M)


def test_model_checkpoint_exception_save_writes_a_breakpoint_file(tmp_path):
    net, _, model = _model(0)
    seen = {}

    def interrupt(run_context):
        cb = run_context.original_args()
        if cb.cur_step_num == 5:
            seen.update({p.name: p.asnumpy().copy() for p in net.trainable_params()})
            raise _Interrupt

    config = CheckpointConfig(save_checkpoint_steps=100, exception_save=True, crc_check=True)
    with pytest.raises(_Interrupt):
        model.train(2, DATA, callbacks=[ModelCheckpoint(directory=str(tmp_path), config=config),
                                        LambdaCallback(on_train_step_end=interrupt)])
    assert sorted(os.listdir(tmp_path)) == ["CKP-2_2_breakpoint.ckpt"]
    saved = ms.load_checkpoint(str(tmp_path / "CKP-2_2_breakpoint.ckpt"))
    for name, value in seen.items():
        np.testing.assert_array_equal(saved[name].asnumpy(), value)
    with pytest.raises(TypeError, match="crc_check"):
        CheckpointConfig(crc_check="yes")
