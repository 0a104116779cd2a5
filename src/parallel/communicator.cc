// The backend-independent half of Communicator: checks, rank maps, groups.
#include "parallel/communicator.h"

#include <algorithm>
#include <utility>

#include "core/views.h"
#include "msrt/core/errors.h"

namespace msrt::parallel {

namespace {

std::string ShapeText(const Shape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += StrCat(i == 0 ? "" : ", ", shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::string RankList(const std::vector<int>& ranks) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i) text += StrCat(i == 0 ? "" : ", ", ranks[i]);
  return text + "]";
}

// `shape` with dimension 0 replaced.
Shape WithDim0(const Shape& shape, int64_t dim0) {
  Shape result = shape;
  result[0] = dim0;
  return result;
}

}  // namespace

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kProd: return "prod";
  }
  return "?";
}

void CheckWorld(int rank, int size) {
  MSRT_CHECK_VALUE(size >= 1, "the number of ranks must be at least 1, got ", size);
  MSRT_CHECK_VALUE(rank >= 0 && rank < size, "rank must be in [0, ", size, "), got ", rank);
}

Communicator::Communicator(int rank, std::vector<int> world_ranks, std::chrono::milliseconds timeout, std::string key)
    : rank_(rank), world_ranks_(std::move(world_ranks)), timeout_(timeout), key_(std::move(key)) {
  MSRT_INTERNAL_ASSERT(rank_ >= 0 && rank_ < static_cast<int>(world_ranks_.size()));
  MSRT_CHECK_VALUE(timeout.count() > 0, "a communicator's timeout must be positive, got ", timeout.count(), " ms");
}

int Communicator::WorldRank(int group_rank) const {
  MSRT_CHECK_VALUE(group_rank >= 0 && group_rank < size(), "group rank must be in [0, ", size(), "), got ", group_rank);
  return world_ranks_[static_cast<size_t>(group_rank)];
}

int Communicator::GroupRank(int world_rank) const {
  auto it = std::find(world_ranks_.begin(), world_ranks_.end(), world_rank);
  return it == world_ranks_.end() ? -1 : static_cast<int>(it - world_ranks_.begin());
}

void Communicator::set_timeout(std::chrono::milliseconds timeout) {
  MSRT_CHECK_VALUE(timeout.count() > 0, "a communicator's timeout must be positive, got ", timeout.count(), " ms");
  timeout_ = timeout;
}

std::string Communicator::Describe(std::string_view call) const {
  return StrCat(call, " (", backend(), ", rank ", rank_, " of ", size(), ")");
}

void Communicator::CheckTensor(const Tensor& tensor, std::string_view call, std::string_view role) const {
  MSRT_CHECK_VALUE(tensor.defined(), "For '", call, "', the ", role, " tensor is undefined");
  MSRT_CHECK_VALUE(!tensor.symbolic(), "For '", call, "', the ", role,
                   " tensor is a value of a graph being captured; collectives run on concrete tensors");
  MSRT_CHECK_VALUE(tensor.device() == device(), "For '", call, "', the ", role, " tensor must be on ",
                   DeviceTargetName(device()), " (the ", backend(), " communicator's device), but it is on ",
                   DeviceTargetName(tensor.device()));
}

void Communicator::CheckPeer(int peer, std::string_view call, std::string_view role) const {
  MSRT_CHECK_VALUE(peer >= 0 && peer < size(), "For '", call, "', ", role, " must be a group rank in [0, ", size(),
                   "), got ", peer);
}

// ------------------------------------------------------------ tensor forms

namespace {

// The memory of a tensor a collective writes: written, and its own, not
// shared with a view (Note [Views] in src/core/views.cc).
void* Writable(Tensor& tensor) {
  tensor.Sync();
  DetachFromViews(tensor);
  tensor.impl()->storage->MarkWritten();  // Note [Storage stamps]
  return tensor.raw();
}

}  // namespace

void Communicator::AllReduce(Tensor& tensor, ReduceOp op) {
  CheckTensor(tensor, "AllReduce", "input");
  void* data = Writable(tensor);
  AllReduce(data, data, static_cast<size_t>(tensor.numel()), tensor.dtype(), op);
}

