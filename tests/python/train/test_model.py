"""Model.train / eval / predict / fit with callbacks on synthetic MNIST."""
import io
import re

import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn
from msrt.train import (Accuracy, Callback, Loss, LossMonitor, Model, ProgressBar, RunContext, TimeMonitor)

from .mnistdata import make_dataset


class SmallNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(28 * 28, 10)

    def construct(self, x):
        return self.fc(self.flatten(x))


class Recorder(Callback):
    def __init__(self):
        self.events = []
        self.steps = []

    def on_train_begin(self, run_context):
        cb = run_context.original_args()
        self.events.append(("train_begin", cb.epoch_num, cb.batch_num, cb.mode))

    def on_train_epoch_begin(self, run_context):
        self.events.append(("epoch_begin", run_context.original_args().cur_epoch_num))

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        assert isinstance(cb.net_outputs, Tensor)
        assert len(cb.train_dataset_element) == 2
        self.steps.append((cb.cur_epoch_num, cb.cur_step_num))

    def on_train_epoch_end(self, run_context):
        self.events.append(("epoch_end", run_context.original_args().cur_epoch_num))

    def on_train_end(self, run_context):
        self.events.append(("train_end",))

    def on_eval_begin(self, run_context):
        self.events.append(("eval_begin", run_context.original_args().mode))

    def on_eval_end(self, run_context):
        self.events.append(("eval_end", sorted(run_context.original_args().metrics)))


def build(lr=0.1, metrics=None):
    ms.set_seed(0)
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    return net, Model(net, loss, opt, metrics=metrics if metrics is not None else {"accuracy", "loss"})


def test_train_eval_predict_with_callbacks(mnist_dir, capsys):
    net, model = build()
    train = make_dataset(mnist_dir, "train", shuffle=True)
    test = make_dataset(mnist_dir, "test")
    rec = Recorder()
    model.train(3, train, callbacks=[rec, LossMonitor(per_print_times=10), TimeMonitor()])
    assert rec.events[0] == ("train_begin", 3, 20, "train")
    assert rec.events[1:] == [("epoch_begin", 1), ("epoch_end", 1), ("epoch_begin", 2), ("epoch_end", 2),
                              ("epoch_begin", 3), ("epoch_end", 3), ("train_end",)]
    assert rec.steps[0] == (1, 1) and rec.steps[-1] == (3, 60) and len(rec.steps) == 60
    out = capsys.readouterr().out
    losses = re.findall(r"^epoch: (\d+) step: (\d+), loss is ([0-9.e-]+)$", out, re.M)
    assert [(e, s) for e, s, _ in losses] == [("1", "10"), ("1", "20"), ("2", "10"), ("2", "20"), ("3", "10"),
                                              ("3", "20")]
    assert float(losses[-1][2]) < float(losses[0][2])
    assert len(re.findall(r"^Train epoch time: [0-9.]+ ms, per step time: [0-9.]+ ms$", out, re.M)) == 3

    metrics = model.eval(test, callbacks=[rec])
    assert set(metrics) == {"accuracy", "loss"}
    assert metrics["accuracy"] > 0.9 and 0 < metrics["loss"] < 1.0
    assert rec.events[-2:] == [("eval_begin", "eval"), ("eval_end", ["accuracy", "loss"])]

    images, labels = next(test.create_tuple_iterator(output_numpy=True))
    logits = model.predict(Tensor(images))
    assert logits.shape == (16, 10)
    assert (logits.asnumpy().argmax(1) == labels).mean() > 0.8
    assert not net.training  # predict/eval leave the network in inference mode


def test_request_stop_and_legacy_methods(mnist_dir):
    _, model = build()

    class StopAt(Callback):
        def __init__(self):
            self.seen = 0

        def step_end(self, run_context):  # the pre-2.0 name still works
            self.seen += 1
            if run_context.original_args().cur_step_num == 5:
                run_context.request_stop()

    stop = StopAt()
    model.train(2, make_dataset(mnist_dir), callbacks=stop)
    assert stop.seen == 5


def test_metric_objects_custom_eval_network_and_indexes(mnist_dir):
    ms.set_seed(0)
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.SGD(net.trainable_params(), learning_rate=0.5)
    eval_net = nn.WithEvalCell(net, loss)
    model = Model(net, loss, opt, metrics={"Accuracy": Accuracy(), "Loss": Loss()}, eval_network=eval_net,
                  eval_indexes=[0, 1, 2])
    model.train(2, make_dataset(mnist_dir))
    result = model.eval(make_dataset(mnist_dir, "test"))
    assert set(result) == {"Accuracy", "Loss"} and result["Accuracy"] > 0.8


def test_network_that_returns_its_loss(mnist_dir):
    ms.set_seed(0)
    net = SmallNet()
    with_loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    model = Model(with_loss, optimizer=nn.Adam(net.trainable_params(), 0.01))
    first = []

    class FirstLoss(Callback):
        def on_train_step_end(self, run_context):
            first.append(float(run_context.original_args().net_outputs.asnumpy()))

    model.train(2, make_dataset(mnist_dir), callbacks=[FirstLoss()])
    assert first[-1] < first[0]


def test_fit_evaluates_every_epoch(mnist_dir, capsys):
    _, model = build()
    seen = []

    class Metrics(Callback):
        def on_train_epoch_end(self, run_context):
            seen.append(dict(run_context.original_args().metrics))

    model.fit(2, make_dataset(mnist_dir), make_dataset(mnist_dir, "test"), callbacks=[Metrics(), LossMonitor(0)])
    assert len(seen) == 2 and seen[-1]["accuracy"] > 0.8
    assert "Eval result: epoch 2, metrics:" in capsys.readouterr().out


