"""One rank of the collective-op tests (test_comm.py starts `size` of them).

    comm_worker.py HOST PORT RANK SIZE IR_DIR

Every rank runs the same checks in the same order (collectives must), each
against NumPy on the inputs of all ranks, which every rank can make: rank r's
input of a check is drawn from a generator seeded with (check, r). Exits 0
after printing "OK"; an assertion error exits non-zero with its traceback.
"""
import os
import sys

import numpy as np

import msrt as ms
from msrt import nn, ops
from msrt._tensor import _op
from msrt.communication import comm_func
from msrt.ops import ReduceOp

HOST, PORT, RANK, SIZE, IR_DIR = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
DTYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.int8, np.uint8]
NP_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}
_counter = [0]


def inputs(shape, dtype, low=-4, high=5):
    """Every rank's input of the next check (the same on every rank)."""
    _counter[0] += 1
    out = []
    for r in range(SIZE):
        rng = np.random.default_rng([_counter[0], r])
        if dtype == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else low
            out.append(rng.integers(lo, high, shape).astype(dtype))
    return out


def close(got, want, what):
    got = got.asnumpy() if isinstance(got, ms.Tensor) else got
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=1e-3, err_msg=what)


def all_to_all_reference(xs, split_dim, concat_dim, members):
    """What rank members[k] receives from AlltoAll over `members` (xs: every world rank's input)."""
    n = len(members)
    k = members.index(RANK)
    return np.concatenate([np.split(xs[m], n, axis=split_dim)[k] for m in members], axis=concat_dim)


def check_forward(tag, members, group):
    """Each collective of `group` (world ranks `members`, group rank order) against NumPy."""
    n = len(members)
    k = members.index(RANK)
    for dtype in DTYPES:
        for op in ("sum", "max", "min", "prod"):
            low, high = (1, 3) if op == "prod" else (-4, 5)
            xs = inputs((3, 2), dtype, low, high)
            want = NP_REDUCE[op](np.stack([xs[m] for m in members]), axis=0).astype(dtype)
            close(ops.AllReduce(op, group)(ms.Tensor(xs[RANK])), want, f"{tag} AllReduce {op} {dtype}")
        xs = inputs((2, 3), dtype)
        close(ops.AllGather(group)(ms.Tensor(xs[RANK])), np.concatenate([xs[m] for m in members]),
              f"{tag} AllGather {dtype}")
        for op in ("sum", "max"):
            xs = inputs((2 * n, 3), dtype)
            total = NP_REDUCE[op](np.stack([xs[m] for m in members]), axis=0).astype(dtype)
            close(ops.ReduceScatter(op, group)(ms.Tensor(xs[RANK])), np.split(total, n)[k],
                  f"{tag} ReduceScatter {op} {dtype}")
        xs, ys = inputs((2, 3), dtype), inputs((4,), dtype)
        root = n - 1
        out = ops.Broadcast(root, group)((ms.Tensor(xs[RANK]), ms.Tensor(ys[RANK])))
        assert isinstance(out, tuple) and len(out) == 2
        close(out[0], xs[members[root]], f"{tag} Broadcast {dtype}")
        close(out[1], ys[members[root]], f"{tag} Broadcast {dtype}")
        for split_dim, concat_dim in ((0, 0), (1, 0), (0, 2), (2, 1)):
            xs = inputs((2 * n, 3 * n, n), dtype)
            got = ops.AlltoAll(n, split_dim, concat_dim, group)(ms.Tensor(xs[RANK]))
            close(got, all_to_all_reference(xs, split_dim, concat_dim, members),
                  f"{tag} AlltoAll {split_dim} {concat_dim} {dtype}")
    xs = inputs((5,), np.bool_)
    close(ops.AllReduce(ReduceOp.SUM, group)(ms.Tensor(xs[RANK])), np.any([xs[m] for m in members], axis=0),
          f"{tag} AllReduce bool")
    # comm_func: src and dst are global ranks.
    xs = inputs((3,), np.float32)
    close(comm_func.all_reduce(ms.Tensor(xs[RANK]), group=group), np.sum([xs[m] for m in members], axis=0),
          f"{tag} all_reduce")
    close(comm_func.all_gather_into_tensor(ms.Tensor(xs[RANK]), group=group),
          np.concatenate([xs[m] for m in members]), f"{tag} all_gather_into_tensor")
    xs = inputs((2 * n,), np.int32)
    close(comm_func.reduce_scatter_tensor(ms.Tensor(xs[RANK]), ReduceOp.MIN, group=group),
          np.split(np.min([xs[m] for m in members], axis=0), n)[k], f"{tag} reduce_scatter_tensor")
    close(comm_func.broadcast(ms.Tensor(xs[RANK]), src=members[-1], group=group), xs[members[-1]],
          f"{tag} broadcast")
    comm_func.barrier(group)
    assert ops.Barrier(group)().asnumpy() == 0
    # A ring of sends: each rank sends to the next member and receives from the previous one.
    xs = inputs((2, 2), np.float32)
    nxt, prev = members[(k + 1) % n], members[(k - 1) % n]
    if k % 2 == 0:
        comm_func.send(ms.Tensor(xs[RANK]), dst=nxt, group=group, tag=7)
        got = comm_func.recv(ms.Tensor(np.zeros((2, 2), np.float32)), src=prev, group=group, tag=7)
    else:
        got = comm_func.recv(ms.Tensor(np.zeros((2, 2), np.float32)), src=prev, group=group, tag=7)
        comm_func.send(ms.Tensor(xs[RANK]), dst=nxt, group=group, tag=7)
    close(got, xs[prev], f"{tag} send/recv")


