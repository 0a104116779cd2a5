// Layers' computations built from other ops (composites): embedding lookup,
// prelu, mish, pixel_shuffle and pixel_unshuffle, adaptive pooling,
// interpolation, one layer of a recurrent network (RNN, GRU, LSTM) in one
// direction and multi-head attention.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using fn::Scalar;

Tensor Slice(const Tensor& x, int64_t axis, int64_t begin, int64_t size) {
  std::vector<int64_t> b(x.shape().size(), 0);
  std::vector<int64_t> s(x.shape().begin(), x.shape().end());
  b[axis] = begin;
  s[axis] = size;
  return Call1("slice", {x}, Dict{{"begin", IntList(b)}, {"size", IntList(s)}});
}

MSRT_REGISTER_OP({.name = "embedding",
                  .inputs = {"indices", "weight"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    constexpr std::string_view op = "embedding";
                    CheckDType(op, "input", {in[0].shape(), in[0].dtype()}, DTypeClass::kIndex);
                    CheckRank(op, "weight", {in[1].shape(), in[1].dtype()}, 2);
                    return {fn::Gather(in[1], in[0], 0)};
                  },
                  .doc = "the rows of weight (vocabulary, dim) at integer indices: shape indices.shape + (dim,); "
                         "indices out of range raise IndexError (composite)",
                  .api = {Function("embedding(input->indices, weight, padding_idx->!=None, max_norm->!=None, "
                                   "norm_type->!=2.0, scale_grad_by_freq->!=False)")}});

MSRT_REGISTER_OP({.name = "prelu",
                  .inputs = {"x", "weight"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    constexpr std::string_view op = "prelu";
                    const Tensor& x = in[0];
                    Tensor w = in[1];
                    CheckDType(op, "x", {x.shape(), x.dtype()}, DTypeClass::kFloat);
                    CheckSameDType(op, "x", {x.shape(), x.dtype()}, "weight", {w.shape(), w.dtype()});
                    const int64_t channels = x.shape().size() >= 2 ? x.shape()[1] : 1;
                    if (w.shape().size() != 1 || (w.shape()[0] != 1 && w.shape()[0] != channels)) {
                      OpError(ErrorKind::kValue, op,
                              StrCat("'weight' must be 1-D with 1 or x's channels (", channels,
                                     ") elements; but got shape ", ShapeRepr(w.shape())));
                    }
                    if (w.shape()[0] != 1) {
                      Shape along(x.shape().size(), 1);
                      along[1] = channels;
                      w = fn::Reshape(w, along);
                    }
                    Tensor positive = fn::Greater(x, Scalar(0.0, x));
                    return {fn::Select(positive, x, fn::Mul(w, x))};
                  },
                  .doc = "x where x > 0, weight * x elsewhere; weight has one value or one per channel (axis 1) "
                         "(composite)",
                  .api = {Function("prelu(x, weight)"), Primitive("nn_ops.PReLU()(x, weight)")}});

MSRT_REGISTER_OP({.name = "mish",
                  .inputs = {"x"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    const Tensor& x = in[0];
                    CheckDType("mish", "x", {x.shape(), x.dtype()}, DTypeClass::kFloat);
                    // softplus(x) = max(x, 0) + log(1 + exp(-|x|)), which cannot overflow
                    Tensor tail = fn::Log(fn::Add(fn::Exp(fn::Neg(Call1("abs", {x}))), Scalar(1.0, x)));
                    Tensor softplus = fn::Add(Call1("relu", {x}), tail);
                    return {fn::Mul(x, Call1("tanh", {softplus}))};
                  },
                  .doc = "x * tanh(softplus(x)) (composite)",
                  .api = {Function("mish(x)"), Primitive("nn_ops.Mish()(x)")}});

