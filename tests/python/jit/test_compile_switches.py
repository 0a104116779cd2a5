"""Compile-time context keys: save_graphs, scopes, passes, memory_optimize_level, ms.jit."""
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import nn

from .helpers import SmallNet, batches, compiles, make_training


def _files(path):
    return sorted(p.name for p in path.iterdir())


def test_save_graphs_level_1_writes_one_ir_file_per_stage(tmp_path, graph_mode):
    ms.set_context(save_graphs=1, save_graphs_path=str(tmp_path / "ir"))
    SmallNet()(batches(1)[0][0])
    names = _files(tmp_path / "ir")
    assert [n.split("_")[0] for n in names] == ["00", "01", "02"]
    assert [n.rsplit("_", 1)[0][3:] for n in names] == ["capture", "optimize", "backend"]
    text = (tmp_path / "ir" / names[0]).read_text()
    assert text.startswith("# msrt IR v1\n# graph: SmallNet")
    assert "conv2d(" in text and "weight \"conv.weight\"" in text
    assert "# Default/conv-Conv2d/conv2d-op" in text  # scope with class names
    assert "# source: " in text and "helpers.py" in text


def test_save_graphs_level_2_adds_every_pass_and_the_execution_order(tmp_path, graph_mode):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path))  # True means 2
    assert ms.get_context("save_graphs") == 2
    net, step = make_training()
    step(*batches(1)[0])
    names = _files(tmp_path)
    assert any("eliminate_dead_code" in n for n in names)
    assert any("fold_constants" in n for n in names)
    order = next(n for n in names if "execution_order" in n)
    text = (tmp_path / order).read_text()
    assert "[onednn]" in text and "apply_momentum" in text
    assert not any(n.endswith(".dot") for n in names)
    capture = (tmp_path / next(n for n in names if "capture" in n)).read_text()
    assert "# Gradients/Default/" in capture  # the backward pass, scoped after its forward op