def raises(kind, text, fn):
    try:
        fn()
    except kind as e:
        assert text in str(e), (text, str(e))
        return
    raise AssertionError(f"expected {kind.__name__} with {text!r}")


def check_errors(group):
    """Bad calls raise before anything is sent (every rank makes them, and the world still works after)."""
    n = ms._C.parallel.group_size(group)
    x = ms.Tensor(np.ones((3, 2), np.float32))
    raises(ValueError, "divisible by the group size", lambda: ops.ReduceScatter(ReduceOp.SUM, group)(
        ms.Tensor(np.ones((2 * n + 1, 2), np.float32))))
    raises(ValueError, "at least 1 dimension", lambda: ops.AllGather(group)(ms.Tensor(np.float32(1))))
    raises(ValueError, "'root_rank' must be a rank of group", lambda: ops.Broadcast(n, group)((x,)))
    raises(ValueError, "'split_count' must equal the size", lambda: ops.AlltoAll(n + 1, 0, 0, group)(x))
    raises(ValueError, "divisible by split_count", lambda: ops.AlltoAll(n, 0, 0, group)(
        ms.Tensor(np.ones((n + 1, 2), np.float32))))
    raises(ValueError, "'dest_rank' must be a rank of group", lambda: ops.Send(0, -1, group)(x))
    raises(ValueError, "not a member of group", lambda: comm_func.broadcast(x, src=SIZE, group=group))
    raises(TypeError, "must be a Tensor", lambda: comm_func.all_reduce(np.ones(3), group=group))
    close(comm_func.all_reduce(x, group=group), np.full((3, 2), n, np.float32), "all_reduce after errors")


def check_gradients(tag, members, group):
    """grad of sum(collective(x) * w) against the definition, w differing per rank."""
    n = len(members)
    k = members.index(RANK)

    def grad_of(collective, x, w):
        return ms.grad(lambda t: (collective(t) * ms.Tensor(w)).sum())(ms.Tensor(x))

    xs, ws = inputs((3, 2), np.float32), inputs((3, 2), np.float32)
    wsum = np.sum([ws[m] for m in members], axis=0)
    close(grad_of(ops.AllReduce(ReduceOp.SUM, group), xs[RANK], ws[RANK]), wsum, f"{tag} grad AllReduce sum")
    for op in (ReduceOp.MAX, ReduceOp.MIN):
        reduced = NP_REDUCE[op](np.stack([xs[m] for m in members]), axis=0)
        close(grad_of(ops.AllReduce(op, group), xs[RANK], ws[RANK]),
              (wsum * (xs[RANK] == reduced)).astype(np.float32), f"{tag} grad AllReduce {op}")
    try:
        grad_of(ops.AllReduce(ReduceOp.PROD, group), xs[RANK], ws[RANK])
        raise AssertionError("the gradient of AllReduce(prod) should raise")
    except RuntimeError as e:
        assert "PROD" in str(e), e
    ws = inputs((2 * n, 2), np.float32)
    close(grad_of(ops.AllGather(group), xs[RANK][:2], ws[RANK]),
          np.split(np.sum([ws[m] for m in members], axis=0), n)[k], f"{tag} grad AllGather")
    xs, ws = inputs((2 * n, 2), np.float32), inputs((2, 2), np.float32)
    close(grad_of(ops.ReduceScatter(ReduceOp.SUM, group), xs[RANK], ws[RANK]),
          np.concatenate([ws[m] for m in members]), f"{tag} grad ReduceScatter")
    xs, ws = inputs((2, 3), np.float32), inputs((2, 3), np.float32)
    close(grad_of(lambda t: ops.Broadcast(0, group)((t,))[0], xs[RANK], ws[RANK]), ws[RANK],
          f"{tag} grad Broadcast")
    # Send's gradient is refused; in PYNATIVE_MODE after the send itself, which the peer receives (a
    # compiled gradient refuses before running anything).
    xs = inputs((2, 2), np.float32)
    if ms.get_context("mode") == ms.GRAPH_MODE:
        pass
    elif k % 2 == 0:
        try:
            grad_of(ops.Send(9, (k + 1) % n, group), xs[RANK], xs[RANK])
            raise AssertionError("the gradient of Send should raise")
        except RuntimeError as e:
            assert "gradient of Send" in str(e), e
    else:
        close(comm_func.recv(ms.Tensor(xs[RANK]), src=members[k - 1], group=group, tag=9), xs[members[k - 1]],
              f"{tag} Send under grad")
    xs = inputs((2 * n, 3 * n), np.float32)
    ws = inputs(all_to_all_reference(xs, 1, 0, members).shape, np.float32)
    close(grad_of(ops.AlltoAll(n, 1, 0, group), xs[RANK], ws[RANK]), all_to_all_reference(ws, 0, 1, members),
          f"{tag} grad AlltoAll")