MSRT_REGISTER_OP({.name = "pixel_shuffle",
                  .inputs = {"x"},
                  .attrs = {{"upscale_factor",
                             Value(),
                             "r: C * r^2 channels become C channels r times taller and wider",
                             AttrType::kInt,
                             {},
                             false,
                             [](std::string_view op, const Value& v) {
                               if (v.as_int() < 1) {
                                 OpError(ErrorKind::kValue, op,
                                         StrCat("'upscale_factor' must be positive; but got ", v.as_int()));
                               }
                             }}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "pixel_shuffle";
                    const Tensor& x = in[0];
                    const Shape& s = x.shape();
                    const int64_t r = AttrInt(attrs, "upscale_factor");
                    // r > C / r first: r * r must not overflow
                    if (s.size() < 3 || r > s[s.size() - 3] / r || s[s.size() - 3] % (r * r) != 0) {
                      OpError(ErrorKind::kValue, op,
                              StrCat("input must be (*, C * r^2, H, W) with r = ", r, "; but got shape ",
                                     ShapeRepr(s)));
                    }
                    const size_t lead = s.size() - 3;
                    int64_t batch = 1;
                    for (size_t i = 0; i < lead; ++i) batch *= s[i];
                    const int64_t c = s[lead] / (r * r), h = s[lead + 1], w = s[lead + 2];
                    Tensor t = fn::Reshape(x, {batch, c, r, r, h, w});
                    t = fn::Transpose(t, {0, 1, 4, 2, 5, 3});
                    Shape out(s.begin(), s.begin() + static_cast<int64_t>(lead));
                    out.insert(out.end(), {c, h * r, w * r});
                    return {fn::Reshape(t, out)};
                  },
                  .doc = "rearranges (*, C * r^2, H, W) into (*, C, H * r, W * r) (composite)",
                  .api = {Function("pixel_shuffle(input->x, upscale_factor)")}});

MSRT_REGISTER_OP({.name = "pixel_unshuffle",
                  .inputs = {"x"},
                  .attrs = {{"downscale_factor",
                             Value(),
                             "r: C channels r times taller and wider become C * r^2 channels",
                             AttrType::kInt,
                             {},
                             false,
                             [](std::string_view op, const Value& v) {
                               if (v.as_int() < 1) {
                                 OpError(ErrorKind::kValue, op,
                                         StrCat("'downscale_factor' must be positive; but got ", v.as_int()));
                               }
                             }}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "pixel_unshuffle";
                    const Tensor& x = in[0];
                    const Shape& s = x.shape();
                    const int64_t r = AttrInt(attrs, "downscale_factor");
                    if (s.size() < 3 || s[s.size() - 2] % r != 0 || s[s.size() - 1] % r != 0) {
                      OpError(ErrorKind::kValue, op,
                              StrCat("input must be (*, C, H * r, W * r) with r = ", r, "; but got shape ",
                                     ShapeRepr(s)));
                    }
                    const size_t lead = s.size() - 3;
                    int64_t batch = 1;
                    for (size_t i = 0; i < lead; ++i) batch *= s[i];
                    const int64_t c = s[lead], h = s[lead + 1] / r, w = s[lead + 2] / r;
                    Tensor t = fn::Reshape(x, {batch, c, h, r, w, r});
                    t = fn::Transpose(t, {0, 1, 3, 5, 2, 4});
                    Shape out(s.begin(), s.begin() + static_cast<int64_t>(lead));
                    out.insert(out.end(), {CheckedMul(c, CheckedMul(r, r, op), op), h, w});
                    return {fn::Reshape(t, out)};
                  },
                  .doc = "rearranges (*, C, H * r, W * r) into (*, C * r^2, H, W), pixel_shuffle's inverse "
                         "(composite)",
                  .api = {Function("pixel_unshuffle(input->x, downscale_factor)")}});

// --- Adaptive pooling --------------------------------------------------------------------------------------
// Output cell i of an axis of size n pooled to m covers [floor(i n / m),
// ceil((i + 1) n / m)). Windows are rectangles, so the pool runs one axis at
// a time (a max or a mean of equal-sized rows is the max or mean of the whole).

