// The cluster bootstrap: the environment contract, the registration
// protocol, heartbeats and the group registry.
#include "parallel/cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/groups.h"

namespace msrt::parallel {
namespace {

using std::chrono::milliseconds;

EnvReader FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

template <typename E>
std::string MessageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

TEST(ClusterConfigTest, ReadsMindSporeDynamicClusterVariables) {
  auto config = ReadClusterConfig(FakeEnv({{"MS_ROLE", "MS_WORKER"},
                                           {"MS_SCHED_HOST", "10.0.0.1"},
                                           {"MS_SCHED_PORT", "8118"},
                                           {"MS_WORKER_NUM", "4"},
                                           {"MS_NODE_ID", "2"},
                                           {"MS_TOPO_TIMEOUT", "7"}}));
  EXPECT_EQ(config.role, ClusterRole::kWorker);
  EXPECT_EQ(config.sched_host, "10.0.0.1");
  EXPECT_EQ(config.sched_port, 8118);
  EXPECT_EQ(config.worker_num, 4);
  EXPECT_EQ(config.requested_rank, 2);
  EXPECT_EQ(config.cluster_timeout, milliseconds(7000));
  EXPECT_FALSE(config.hosts_scheduler);

  auto sched = ReadClusterConfig(
      FakeEnv({{"MS_ROLE", "MS_SCHED"}, {"MS_SCHED_HOST", "h"}, {"MS_SCHED_PORT", "9"}, {"MS_WORKER_NUM", "2"}}));
  EXPECT_EQ(sched.role, ClusterRole::kScheduler);
  // A node id that is not a number only names the node.
  auto named = ReadClusterConfig(FakeEnv({{"MS_ROLE", "MS_WORKER"},
                                          {"MS_SCHED_HOST", "h"},
                                          {"MS_SCHED_PORT", "9"},
                                          {"MS_WORKER_NUM", "2"},
                                          {"MS_NODE_ID", "node-a"}}));
  EXPECT_EQ(named.requested_rank, -1);
}

TEST(ClusterConfigTest, MissingVariablesAreListedWithTheMsrunCommandLine) {
  std::string none = MessageOf<RuntimeError>([] { ReadClusterConfig(FakeEnv({})); });
  for (const char* name : {"MS_ROLE", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_WORKER_NUM", "msrun --worker_num"}) {
    EXPECT_NE(none.find(name), std::string::npos) << none;
  }
  std::string some = MessageOf<RuntimeError>([] {
    ReadClusterConfig(FakeEnv({{"MS_ROLE", "MS_WORKER"}, {"MS_SCHED_HOST", "h"}}));
  });
  EXPECT_NE(some.find("are not set: MS_SCHED_PORT, MS_WORKER_NUM. "), std::string::npos) << some;
}

TEST(ClusterConfigTest, RefusesTheParameterServerAndMalformedValues) {
  std::string pserver = MessageOf<RuntimeError>([] { ReadClusterConfig(FakeEnv({{"MS_ROLE", "MS_PSERVER"}})); });
  EXPECT_NE(pserver.find("parameter server is not supported yet"), std::string::npos) << pserver;
  std::map<std::string, std::string> base = {{"MS_ROLE", "MS_WORKER"},
                                             {"MS_SCHED_HOST", "h"},
                                             {"MS_SCHED_PORT", "9"},
                                             {"MS_WORKER_NUM", "2"}};
  auto with = [&](const std::string& key, const std::string& value) {
    auto vars = base;
    vars[key] = value;
    return FakeEnv(vars);
  };
  EXPECT_NE(MessageOf<RuntimeError>([&] { ReadClusterConfig(with("MS_SERVER_NUM", "1")); }).find("parameter server"),
            std::string::npos);
  EXPECT_NE(MessageOf<ValueError>([&] { ReadClusterConfig(with("MS_WORKER_NUM", "two")); }).find("'two'"),
            std::string::npos);
  EXPECT_NE(MessageOf<ValueError>([&] { ReadClusterConfig(with("MS_SCHED_PORT", "70000")); }).find("MS_SCHED_PORT"),
            std::string::npos);
  EXPECT_NE(MessageOf<ValueError>([&] { ReadClusterConfig(with("MS_NODE_ID", "2")); }).find("MS_NODE_ID is 2"),
            std::string::npos);
  EXPECT_NE(MessageOf<ValueError>([&] { ReadClusterConfig(with("MS_ROLE", "MS_BOSS")); }).find("MS_BOSS"),
            std::string::npos);
  EXPECT_NE(MessageOf<ValueError>([&] { ReadClusterConfig(with("MS_TOPO_TIMEOUT", "-1")); }).find("MS_TOPO_TIMEOUT"),
            std::string::npos);
}

TEST(ClusterConfigTest, MpirunAndRankIdMakeRankZeroHostTheScheduler) {
  auto rank0 = ReadClusterConfig(FakeEnv({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "3"}}));
  EXPECT_EQ(rank0.source, "OpenMPI");
  EXPECT_TRUE(rank0.hosts_scheduler);
  EXPECT_EQ(rank0.worker_num, 3);
  EXPECT_EQ(rank0.sched_host, "127.0.0.1");
  EXPECT_EQ(rank0.sched_port, kDefaultSchedulerPort);
  auto rank2 = ReadClusterConfig(
      FakeEnv({{"RANK_ID", "2"}, {"RANK_SIZE", "4"}, {"MS_SCHED_HOST", "10.1.1.1"}, {"MS_SCHED_PORT", "9000"}}));
  EXPECT_EQ(rank2.source, "RANK_ID");
  EXPECT_FALSE(rank2.hosts_scheduler);
  EXPECT_EQ(rank2.requested_rank, 2);
  EXPECT_EQ(rank2.sched_host, "10.1.1.1");
  EXPECT_EQ(rank2.sched_port, 9000);
  EXPECT_NE(MessageOf<RuntimeError>([] {
              ReadClusterConfig(FakeEnv({{"RANK_SIZE", "4"}}));
            }).find("RANK_ID"),
            std::string::npos);
  EXPECT_THROW(ReadClusterConfig(FakeEnv({{"RANK_ID", "4"}, {"RANK_SIZE", "4"}})), ValueError);
}

TEST(ClusterConfigTest, NodeInfoRoundTripsAndMalformedTextIsRefused) {
  NodeInfo info{.worker_num = 4,
                .version = "0.1.0",
                .context_hash = 18446744073709551615ULL,
                .host = "h",
                .requested_rank = 3,
                .pid = 1234,
                .machine = "h/boot/pid:[1]"};
  auto decoded = DecodeNodeInfo(EncodeNodeInfo(info));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->worker_num, 4);
  EXPECT_EQ(decoded->context_hash, info.context_hash);
  EXPECT_EQ(decoded->requested_rank, 3);
  EXPECT_EQ(decoded->pid, 1234);
  EXPECT_EQ(decoded->machine, info.machine);
  EXPECT_FALSE(DecodeNodeInfo("worker_num=4\n").has_value());
  EXPECT_FALSE(DecodeNodeInfo("garbage").has_value());
  EXPECT_FALSE(DecodeNodeInfo(EncodeNodeInfo(info) + "rank=x\n").has_value());
}

TEST(ClusterConfigTest, AddressTowardTheSchedulerFollowsTheRoute) {
  EXPECT_EQ(AddressToward("127.0.0.1", 8118), "127.0.0.1");
  EXPECT_EQ(AddressToward("no-such-host.invalid", 8118), "127.0.0.1");
}

// A scheduler on a thread and workers on threads of this process (their
// failures are recorded, not fatal).
class SchedulerTest : public ::testing::Test {
 protected:
  void StartScheduler(int workers, milliseconds cluster_timeout = milliseconds(5000),
                      milliseconds heartbeat_timeout = milliseconds(2000)) {
    SchedulerOptions options;
    options.worker_num = workers;
    options.version = "v1";
    options.cluster_timeout = cluster_timeout;
    options.heartbeat_timeout = heartbeat_timeout;
    scheduler_ = Scheduler::Listen(options);
    thread_ = std::thread([this] { code_ = scheduler_->Run(); });
  }
  int WaitScheduler() {
    thread_.join();
    return code_;
  }
  WorkerOptions Worker(int worker_num, int requested_rank = -1) {
    WorkerOptions options;
    options.sched_port = scheduler_->port();
    options.cluster_timeout = milliseconds(5000);
    options.heartbeat_timeout = milliseconds(2000);
    options.exit_on_failure = false;
    options.info = NodeInfo{.worker_num = worker_num,
                            .version = "v1",
                            .context_hash = 7,
                            .host = LocalHostName(),
                            .requested_rank = requested_rank,
                            .pid = ::getpid(),
                            .machine = LocalMachine()};
    return options;
  }
  void TearDown() override {
    if (thread_.joinable()) thread_.join();
  }

