// `_C.parallel`: the native side of msrt.communication and data parallel.
// The cluster bootstrap (src/parallel/cluster.h: the environment's cluster
// configuration, the scheduler, the world a worker joins, its sub-groups),
// the named groups collective ops run on (src/parallel/groups.h), and, for
// tests and benchmarks without a cluster, a rendezvous store server and a
// world met through it (Note [Communicator layering]).
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "bindings.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "parallel/cluster.h"
#include "parallel/communicator.h"
#include "parallel/groups.h"
#include "parallel/store.h"

namespace msrt::python {
namespace {

using parallel::ClusterRole;

py::dict WorldDict(const parallel::WorldInfo& info) {
  py::dict d;
  d["rank"] = info.rank;
  d["size"] = info.size;
  d["local_rank"] = info.local_rank;
  d["local_size"] = info.local_size;
  d["backend"] = info.backend;
  d["world_name"] = info.world_name;
  return d;
}

// The hash of the compile-affecting context every worker must share: the
// rank (global_rank) differs between workers by design and is left out.
uint64_t SharedContextHash() {
  context::ScopedOverride rank_zero(context::Family::kAutoParallel, Dict{{"global_rank", Value(0)}});
  return context::Global().CompileKeyHash();
}

}  // namespace

void BindParallel(py::module_& m) {
  py::module_ p = m.def_submodule("parallel",
                                  "Internal: the cluster, communicators and groups (msrt.communication "
                                  "and data parallel use it).");
  // --- The cluster (msrt.communication.init and release) ---
  p.def(
      "in_cluster_env", [] { return parallel::InClusterEnv(); },
      "Whether MS_ROLE, OMPI_COMM_WORLD_SIZE or RANK_SIZE is set.");
  p.def(
      "cluster_config",
      [] {
        parallel::ClusterConfig config = parallel::ReadClusterConfig();
        py::dict d;
        d["role"] = config.role == ClusterRole::kScheduler ? "MS_SCHED" : "MS_WORKER";
        d["sched_host"] = config.sched_host;
        d["sched_port"] = config.sched_port;
        d["worker_num"] = config.worker_num;
        d["requested_rank"] = config.requested_rank;
        d["hosts_scheduler"] = config.hosts_scheduler;
        d["source"] = config.source;
        return d;
      },
      "The cluster configuration of the environment (RuntimeError naming what is missing).");
  p.def(
      "run_scheduler",
      [](const std::string& version) {
        parallel::ClusterConfig config = parallel::ReadClusterConfig();
        py::gil_scoped_release release;
        return parallel::RunSchedulerProcess(config, version);
      },
      py::arg("version"), "Serves the job as its scheduler; the process's exit status.");
  p.def(
      "init_world",
      [](const std::string& backend, const std::string& version) {
        parallel::ClusterConfig config = parallel::ReadClusterConfig();
        uint64_t hash = SharedContextHash();
        parallel::WorldInfo info;
        {
          py::gil_scoped_release release;
          info = parallel::InitWorld(config, backend, version, hash);
        }
        return WorldDict(info);
      },
      py::arg("backend"), py::arg("version"), "Joins the cluster the environment describes; the world's facts.");
  p.def("world_initialized", &parallel::WorldInitialized);
  p.def("world_info", [] { return WorldDict(parallel::CurrentWorld()); });
  p.def("release_world", [] {
    py::gil_scoped_release release;
    parallel::ReleaseWorld();
  });
  p.def("built_with_nccl", &parallel::BuiltWithNccl);

  // --- A world without a cluster (tests, benchmarks) ---
  py::class_<parallel::StoreServer>(p, "StoreServer")
      .def(py::init([](const std::string& host, uint16_t port) {
             auto server = parallel::StoreServer::Listen({.host = host, .port = port});
             server->Start();
             return server;
           }),
           py::arg("host") = "127.0.0.1", py::arg("port") = 0, "Binds host:port (0: a free port) and serves.")
      .def_property_readonly("port", &parallel::StoreServer::port)
      .def("stop", &parallel::StoreServer::Stop, py::call_guard<py::gil_scoped_release>());
  p.def(
      "init_from_store",
      [](const std::string& host, uint16_t port, int rank, int size, double timeout_s) {
        parallel::CheckWorld(rank, size);
        MSRT_CHECK_VALUE(!parallel::HasGroup(parallel::kWorldGroup),
                         "the world communicator is already initialized in this process");
        auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
        auto store = std::make_shared<parallel::StoreClient>(
            parallel::StoreClientOptions{.host = host, .port = port, .connect_timeout = timeout, .timeout = timeout});
        std::shared_ptr<parallel::Communicator> world = parallel::CreateGlooCommunicator(store, rank, size,
                                                                                         {.timeout = timeout});
        parallel::RegisterGroup(parallel::kWorldGroup, world);  // every world group name resolves to it
      },
      py::arg("host"), py::arg("port"), py::arg("rank"), py::arg("size"), py::arg("timeout") = 300.0,
      py::call_guard<py::gil_scoped_release>(),
      "Meets the other ranks at the store host:port and registers the world communicator (Gloo, CPU) as the "
      "world group.");

  // --- Groups ---
  p.attr("WORLD_GROUP") = parallel::kWorldGroup;
  p.def(
      "create_group",
      [](const std::string& name, const std::vector<int>& ranks) {
        py::gil_scoped_release release;
        parallel::CreateGroup(name, ranks);
      },
      py::arg("group"), py::arg("rank_ids"), "The sub-group of world ranks `rank_ids`, registered as `group`.");
  p.def("destroy_group", &parallel::DestroyGroup, py::arg("group"));
  p.def("group_names", &parallel::GroupNames);
  p.def(
      "group_size", [](const std::string& group) { return parallel::GetGroup(group)->size(); }, py::arg("group"));
  p.def(
      "group_info",
      [](const std::string& name) {
        auto comm = parallel::GetGroup(name);
        const auto& worker = parallel::CurrentWorker();
        int world_rank = parallel::CurrentWorld().rank;
        py::dict d;
        d["rank"] = comm->rank();
        d["size"] = comm->size();
        d["world_ranks"] = comm->world_ranks();
        d["local_rank"] = worker.LocalRank(comm->world_ranks(), world_rank);
        d["local_size"] = worker.LocalSize(comm->world_ranks(), world_rank);
        return d;
      },
      py::arg("group"), "Rank, size, world ranks and local rank and size in a cluster's group.");
  p.def(
      "group_rank_of_world_rank",
      [](const std::string& group, int world_rank) {
        int rank = parallel::GetGroup(group)->GroupRank(world_rank);
        MSRT_CHECK_VALUE(rank >= 0, "rank ", world_rank, " is not a member of group '", group, "'");
        return rank;
      },
      py::arg("group"), py::arg("world_rank"));
}

}  // namespace msrt::python
