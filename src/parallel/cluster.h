// The cluster bootstrap: MindSpore's dynamic-cluster environment, the
// scheduler that hosts the rendezvous store, and the workers' side.
//
// Note [Cluster bootstrap]
//   A job is one scheduler and MS_WORKER_NUM workers. The scheduler serves
//   the rendezvous store (store.h) at MS_SCHED_HOST:MS_SCHED_PORT; every
//   other exchange goes through the store's keys:
//     cluster/arrivals          counter; a worker's arrival index `a`
//     cluster/node/<a>          what the worker says of itself (NodeInfo)
//     cluster/assign/<a>        its rank and the host of every rank
//     cluster/heartbeat/<rank>  counter the worker bumps every interval
//     cluster/released/<rank>   set by release()
//   Registration: the scheduler checks each arrival against the first (same
//   MS_WORKER_NUM as the scheduler, same msrt version, same hash of the
//   compile-affecting context) and refuses a mismatch. When all have
//   arrived it assigns ranks: a worker's MS_NODE_ID (a number) is its rank,
//   the others take the free ranks in arrival order; a local rank is the
//   order among the ranks on the same host. Then it watches heartbeats.
//   Failure: a mismatch, a worker missing when cluster_time_out passes, a
//   heartbeat not seen for the heartbeat timeout, or a worker on the
//   scheduler's host whose process is gone before it released. The
//   scheduler then aborts the store with a reason naming the rank, so every
//   worker's waiting and next store call fails with it; a worker's heartbeat
//   thread that sees it prints it and ends the process (status 1), and the
//   scheduler returns 1. When every rank released, it returns 0.
//   Under mpirun (OMPI_COMM_WORLD_*) or RANK_ID/RANK_SIZE there is no
//   separate scheduler: rank 0 runs one on a thread of its own process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "parallel/store.h"

namespace msrt::parallel {

enum class ClusterRole : uint8_t { kScheduler, kWorker };

/// A process's place in a job, read from its environment.
struct ClusterConfig {
  ClusterRole role = ClusterRole::kWorker;
  std::string sched_host = "127.0.0.1";
  uint16_t sched_port = 0;
  int worker_num = 0;
  /// The rank a worker asks for (MS_NODE_ID when a number, the rank under
  /// mpirun or RANK_ID), or -1.
  int requested_rank = -1;
  /// This worker also runs the scheduler (rank 0 under mpirun or RANK_ID).
  bool hosts_scheduler = false;
  /// How long the scheduler waits for every worker (MS_TOPO_TIMEOUT).
  std::chrono::milliseconds cluster_timeout{std::chrono::seconds(600)};
  /// A worker whose heartbeat is not seen for this long is lost
  /// (MSRT_HEARTBEAT_TIMEOUT).
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(30)};
  /// Where the configuration came from: "MS_ROLE", "OpenMPI" or "RANK_ID".
  std::string source;
};

/// The default port of the scheduler when MS_SCHED_PORT is not set under
/// mpirun or RANK_ID (msrun's default --master_port).
inline constexpr uint16_t kDefaultSchedulerPort = 8118;

/// Reads a variable; nullopt when unset.
using EnvReader = std::function<std::optional<std::string>(std::string_view name)>;
/// The process environment.
EnvReader ProcessEnv();

/// Whether the environment describes a cluster process at all (MS_ROLE,
/// OMPI_COMM_WORLD_SIZE or RANK_SIZE set).
bool InClusterEnv(const EnvReader& env = ProcessEnv());
/// The configuration the environment describes. RuntimeError listing the
/// missing variables and showing how to launch with msrun; RuntimeError
/// for MS_ROLE=MS_PSERVER or MS_SERVER_NUM > 0 (no parameter server yet);
/// ValueError for a malformed value (naming the variable and the value).
ClusterConfig ReadClusterConfig(const EnvReader& env = ProcessEnv());

/// What a worker tells the scheduler when it registers.
struct NodeInfo {
  int worker_num = 0;
  std::string version;
  uint64_t context_hash = 0;
  std::string host;
  int requested_rank = -1;
  int64_t pid = 0;
  /// Which machine and process namespace the worker runs in (LocalMachine()):
  /// what local ranks are grouped by, and where its pid means something.
  std::string machine;
};
std::string EncodeNodeInfo(const NodeInfo& info);
/// nullopt when the text is malformed.
std::optional<NodeInfo> DecodeNodeInfo(const std::string& text);

/// This machine's IPv4 address on the route to `host` (how a worker's
/// transport is reached when MSRT_HOST_IP is not set); "127.0.0.1" when
/// `host` does not resolve.
std::string AddressToward(const std::string& host, uint16_t port);

/// This machine's host name (shown in messages).
std::string LocalHostName();

/// This machine and process namespace: the host name, the kernel's boot id
/// and the pid namespace. Two machines with the same host name (cloned
/// images, containers) differ here, and so do two containers of one machine.
std::string LocalMachine();

struct SchedulerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: a free port (Scheduler::port())
  int worker_num = 1;
  std::string version;
  std::chrono::milliseconds cluster_timeout{std::chrono::seconds(600)};
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(30)};
};