def test_model_errors(mnist_dir):
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
    opt = nn.SGD(net.trainable_params())
    with pytest.raises(ValueError, match="metrics"):
        Model(net, loss, opt).eval(make_dataset(mnist_dir, "test"))
    with pytest.raises(ValueError, match="eval_network"):
        Model(net, optimizer=opt, metrics={"acc"})
    with pytest.raises(KeyError):
        Model(net, loss, opt, metrics={"nope"})
    with pytest.raises(ValueError, match="amp_level"):
        Model(net, loss, opt, amp_level="O9")
    with pytest.raises(ValueError, match="epoch"):
        Model(net, loss, opt).train(0, make_dataset(mnist_dir))
    with pytest.raises(TypeError):
        Model("net")
    with pytest.raises(ValueError, match="two elements"):
        Model(net, loss, opt).train(1, [(Tensor(np.zeros((2, 1, 28, 28), np.float32)),)])
    with pytest.raises(TypeError):
        Model(net, loss, opt).train(1, make_dataset(mnist_dir), callbacks=[print])


def test_run_context():
    ctx = RunContext({"a": 1})
    assert ctx.original_args() == {"a": 1} and not ctx.get_stop_requested()
    ctx.request_stop()
    assert ctx.get_stop_requested()
    with pytest.raises(TypeError):
        RunContext([1])


def test_loss_monitor_rejects_nan_and_bad_arguments():
    from msrt.train.callback import CallbackParam

    cb = CallbackParam(cur_step_num=3, cur_epoch_num=1, batch_num=10, net_outputs=Tensor(np.float32("nan")))
    with pytest.raises(ValueError, match="In epoch: 1 step: 3, loss is NAN or INF"):
        LossMonitor().step_end(RunContext(cb))
    with pytest.raises(ValueError):
        LossMonitor(-1)
    with pytest.raises(TypeError):
        LossMonitor(1.5)
    with pytest.raises(ValueError):
        TimeMonitor(0)


def test_progress_bar_lines(mnist_dir):
    _, model = build()
    stream = io.StringIO()
    model.train(1, make_dataset(mnist_dir), callbacks=[ProgressBar(stream=stream)])
    lines = stream.getvalue().splitlines()
    assert 2 <= len(lines) <= 12  # one line per 10% on a non-terminal stream
    assert lines[-1].startswith("epoch 1/1 [") and "20/20" in lines[-1] and "loss" in lines[-1]
    tty = io.StringIO()
    model.eval(make_dataset(mnist_dir, "test"), callbacks=[ProgressBar(stream=tty, tty=True)])
    text = tty.getvalue()
    assert text.startswith("\reval [") and text.endswith("\n") and "accuracy" in text


def test_model_checks_its_arguments_as_mindspore_does():
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
    opt = nn.SGD(net.trainable_params())
    cases = [
        (TypeError, "type of 'network' should be 'Cell'", lambda: Model(lambda x: x)),
        (TypeError, "type of 'loss_fn' should be 'Cell'", lambda: Model(net, loss_fn="mse", optimizer=opt)),
        (TypeError, "type of 'optimizer' should be 'Optimizer'", lambda: Model(net, loss, optimizer=nn.Dense(2, 2))),
        (TypeError, "type of 'eval_network' should be 'Cell'", lambda: Model(net, loss, opt, eval_network=3)),
        (ValueError, "kwargs", lambda: Model(net, loss, opt, loss_scale=2)),
        (TypeError, "must be a string", lambda: Model(net, loss, opt, amp_level=2)),
        (ValueError, "boost_level", lambda: Model(net, loss, opt, boost_level="O5")),
        (ValueError, "'optimizer' is None", lambda: Model(net, loss, amp_level="O2")),
        (TypeError, "metrics", lambda: Model(net, loss, opt, metrics=["accuracy"])),
        (TypeError, "metrics", lambda: Model(net, loss, opt, metrics={"acc": "accuracy"})),
        (ValueError, "eval_indexes", lambda: Model(net, loss, opt, metrics={"acc"}, eval_network=nn.WithEvalCell(
            net, loss), eval_indexes=[0, 1])),
    ]
    for error, text, make in cases:
        with pytest.raises(error, match=text):
            make()
    Model(net, loss, opt, metrics={"acc": Accuracy()}, amp_level="auto", boost_level="O1", keep_batchnorm_fp32=False)


def test_each_epoch_of_a_shuffled_dataset_has_a_new_order():
    """Model.train iterates the dataset with one iterator over all epochs, as
    MindSpore does, so a seeded shuffle differs between epochs (a fresh
    iterator per epoch repeated the first epoch's order every epoch)."""
    import msrt.dataset as ds

    class Record(Callback):
        def __init__(self):
            self.epochs = []

        def on_train_epoch_begin(self, run_context):
            self.epochs.append([])

        def on_train_step_end(self, run_context):
            data = run_context.original_args().train_dataset_element[0]
            self.epochs[-1].extend(data.asnumpy()[:, 0].tolist())

    ms.set_seed(3)
    rows = [(np.array([i], np.float32), np.array([0.0], np.float32)) for i in range(16)]
    dataset = ds.GeneratorDataset(rows, column_names=["x", "y"], shuffle=True).batch(4)
    net = nn.Dense(1, 1)
    record = Record()
    Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.0)).train(3, dataset, callbacks=[record])
    assert len(record.epochs) == 3
    for order in record.epochs:
        assert sorted(order) == list(range(16))
    assert record.epochs[0] != record.epochs[1] and record.epochs[1] != record.epochs[2]
