// Collective communication between processes.
//
// Note [Communicator layering]
//   Bottom to top:
//   1. The rendezvous store (store.h): a TCP key-value store served by one
//      process (the tests' and the benchmark's parent process; it is made to
//      be hosted by a cluster's scheduler). Workers publish addresses and ids
//      there and meet.
//   2. `Communicator` (this file): rank and size within a group, the
//      group-rank <-> world-rank map, and the collectives on msrt Tensors
//      and on raw buffers. The Tensor forms check dtypes, shapes and devices
//      here, once, and raise msrt's typed errors; then they call the raw
//      forms, which check ranks and call the backend.
//   3. Backends, chosen by CMake (src/CMakeLists.txt): gloo/ (CPU
//      tensors over Gloo's TCP transport) and nccl/ (CUDA tensors), or the
//      no_gloo/ and no_nccl/ stand-ins, whose factories raise a RuntimeError
//      saying what msrt was built without. Nothing above this file names a
//      backend's types.
//   4. The named groups (groups.h) and the collective OpDefs (ops/comm.cc,
//      Note [Collective ops]), whose kernels call the Communicator their
//      `group` attribute names.
//   Meant to stand on this interface (not written yet): the cluster
//   bootstrap (a scheduler that reads MS_ROLE, MS_SCHED_HOST, ..., hosts the
//   StoreServer and assigns ranks), msrt.communication's management API in
//   Python, and data parallel's gradient reducer.
//
//   Every member of a group must make the same calls in the same order (as
//   with MPI, Gloo and NCCL); a call that fails its local checks raises before
//   anything is sent. A backend that failed mid-call (a peer died, a timeout)
//   leaves its communicator unusable: later calls raise the first failure.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "msrt/core/device.h"
#include "msrt/core/dtype.h"
#include "msrt/tensor/tensor.h"