def test_save_graphs_level_3_writes_graphviz_that_renders(tmp_path, graph_mode):
    ms.set_context(save_graphs=3, save_graphs_path=str(tmp_path))
    SmallNet()(batches(1)[0][0])
    dots = [n for n in _files(tmp_path) if n.endswith(".dot")]
    assert dots and all((tmp_path / d).read_text().startswith("digraph") for d in dots)
    capture = (tmp_path / next(n for n in _files(tmp_path) if n.startswith("00_capture") and n.endswith(".ir")))
    assert " <- " in capture.read_text()  # level 3 keeps the whole Python stack of each node
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg", str(tmp_path / dots[0]), "-o", str(tmp_path / "g.svg")], check=True)
        assert (tmp_path / "g.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_the_save_graphs_environment_variables_override_the_context(tmp_path, python_subprocess):
    proc_dir = tmp_path / "env_ir"
    code = f"""
        import numpy as np
        from msrt import nn
        ms.set_context(mode=ms.GRAPH_MODE, save_graphs=0, save_graphs_path={str(tmp_path / 'ctx')!r})
        nn.ReLU()(ms.Tensor(np.ones(2, np.float32)))
    """
    python_subprocess(code, env={"MS_DEV_SAVE_GRAPHS": "1", "MS_DEV_SAVE_GRAPHS_PATH": str(proc_dir)})
    assert [n.split("_", 1)[1].rsplit("_", 1)[0] for n in _files(proc_dir)] == ["capture", "optimize", "backend"]
    assert not (tmp_path / "ctx").exists() or not any((tmp_path / "ctx").iterdir())


def test_scopes_drop_class_names_without_reserve_class_name_in_scope(tmp_path, graph_mode):
    ms.set_context(save_graphs=1, save_graphs_path=str(tmp_path), reserve_class_name_in_scope=False)
    SmallNet()(batches(1)[0][0])
    text = (tmp_path / _files(tmp_path)[0]).read_text()
    assert "# Default/conv/conv2d-op" in text and "Conv2d" not in text.split("graph @")[1].split("conv2d(")[0]


def test_debug_level_keeps_the_whole_stack_in_the_ir(tmp_path, graph_mode):
    ms.set_context(save_graphs=1, save_graphs_path=str(tmp_path), debug_level=ms.context.DEBUG)
    nn.ReLU()(ms.Tensor(np.ones(2, np.float32)))
    text = (tmp_path / _files(tmp_path)[0]).read_text()
    assert " <- " in text and "(construct)" in text


# --- passes ----------------------------------------------------------------------------------
def test_optimisation_removes_identities_duplicates_and_dead_code():
    @ms.jit
    def f(x):
        unused = x * 7  # noqa: F841 - dead code the optimiser removes
        a = ms.ops.exp(x) * 1.0 + 0.0  # identities
        b = ms.ops.exp(x)  # the same as the exp above
        c = ms.Tensor(np.float32(2.0)) * ms.Tensor(np.float32(3.0))  # folded
        return a + b * c

    x = ms.Tensor(np.array([0.0, 1.0], np.float32))
    np.testing.assert_allclose(f(x).asnumpy(), np.exp([0.0, 1.0]) * 7, rtol=1e-6)
    report = ms._jit.compile_report(f)[0]
    assert report["captured_ops"] == 8
    assert report["final_ops"] == 3  # exp, mul by the folded 6, add
    assert {name for name, _ in report["passes"]} >= {"simplify_algebra", "fold_constants",
                                                      "eliminate_common_subexpressions", "eliminate_dead_code"}


def test_reads_of_a_weight_are_not_merged_across_an_in_place_update():
    w = ms.Parameter(ms.Tensor(np.array([1.0], np.float32)), name="w")

    @ms.jit
    def f():
        before = w * 2
        ms.ops.assign_add(w, ms.Tensor(np.array([1.0], np.float32)))
        after = w * 2
        return before, after

    before, after = f()
    assert before.asnumpy().tolist() == [2.0] and after.asnumpy().tolist() == [4.0]
    before, after = f()
    assert before.asnumpy().tolist() == [4.0] and after.asnumpy().tolist() == [6.0]


# --- memory_optimize_level ----------------------------------------------------------------------
def test_o1_plans_less_memory_than_o0_with_the_same_results():
    data = batches(2)
    results, planned = {}, {}
    for level in ("O0", "O1"):
        # Without epilogue fusion: the small net's graph keeps the relu buffers whose sharing O1 is about.
        ms.set_context(mode=ms.GRAPH_MODE, memory_optimize_level=level,
                       graph_kernel_flags="--disable_pass=fuse_epilogues")
        net, step = make_training()
        results[level] = [float(step(x, y).asnumpy()) for x, y in data]
        report = ms._jit.compile_report(step)[0]
        planned[level] = report["planned_bytes"]
        assert report["memory_optimize_level"] == (1 if level == "O1" else 0)
        assert report["planned_bytes"] >= report["peak_live_bytes"]
    assert results["O0"] == results["O1"]
    assert planned["O1"] <= 0.7 * planned["O0"]


def test_sys_mem_reuse_false_turns_off_sharing_in_the_plan(tmp_path):
    config = tmp_path / "env.json"
    config.write_text('{"sys": {"mem_Reuse": false}}')
    ms.set_context(mode=ms.GRAPH_MODE, memory_optimize_level="O1")
    _, step = make_training()
    step(*batches(1)[0])
    shared = ms._jit.compile_report(step)[0]["planned_bytes"]
    ms.set_context(env_config_path=str(config))
    _, step = make_training()
    step(*batches(1)[0])
    unshared = ms._jit.compile_report(step)[0]
    assert unshared["planned_bytes"] > shared
    assert unshared["planned_bytes"] >= unshared["peak_live_bytes"]


# --- ms.jit -----------------------------------------------------------------------------------------
def test_jit_compiles_a_function_in_pynative_mode():
    calls = []

    @ms.jit
    def f(x, y):
        calls.append(1)  # runs at capture only
        return ms.ops.relu(x) + y

    x = ms.Tensor(np.array([-1.0, 2.0], np.float32))
    y = ms.Tensor(np.array([1.0, 1.0], np.float32))
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    assert f(x, y).asnumpy().tolist() == [1.0, 3.0]
    assert f(y, x).asnumpy().tolist() == [0.0, 3.0]
    assert len(calls) == 1 and compiles(f) == 1


def test_jit_as_a_decorator_with_arguments_and_on_a_cell_method():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 2)

        @ms.jit(mode="PSJit")
        def construct(self, x):
            return self.dense(x) * 2

    net = Net()
    x = ms.Tensor(np.ones((1, 3), np.float32))
    expected = (net.dense(x) * 2).asnumpy()
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    # The weight is rebound per call: replacing its data is seen by the compiled graph.
    net.dense.weight.set_data(ms.Tensor(np.zeros((2, 3), np.float32)))
    np.testing.assert_allclose(net(x).asnumpy(), (net.dense.bias.asnumpy() * 2)[None], rtol=1e-6)
    with pytest.raises(ValueError, match="'mode' must be 'PSJit' or 'PIJit'"):
        ms.jit(lambda v: v, mode="Fast")


