// `_C.parallel`: the internal pieces msrt.communication stands on: a
// rendezvous store server, the world communicator made from a store
// (Note [Communicator layering]), and the named groups collective ops use.
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "bindings.h"
#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/groups.h"
#include "parallel/store.h"

namespace msrt::python {

void BindCollectives(py::module_& m) {
  py::module_ p = m.def_submodule("parallel", "Internal: communicators and groups (msrt.communication uses it).");
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
  p.def(
      "new_group",
      [](const std::string& name, const std::vector<int>& world_ranks, const std::string& parent) {
        MSRT_CHECK_VALUE(!parallel::HasGroup(name), "the communication group '", name, "' already exists");
        std::shared_ptr<parallel::Communicator> comm = parallel::GetGroup(parent)->NewGroup(world_ranks);
        parallel::RegisterGroup(name, comm);
      },
      py::arg("name"), py::arg("rank_ids"), py::arg("parent") = std::string(parallel::kWorldGroup),
      py::call_guard<py::gil_scoped_release>(), "Makes the sub-group of world ranks `rank_ids` and registers it.");
  p.def(
      "group_rank", [](const std::string& group) { return parallel::GetGroup(group)->rank(); }, py::arg("group"));
  p.def(
      "group_size", [](const std::string& group) { return parallel::GetGroup(group)->size(); }, py::arg("group"));
  p.def(
      "group_rank_of_world_rank",
      [](const std::string& group, int world_rank) {
        int rank = parallel::GetGroup(group)->GroupRank(world_rank);
        MSRT_CHECK_VALUE(rank >= 0, "rank ", world_rank, " is not a member of group '", group, "'");
        return rank;
      },
      py::arg("group"), py::arg("world_rank"));
  p.def("has_group", &parallel::HasGroup, py::arg("group"));
  p.def("clear_groups", &parallel::ClearGroups);
  p.attr("WORLD_GROUP") = parallel::kWorldGroup;
}

}  // namespace msrt::python
