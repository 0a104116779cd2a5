// Collective communication ops (MindSpore's comm_ops): their kernels run the
// Communicator registered under their `group` attribute (parallel/groups.h).
//
// Note [Collective ops]
//   Every member of a group must run the same collectives in the same order
//   (communicator.h), so these ops declare side effects: the compiler never
//   drops, merges, folds or reorders them, the graph executor chains them in
//   program order (one after another, the same order on every rank), and
//   eager calls run them at the call, after every earlier op. Inference reads
//   the group's size, so the group must exist when a call is made or a graph
//   is compiled. They take every dtype (the communicators move them all).
//   Their gradients are MindSpore's: AllReduce(sum) and ReduceScatter(sum)
//   <-> AllGather, AlltoAll with split and concat swapped, Broadcast's passes
//   through; AllReduce(max, min) reaches the elements equal to the result.
//
//   all_reduce_fused is msrt's own (no MindSpore form): the data-parallel
//   gradient reducer's one op per fusion bucket (Note [Gradient fusion
//   buckets] in python/msrt/nn/wrap/grad_reducer.py). Its kernel packs its
//   inputs into one flat buffer, multiplying by `scale` as it copies (the
//   mean's 1 / degree), all-reduces the buffer in place and copies the parts
//   out: one collective and two passes over the bytes, where concatenate,
//   AllReduce, multiply and split make a collective and four passes, plus
//   an operator per reshape.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"
#include "parallel/groups.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

const AttrSpec kGroupAttr{"group", Value(parallel::kWorldGroup), "the communication group's name", AttrType::kString};
const AttrSpec kReduceOpAttr{"op",
                             Value("sum"),
                             "the reduction (ReduceOp.SUM, MAX, MIN or PROD)",
                             AttrType::kString,
                             {"sum", "max", "min", "prod"}};

int GroupSize(const Dict& attrs) { return parallel::GetGroup(Attr(attrs, "group").as_string())->size(); }

Dict GroupAttrs(const Dict& attrs, std::string_view reduce_op = {}) {
  Dict out{{"group", Attr(attrs, "group")}};
  if (!reduce_op.empty()) out.Set("op", Value(std::string(reduce_op)));
  return out;
}

// A group rank attribute must name a member of the group.
void CheckGroupRank(std::string_view op, const Dict& attrs, std::string_view name, int size) {
  int64_t rank = Attr(attrs, name).as_int();
  if (rank < 0 || rank >= size) {
    OpError(ErrorKind::kValue, op,
            StrCat("attribute '", name, "' must be a rank of group '", Attr(attrs, "group").as_string(), "' in [0, ",
                   size, "), but got ", rank));
  }
}

MSRT_REGISTER_OP({.name = "all_reduce",
                  .inputs = {"x"},
                  .attrs = {kReduceOpAttr, kGroupAttr},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        GroupSize(attrs);
                        return Metas{in[0]};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
                    const std::string& op = Attr(a.attrs, "op").as_string();
                    if (op == "prod") {
                      OpError(ErrorKind::kRuntime, "all_reduce",
                              "the gradient of AllReduce with ReduceOp.PROD is not supported");
                    }
                    Tensor dx = Call1("all_reduce", {a.dys[0]}, GroupAttrs(a.attrs, "sum"));
                    if (op == "sum") return {dx};
                    // max, min: the gradient reaches the elements that equal the result.
                    return {fn::Mul(dx, fn::Cast(fn::Equal(a.inputs[0], a.outputs[0]), dx.dtype()))};
                  },
                  .props = {.side_effect = true},
                  .doc = "reduces x across the group (sum, max, min or prod); every rank gets the result",
                  .api = {Primitive("comm_ops.AllReduce(op='sum', group='nccl_world_group')(input_x->x)")}});