def test_ms_function_is_the_deprecated_name_of_jit():
    with pytest.warns(FutureWarning, match="ms_function"):
        f = ms.ms_function(lambda v: v + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(ms.Tensor(np.array([1.0], np.float32))).asnumpy().tolist() == [2.0]


# --- graph-kernel fusion ---------------------------------------------------------------------------
def _gelu(x, g, b):
    y = x * g + b
    inner = (y + y * y * y * 0.044715) * 0.7978845608
    return 0.5 * y * (1.0 + ms.ops.tanh(inner))


def _gelu_inputs():
    rng = np.random.default_rng(2)
    return (ms.Tensor(rng.standard_normal(10000).astype(np.float32)), ms.Tensor(np.float32(1.5)),
            ms.Tensor(np.float32(0.1)))


@pytest.mark.parametrize("settings", [{"enable_graph_kernel": True}, {"graph_kernel_flags": "--opt_level=1"}])
def test_graph_kernel_fusion_fuses_elementwise_chains_with_the_same_results(settings):
    args = _gelu_inputs()
    plain = ms.jit(_gelu)
    expected = plain(*args).asnumpy()
    assert ms._jit.compile_report(plain)[0]["fused_chains"] == 0
    ms.set_context(**settings)
    fused = ms.jit(_gelu)
    np.testing.assert_allclose(fused(*args).asnumpy(), expected, rtol=1e-6, atol=1e-7)
    report = ms._jit.compile_report(fused)[0]
    assert report["fused_chains"] == 1  # the whole block: y feeds several steps inside the chain
    # Unfused: 11 ops, of which tanh runs in place right after its producer (Note [In-place tails]).
    plain_report = ms._jit.compile_report(plain)[0]
    assert report["final_ops"] == 1 and plain_report["final_ops"] == 10 and plain_report["in_place_tails"] == 1


def test_graph_kernel_flags_dump_as_text_writes_the_fusion_decisions(in_tmp):
    ms.set_context(graph_kernel_flags="--opt_level=2 --dump_as_text")
    ms.jit(_gelu)(*_gelu_inputs())
    dumps = list((in_tmp / "graph_kernel_dump").iterdir())
    assert len(dumps) == 1
    text = dumps[0].read_text()
    assert "fused 11 ops into" in text and "tanh" in text


def test_a_fused_chain_returns_every_value_used_outside_it():
    ms.set_context(enable_graph_kernel=True)

    @ms.jit
    def f(x):
        y = ms.ops.exp(x) * 2.0
        z = (y + 1.0) * y
        return y, z, y.sum()  # y is used outside the chain twice

    x = ms.Tensor(np.array([0.0, 1.0, 2.0], np.float32))
    y, z, s = f(x)
    ey = np.exp([0.0, 1.0, 2.0]).astype(np.float32) * 2
    np.testing.assert_allclose(y.asnumpy(), ey, rtol=1e-6)
    np.testing.assert_allclose(z.asnumpy(), (ey + 1) * ey, rtol=1e-6)
    np.testing.assert_allclose(float(s.asnumpy()), ey.sum(), rtol=1e-6)
    report = ms._jit.compile_report(f)[0]
    assert report["fused_chains"] == 1 and report["final_ops"] == 2  # the fused chain and the sum


def test_fusion_does_not_move_reads_past_an_in_place_write():
    w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    ms.set_context(enable_graph_kernel=True)

    @ms.jit
    def f(x):
        a = ms.ops.exp(w * 0.0) + x  # reads w before the update
        ms.ops.assign(w, x)
        return a * 2.0

    out = f(ms.Tensor(np.array([5.0, 5.0], np.float32)))
    assert out.asnumpy().tolist() == [12.0, 12.0]
    assert w.asnumpy().tolist() == [5.0, 5.0]


# --- inter_op_parallel_num -----------------------------------------------------------------------------
def test_inter_op_parallel_num_runs_independent_nodes_concurrently():
    ms.set_context(inter_op_parallel_num=2)
    rng = np.random.default_rng(4)
    a, b = (ms.Tensor(rng.standard_normal((256, 256)).astype(np.float32)) for _ in range(2))

    @ms.jit
    def branches(x, y):
        left, right = x, y
        for _ in range(6):  # two independent chains of matmuls
            left = ms.ops.matmul(left, x) * 0.05
            right = ms.ops.matmul(right, y) * 0.05
        return left + right

    expected = None
    for _ in range(5):
        out = branches(a, b).asnumpy()
        expected = out if expected is None else expected
        np.testing.assert_array_equal(out, expected)
    assert ms._jit.compile_report(branches)[0]["max_concurrent_kernels"] >= 2


@pytest.mark.parametrize("level", ["O0", "O1"])
def test_concurrent_training_steps_match_serial_ones(level):
    data = batches(3)
    finals = {}
    for inter_op in (0, 2):
        ms.set_context(mode=ms.GRAPH_MODE, inter_op_parallel_num=inter_op, memory_optimize_level=level)
        net, step = make_training()
        losses = [float(step(x, y).asnumpy()) for x, y in data]
        finals[inter_op] = (losses, [p.asnumpy() for p in net.trainable_params()])
    np.testing.assert_allclose(finals[2][0], finals[0][0], rtol=1e-5)
    for got, want in zip(finals[2][1], finals[0][1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_distributed_runs_write_their_ir_under_rank_dirs(tmp_path, python_subprocess):
    python_subprocess(f"""
        import numpy as np
        from msrt import nn
        ms.set_context(mode=ms.GRAPH_MODE, save_graphs=1, save_graphs_path={str(tmp_path / 'ir')!r})
        nn.ReLU()(ms.Tensor(np.ones(2, np.float32)))
    """, env={"RANK_ID": "3"})
    assert [p.name for p in (tmp_path / "ir").iterdir()] == ["rank_3"]
    assert len(list((tmp_path / "ir" / "rank_3").iterdir())) == 3


def test_elementwise_epilogues_run_inside_conv_and_dense_kernels(graph_mode, tmp_path):
    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = SmallNet()

        def construct(self, x):
            return ms.ops.sigmoid(self.body(x))

    net = Head()
    x = batches(1)[0][0]
    expected = net(x).asnumpy()
    ms.set_context(enable_graph_kernel=True, save_graphs=2, save_graphs_path=str(tmp_path))
    got = net(x).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    report = ms._jit.compile_report(net)[-1]
    assert report["fused_epilogues"] == 2  # relu into the conv, sigmoid into the dense
    order = open(next(f for f in report["files"] if "execution_order" in f)).read()
    assert "relu [" not in order and "sigmoid [" not in order


def test_epilogues_leave_values_the_backward_pass_needs(graph_mode):
    data = batches(2)
    results = {}
    for fuse in (False, True):
        ms.set_context(graph_kernel_flags="" if fuse else "--disable_pass=fuse_epilogues")
        net, step = make_training()
        results[fuse] = [float(step(x, y).asnumpy()) for x, y in data]
    np.testing.assert_allclose(results[True], results[False], rtol=1e-5)


# --- channels-last layouts (Note [Channels-last graphs]) ------------------------------------------
def test_convolution_graphs_keep_activations_channels_last(graph_mode, tmp_path):
    ms.set_context(save_graphs=2, save_graphs_path=str(tmp_path))
    net, step = make_training()
    step(*batches(1)[0])
    report = ms._jit.compile_report(step)[-1]
    # conv, relu, pool; the pool's and relu's gradients (relu_grad) and the filter's: six ops on NHWC.
    assert report["channels_last_ops"] == 6
    # One-channel x goes in by a reshape; the pooled result goes out to flatten and its gradient comes back.
    assert report["layout_conversions"] == 3
    backend = (tmp_path / next(n for n in _files(tmp_path) if "_backend_" in n)).read_text()
    assert "conv2d(%3, %2) {" in backend and "data_format: 'NHWC'} : Float32(4, 6, 6, 4)" in backend
    assert backend.count("transpose(") == 2 and "reshape(%0) {shape: [4, 8, 8, 1]}" in backend
    assert any("_channels_last_" in n for n in _files(tmp_path))  # the pass's own file at level 2


def test_float16_convolutions_computed_in_float32_still_go_channels_last(graph_mode):
    # float16 conv2d and its input gradient have no kernel of their own: they run through the float32 kernel
    # (enable_reduce_precision), which takes NHWC as well, so the layout pass converts them as in float32.
    from msrt import amp

    results = {}
    for dtype in (ms.float32, ms.float16):
        ms.set_seed(3)
        net, _ = make_training()
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        level = "O3" if dtype == ms.float16 else "O0"
        step = amp.build_train_network(net, opt, loss, level=level, loss_scale_manager=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the float32 detour's warning
            step(*batches(1)[0])
        results[dtype] = ms._jit.compile_report(step)[-1]
    # (float16 adds the input cast to the NHWC region)
    assert results[ms.float16]["channels_last_ops"] >= results[ms.float32]["channels_last_ops"] > 0


def test_disable_pass_keeps_a_graph_nchw_with_the_same_results(graph_mode):
    data = batches(3)
    results = {}
    for flags in ("", "--disable_pass=channels_last"):
        ms.set_context(graph_kernel_flags=flags)
        net, step = make_training()
        losses = [float(step(x, y).asnumpy()) for x, y in data]
        results[flags] = losses, net.conv.weight.asnumpy(), ms._jit.compile_report(step)[-1]
    (losses, weight, report), (plain_losses, plain_weight, plain_report) = results.values()
    assert report["channels_last_ops"] > 0 and plain_report["channels_last_ops"] == 0
    assert plain_report["layout_conversions"] == 0
    np.testing.assert_allclose(losses, plain_losses, rtol=1e-5)
    np.testing.assert_allclose(weight, plain_weight, rtol=1e-5, atol=1e-6)


def test_a_relu_runs_inside_the_conv3d_kernel(graph_mode):
    conv = nn.Conv3d(2, 4, 3, has_bias=False)
    x = ms.Tensor(np.random.default_rng(4).standard_normal((2, 2, 5, 4, 6)).astype(np.float32))

    @ms.jit
    def features(x):
        return ms.ops.relu(conv(x))

    expected = ms.ops.relu(conv(x)).asnumpy()
    ms.set_context(enable_graph_kernel=True)
    np.testing.assert_allclose(features(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert ms._jit.compile_report(features)[-1]["fused_epilogues"] == 1


def test_five_dimensional_convolutions_keep_their_layout(tmp_path):
    """The layout pass turns 4-D activations channels-last; a conv3d's 5-D ones (and the relu and pooling on
    them) keep NCDHW, also where a channels-last conv2d feeds them."""
    ms.set_context(save_graphs=2, save_graphs_path=str(tmp_path))
    conv2, conv3 = nn.Conv2d(3, 4, 3), nn.Conv3d(1, 2, 3, has_bias=True)
    x = ms.Tensor(np.random.default_rng(3).standard_normal((2, 3, 6, 5)).astype(np.float32))

    def body(x):
        y = ms.ops.relu(conv2(x))  # (2, 4, 6, 5)
        z = ms.ops.relu(conv3(ms.ops.expand_dims(y, 1)))  # (2, 2, 4, 6, 5)
        return y, ms.ops.max_pool3d(z, 2, 1)

    eager = [t.asnumpy() for t in body(x)]
    features = ms.jit(body)
    got = [t.asnumpy() for t in features(x)]
    report = ms._jit.compile_report(features)[0]
    assert report["channels_last_ops"] == 2  # conv2d and its relu
    for g, e in zip(got, eager):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    backend = (tmp_path / next(n for n in _files(tmp_path) if "_backend_" in n)).read_text()
    assert "data_format: 'NHWC'" in backend and "data_format: 'NCDHW'" in backend
    assert "Float32(2, 2, 4, 6, 5)" in backend


def test_returned_activations_come_back_nchw():
    conv = nn.Conv2d(3, 8, 3)
    x = ms.Tensor(np.random.default_rng(2).standard_normal((2, 3, 9, 7)).astype(np.float32))

    @ms.jit
    def features(x):
        y = ms.ops.relu(conv(x))
        return y, ms.ops.max_pool2d(y, 2)

    eager = [t.asnumpy() for t in (ms.ops.relu(conv(x)), ms.ops.max_pool2d(ms.ops.relu(conv(x)), 2))]
    got = [t.asnumpy() for t in features(x)]
    assert ms._jit.compile_report(features)[0]["channels_last_ops"] == 3
    for g, e in zip(got, eager):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


class _BasicBlock(nn.Cell):
    """A ResNet basic block that halves the resolution, with its 1x1 shortcut, then pooling and a classifier."""

    def __init__(self, cin=4, cout=8):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=2)
        self.norm1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3)
        self.norm2 = nn.BatchNorm2d(cout)
        self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride=2), nn.BatchNorm2d(cout)])
        self.relu = nn.ReLU()
        self.pool = nn.AvgPool2d(kernel_size=4)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(cout, 3)

    def construct(self, x):
        out = self.relu(self.norm1(self.conv1(x)))
        out = self.relu(self.norm2(self.conv2(out)) + self.down(x))
        return self.fc(self.flatten(self.pool(out)))


def _block_training(seed=5):
    ms.set_seed(seed)
    net = _BasicBlock()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.05, 0.9))
    step.set_train()  # BatchNorm normalizes with the batch's statistics
    return net, step