  std::unique_ptr<Scheduler> scheduler_;
  std::thread thread_;
  int code_ = -1;
};

TEST_F(SchedulerTest, AssignsRequestedRanksThenArrivalOrderAndEndsWhenAllRelease) {
  StartScheduler(3);
  std::vector<std::unique_ptr<ClusterWorker>> workers(3);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { workers[0] = ClusterWorker::Join(Worker(3, 2)); });
  threads.emplace_back([&] { workers[1] = ClusterWorker::Join(Worker(3)); });
  threads.emplace_back([&] { workers[2] = ClusterWorker::Join(Worker(3)); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(workers[0]->rank(), 2);
  std::set<int> others = {workers[1]->rank(), workers[2]->rank()};
  EXPECT_EQ(others, (std::set<int>{0, 1}));
  for (const auto& worker : workers) {
    EXPECT_EQ(worker->size(), 3);
    EXPECT_EQ(worker->LocalRank({0, 1, 2}, worker->rank()), worker->rank());  // one host
    EXPECT_EQ(worker->LocalSize({0, 1, 2}, worker->rank()), 3);
    EXPECT_EQ(worker->LocalRank({2, 0}, 0), 1);
  }
  for (auto& worker : workers) worker->Release();
  EXPECT_EQ(WaitScheduler(), 0);
  EXPECT_EQ(scheduler_->error(), "");
}

TEST_F(SchedulerTest, RefusesAWorkerWithAnotherWorkerNum) {
  StartScheduler(2);
  std::string message = MessageOf<RuntimeError>([&] { ClusterWorker::Join(Worker(3)); });
  EXPECT_NE(message.find("MS_WORKER_NUM is 3 but the scheduler's is 2"), std::string::npos) << message;
  EXPECT_EQ(WaitScheduler(), 1);
}

TEST_F(SchedulerTest, RefusesAnotherVersionOrContext) {
  StartScheduler(2);
  auto first = Worker(2);
  std::unique_ptr<ClusterWorker> kept;
  std::thread t([&] { EXPECT_THROW(kept = ClusterWorker::Join(first), RuntimeError); });
  auto second = Worker(2);
  second.info.context_hash = 8;
  std::string message = MessageOf<RuntimeError>([&] { ClusterWorker::Join(second); });
  t.join();
  EXPECT_NE(message.find("compile-affecting context"), std::string::npos) << message;
  EXPECT_EQ(WaitScheduler(), 1);
}

TEST_F(SchedulerTest, NamesTheRankThatDidNotRegisterWithinTheTimeout) {
  StartScheduler(2, milliseconds(300));
  std::string message = MessageOf<RuntimeError>([&] { ClusterWorker::Join(Worker(2, 0)); });
  EXPECT_NE(message.find("rank(s) 1 did not register"), std::string::npos) << message;
  EXPECT_EQ(WaitScheduler(), 1);
  EXPECT_NE(scheduler_->error().find("1 of 2 workers registered"), std::string::npos) << scheduler_->error();
}

TEST_F(SchedulerTest, ALostHeartbeatFailsTheJobAndTheOtherWorkersSeeWhy) {
  StartScheduler(2, milliseconds(5000), milliseconds(300));
  std::unique_ptr<ClusterWorker> a;
  std::unique_ptr<ClusterWorker> b;
  auto options = Worker(2, 0);
  options.heartbeat_timeout = milliseconds(300);
  auto options_b = Worker(2, 1);
  options_b.heartbeat_timeout = milliseconds(300);
  std::thread t([&] { a = ClusterWorker::Join(options); });
  b = ClusterWorker::Join(options_b);
  t.join();
  b.reset();  // rank 1 stops beating without release
  EXPECT_EQ(WaitScheduler(), 1);
  EXPECT_NE(scheduler_->error().find("rank 1"), std::string::npos) << scheduler_->error();
  EXPECT_NE(scheduler_->error().find("no heartbeat"), std::string::npos) << scheduler_->error();
  auto deadline = std::chrono::steady_clock::now() + milliseconds(3000);
  while (a->failure().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_NE(a->failure().find("rank 1"), std::string::npos) << a->failure();
}

class GroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BuiltWithGloo()) GTEST_SKIP() << "msrt was built without Gloo";
    server_ = StoreServer::Listen();
    server_->Start();
    StoreClientOptions options;
    options.port = server_->port();
    comm_ = CreateGlooCommunicator(std::make_shared<StoreClient>(options), 0, 1);
  }
  void TearDown() override { ClearGroups(); }