def fused(xs, op, group, scale=1.0):
    out = _op("all_reduce_fused", *xs, op=op, group=group, scale=scale)
    return out if isinstance(out, tuple) else (out,)


def check_fused(tag, members, group, compiled=False):
    """all_reduce_fused (the gradient reducer's op) against NumPy: each input times `scale`, reduced;
    `compiled`: also in an ms.jit function with its gradient."""
    for dtype in (np.float32, np.float16, np.float64, np.int32, np.uint8):
        floating = np.issubdtype(dtype, np.floating)
        for op in ("sum", "max", "min", "prod"):
            low, high = (1, 3) if op == "prod" else (-4, 5)
            scale = 0.5 if floating else 1.0
            xss = [inputs(shape, dtype, low, high) for shape in ((3, 2), (5,), (2, 1, 3))]
            got = fused([ms.Tensor(xs[RANK]) for xs in xss], op, group, scale)
            assert len(got) == 3
            for i, xs in enumerate(xss):
                scaled = [(xs[m] * dtype(scale)).astype(dtype) for m in members]
                close(got[i], NP_REDUCE[op](np.stack(scaled), axis=0).astype(dtype), f"{tag} fused {op} {dtype} {i}")
    # Past 256 KB the ring: odd lengths, several 1 MB segments per rank's chunk.
    for op, dtype in (("sum", np.float32), ("max", np.float64), ("min", np.int32)):
        xss = [inputs((1_100_003,), dtype), inputs((7,), dtype)]
        scale = 0.25 if op == "sum" else 1.0
        got = fused([ms.Tensor(xs[RANK]) for xs in xss], op, group, scale)
        for i, xs in enumerate(xss):
            want = NP_REDUCE[op](np.stack([(xs[m] * dtype(scale)).astype(dtype) for m in members]), axis=0)
            close(got[i], want.astype(dtype), f"{tag} fused ring {op} {dtype} {i}")
    x, i = ms.Tensor(np.ones(3, np.float32)), ms.Tensor(np.ones(3, np.int32))
    raises(TypeError, "every input must have the dtype of input 0", lambda: fused([x, i], "sum", group))
    raises(TypeError, "needs a floating dtype", lambda: fused([i], "sum", group, 0.5))

    # Gradients: d/dx_i of sum_j(y_j * w_j) is scale * sum over ranks of w_i (sum), masked where
    # x_i * scale is the result (max, min); an output nothing uses contributes zeros.
    def grad_of(op, xs, ws, scale):
        def loss(a, b, c):
            y = fused([a, b, c], op, group, scale)
            return (y[0] * ms.Tensor(ws[0])).sum() + (y[2] * ms.Tensor(ws[2])).sum()
        return ms.grad(loss, grad_position=(0, 1, 2))(*[ms.Tensor(x) for x in xs])

    for op in ("sum", "max", "min"):
        xss = [inputs(shape, np.float32) for shape in ((3, 2), (4,), (2, 2))]
        wss = [inputs(shape, np.float32) for shape in ((3, 2), (4,), (2, 2))]
        grads = grad_of(op, [xs[RANK] for xs in xss], [ws[RANK] for ws in wss], 0.5)
        for i in (0, 1, 2):
            wsum = 0.5 * np.sum([wss[i][m] for m in members], axis=0) if i != 1 else np.zeros_like(xss[i][RANK])
            if op != "sum":
                reduced = NP_REDUCE[op](np.stack([0.5 * xss[i][m] for m in members]), axis=0)
                wsum = wsum * (0.5 * xss[i][RANK] == reduced)
            close(grads[i], wsum.astype(np.float32), f"{tag} grad fused {op} {i}")
    raises(RuntimeError, "PROD", lambda: grad_of("prod", [np.ones(s, np.float32) for s in ((3, 2), (4,), (2, 2))],
                                                 [np.ones(s, np.float32) for s in ((3, 2), (4,), (2, 2))], 1.0))
    if not compiled:
        return
    # Compiled, with its gradient.
    xss = [inputs((4, 2), np.float32), inputs((3,), np.float32)]
    w = inputs((4, 2), np.float32)

    @ms.jit
    def g(a, b):
        y = fused([a, b], "sum", group, 1.0 / len(members))
        return (y[0] * ms.Tensor(w[RANK])).sum() + y[1].sum()

    got = ms.jit(ms.grad(g, grad_position=(0, 1)))(*[ms.Tensor(xs[RANK]) for xs in xss])
    close(got[0], np.mean([w[m] for m in members], axis=0), f"{tag} graph grad fused 0")
    close(got[1], np.ones(3, np.float32), f"{tag} graph grad fused 1")