def _block_data(steps=2):
    rng = np.random.default_rng(6)
    return [(ms.Tensor(rng.standard_normal((4, 4, 8, 8)).astype(np.float32)),
             ms.Tensor(rng.integers(0, 3, 4).astype(np.int32))) for _ in range(steps)]


def test_a_resnet_block_runs_channels_last_without_transposes_inside(tmp_path):
    """BatchNorm, its gradient, the residual add and the ReLUs stay in the convolutions' layout: a training
    step converts only at the block's edges (x in, the pooled 1x1 result out and its gradient back), and its
    losses, weights and running statistics are PYNATIVE's."""
    data = _block_data()
    results = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode, save_graphs=2 if mode == ms.GRAPH_MODE else 0, save_graphs_path=str(tmp_path))
        net, step = _block_training()
        losses = [float(step(x, y).asnumpy()) for x, y in data]
        results[mode] = losses, {p.name: p.asnumpy() for p in net.get_parameters()}
    ms.set_context(save_graphs=0)
    report = ms._jit.compile_report(step)[-1]
    assert report["layout_conversions"] == 3
    backend = (tmp_path / next(n for n in _files(tmp_path) if "_backend_" in n)).read_text()
    assert backend.count("transpose(") == 1  # x, 4 channels, to NHWC; the 1x1 values are reshaped
    norms = [line for line in backend.splitlines() if "= batch_norm" in line]
    assert len(norms) == 6 and all("data_format: 'NHWC'" in line for line in norms)  # 3 forward, 3 backward
    (losses, params), (graph_losses, graph_params) = results.values()
    np.testing.assert_allclose(graph_losses, losses, rtol=1e-5)
    assert set(graph_params) == set(params) and "norm2.moving_variance" in params
    for name, value in params.items():
        np.testing.assert_allclose(graph_params[name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def test_a_resnet_block_in_inference_converts_only_its_input_and_output(graph_mode):
    ms.set_seed(7)
    net = _BasicBlock()
    net.set_train(False)
    x = _block_data(1)[0][0]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = net(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    report = ms._jit.compile_report(net)[-1]
    assert report["layout_conversions"] == 2 and report["channels_last_ops"] == 10