namespace msrt::parallel {

class StoreClient;

/// Reductions of AllReduce and ReduceScatter. On bool tensors sum and max
/// are logical or, prod and min logical and.
enum class ReduceOp : uint8_t { kSum, kMax, kMin, kProd };
/// "sum", "max", "min", "prod" (MindSpore's ReduceOp names, lower case).
std::string_view ReduceOpName(ReduceOp op);

struct CommunicatorOptions {
  /// Limit on each call (and on meeting the peers when connecting).
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  /// The address this process's transport binds and announces to its peers.
  std::string hostname = "127.0.0.1";
  /// Namespace of this communicator's keys in the store (one per job).
  std::string store_prefix = "msrt";
};

/// A group of processes that run collectives together. One thread at a time
/// calls a communicator; calls block until this rank's part is done.
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// This process's rank in the group, and the group's size.
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(world_ranks_.size()); }
  /// The world rank of each group rank.
  const std::vector<int>& world_ranks() const { return world_ranks_; }
  /// ValueError when `group_rank` is not in [0, size).
  int WorldRank(int group_rank) const;
  /// The group rank of `world_rank`, or -1 when it is not a member.
  int GroupRank(int world_rank) const;
  /// This group's name in the store: "<store_prefix>/world" for the world,
  /// then "/group-<ranks>/<n>" per NewGroup (n: the how-manieth group of
  /// those ranks its parent made). One world per store prefix.
  const std::string& key() const { return key_; }
  /// "gloo" or "nccl".
  virtual std::string_view backend() const = 0;
  /// Where the tensors of this communicator live.
  virtual DeviceTarget device() const = 0;

  std::chrono::milliseconds timeout() const { return timeout_; }
  /// ValueError unless positive.
  void set_timeout(std::chrono::milliseconds timeout);

  // Tensor forms: dtypes must match (TypeError), shapes must fit (ValueError),
  // tensors must be on `device()` (ValueError). Chunked collectives split
  // dimension 0 into `size()` equal parts, rank order.

  /// Reduces `tensor` across the group, in place.
  void AllReduce(Tensor& tensor, ReduceOp op);
  /// `output` (same shape and dtype as `input`) receives the reduction.
  void AllReduce(const Tensor& input, Tensor& output, ReduceOp op);
  /// `output` is the inputs concatenated along dimension 0, rank order:
  /// shape (size * d0, ...).
  void AllGather(const Tensor& input, Tensor& output);
  /// `input` (size * d, ...) is reduced; rank r receives chunk r, (d, ...).
  void ReduceScatter(const Tensor& input, Tensor& output, ReduceOp op);
  /// Every rank's `tensor` receives rank `root`'s.
  void Broadcast(Tensor& tensor, int root);
  /// Chunk j of rank i's `input` becomes chunk i of rank j's `output`
  /// (same shape as `input`).
  void AllToAll(const Tensor& input, Tensor& output);
  /// Point to point; a Send matches the Recv from this rank with its tag.
  void Send(const Tensor& tensor, int dst, uint32_t tag = 0);
  void Recv(Tensor& tensor, int src, uint32_t tag = 0);
  /// Returns when every rank of the group has entered it.
  void Barrier();

  // Raw forms over host or device pointers of `device()`; `count` is in
  // elements of `dtype`: the whole buffer for AllReduce and Broadcast, one
  // rank's chunk for AllGather, ReduceScatter and AllToAll. `input` may
  // equal `output` for AllReduce.
  void AllReduce(const void* input, void* output, size_t count, DType dtype, ReduceOp op);
  void AllGather(const void* input, void* output, size_t count, DType dtype);
  void ReduceScatter(const void* input, void* output, size_t count, DType dtype, ReduceOp op);
  void Broadcast(void* buffer, size_t count, DType dtype, int root);
  void AllToAll(const void* input, void* output, size_t count, DType dtype);
  void Send(const void* data, size_t count, DType dtype, int dst, uint32_t tag = 0);
  void Recv(void* data, size_t count, DType dtype, int src, uint32_t tag = 0);

  /// A sub-group of `world_ranks` (distinct members of this group; group
  /// rank = position in the list). Every listed process makes the same call
  /// with the same list; ValueError when this process is not in it.
  std::unique_ptr<Communicator> NewGroup(const std::vector<int>& world_ranks);

 protected:
  /// `key` names this group in the store (Communicator::key()).
  Communicator(int rank, std::vector<int> world_ranks, std::chrono::milliseconds timeout, std::string key);

  // The backend's work; ranks are group ranks, already checked.
  virtual void RunAllReduce(const void* input, void* output, size_t count, DType dtype, ReduceOp op) = 0;
  virtual void RunAllGather(const void* input, void* output, size_t count, DType dtype) = 0;
  virtual void RunReduceScatter(const void* input, void* output, size_t count, DType dtype, ReduceOp op) = 0;
  virtual void RunBroadcast(void* buffer, size_t count, DType dtype, int root) = 0;
  virtual void RunAllToAll(const void* input, void* output, size_t count, DType dtype) = 0;
  virtual void RunSend(const void* data, size_t count, DType dtype, int dst, uint32_t tag) = 0;
  virtual void RunRecv(void* data, size_t count, DType dtype, int src, uint32_t tag) = 0;
  virtual void RunBarrier() = 0;
  /// `world_ranks` is checked; `key` names the new group in the store, the
  /// same on every member and distinct from every other group's.
  virtual std::unique_ptr<Communicator> RunNewGroup(const std::vector<int>& world_ranks, const std::string& key) = 0;

  /// "AllReduce (gloo, rank 1 of 4)": how backend errors name a call.
  std::string Describe(std::string_view call) const;

 private:
  void CheckTensor(const Tensor& tensor, std::string_view call, std::string_view role) const;
  void CheckPeer(int peer, std::string_view call, std::string_view role) const;

  int rank_;
  std::vector<int> world_ranks_;
  std::chrono::milliseconds timeout_;
  std::string key_;
  // How many groups of each rank list this process made (NewGroup's keys).
  std::vector<std::pair<std::vector<int>, int>> groups_made_;
};

/// Whether this build has the Gloo and the NCCL backends.
bool BuiltWithGloo();
bool BuiltWithNccl();

/// The world communicator over Gloo's TCP transport (CPU tensors). Every
/// rank 0..size-1 calls it with a client of the same store; it returns when
/// all have connected (RuntimeError after `options.timeout`). RuntimeError
/// when msrt was built without Gloo.
std::unique_ptr<Communicator> CreateGlooCommunicator(std::shared_ptr<StoreClient> store, int rank, int size,
                                                     const CommunicatorOptions& options = {});

/// The world communicator over NCCL (CUDA tensors on the current device):
/// rank 0 makes NCCL's unique id and publishes it through the store.
/// RuntimeError when msrt was built without NCCL or no CUDA device is
/// usable.
std::unique_ptr<Communicator> CreateNcclCommunicator(std::shared_ptr<StoreClient> store, int rank, int size,
                                                     const CommunicatorOptions& options = {});

/// A fresh NCCL unique id (ncclGetUniqueId: the root's bootstrap address),
/// the bytes CreateNcclCommunicator shares through the store. RuntimeError
/// when msrt was built without NCCL.
std::vector<uint8_t> MakeNcclUniqueId();

/// ValueError unless 0 <= rank < size and size >= 1 (the factories' check).
void CheckWorld(int rank, int size);

}  // namespace msrt::parallel
