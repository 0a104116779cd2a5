// msrt.communication's native side: the cluster bootstrap (src/parallel/
// cluster.h) and the group registry (src/parallel/groups.h).
#include <pybind11/stl.h>

#include "bindings.h"
#include "msrt/context/context.h"
#include "parallel/cluster.h"
#include "parallel/groups.h"

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
  m.def(
      "_in_cluster_env", [] { return parallel::InClusterEnv(); },
      "Whether MS_ROLE, OMPI_COMM_WORLD_SIZE or RANK_SIZE is set.");
  m.def(
      "_cluster_config",
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
  m.def(
      "_run_scheduler",
      [](const std::string& version) {
        parallel::ClusterConfig config = parallel::ReadClusterConfig();
        py::gil_scoped_release release;
        return parallel::RunSchedulerProcess(config, version);
      },
      py::arg("version"), "Serves the job as its scheduler; the process's exit status.");
  m.def(
      "_init_world",
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
      py::arg("backend"), py::arg("version"));
  m.def("_world_initialized", &parallel::WorldInitialized);
  m.def("_world_info", [] { return WorldDict(parallel::CurrentWorld()); });
  m.def("_release_world", [] {
    py::gil_scoped_release release;
    parallel::ReleaseWorld();
  });
  m.def(
      "_group_info",
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
      py::arg("group"));
  m.def(
      "_create_group",
      [](const std::string& name, const std::vector<int>& ranks) {
        py::gil_scoped_release release;
        parallel::CreateGroup(name, ranks);
      },
      py::arg("group"), py::arg("rank_ids"));
  m.def("_destroy_group", &parallel::DestroyGroup, py::arg("group"));
  m.def("_group_names", &parallel::GroupNames);
  m.def("_built_with_nccl", &parallel::BuiltWithNccl);
}

}  // namespace msrt::python