def check_graph(tag, members, group):
    """The collectives in a compiled graph: each call runs (none merged or dropped), in program order."""
    xs = inputs((4, 2), np.float32)
    total = np.sum([xs[m] for m in members], axis=0)

    @ms.jit
    def f(x):
        a = ops.AllReduce(ReduceOp.SUM, group)(x)
        b = ops.AllReduce(ReduceOp.SUM, group)(x)  # the same call again: both run
        ops.AllGather(group)(x)                    # unused: still runs
        return a + b

    close(f(ms.Tensor(xs[RANK])), 2 * total, f"{tag} graph AllReduce twice")

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.all_reduce = ops.AllReduce(ReduceOp.MAX, group)
            self.all_gather = ops.AllGather(group)

        def construct(self, x):
            return self.all_gather(self.all_reduce(x) * 2) + comm_func.broadcast(x, src=members[-1], group=group)[0]

    got = Net()(ms.Tensor(xs[RANK]))  # GRAPH_MODE: the Cell compiles
    want = np.concatenate([2 * np.max([xs[m] for m in members], axis=0)] * len(members)) + xs[members[-1]][0]
    close(got, want, f"{tag} graph Cell")
    w = inputs((4, 2), np.float32)

    @ms.jit
    def g(x):
        return (ops.AllReduce(ReduceOp.SUM, group)(x) * ms.Tensor(w[RANK])).sum()

    close(ms.jit(ms.grad(g))(ms.Tensor(xs[RANK])), np.sum([w[m] for m in members], axis=0), f"{tag} graph grad")


def main():
    ms._C.parallel.init_from_store(HOST, PORT, RANK, SIZE, 20.0)
    world = list(range(SIZE))
    check_forward("world", world, "nccl_world_group")
    check_errors("nccl_world_group")
    check_forward("hccl alias", world, "hccl_world_group")
    # Sub-groups: ranks in reversed order, and (4 ranks) the even and the odd ranks.
    ms._C.parallel.create_group("reversed", world[::-1])
    check_forward("reversed", world[::-1], "reversed")
    if SIZE == 4:
        pair = [RANK % 2, RANK % 2 + 2]
        ms._C.parallel.create_group("pair", pair)
        check_forward("pair", pair, "pair")
        check_gradients("pair", pair, "pair")
        check_fused("pair", pair, "pair")
    check_gradients("world", world, "nccl_world_group")
    check_fused("world", world, "nccl_world_group")
    ms.set_context(mode=ms.GRAPH_MODE, save_graphs=2, save_graphs_path=os.path.join(IR_DIR, f"rank{RANK}"))
    check_graph("graph", world, "nccl_world_group")
    check_forward("graph-mode calls", world[::-1], "reversed")
    check_gradients("graph-mode calls", world, "nccl_world_group")
    check_fused("graph-mode calls", world[::-1], "reversed", compiled=True)
    print("OK", flush=True)


if __name__ == "__main__":
    main()