// `output_size` for `axes` trailing axes of `shape`: an int for all, or one
// entry per axis, None keeping the input's size.
std::vector<int64_t> AdaptiveSizes(std::string_view op, const Value& size, const Shape& shape, size_t axes) {
  std::vector<int64_t> out;
  auto bad = [&] {
    OpError(ErrorKind::kValue, op,
            StrCat("'output_size' must be a positive int or ", axes, " positive ints (or None); but got ",
                   size.repr()));
  };
  if (size.is_int()) {
    out.assign(axes, size.as_int());
  } else if (size.is_sequence() && size.as_list().size() == axes) {
    for (size_t i = 0; i < axes; ++i) {
      const Value& v = size.as_list()[i];
      if (v.is_none()) {
        out.push_back(shape[shape.size() - axes + i]);
      } else if (v.is_int()) {
        out.push_back(v.as_int());
      } else {
        bad();
      }
    }
  } else {
    bad();
  }
  if (std::any_of(out.begin(), out.end(), [](int64_t v) { return v < 1; })) bad();
  return out;
}

Tensor AdaptivePoolAxis(const Tensor& x, int64_t axis, int64_t out, std::string_view reduce) {
  const int64_t n = x.shape()[axis];
  if (n == out) return x;
  std::vector<Tensor> cells;
  for (int64_t i = 0; i < out; ++i) {
    const int64_t begin = i * n / out;
    const int64_t end = ((i + 1) * n + out - 1) / out;
    cells.push_back(Call1(reduce, {Slice(x, axis, begin, end - begin)},
                          Dict{{"axis", IntList({axis})}, {"keep_dims", Value(true)}}));
  }
  return fn::Concat(cells, axis);
}

OpDef AdaptivePool(std::string_view name, size_t axes, std::string_view reduce, std::string_view doc,
                   std::vector<ApiForm> api) {
  return {.name = name,
          .inputs = {"x"},
          .attrs = {{"output_size", Value(),
                     "the output's size: an int for every pooled axis, or one per axis "
                     "(None keeps the input's)"}},
          .composite = [name, axes, reduce](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
            const Tensor& x = in[0];
            CheckDType(name, "input", {x.shape(), x.dtype()}, DTypeClass::kFloat);
            const Shape& s = x.shape();
            if (s.size() != axes + 1 && s.size() != axes + 2) {
              OpError(ErrorKind::kValue, name,
                      StrCat("input must have rank ", axes + 1, " or ", axes + 2, "; but got shape ", ShapeRepr(s)));
            }
            for (int64_t d : s) {
              if (d == 0)
                OpError(ErrorKind::kValue, name, StrCat("input must not be empty; but got shape ", ShapeRepr(s)));
            }
            std::vector<int64_t> sizes = AdaptiveSizes(name, Attr(attrs, "output_size"), s, axes);
            for (size_t i = 0; i < axes; ++i) {
              const int64_t n = s[s.size() - axes + i];
              if (sizes[i] > n) {
                OpError(ErrorKind::kValue, name,
                        StrCat("'output_size' must not exceed the input's size along each pooled axis (msrt pools "
                               "down only); expected at most ",
                               n, " along axis ", s.size() - axes + i, ", but got ", sizes[i]));
              }
            }
            Tensor y = x;
            for (size_t i = 0; i < axes; ++i) {
              y = AdaptivePoolAxis(y, static_cast<int64_t>(s.size() - axes + i), sizes[i], reduce);
            }
            return {y};
          },
          .doc = doc,
          .api = std::move(api)};
}

[[maybe_unused]] const bool kAdaptivePools = [] {
  RegisterOp(AdaptivePool("adaptive_avg_pool1d", 1, "reduce_mean",
                          "mean over adaptive windows of the last axis of (N, C, L) or (C, L) (composite)",
                          {Function("adaptive_avg_pool1d(input->x, output_size)")}));
  RegisterOp(AdaptivePool("adaptive_max_pool1d", 1, "reduce_max",
                          "max over adaptive windows of the last axis of (N, C, L) or (C, L) (composite)",
                          {Function("adaptive_max_pool1d(input->x, output_size)")}));
  RegisterOp(AdaptivePool("adaptive_avg_pool2d", 2, "reduce_mean",
                          "mean over adaptive windows of the last two axes of (N, C, H, W) or (C, H, W) (composite)",
                          {Function("adaptive_avg_pool2d(input->x, output_size)"),
                           Primitive("nn_ops.AdaptiveAvgPool2D(output_size)(x)")}));
  RegisterOp(AdaptivePool("adaptive_max_pool2d", 2, "reduce_max",
                          "max over adaptive windows of the last two axes of (N, C, H, W) or (C, H, W) (composite)",
                          {Function("adaptive_max_pool2d(input->x, output_size, return_indices->!=False)")}));
  return true;
}();