MSRT_REGISTER_OP({.name = "all_gather",
                  .inputs = {"x"},
                  .attrs = {kGroupAttr},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        if (in[0].shape.empty()) {
                          OpError(ErrorKind::kValue, "all_gather",
                                  "input 'x' must have at least 1 dimension, but got a 0-d tensor");
                        }
                        Shape shape = in[0].shape;
                        shape[0] *= GroupSize(attrs);
                        return Metas{{shape, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
                    return {Call1("reduce_scatter", {a.dys[0]}, GroupAttrs(a.attrs, "sum"))};
                  },
                  .props = {.side_effect = true},
                  .doc = "the inputs of the group's ranks concatenated along axis 0, rank order",
                  .api = {Primitive("comm_ops.AllGather(group='nccl_world_group')(input_x->x)")}});

MSRT_REGISTER_OP(
    {.name = "reduce_scatter",
     .inputs = {"x"},
     .attrs = {kReduceOpAttr, kGroupAttr},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           int size = GroupSize(attrs);
           if (in[0].shape.empty() || in[0].shape[0] % size != 0) {
             OpError(ErrorKind::kValue, "reduce_scatter",
                     StrCat("the first dimension of input 'x' must be divisible by the group size ", size,
                            ", but got shape ", ShapeRepr(in[0].shape)));
           }
           Shape shape = in[0].shape;
           shape[0] /= size;
           return Metas{{shape, in[0].dtype}};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
       if (Attr(a.attrs, "op").as_string() != "sum") {
         OpError(ErrorKind::kRuntime, "reduce_scatter",
                 StrCat("the gradient of ReduceScatter supports ReduceOp.SUM only, but got op '",
                        Attr(a.attrs, "op").as_string(), "'"));
       }
       return {Call1("all_gather", {a.dys[0]}, GroupAttrs(a.attrs))};
     },
     .props = {.side_effect = true},
     .doc = "reduces x across the group, then rank r gets chunk r of axis 0 (split into group-size chunks)",
     .api = {Primitive("comm_ops.ReduceScatter(op='sum', group='nccl_world_group')(input_x->x)")}});

MSRT_REGISTER_OP({.name = "broadcast",
                  .inputs = {"xs..."},
                  .attrs = {{"root_rank", Value(), "the group rank whose tensors every rank receives", AttrType::kInt},
                            kGroupAttr},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        CheckGroupRank("broadcast", attrs, "root_rank", GroupSize(attrs));
                        return in;
                      },
                  // MindSpore's: the gradient passes through unchanged.
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    std::vector<Tensor> dxs;
                    for (size_t i = 0; i < a.inputs.size(); ++i) {
                      dxs.push_back(a.needs[i] && a.dys[i].defined() ? a.dys[i] : Tensor());
                    }
                    return dxs;
                  },
                  .props = {.tuple_outputs = true, .side_effect = true},
                  .doc = "every rank's tensors become those of rank root_rank (a tuple in, a tuple out)",
                  .api = {Primitive("comm_ops.Broadcast(root_rank, group='nccl_world_group')(input_x->xs...)")}});

