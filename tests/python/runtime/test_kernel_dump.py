"""enable_dump / save_dump_path: every kernel's inputs and outputs as .npy."""
import os

import numpy as np
import pytest

import msrt as ms

from .obsutil import read_index, train_steps


def test_eager_kernels_are_dumped_with_an_index(in_tmp):
    ms.set_context(enable_dump=True, save_dump_path="dump")
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = (x + x) * x
    y.asnumpy()
    ms.set_context(enable_dump=False)
    (y + 1).asnumpy()  # not dumped

    root = in_tmp / "dump" / "rank_0"
    step = ms._C.current_step()
    lines = read_index(root / "index.jsonl")
    assert [(rec["op"], rec["name"], rec["graph"], rec["iteration"]) for rec in lines] == [
        ("add", "add_0", "pynative", step), ("mul", "mul_1", "pynative", step)]
    folder = root / "pynative" / str(step)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.load(folder / "add_0.input.0.npy"), a)
    np.testing.assert_array_equal(np.load(folder / "add_0.output.0.npy"), a + a)
    np.testing.assert_array_equal(np.load(folder / "mul_1.output.0.npy"), (a + a) * a)
    assert lines[1]["inputs"][0] == {"file": f"pynative/{step}/mul_1.input.0.npy", "dtype": "float32", "shape": [2, 3]}
    assert lines[1]["kernel"].startswith("CPU:")
    assert sorted(os.listdir(folder)) == sorted(
        ["add_0.input.0.npy", "add_0.input.1.npy", "add_0.output.0.npy",
         "mul_1.input.0.npy", "mul_1.input.1.npy", "mul_1.output.0.npy"])


def test_in_place_ops_dump_their_inputs_before_the_write(in_tmp):
    p = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="p")
    ms.set_context(enable_dump=True, save_dump_path=str(in_tmp))
    ms.ops.assign_add(p, ms.Tensor(np.full(3, 2.0, np.float32)))
    p.asnumpy()
    ms.set_context(enable_dump=False)
    line = read_index(in_tmp / "rank_0" / "index.jsonl")[-1]
    root = in_tmp / "rank_0"
    assert np.load(root / line["inputs"][0]["file"]).tolist() == [1.0, 1.0, 1.0]
    assert np.load(root / line["outputs"][0]["file"]).tolist() == [3.0, 3.0, 3.0]


def test_training_steps_are_pynative_iterations(in_tmp):
    first = ms._C.current_step()
    ms.set_context(enable_dump=True, save_dump_path="dump")
    train_steps(3)
    ms.set_context(enable_dump=False)
    root = in_tmp / "dump" / "rank_0"
    lines = read_index(root / "index.jsonl")
    iterations = sorted({rec["iteration"] for rec in lines})
    assert iterations[-3:] == [first, first + 1, first + 2]
    assert ms._C.current_step() == first + 3
    for it in (first, first + 1, first + 2):
        ops = [rec["op"] for rec in lines if rec["iteration"] == it]
        assert "dense" in ops and "apply_momentum" in ops
        names = [rec["name"] for rec in lines if rec["iteration"] == it]
        assert [int(n.rsplit("_", 1)[1]) for n in names] == list(range(len(names)))  # per-step launch order
    # The weights' update of step 1 reads what step 0 wrote.
    upd = [rec for rec in lines if rec["op"] == "apply_momentum"]
    w0_after = np.load(root / upd[0]["outputs"][0]["file"])
    w1_before = np.load(root / upd[2]["inputs"][0]["file"])
    np.testing.assert_array_equal(w0_after, w1_before)


def test_the_rank_comes_from_the_parallel_context(in_tmp):
    ms.set_auto_parallel_context(global_rank=3)
    ms.set_context(enable_dump=True, save_dump_path="dump")
    (ms.Tensor(np.ones(2, np.float32)) + 1).asnumpy()
    ms.set_context(enable_dump=False)
    ms.reset_auto_parallel_context()
    assert (in_tmp / "dump" / "rank_3" / "index.jsonl").exists()