// --- Recurrent layers ----------------------------------------------------------------------------------------
// Note [rnn_layer]
// One layer of a recurrent network in one direction over x (T, N, input):
// x @ w_ih^T + b_ih for every step at once, then per step the hidden state's
// part h @ w_hh^T + b_hh and the cell's gates, PyTorch's and MindSpore's order:
//   RNN:  h = act(xw + hw)
//   GRU:  r, z, n gates; n = tanh(xn + r * hn); h = (1 - z) * n + z * h
//   LSTM: i, f, g, o gates; c = f * c + i * g; h = o * tanh(c)
// `reverse` walks the steps from last to first (the backward direction of a
// bidirectional network); y keeps the input's step order. With seq_length
// (N,), a sequence's steps at or past its length keep its state and output
// zeros, so the last state is the one at its last step and the reverse
// direction starts at that step. Outputs: y (T, N, hidden), the last h and
// the last c (LSTM; h again otherwise).

int64_t GateCount(const std::string& mode) { return mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1; }

MSRT_REGISTER_OP(
    {.name = "rnn_layer",
     .inputs = {"x", "h0", "c0?", "w_ih", "w_hh", "b_ih?", "b_hh?", "seq_length?"},
     .attrs = {{"mode", Value("LSTM"), "the cell", AttrType::kString, {"RNN_TANH", "RNN_RELU", "GRU", "LSTM"}},
               {"reverse", Value(false), "run from the last step to the first", AttrType::kBool}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "rnn_layer";
       const std::string mode = AttrString(attrs, "mode");
       const Tensor& x = in[0];
       const Tensor& w_ih = in[3];
       const Tensor& w_hh = in[4];
       CheckDType(op, "x", {x.shape(), x.dtype()}, DTypeClass::kFloat);
       CheckRank(op, "x", {x.shape(), x.dtype()}, 3);
       const int64_t steps = x.shape()[0], batch = x.shape()[1], input = x.shape()[2];
       const int64_t gates = GateCount(mode);
       const int64_t hidden = in[1].shape().size() == 2 ? in[1].shape()[1] : -1;
       auto expect = [&](std::string_view name, const Tensor& t, const Shape& shape) {
         if (t.shape() != shape) {
           OpError(ErrorKind::kValue, op,
                   StrCat("'", name, "' must have shape ", ShapeRepr(shape), "; but got ", ShapeRepr(t.shape())));
         }
         CheckSameDType(op, "x", {x.shape(), x.dtype()}, name, {t.shape(), t.dtype()});
       };
       if (hidden < 1) {
         OpError(ErrorKind::kValue, op, StrCat("'h0' must be (N, hidden); but got shape ", ShapeRepr(in[1].shape())));
       }
       expect("h0", in[1], {batch, hidden});
       if (mode == "LSTM") {
         if (!in[2].defined()) OpError(ErrorKind::kValue, op, "an LSTM needs 'c0'");
         expect("c0", in[2], {batch, hidden});
       }
       expect("w_ih", w_ih, {gates * hidden, input});
       expect("w_hh", w_hh, {gates * hidden, hidden});
       if (in[5].defined()) expect("b_ih", in[5], {gates * hidden});
       if (in[6].defined()) expect("b_hh", in[6], {gates * hidden});
       const Tensor& lengths = in[7];
       if (lengths.defined()) {
         CheckDType(op, "seq_length", {lengths.shape(), lengths.dtype()}, DTypeClass::kIndex);
         if (lengths.shape() != Shape{batch}) {
           OpError(ErrorKind::kValue, op,
                   StrCat("'seq_length' must have shape (N,) = (", batch, ",); but got ", ShapeRepr(lengths.shape())));
         }
       }

       Tensor xw = Call1("matmul", {fn::Reshape(x, {steps * batch, input}), w_ih}, Dict{{"transpose_b", Value(true)}});
       if (in[5].defined()) xw = fn::Add(xw, in[5]);
       xw = fn::Reshape(xw, {steps, batch, gates * hidden});
       std::vector<Tensor> xs;
       if (steps > 0) {
         xs = steps == 1 ? std::vector<Tensor>{xw}
                         : Call("split", {xw}, Dict{{"axis", Value(0)}, {"output_num", Value(steps)}});
       }
       auto split_gates = [&](const Tensor& t) {
         if (gates == 1) return std::vector<Tensor>{t};
         return Call("split", {t}, Dict{{"axis", Value(1)}, {"output_num", Value(gates)}});
       };
       Tensor h = in[1];
       Tensor c = mode == "LSTM" ? in[2] : Tensor();
       std::vector<Tensor> ys(static_cast<size_t>(steps));
       const bool reverse = AttrBool(attrs, "reverse");
       for (int64_t k = 0; k < steps; ++k) {
         const int64_t t = reverse ? steps - 1 - k : k;
         Tensor xt = fn::Reshape(xs[t], {batch, gates * hidden});
         const Tensor h_before = h;
         const Tensor c_before = c;
         Tensor hw = Call1("matmul", {h, w_hh}, Dict{{"transpose_b", Value(true)}});
         if (in[6].defined()) hw = fn::Add(hw, in[6]);
         if (mode == "GRU") {
           std::vector<Tensor> gx = split_gates(xt), gh = split_gates(hw);
           Tensor r = Call1("sigmoid", {fn::Add(gx[0], gh[0])});
           Tensor z = Call1("sigmoid", {fn::Add(gx[1], gh[1])});
           Tensor n = Call1("tanh", {fn::Add(gx[2], fn::Mul(r, gh[2]))});
           h = fn::Add(n, fn::Mul(z, fn::Sub(h, n)));  // (1 - z) n + z h
         } else if (mode == "LSTM") {
           std::vector<Tensor> g = split_gates(fn::Add(xt, hw));
           Tensor i = Call1("sigmoid", {g[0]});
           Tensor f = Call1("sigmoid", {g[1]});
           Tensor cand = Call1("tanh", {g[2]});
           Tensor o = Call1("sigmoid", {g[3]});
           c = fn::Add(fn::Mul(f, c), fn::Mul(i, cand));
           h = fn::Mul(o, Call1("tanh", {c}));
         } else {
           h = Call1(mode == "RNN_TANH" ? "tanh" : "relu", {fn::Add(xt, hw)});
         }
         if (lengths.defined()) {
           // Steps at or past a sequence's length keep its state and output zeros (Note [rnn_layer]).
           Tensor live = fn::Cast(fn::Greater(lengths, Scalar(static_cast<double>(t), lengths)), x.dtype());
           live = fn::Reshape(live, {batch, 1});
           h = fn::Add(h_before, fn::Mul(live, fn::Sub(h, h_before)));
           if (c.defined()) c = fn::Add(c_before, fn::Mul(live, fn::Sub(c, c_before)));
           ys[static_cast<size_t>(t)] = fn::Mul(h, live);
         } else {
           ys[static_cast<size_t>(t)] = h;
         }
       }
       Tensor y = steps > 0 ? Call1("stack", ys, Dict{{"axis", Value(0)}})
                            : fn::Fill({0, batch, hidden}, 0.0, x.dtype());
       return {y, h, mode == "LSTM" ? c : h};
     },
     .doc = "one layer of an RNN, GRU or LSTM in one direction over (T, N, input): (y, h_n, c_n) (composite; Note "
            "[rnn_layer])"});

