"""Recurrent layers: RNN, GRU and LSTM (multi-layer, bidirectional, batch_first), as MindSpore 2.3 has
them. Each layer and direction is one rnn_layer op (Note [rnn_layer] in src/ops/nn_layers.cc)."""
import math

from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...common.parameter import Parameter, ParameterTuple
from ...ops import _op
from ...ops import functional as F
from ..cell import Cell

__all__ = ["RNN", "GRU", "LSTM"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _split(t, count):
    parts = _op("split", t, axis=0, output_num=count)
    return parts if isinstance(parts, tuple) else (parts,)


class _RNNBase(Cell):
    """Parameters as MindSpore names them: weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
    (with a '_reverse' suffix for the backward direction), also held in the tuples w_ih_list, w_hh_list,
    b_ih_list and b_hh_list, all Uniform(1/sqrt(hidden_size)).

    construct(x, hx=None, seq_length=None): with seq_length (N,), each sequence's steps at or past its
    length output zeros and leave its state as it was, so h_n (and c_n) hold the state at its last step."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        for arg, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
            if value < 1:
                raise ValueError(f"For '{name}', the argument '{arg}' must be positive, but got {value}.")
        for arg, value in (("has_bias", has_bias), ("batch_first", batch_first), ("bidirectional", bidirectional)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be bool, but got {type(value).__name__}.")
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool):
            raise TypeError(f"For '{name}', the argument 'dropout' must be float, but got {type(dropout).__name__}.")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"For '{name}', the 'dropout' must be a number in range [0, 1), but got {dropout}.")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = has_bias, batch_first, bidirectional
        self.dropout = float(dropout)
        self.num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        w_ih, w_hh, b_ih, b_hh = [], [], [], []

        def param(shape, pname):
            return Parameter(initializer(Uniform(bound), shape, dtype), name=pname)

        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * self.num_directions
            for direction in range(self.num_directions):
                suffix = "_reverse" if direction == 1 else ""
                w_ih.append(param([gate_size, layer_input], f"weight_ih_l{layer}{suffix}"))
                w_hh.append(param([gate_size, hidden_size], f"weight_hh_l{layer}{suffix}"))
                if has_bias:
                    b_ih.append(param([gate_size], f"bias_ih_l{layer}{suffix}"))
                    b_hh.append(param([gate_size], f"bias_hh_l{layer}{suffix}"))
        # As MindSpore sets a ParameterTuple, each parameter is also the cell's own, under its name
        # (so a parent names it "lstm.weight_ih_l0").
        for p in w_ih + w_hh + b_ih + b_hh:
            self.insert_param_to_cell(p.name, p)
        self.w_ih_list = ParameterTuple(w_ih)
        self.w_hh_list = ParameterTuple(w_hh)
        if has_bias:
            self.b_ih_list = ParameterTuple(b_ih)
            self.b_hh_list = ParameterTuple(b_hh)

    def _initial(self, x, hx, count, batch):
        shape = (count, batch, self.hidden_size)
        is_lstm = self.mode == "LSTM"
        if hx is None:
            zeros = F.zeros(shape, x.dtype)
            return (zeros, zeros) if is_lstm else (zeros, None)
        if is_lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"For '{self.cls_name}', 'hx' must be a tuple (h_0, c_0), "
                                f"but got {type(hx).__name__}.")
            states = tuple(hx)
        else:
            states = (hx, None)
        for state_name, state in zip(("h_0", "c_0"), states):
            if state is not None and tuple(state.shape) != shape:
                raise ValueError(f"For '{self.cls_name}', '{state_name}' must have shape {shape} "
                                 f"(num_layers * num_directions, batch, hidden_size), but got {tuple(state.shape)}.")
        return states

    def construct(self, x, hx=None, seq_length=None):
        if len(x.shape) != 3 or x.shape[-1] != self.input_size:
            raise ValueError(f"For '{self.cls_name}', the input must be 3-D with {self.input_size} features, "
                             f"but got shape {tuple(x.shape)}.")
        if self.batch_first:
            x = _op("transpose", x, perm=[1, 0, 2])
        count = self.num_layers * self.num_directions
        h0, c0 = self._initial(x, hx, count, x.shape[1])
        h0s = _split(h0, count)
        c0s = _split(c0, count) if c0 is not None else (None,) * count
        hs, cs = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                i = layer * self.num_directions + direction
                c_in = None if c0s[i] is None else _op("squeeze", c0s[i], axis=[0])
                y, h, c = _op("rnn_layer", layer_input, _op("squeeze", h0s[i], axis=[0]), c_in, self.w_ih_list[i],
                              self.w_hh_list[i], self.b_ih_list[i] if self.has_bias else None,
                              self.b_hh_list[i] if self.has_bias else None, seq_length, mode=self.mode,
                              reverse=direction == 1)
                outputs.append(y)
                hs.append(h)
                cs.append(c)
            layer_input = outputs[0] if len(outputs) == 1 else _op("concat", *outputs, axis=2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = _op("dropout", layer_input, keep_prob=1.0 - self.dropout)[0]
        output = layer_input
        if self.batch_first:
            output = _op("transpose", output, perm=[1, 0, 2])
        h_n = _op("stack", *hs, axis=0)
        if self.mode == "LSTM":
            return output, (h_n, _op("stack", *cs, axis=0))
        return output, h_n

    def extend_repr(self):
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
                f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")


class RNN(_RNNBase):
    """Elman RNN: h = tanh (or relu) of x W_ih^T + b_ih + h W_hh^T + b_hh; returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", has_bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, dtype=mstype.float32):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"For 'RNN', the 'nonlinearity' must be 'tanh' or 'relu', but got {nonlinearity!r}.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         has_bias, batch_first, dropout, bidirectional, dtype)


class GRU(_RNNBase):
    """Gated recurrent unit (gates r, z, n); returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=mstype.float32):
        super().__init__("GRU", input_size, hidden_size, num_layers, has_bias, batch_first, dropout, bidirectional,
                         dtype)


class LSTM(_RNNBase):
    """Long short-term memory (gates i, f, g, o); hx is (h_0, c_0); returns (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=mstype.float32):
        super().__init__("LSTM", input_size, hidden_size, num_layers, has_bias, batch_first, dropout, bidirectional,
                         dtype)