MSRT_REGISTER_OP(
    {.name = "all_reduce_fused",
     .inputs = {"xs..."},
     .attrs = {kReduceOpAttr,
               kGroupAttr,
               {"scale", Value(1.0), "each input is multiplied by it before the reduction (floating dtypes only)",
                AttrType::kFloat}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           GroupSize(attrs);
           if (in.empty()) OpError(ErrorKind::kValue, "all_reduce_fused", "expected at least one input, but got none");
           for (size_t i = 1; i < in.size(); ++i) {
             if (in[i].dtype != in[0].dtype) {
               OpError(ErrorKind::kType, "all_reduce_fused",
                       StrCat("every input must have the dtype of input 0 (", DTypeName(in[0].dtype), "), but input ",
                              i, " is ", DTypeName(in[i].dtype)));
             }
           }
           DType dtype = in[0].dtype;
           bool floating = dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
                           dtype == DType::kFloat64;
           if (AttrFloat(attrs, "scale") != 1.0 && !floating) {
             OpError(ErrorKind::kType, "all_reduce_fused",
                     StrCat("attribute 'scale' other than 1 needs a floating dtype, but the inputs are ",
                            DTypeName(dtype)));
           }
           return in;
         },
     // y = reduce(scale * x over the ranks): sum's gradient is the same op on the gradients (each rank's
     // dx is scale times the sum of every rank's dy); max and min's reaches the elements equal to the result.
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       std::vector<Tensor> dxs(a.inputs.size());
       bool any = false;
       for (size_t i = 0; i < a.inputs.size(); ++i) any = any || (a.needs[i] && a.dys[i].defined());
       if (!any) return dxs;
       const std::string& op = Attr(a.attrs, "op").as_string();
       if (op == "prod") {
         OpError(ErrorKind::kRuntime, "all_reduce_fused",
                 "the gradient of a fused AllReduce with ReduceOp.PROD is not supported");
       }
       // Every rank must run the collective with the same parts: an unused output's gradient is zeros.
       std::vector<Tensor> dys(a.dys.size());
       for (size_t i = 0; i < dys.size(); ++i) dys[i] = a.dys[i].defined() ? a.dys[i] : fn::ZerosLike(a.outputs[i]);
       Dict attrs = GroupAttrs(a.attrs, "sum");
       attrs.Set("scale", Attr(a.attrs, "scale"));
       std::vector<Tensor> summed = Call("all_reduce_fused", dys, attrs);
       double scale = AttrFloat(a.attrs, "scale");
       for (size_t i = 0; i < dxs.size(); ++i) {
         if (!a.needs[i]) continue;
         if (op == "sum") {
           dxs[i] = summed[i];
         } else {
           Tensor x = scale == 1.0 ? a.inputs[i] : fn::Mul(a.inputs[i], fn::Scalar(scale, a.inputs[i]));
           dxs[i] = fn::Mul(summed[i], fn::Cast(fn::Equal(x, a.outputs[i]), summed[i].dtype()));
         }
       }
       return dxs;
     },
     .props = {.tuple_outputs = true, .side_effect = true, .waits_for_inputs_only = true},
     .doc = "reduces each x * scale across the group as one message (sum, max, min or prod); every rank gets "
            "the results, one per input (a tuple in, a tuple out; inputs of one dtype)"});

void CheckAxis(std::string_view op, std::string_view name, int64_t axis, size_t rank) {
  if (axis < 0 || static_cast<size_t>(axis) >= rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("attribute '", name, "' must be in [0, ", rank, ") for an input of rank ", rank, ", but got ",
                   axis));
  }
}

MSRT_REGISTER_OP(
    {.name = "all_to_all",
     .inputs = {"x"},
     .attrs = {{"split_count", Value(), "how many chunks (the group size)", AttrType::kInt},
               {"split_dim", Value(), "the axis split into chunks, chunk j going to rank j", AttrType::kInt},
               {"concat_dim", Value(), "the axis the received chunks are concatenated along, rank order",
                AttrType::kInt},
               kGroupAttr},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           int size = GroupSize(attrs);
           int64_t count = Attr(attrs, "split_count").as_int();
           int64_t split = Attr(attrs, "split_dim").as_int();
           int64_t concat = Attr(attrs, "concat_dim").as_int();
           if (count != size) {
             OpError(ErrorKind::kValue, "all_to_all",
                     StrCat("attribute 'split_count' must equal the size ", size, " of group '",
                            Attr(attrs, "group").as_string(), "', but got ", count));
           }
           size_t rank = in[0].shape.size();
           if (split < 0) split += static_cast<int64_t>(rank);
           if (concat < 0) concat += static_cast<int64_t>(rank);
           CheckAxis("all_to_all", "split_dim", split, rank);
           CheckAxis("all_to_all", "concat_dim", concat, rank);
           Shape shape = in[0].shape;
           if (shape[static_cast<size_t>(split)] % count != 0) {
             OpError(ErrorKind::kValue, "all_to_all",
                     StrCat("dimension ", split, " (split_dim) of input 'x' must be divisible by split_count ", count,
                            ", but got shape ", ShapeRepr(in[0].shape)));
           }
           shape[static_cast<size_t>(split)] /= count;
           shape[static_cast<size_t>(concat)] *= count;
           return Metas{{shape, in[0].dtype}};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
       return {Call1("all_to_all", {a.dys[0]},
                     {{"split_count", Attr(a.attrs, "split_count")},
                      {"split_dim", Attr(a.attrs, "concat_dim")},
                      {"concat_dim", Attr(a.attrs, "split_dim")},
                      {"group", Attr(a.attrs, "group")}})};
     },
     .props = {.side_effect = true},
     .doc = "splits x along split_dim into split_count chunks, sends chunk j to rank j, and concatenates what it "
            "receives along concat_dim, rank order",
     .api = {Primitive("comm_ops.AlltoAll(split_count, split_dim, concat_dim, group='nccl_world_group')(x)")}});