void Communicator::AllReduce(const Tensor& input, Tensor& output, ReduceOp op) {
  CheckTensor(input, "AllReduce", "input");
  CheckTensor(output, "AllReduce", "output");
  MSRT_CHECK_TYPE(input.dtype() == output.dtype(), "For 'AllReduce', the output's dtype must be the input's ",
                  DTypeName(input.dtype()), ", but got ", DTypeName(output.dtype()));
  MSRT_CHECK_VALUE(input.shape() == output.shape(), "For 'AllReduce', the output's shape must be the input's ",
                   ShapeText(input.shape()), ", but got ", ShapeText(output.shape()));
  const void* in = input.data();
  AllReduce(in, Writable(output), static_cast<size_t>(input.numel()), input.dtype(), op);
}

void Communicator::AllGather(const Tensor& input, Tensor& output) {
  CheckTensor(input, "AllGather", "input");
  CheckTensor(output, "AllGather", "output");
  MSRT_CHECK_TYPE(input.dtype() == output.dtype(), "For 'AllGather', the output's dtype must be the input's ",
                  DTypeName(input.dtype()), ", but got ", DTypeName(output.dtype()));
  MSRT_CHECK_VALUE(input.ndim() >= 1, "For 'AllGather', the input must have at least 1 dimension, got a 0-d tensor");
  Shape expected = WithDim0(input.shape(), input.shape()[0] * size());
  MSRT_CHECK_VALUE(output.shape() == expected, "For 'AllGather', the output's shape must be ", ShapeText(expected),
                   " (", size(), " ranks times the input's ", ShapeText(input.shape()), "), but got ",
                   ShapeText(output.shape()));
  const void* in = input.data();
  AllGather(in, Writable(output), static_cast<size_t>(input.numel()), input.dtype());
}

void Communicator::ReduceScatter(const Tensor& input, Tensor& output, ReduceOp op) {
  CheckTensor(input, "ReduceScatter", "input");
  CheckTensor(output, "ReduceScatter", "output");
  MSRT_CHECK_TYPE(input.dtype() == output.dtype(), "For 'ReduceScatter', the output's dtype must be the input's ",
                  DTypeName(input.dtype()), ", but got ", DTypeName(output.dtype()));
  MSRT_CHECK_VALUE(input.ndim() >= 1 && input.shape()[0] % size() == 0, "For 'ReduceScatter', the input's first ",
                   "dimension must be divisible by the group size ", size(), ", but the input's shape is ",
                   ShapeText(input.shape()));
  Shape expected = WithDim0(input.shape(), input.shape()[0] / size());
  MSRT_CHECK_VALUE(output.shape() == expected, "For 'ReduceScatter', the output's shape must be ", ShapeText(expected),
                   ", but got ", ShapeText(output.shape()));
  const void* in = input.data();
  ReduceScatter(in, Writable(output), static_cast<size_t>(output.numel()), input.dtype(), op);
}

void Communicator::Broadcast(Tensor& tensor, int root) {
  CheckTensor(tensor, "Broadcast", "input");
  CheckPeer(root, "Broadcast", "root");
  Broadcast(Writable(tensor), static_cast<size_t>(tensor.numel()), tensor.dtype(), root);
}

void Communicator::AllToAll(const Tensor& input, Tensor& output) {
  CheckTensor(input, "AllToAll", "input");
  CheckTensor(output, "AllToAll", "output");
  MSRT_CHECK_TYPE(input.dtype() == output.dtype(), "For 'AllToAll', the output's dtype must be the input's ",
                  DTypeName(input.dtype()), ", but got ", DTypeName(output.dtype()));
  MSRT_CHECK_VALUE(input.ndim() >= 1 && input.shape()[0] % size() == 0, "For 'AllToAll', the input's first ",
                   "dimension must be divisible by the group size ", size(), ", but the input's shape is ",
                   ShapeText(input.shape()));
  MSRT_CHECK_VALUE(output.shape() == input.shape(), "For 'AllToAll', the output's shape must be the input's ",
                   ShapeText(input.shape()), ", but got ", ShapeText(output.shape()));
  MSRT_CHECK_VALUE(!input.same(output), "For 'AllToAll', the output must be a tensor other than the input");
  const void* in = input.data();
  AllToAll(in, Writable(output), static_cast<size_t>(input.numel() / size()), input.dtype());
}