  std::unique_ptr<StoreServer> server_;
  std::shared_ptr<Communicator> comm_;
};

TEST_F(GroupsTest, WorldNamesAreAliasesAndNamesAreUnique) {
  EXPECT_NE(MessageOf<RuntimeError>([] { GetGroup(kWorldGroup); }).find("call msrt.communication.init() first"),
            std::string::npos);
  EXPECT_FALSE(HasGroup(kHcclWorldGroup));
  RegisterGroup(kMcclWorldGroup, comm_);
  EXPECT_EQ(GetGroup(kHcclWorldGroup), comm_);
  EXPECT_EQ(GetGroup(kNcclWorldGroup), comm_);
  EXPECT_EQ(GetGroup(kWorldGroup), comm_);
  EXPECT_TRUE(HasGroup(kHcclWorldGroup));
  EXPECT_THROW(RegisterGroup(kNcclWorldGroup, comm_), ValueError);
  RegisterGroup("sub", comm_);
  EXPECT_THROW(RegisterGroup("sub", comm_), ValueError);
  EXPECT_NE(MessageOf<ValueError>([] { GetGroup("other"); }).find("'sub'"), std::string::npos);
  UnregisterGroup("sub");
  EXPECT_FALSE(HasGroup("sub"));
  EXPECT_THROW(UnregisterGroup("sub"), ValueError);
  EXPECT_EQ(GroupNames(), std::vector<std::string>{kMcclWorldGroup});
  ClearGroups();
  EXPECT_FALSE(HasGroup(kMcclWorldGroup));
  EXPECT_THROW(GetGroup(kMcclWorldGroup), RuntimeError);
}

}  // namespace
}  // namespace msrt::parallel