MSRT_REGISTER_OP({.name = "barrier",
                  .inputs = {},
                  .attrs = {kGroupAttr},
                  .infer =
                      [](const Metas&, const Dict& attrs) {
                        GroupSize(attrs);
                        return Metas{{Shape{}, DType::kInt32}};
                      },
                  .props = {.side_effect = true},
                  .doc = "returns (int32 0) when every rank of the group has entered it",
                  .api = {Primitive("comm_ops.Barrier(group='nccl_world_group')()")}});

MSRT_REGISTER_OP({.name = "send",
                  .inputs = {"x"},
                  .attrs = {{"sr_tag", Value(), "the tag a Receive names to match this send", AttrType::kInt},
                            {"dest_rank", Value(), "the group rank receiving x", AttrType::kInt},
                            kGroupAttr},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        CheckGroupRank("send", attrs, "dest_rank", GroupSize(attrs));
                        if (Attr(attrs, "sr_tag").as_int() < 0) {
                          OpError(ErrorKind::kValue, "send", "attribute 'sr_tag' must be >= 0");
                        }
                        return Metas{in[0]};
                      },
                  // MindSpore pairs Send's gradient with a Receive from dest_rank, which the
                  // receiving side's gradient sends (pipeline parallel); msrt does not differentiate
                  // Receive, so it refuses Send's gradient rather than wait for a tensor never sent.
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
                    OpError(ErrorKind::kRuntime, "send",
                            "the gradient of Send (pipeline parallel) is not supported; stop the gradient at the "
                            "sent tensor");
                  },
                  .props = {.side_effect = true},
                  .doc = "sends x to rank dest_rank of the group (its Receive names sr_tag); returns x",
                  .api = {Primitive("comm_ops.Send(sr_tag, dest_rank, group='nccl_world_group', "
                                    "group_back->~='nccl_world_group')(input_x->x)")}});

MSRT_REGISTER_OP({.name = "receive",
                  .inputs = {},
                  .attrs = {{"sr_tag", Value(), "the tag of the matching Send", AttrType::kInt},
                            {"src_rank", Value(), "the group rank sending", AttrType::kInt},
                            {"shape", Value(), "the received tensor's shape", AttrType::kShape},
                            {"dtype", Value(), "the received tensor's dtype", AttrType::kDType},
                            kGroupAttr},
                  .infer =
                      [](const Metas&, const Dict& attrs) {
                        CheckGroupRank("receive", attrs, "src_rank", GroupSize(attrs));
                        if (Attr(attrs, "sr_tag").as_int() < 0)
                          OpError(ErrorKind::kValue, "receive", "attribute 'sr_tag' must be >= 0");
                        auto dims = ShapeAttr("receive", attrs, "shape", 0);
                        return Metas{{Shape(dims.begin(), dims.end()), DTypeAttr("receive", attrs, "dtype")}};
                      },
                  .props = {.side_effect = true},
                  .doc = "receives the tensor rank src_rank of the group sends with sr_tag",
                  .api = {Primitive("comm_ops.Receive(sr_tag, src_rank, shape, dtype, group='nccl_world_group', "
                                    "group_back->~='nccl_world_group')()")}});

}  // namespace
}  // namespace msrt::ops
