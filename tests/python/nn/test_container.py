"""SequentialCell, CellList and CellDict: MindSpore's list and dict semantics
(append, insert, extend, indexing, slicing, del, len, iteration) and the
parameter names they give their cells."""
from collections import OrderedDict

import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn


def names(cell):
    return [p.name for p in cell.get_parameters()]


def test_sequential_append_insert_extend_rename_parameters():
    seq = nn.SequentialCell(nn.Dense(2, 3), nn.ReLU())
    seq.append(nn.Dense(3, 4))
    assert len(seq) == 3 and names(seq) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    seq.insert(1, nn.Dense(3, 3))
    assert [type(c).__name__ for c in seq] == ["Dense", "Dense", "ReLU", "Dense"]
    assert names(seq) == ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]
    seq.insert(-1, nn.Tanh())
    assert [type(c).__name__ for c in seq] == ["Dense", "Dense", "ReLU", "Tanh", "Dense"]
    assert names(seq)[-2:] == ["4.weight", "4.bias"]
    seq.extend([nn.Sigmoid(), nn.Dense(4, 1)])
    assert len(seq) == 7 and names(seq)[-2:] == ["6.weight", "6.bias"]
    out = seq(Tensor(np.ones((5, 2), np.float32)))
    assert out.shape == (5, 1)


def test_sequential_indexing_slicing_del_and_iteration():
    cells = [nn.Dense(2, 2), nn.ReLU(), nn.Dense(2, 2), nn.Tanh()]
    seq = nn.SequentialCell(cells)
    assert seq[0] is cells[0] and seq[-1] is cells[3]
    head = seq[1:3]
    assert isinstance(head, nn.SequentialCell) and list(head) == cells[1:3]
    del seq[1]
    assert list(seq) == [cells[0], cells[2], cells[3]]
    del seq[-2:]
    assert list(seq) == [cells[0]] and bool(seq)
    seq[0] = cells[3]
    assert seq[0] is cells[3]
    with pytest.raises(IndexError, match="index"):
        seq[5]
    with pytest.raises(TypeError, match="index"):
        seq["0"]
    with pytest.raises(TypeError, match="Cell"):
        seq.append(3)
    with pytest.raises(IndexError):
        seq.insert(9, nn.ReLU())


def test_sequential_from_ordered_dict_insert_keeps_names():
    seq = nn.SequentialCell(OrderedDict([("fc", nn.Dense(2, 2)), ("act", nn.ReLU())]))
    seq.insert(1, nn.Dense(2, 2))
    assert list(seq.name_cells()) == ["fc", "1", "act"]
    assert names(seq) == ["fc.weight", "fc.bias", "1.weight", "1.bias"]


def test_sequential_in_graph_mode_matches_pynative():
    ms.set_seed(1)
    seq = nn.SequentialCell(nn.Dense(3, 4), nn.GELU(), nn.LayerNorm((4,)), nn.Dense(4, 2))
    x = Tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    eager = seq(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(seq(x).asnumpy(), eager, rtol=1e-6, atol=1e-6)


def test_cell_list_semantics():
    cells = nn.CellList([nn.Dense(2, 2), nn.ReLU()])
    cells.append(nn.Dense(2, 3))
    cells.insert(0, nn.Tanh())
    assert [type(c).__name__ for c in cells] == ["Tanh", "Dense", "ReLU", "Dense"]
    assert names(cells) == ["1.weight", "1.bias", "3.weight", "3.bias"]
    cells.extend([nn.Sigmoid()])
    cells += [nn.ReLU()]
    assert len(cells) == 6
    del cells[0]
    assert names(cells) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert isinstance(cells[1:3], nn.CellList) and len(cells[1:3]) == 2
    with pytest.raises(TypeError):
        cells.extend(nn.ReLU())
    with pytest.raises(NotImplementedError):
        cells(Tensor(np.ones(2, np.float32)))


def test_cell_dict_semantics():
    d = nn.CellDict({"fc": nn.Dense(2, 3), "act": nn.ReLU()})
    assert list(d) == ["fc", "act"] and len(d) == 2 and "fc" in d
    assert names(d) == ["fc.weight", "fc.bias"]
    d["out"] = nn.Dense(3, 1)
    assert list(d.keys()) == ["fc", "act", "out"]
    assert names(d) == ["fc.weight", "fc.bias", "out.weight", "out.bias"]
    act = d.pop("act")
    assert isinstance(act, nn.ReLU) and "act" not in d
    d.update([("tanh", nn.Tanh())])
    assert [k for k, _ in d.items()] == ["fc", "out", "tanh"]
    assert all(isinstance(v, nn.Cell) for v in d.values())
    del d["tanh"]
    assert len(d) == 2
    d.clear()
    assert len(d) == 0 and names(d) == []


def test_cell_dict_in_a_network_and_errors():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellDict(OrderedDict([("a", nn.Dense(2, 2)), ("b", nn.Dense(2, 1))]))

        def construct(self, x):
            return self.layers["b"](self.layers["a"](x))

    net = Net()
    assert names(net) == ["layers.a.weight", "layers.a.bias", "layers.b.weight", "layers.b.bias"]
    assert net(Tensor(np.ones((3, 2), np.float32))).shape == (3, 1)
    d = nn.CellDict()
    with pytest.raises(TypeError, match="key must be str"):
        d[1] = nn.ReLU()
    with pytest.raises(TypeError, match="Cell"):
        d["x"] = 3
    with pytest.raises(KeyError):
        d["missing"]
    with pytest.raises(TypeError, match=r"\(name, cell\)"):
        d.update([nn.ReLU()])
    with pytest.raises(TypeError):
        nn.CellDict(nn.ReLU())
    with pytest.raises(TypeError, match="Cell"):
        d.update({"ok": nn.ReLU(), "bad": 1})
    assert len(d) == 0  # nothing half-applied
    with pytest.raises(NotImplementedError):
        d(Tensor(np.ones(2, np.float32)))