def test_the_rank_comes_from_rank_id_otherwise(python_subprocess, tmp_path):
    python_subprocess("""
        import numpy as np
        ms.set_context(enable_dump=True, save_dump_path="dump")
        (ms.Tensor(np.ones(2, np.float32)) + 1).asnumpy()
    """, env={"RANK_ID": "5"})
    assert (tmp_path / "dump" / "rank_5" / "index.jsonl").exists()


def test_an_unwritable_dump_path_fails_the_set_context_call(in_tmp):
    (in_tmp / "file").write_text("x")
    with pytest.raises(OSError, match=r"enable_dump can not write under save_dump_path '.*file'"):
        ms.set_context(enable_dump=True, save_dump_path=str(in_tmp / "file"), pynative_synchronize=True)
    assert ms.get_context("enable_dump") is False and ms.get_context("pynative_synchronize") is False


def test_a_dump_path_that_becomes_unwritable_fails_the_op_with_os_error(in_tmp):
    ms.set_context(enable_dump=True, save_dump_path=str(in_tmp / "later"), pynative_synchronize=True)
    (in_tmp / "later").write_text("x")  # the folder's place is taken after set_context checked it
    with pytest.raises(OSError, match=r"enable_dump: Can not create the folder '.*later/rank_0/pynative/\d+'"):
        ms.Tensor(np.ones(2, np.float32)) + 1


def test_graph_mode_dumps_every_node_per_run(in_tmp):
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(ms.nn.Cell):
        def construct(self, x):
            return ms.ops.exp(x) * 2.0

    net = Net()
    x = ms.Tensor(np.array([0.0, 1.0], np.float32))
    net(x)  # compiled and run once before dumping
    ms.set_context(enable_dump=True, save_dump_path="dump")
    net(x).asnumpy()
    net(x).asnumpy()
    ms.set_context(enable_dump=False)
    lines = read_index(in_tmp / "dump" / "rank_0" / "index.jsonl")
    assert {rec["graph"] for rec in lines} == {"Net"}
    assert sorted({rec["iteration"] for rec in lines}) == [1, 2]  # the graph's runs
    assert [rec["op"] for rec in lines if rec["iteration"] == 1] == ["exp", "mul"]
    mul = next(rec for rec in lines if rec["op"] == "mul" and rec["iteration"] == 2)
    assert "Default/mul-op" in mul["name"] or "Default_mul-op" in mul["name"]
    out = np.load(in_tmp / "dump" / "rank_0" / mul["outputs"][0]["file"])
    np.testing.assert_allclose(out, np.exp([0.0, 1.0]) * 2, rtol=1e-6)


def test_an_in_place_tail_dumps_apart_from_its_producer(in_tmp):
    # floor has no oneDNN post-op: it runs in place right after the product (Note [In-place tails]). Its launch
    # has a node name of its own, so the product's dumped inputs are the product's.
    ms.set_context(mode=ms.GRAPH_MODE)
    w = ms.Tensor(np.array([[1.5, -2.0], [0.5, 1.0]], np.float32))

    @ms.jit
    def f(x):
        return ms.ops.floor(ms.ops.matmul(x, w))

    x = ms.Tensor(np.array([[1.0, 2.0], [-1.0, 0.25]], np.float32))
    f(x)
    assert ms._jit.compile_report(f)[-1]["in_place_tails"] == 1
    ms.set_context(enable_dump=True, save_dump_path="dump")
    f(x).asnumpy()
    ms.set_context(enable_dump=False)
    root = in_tmp / "dump" / "rank_0"
    lines = read_index(root / "index.jsonl")
    assert [rec["op"] for rec in lines] == ["matmul", "floor"]
    product, tail = lines
    assert product["name"] != tail["name"] and tail["name"].startswith(product["name"])
    np.testing.assert_array_equal(np.load(root / product["inputs"][0]["file"]), x.asnumpy())
    np.testing.assert_allclose(np.load(root / tail["inputs"][0]["file"]), x.asnumpy() @ w.asnumpy(), rtol=1e-6)
    np.testing.assert_array_equal(np.load(root / tail["outputs"][0]["file"]), np.floor(x.asnumpy() @ w.asnumpy()))