/// The scheduler: hosts the store, registers and watches the workers.
class Scheduler {
 public:
  /// Binds the store (RuntimeError naming host:port when it can not).
  static std::unique_ptr<Scheduler> Listen(const SchedulerOptions& options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  uint16_t port() const;
  /// Serves until every worker released (0) or the job failed (1, after
  /// aborting the store with `error()`; the workers are given a moment to
  /// read the reason). Call once.
  int Run();
  /// Why the job failed; empty when it did not.
  const std::string& error() const { return error_; }

 private:
  explicit Scheduler(SchedulerOptions options, std::unique_ptr<StoreServer> server);
  int Fail(std::string reason);
  // Reads every arrival; false (after Fail) on a refused node.
  bool Register(std::vector<NodeInfo>* nodes, int* failed_code);
  void Assign(const std::vector<NodeInfo>& nodes);

  SchedulerOptions options_;
  std::unique_ptr<StoreServer> server_;
  std::string error_;
  std::vector<int> rank_of_arrival_;
  std::vector<NodeInfo> node_of_rank_;
};

struct WorkerOptions {
  std::string sched_host = "127.0.0.1";
  uint16_t sched_port = 0;
  NodeInfo info;
  /// How long to wait for the scheduler and the other workers.
  std::chrono::milliseconds cluster_timeout{std::chrono::seconds(600)};
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(30)};
  /// When the cluster fails after registration (the store aborted or the
  /// scheduler gone), print the reason and end the process with status 1.
  /// When false, the failure is only recorded (`failure()`).
  bool exit_on_failure = true;
};

/// A worker's membership: registration, heartbeats, release.
class ClusterWorker {
 public:
  /// Registers and waits for the rank assignment (RuntimeError with the
  /// scheduler's reason when it refuses or the job fails), then starts the
  /// heartbeat thread.
  static std::unique_ptr<ClusterWorker> Join(const WorkerOptions& options);
  /// Stops the heartbeats (without releasing: to the scheduler this looks
  /// like a lost worker unless Release ran).
  ~ClusterWorker();
  ClusterWorker(const ClusterWorker&) = delete;
  ClusterWorker& operator=(const ClusterWorker&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(machines_.size()); }
  /// The machine of every rank (NodeInfo::machine).
  const std::vector<std::string>& machines() const { return machines_; }
  /// Order of `world_rank` among the ranks of `members` on its host, and
  /// the number of those ranks (for the world: all ranks).
  int LocalRank(const std::vector<int>& members, int world_rank) const;
  int LocalSize(const std::vector<int>& members, int world_rank) const;
  /// A client of the job's store (for the communicators).
  std::shared_ptr<StoreClient> store() const { return store_; }
  /// Deregisters and stops the heartbeats. Idempotent.
  void Release();
  /// The cluster failure the heartbeat thread saw, or empty.
  std::string failure() const;

 private:
  explicit ClusterWorker(WorkerOptions options);
  void Heartbeat();

  WorkerOptions options_;
  std::shared_ptr<StoreClient> store_;
  std::unique_ptr<StoreClient> heartbeat_store_;
  int rank_ = -1;
  std::vector<std::string> machines_;
  bool released_ = false;
  mutable std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::string failure_;
  std::thread heartbeat_thread_;
};

/// The interval between a worker's heartbeats for a heartbeat timeout.
std::chrono::milliseconds HeartbeatInterval(std::chrono::milliseconds heartbeat_timeout);

}  // namespace msrt::parallel

namespace msrt::parallel {

/// What init() made of this process.
struct WorldInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string backend;     // "mccl" (Gloo on CPU) or "nccl"
  std::string world_name;  // "mccl_world_group" or "nccl_world_group"
};

/// msrt.communication.init() on a worker: joins the cluster `config`
/// describes (running the scheduler on a thread when `config` says so),
/// creates the world communicator of `backend` ("mccl" or "gloo": Gloo on
/// CPU; "nccl": CUDA; "hccl": RuntimeError, no Ascend backend), registers it
/// as the world group and makes the auto-parallel context's device_num and
/// global_rank the world's (ValueError, nothing joined, when device_num was
/// set to another size). RuntimeError when already initialized.
WorldInfo InitWorld(const ClusterConfig& config, const std::string& backend, const std::string& version,
                    uint64_t context_hash);
/// The world of the last InitWorld; RuntimeError before init.
const WorldInfo& CurrentWorld();
bool WorldInitialized();
/// The membership (local ranks of groups); RuntimeError before init.
const ClusterWorker& CurrentWorker();
/// msrt.communication.release(): clears the groups, deregisters, and waits
/// for an in-process scheduler to finish. Nothing happens before init.
void ReleaseWorld();
/// create_group: a sub-group of the world over `world_ranks`, registered as
/// `name` once every member has connected (a barrier on it, so no member
/// closes it while another is still connecting). ValueError for a world
/// name or a name in use; RuntimeError before init.
void CreateGroup(const std::string& name, const std::vector<int>& world_ranks);
/// destroy_group: ValueError for the world or an unknown name.
void DestroyGroup(const std::string& name);
/// A scheduler process (MS_ROLE=MS_SCHED): serves the job to its end; the
/// process's exit status (0, or 1 after printing why the job failed).
int RunSchedulerProcess(const ClusterConfig& config, const std::string& version);

}  // namespace msrt::parallel
