// CPU kernels of the collective ops (ops/comm.cc): each runs the
// Communicator of its `group` attribute (Note [Collective ops]).
#include <cstring>

#include "kernels/kernel.h"
#include "ops/op_checks.h"
#include "parallel/groups.h"

namespace msrt::kernels::cpu {
namespace {

std::shared_ptr<parallel::Communicator> Group(const KernelArgs& args) {
  return parallel::GetGroup(ops::Attr(args.attrs, "group").as_string());
}

parallel::ReduceOp ReduceOpOf(const KernelArgs& args) {
  const std::string& op = ops::Attr(args.attrs, "op").as_string();
  if (op == "max") return parallel::ReduceOp::kMax;
  if (op == "min") return parallel::ReduceOp::kMin;
  if (op == "prod") return parallel::ReduceOp::kProd;
  return parallel::ReduceOp::kSum;
}

// Kernels run once their inputs are written: they use the raw forms on
// `raw()` pointers (the Tensor forms would wait on the tensors).
size_t Count(const Tensor& t) { return static_cast<size_t>(t.numel()); }

void AllReduce(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Group(args)->AllReduce(x.raw(), args.outputs[0].raw(), Count(x), x.dtype(), ReduceOpOf(args));
}

// Note [Collective ops] (all_reduce_fused): dst[i] = src[i] * scale.
template <typename T>
void Scaled(void* dst, const void* src, size_t n, double scale) {
  auto* d = static_cast<T*>(dst);
  const auto* s = static_cast<const T*>(src);
  const auto f = static_cast<T>(scale);
  for (size_t i = 0; i < n; ++i) d[i] = s[i] * f;
}

template <typename T, float (*kToFloat)(T), T (*kFromFloat)(float)>
void ScaledHalf(void* dst, const void* src, size_t n, double scale) {
  auto* d = static_cast<T*>(dst);
  const auto* s = static_cast<const T*>(src);
  const auto f = static_cast<float>(scale);
  for (size_t i = 0; i < n; ++i) d[i] = kFromFloat(kToFloat(s[i]) * f);
}

void AllReduceFused(KernelArgs& args) {
  const DType dtype = args.inputs[0].dtype();
  const double scale = ops::AttrFloat(args.attrs, "scale");
  size_t total = 0;
  for (const Tensor& x : args.inputs) total += Count(x);
  if (total == 0) return;
  void (*scaled)(void*, const void*, size_t, double) = nullptr;
  if (scale != 1.0) {  // inference allows it on floating dtypes only
    switch (dtype) {
      case DType::kFloat32: scaled = &Scaled<float>; break;
      case DType::kFloat64: scaled = &Scaled<double>; break;
      case DType::kFloat16: scaled = &ScaledHalf<Half, &HalfToFloat, &FloatToHalf>; break;
      case DType::kBFloat16: scaled = &ScaledHalf<BFloat16, &BFloat16ToFloat, &FloatToBFloat16>; break;
      default: MSRT_INTERNAL_ASSERT(false, "all_reduce_fused scales ", DTypeName(dtype));
    }
  }
  Tensor flat = Tensor::Empty({static_cast<int64_t>(total)}, dtype);
  auto* buffer = flat.raw<uint8_t>();
  size_t offset = 0;
  for (const Tensor& x : args.inputs) {
    if (scaled != nullptr) {
      scaled(buffer + offset, x.raw(), Count(x), scale);
    } else if (x.nbytes() > 0) {
      std::memcpy(buffer + offset, x.raw(), x.nbytes());
    }
    offset += x.nbytes();
  }
  Group(args)->AllReduce(buffer, buffer, total, dtype, ReduceOpOf(args));
  offset = 0;
  for (Tensor& y : args.outputs) {
    if (y.nbytes() > 0) std::memcpy(y.raw(), buffer + offset, y.nbytes());
    offset += y.nbytes();
  }
}

void AllGather(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Group(args)->AllGather(x.raw(), args.outputs[0].raw(), Count(x), x.dtype());
}

void ReduceScatter(KernelArgs& args) {
  const Tensor& y = args.outputs[0];
  Group(args)->ReduceScatter(args.inputs[0].raw(), y.raw(), Count(y), y.dtype(), ReduceOpOf(args));
}

void Broadcast(KernelArgs& args) {
  auto comm = Group(args);
  int root = static_cast<int>(ops::Attr(args.attrs, "root_rank").as_int());
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    Tensor& out = args.outputs[i];
    if (comm->rank() == root && out.nbytes() > 0) {
      std::memcpy(out.raw(), args.inputs[i].raw(), out.nbytes());
    }
    comm->Broadcast(out.raw(), Count(out), out.dtype(), root);
  }
}

// Bytes of `shape` as (outer, dims[axis], inner): items before, along and after `axis`.
struct Split3 {
  size_t outer = 1, along = 1, inner = 1;
};
Split3 Around(const Shape& shape, size_t axis, size_t item) {
  Split3 s;
  for (size_t d = 0; d < axis; ++d) s.outer *= static_cast<size_t>(shape[d]);
  s.along = static_cast<size_t>(shape[axis]);
  s.inner = item;
  for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= static_cast<size_t>(shape[d]);
  return s;
}

// AlltoAll: chunk j of split_dim goes to rank j; the chunk from rank i is
// block i of concat_dim. Chunks are made contiguous, exchanged, and placed.
void AllToAll(KernelArgs& args) {
  auto comm = Group(args);
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  auto n = static_cast<size_t>(comm->size());
  size_t rank = x.shape().size();
  auto axis = [rank](int64_t a) { return static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a); };
  size_t split = axis(ops::Attr(args.attrs, "split_dim").as_int());
  size_t concat = axis(ops::Attr(args.attrs, "concat_dim").as_int());
  auto item = static_cast<size_t>(ItemSize(x.dtype()));
  size_t total = x.nbytes();
  Tensor send = Tensor::Empty(x.shape(), x.dtype());
  Tensor recv = Tensor::Empty(x.shape(), x.dtype());
  // x as (outer, n * c, inner) → send as (n, outer, c, inner).
  Split3 s = Around(x.shape(), split, item);
  size_t c = s.along / n;
  const auto* src = x.raw<const uint8_t>();
  auto* packed = send.raw<uint8_t>();
  for (size_t j = 0; j < n; ++j) {
    for (size_t o = 0; o < s.outer; ++o) {
      std::memcpy(packed + ((j * s.outer + o) * c) * s.inner, src + (o * s.along + j * c) * s.inner, c * s.inner);
    }
  }
  if (total > 0) comm->AllToAll(send.raw(), recv.raw(), total / item / n, x.dtype());
  // recv as (n, outer', c', inner') with the chunk's shape → y as (outer', n * c', inner').
  Shape chunk = x.shape();
  chunk[split] /= static_cast<int64_t>(n);
  Split3 t = Around(chunk, concat, item);
  const auto* got = recv.raw<const uint8_t>();
  auto* dst = y.raw<uint8_t>();
  for (size_t i = 0; i < n; ++i) {
    for (size_t o = 0; o < t.outer; ++o) {
      std::memcpy(dst + (o * n * t.along + i * t.along) * t.inner, got + ((i * t.outer + o) * t.along) * t.inner,
                  t.along * t.inner);
    }
  }
}