void Communicator::Send(const Tensor& tensor, int dst, uint32_t tag) {
  CheckTensor(tensor, "Send", "input");
  Send(tensor.data(), static_cast<size_t>(tensor.numel()), tensor.dtype(), dst, tag);
}

void Communicator::Recv(Tensor& tensor, int src, uint32_t tag) {
  CheckTensor(tensor, "Receive", "output");
  Recv(Writable(tensor), static_cast<size_t>(tensor.numel()), tensor.dtype(), src, tag);
}

void Communicator::Barrier() { RunBarrier(); }

// --------------------------------------------------------------- raw forms

void Communicator::AllReduce(const void* input, void* output, size_t count, DType dtype, ReduceOp op) {
  RunAllReduce(input, output, count, dtype, op);
}

void Communicator::AllGather(const void* input, void* output, size_t count, DType dtype) {
  RunAllGather(input, output, count, dtype);
}

void Communicator::ReduceScatter(const void* input, void* output, size_t count, DType dtype, ReduceOp op) {
  RunReduceScatter(input, output, count, dtype, op);
}

void Communicator::Broadcast(void* buffer, size_t count, DType dtype, int root) {
  CheckPeer(root, "Broadcast", "root");
  RunBroadcast(buffer, count, dtype, root);
}

void Communicator::AllToAll(const void* input, void* output, size_t count, DType dtype) {
  MSRT_CHECK_VALUE(input != output || count == 0, "For 'AllToAll', the output must be a buffer other than the input");
  RunAllToAll(input, output, count, dtype);
}

void Communicator::Send(const void* data, size_t count, DType dtype, int dst, uint32_t tag) {
  CheckPeer(dst, "Send", "dst");
  MSRT_CHECK_VALUE(dst != rank_, "For 'Send', dst must be another rank than this one (", rank_, ")");
  RunSend(data, count, dtype, dst, tag);
}

void Communicator::Recv(void* data, size_t count, DType dtype, int src, uint32_t tag) {
  CheckPeer(src, "Receive", "src");
  MSRT_CHECK_VALUE(src != rank_, "For 'Receive', src must be another rank than this one (", rank_, ")");
  RunRecv(data, count, dtype, src, tag);
}

std::unique_ptr<Communicator> Communicator::NewGroup(const std::vector<int>& world_ranks) {
  MSRT_CHECK_VALUE(!world_ranks.empty(), "a group needs at least one rank, got an empty list");
  std::vector<int> sorted = world_ranks;
  std::sort(sorted.begin(), sorted.end());
  MSRT_CHECK_VALUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
                   "a group's ranks must be distinct, got ", RankList(world_ranks));
  for (int r : world_ranks) {
    MSRT_CHECK_VALUE(GroupRank(r) >= 0, "rank ", r, " of the new group ", RankList(world_ranks),
                     " is not a member of this group ", RankList(world_ranks_));
  }
  int own = world_ranks_[static_cast<size_t>(rank_)];
  MSRT_CHECK_VALUE(std::find(world_ranks.begin(), world_ranks.end(), own) != world_ranks.end(), "this process (rank ",
                   own, ") is not in the new group ", RankList(world_ranks), "; only its members create it");
  // The members agree on the list and on how many groups of that list each
  // made before: together they name the group in the store.
  int ordinal = 0;
  auto made = std::find_if(groups_made_.begin(), groups_made_.end(),
                           [&](const auto& entry) { return entry.first == world_ranks; });
  if (made == groups_made_.end()) {
    groups_made_.emplace_back(world_ranks, 1);
  } else {
    ordinal = made->second++;
  }
  std::string key = key_ + "/group";
  for (int r : world_ranks) key += StrCat("-", r);
  key += StrCat("/", ordinal);
  return RunNewGroup(world_ranks, key);
}

}  // namespace msrt::parallel