// --- Multi-head attention ------------------------------------------------------------------------------------
// Note [multi_head_attention]
// PyTorch's and MindSpore's nn.MultiheadAttention over sequence-first inputs:
// query (L, N, E), key (S, N, kdim), value (S, N, vdim). q, k and v are
// projected (in_bias holds the three biases, 3E), split into num_heads heads
// of E / num_heads, scores q k^T / sqrt(head) get attn_mask ((L, S) or
// (N * heads, L, S); a bool True forbids a position, a float is added) and
// key_padding_mask ((N, S); True ignores a key), softmax over the keys, the
// optional dropout (training only), and the heads' outputs are joined and
// projected by out_weight/out_bias. Outputs: (attention output (L, N, E),
// weights (N, L, S) averaged over the heads, or (N, heads, L, S)).

// `mask` applied to `scores`: bool masks put -inf where they are true, float masks are added.
Tensor ApplyMask(const Tensor& scores, const Tensor& mask) {
  if (mask.dtype() == DType::kBool) {
    Tensor forbidden = fn::Scalar(-std::numeric_limits<double>::infinity(), scores);
    return fn::Select(fn::BroadcastTo(mask, scores.shape()), fn::BroadcastTo(forbidden, scores.shape()), scores);
  }
  return fn::Add(scores, fn::Cast(mask, scores.dtype()));
}