void Barrier(KernelArgs& args) {
  Group(args)->Barrier();
  *args.outputs[0].raw<int32_t>() = 0;
}

void Send(KernelArgs& args) {
  auto comm = Group(args);
  const Tensor& x = args.inputs[0];
  comm->Send(x.raw(), Count(x), x.dtype(), static_cast<int>(ops::Attr(args.attrs, "dest_rank").as_int()),
             static_cast<uint32_t>(ops::Attr(args.attrs, "sr_tag").as_int()));
  if (x.nbytes() > 0) std::memcpy(args.outputs[0].raw(), x.raw(), x.nbytes());
}

void Receive(KernelArgs& args) {
  Tensor& y = args.outputs[0];
  Group(args)->Recv(y.raw(), Count(y), y.dtype(), static_cast<int>(ops::Attr(args.attrs, "src_rank").as_int()),
                    static_cast<uint32_t>(ops::Attr(args.attrs, "sr_tag").as_int()));
}

MSRT_REGISTER_KERNEL({.op = "all_reduce", .impl = "communicator", .run = &AllReduce});
MSRT_REGISTER_KERNEL({.op = "all_reduce_fused", .impl = "communicator", .run = &AllReduceFused});
MSRT_REGISTER_KERNEL({.op = "all_gather", .impl = "communicator", .run = &AllGather});
MSRT_REGISTER_KERNEL({.op = "reduce_scatter", .impl = "communicator", .run = &ReduceScatter});
MSRT_REGISTER_KERNEL({.op = "broadcast", .impl = "communicator", .run = &Broadcast});
MSRT_REGISTER_KERNEL({.op = "all_to_all", .impl = "communicator", .run = &AllToAll});
MSRT_REGISTER_KERNEL({.op = "barrier", .impl = "communicator", .run = &Barrier});
MSRT_REGISTER_KERNEL({.op = "send", .impl = "communicator", .run = &Send});
MSRT_REGISTER_KERNEL({.op = "receive", .impl = "communicator", .run = &Receive});

}  // namespace
}  // namespace msrt::kernels::cpu