MSRT_REGISTER_OP(
    {.name = "multi_head_attention",
     .inputs = {"query", "key", "value", "q_weight", "k_weight", "v_weight", "in_bias?", "out_weight", "out_bias?",
                "attn_mask?", "key_padding_mask?"},
     .attrs = {{"num_heads",
                Value(),
                "how many heads the embedding is split into",
                AttrType::kInt,
                {},
                false,
                [](std::string_view op, const Value& v) {
                  if (v.as_int() < 1) {
                    OpError(ErrorKind::kValue, op, StrCat("'num_heads' must be positive; but got ", v.as_int()));
                  }
                }},
               {"dropout",
                Value(0.0),
                "the probability of dropping an attention weight while training",
                AttrType::kFloat,
                {},
                false,
                [](std::string_view op, const Value& v) {
                  if (!(v.as_float() >= 0.0 && v.as_float() < 1.0)) {
                    OpError(ErrorKind::kValue, op, StrCat("'dropout' must be in [0, 1); but got ", v.as_float()));
                  }
                }},
               {"training", Value(false), "whether dropout applies", AttrType::kBool},
               {"average_attn_weights", Value(true), "average the returned weights over the heads", AttrType::kBool}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "multi_head_attention";
       const Tensor& query = in[0];
       const Tensor& key = in[1];
       const Tensor& value = in[2];
       auto meta = [](const Tensor& t) { return TensorMeta{t.shape(), t.dtype()}; };
       CheckDType(op, "query", meta(query), DTypeClass::kFloat);
       for (size_t i = 0; i < 3; ++i) CheckRank(op, i == 0 ? "query" : i == 1 ? "key" : "value", meta(in[i]), 3);
       const int64_t target = query.shape()[0], batch = query.shape()[1], embed = query.shape()[2];
       const int64_t source = key.shape()[0];
       const int64_t heads = AttrInt(attrs, "num_heads");
       if (embed % heads != 0) {
         OpError(ErrorKind::kValue, op,
                 StrCat("the embedding size (", embed, ") must be divisible by 'num_heads'; but got ", heads));
       }
       if (key.shape()[1] != batch || value.shape()[1] != batch || value.shape()[0] != source) {
         OpError(ErrorKind::kValue, op,
                 StrCat("'key' and 'value' must be (S, N, *) with the query's batch ", batch,
                        " and one length; but got ", ShapeRepr(key.shape()), " and ", ShapeRepr(value.shape())));
       }
       auto expect = [&](std::string_view name, const Tensor& t, const Shape& shape) {
         if (t.shape() != shape) {
           OpError(ErrorKind::kValue, op,
                   StrCat("'", name, "' must have shape ", ShapeRepr(shape), "; but got ", ShapeRepr(t.shape())));
         }
         CheckSameDType(op, "query", meta(query), name, meta(t));
       };
       expect("q_weight", in[3], {embed, embed});
       expect("k_weight", in[4], {embed, key.shape()[2]});
       expect("v_weight", in[5], {embed, value.shape()[2]});
       if (in[6].defined()) expect("in_bias", in[6], {3 * embed});
       expect("out_weight", in[7], {embed, embed});
       if (in[8].defined()) expect("out_bias", in[8], {embed});
       const int64_t head = embed / heads;
       std::vector<Tensor> biases;
       if (in[6].defined()) biases = Call("split", {in[6]}, Dict{{"axis", Value(0)}, {"output_num", Value(3)}});
       // (len, N, dim) projected, then as (N * heads, len, head)
       auto project = [&](const Tensor& x, const Tensor& w, size_t which) {
         const int64_t len = x.shape()[0];
         Tensor y = Call1("matmul", {fn::Reshape(x, {len * batch, x.shape()[2]}), w},
                          Dict{{"transpose_b", Value(true)}});
         if (!biases.empty()) y = fn::Add(y, biases[which]);
         return fn::Transpose(fn::Reshape(y, {len, batch * heads, head}), {1, 0, 2});
       };
       Tensor q = fn::Mul(project(query, in[3], 0), fn::Scalar(1.0 / std::sqrt(static_cast<double>(head)), query));
       Tensor k = project(key, in[4], 1);
       Tensor v = project(value, in[5], 2);
       Tensor scores = Call1("batch_matmul", {q, k}, Dict{{"transpose_b", Value(true)}});  // (N * heads, L, S)
       if (in[9].defined()) {
         const Shape& m = in[9].shape();
         if (m != Shape{target, source} && m != Shape{batch * heads, target, source}) {
           OpError(ErrorKind::kValue, op,
                   StrCat("'attn_mask' must be (L, S) = (", target, ", ", source, ") or (N * num_heads, L, S) = (",
                          batch * heads, ", ", target, ", ", source, "); but got ", ShapeRepr(m)));
         }
         scores = ApplyMask(scores, in[9]);
       }
       if (in[10].defined()) {
         if (in[10].shape() != Shape{batch, source}) {
           OpError(ErrorKind::kValue, op,
                   StrCat("'key_padding_mask' must be (N, S) = (", batch, ", ", source, "); but got ",
                          ShapeRepr(in[10].shape())));
         }
         Tensor per_head = fn::Reshape(scores, {batch, heads, target, source});
         scores = fn::Reshape(ApplyMask(per_head, fn::Reshape(in[10], {batch, 1, 1, source})),
                              {batch * heads, target, source});
       }
       Tensor weights = fn::Softmax(scores, -1);
       Tensor attended = weights;
       const double p = AttrFloat(attrs, "dropout");
       if (p > 0.0 && AttrBool(attrs, "training")) {
         attended = Call("dropout", {weights}, Dict{{"keep_prob", Value(1.0 - p)}})[0];
       }
       Tensor out = Call1("batch_matmul", {attended, v});  // (N * heads, L, head)
       out = fn::Reshape(fn::Transpose(out, {1, 0, 2}), {target * batch, embed});
       out = Call1("matmul", {out, in[7]}, Dict{{"transpose_b", Value(true)}});
       if (in[8].defined()) out = fn::Add(out, in[8]);
       out = fn::Reshape(out, {target, batch, embed});
       Tensor per_head = fn::Reshape(weights, {batch, heads, target, source});
       if (AttrBool(attrs, "average_attn_weights")) {
         per_head = Call1("reduce_mean", {per_head}, Dict{{"axis", IntList({1})}, {"keep_dims", Value(false)}});
       }
       return {out, per_head};
     },
     .doc = "multi-head attention of sequence-first query, key and value with input and output projections and "
            "optional masks: (output (L, N, E), attention weights) (composite; Note [multi_head_attention])"});

}  // namespace
}  // namespace msrt::ops
