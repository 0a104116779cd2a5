#include "parallel/cluster.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "context/options.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/groups.h"

namespace msrt::parallel {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kArrivals = "cluster/arrivals";
constexpr const char* kStorePrefix = "msrt";

std::string NodeKey(int arrival) { return "cluster/node/" + std::to_string(arrival); }
std::string AssignKey(int arrival) { return "cluster/assign/" + std::to_string(arrival); }
std::string HeartbeatKey(int rank) { return "cluster/heartbeat/" + std::to_string(rank); }
std::string ReleasedKey(int rank) { return "cluster/released/" + std::to_string(rank); }

Bytes ToBytes(const std::string& text) { return Bytes(text.begin(), text.end()); }
std::string ToText(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// An integer variable in [low, high]; ValueError naming it otherwise.
int64_t EnvInt(const EnvReader& env, std::string_view name, int64_t low, int64_t high) {
  std::string text = *env(name);
  auto value = ParseInt(text);
  MSRT_CHECK_VALUE(value.has_value() && *value >= low && *value <= high, "the environment variable ", name,
                   " must be an integer in [", low, ", ", high, "], but got '", text, "'");
  return *value;
}

// Seconds (a positive number) as milliseconds; ValueError naming the variable.
milliseconds EnvSeconds(const EnvReader& env, std::string_view name, milliseconds fallback) {
  auto text = env(name);
  if (!text.has_value() || text->empty()) return fallback;
  char* end = nullptr;
  double seconds = std::strtod(text->c_str(), &end);
  MSRT_CHECK_VALUE(end != text->c_str() && *end == '\0' && seconds > 0 && seconds < 1e7, "the environment variable ",
                   name, " must be a positive number of seconds, but got '", *text, "'");
  return milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string LaunchHelp() {
  return "Launch the script with msrun, e.g. `msrun --worker_num=2 --local_worker_num=2 --master_port=8118 "
         "train.py`; or with mpirun (OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE); or by hand: start one process "
         "with MS_ROLE=MS_SCHED and MS_WORKER_NUM workers with MS_ROLE=MS_WORKER, all with MS_SCHED_HOST, "
         "MS_SCHED_PORT and MS_WORKER_NUM set (docs/distributed.md)";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

std::string Describe(const NodeInfo& node) { return StrCat("host ", node.host, ", pid ", node.pid); }

double Seconds(milliseconds duration) { return std::chrono::duration<double>(duration).count(); }

// Whether process `pid` is gone (only meaningful on this host).
bool ProcessGone(int64_t pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

EnvReader ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool InClusterEnv(const EnvReader& env) {
  return env("MS_ROLE").has_value() || env("OMPI_COMM_WORLD_SIZE").has_value() || env("RANK_SIZE").has_value();
}

ClusterConfig ReadClusterConfig(const EnvReader& env) {
  ClusterConfig config;
  config.cluster_timeout = EnvSeconds(env, "MS_TOPO_TIMEOUT", config.cluster_timeout);
  config.heartbeat_timeout = EnvSeconds(env, "MSRT_HEARTBEAT_TIMEOUT", config.heartbeat_timeout);
  auto role = env("MS_ROLE");
  auto read_address = [&](bool required) {
    std::vector<std::string> missing;
    for (const char* name : {"MS_SCHED_HOST", "MS_SCHED_PORT"}) {
      if (!env(name).has_value() || env(name)->empty()) missing.emplace_back(name);
    }
    if (required) {
      if (!env("MS_WORKER_NUM").has_value() || env("MS_WORKER_NUM")->empty()) missing.emplace_back("MS_WORKER_NUM");
      MSRT_CHECK(missing.empty(), "MS_ROLE is '", *role,
                 "' but these environment variables are not set: ", JoinNames(missing), ". ", LaunchHelp());
    }
    if (auto host = env("MS_SCHED_HOST"); host.has_value() && !host->empty()) config.sched_host = *host;
    config.sched_port = kDefaultSchedulerPort;
    if (auto port = env("MS_SCHED_PORT"); port.has_value() && !port->empty()) {
      config.sched_port = static_cast<uint16_t>(EnvInt(env, "MS_SCHED_PORT", 1, 65535));
    }
  };
  if (role.has_value()) {
    config.source = "MS_ROLE";
    if (*role == "MS_PSERVER") {
      MSRT_CHECK(false,
                 "MS_ROLE=MS_PSERVER: the parameter server is not supported yet; msrt runs MS_SCHED and "
                 "MS_WORKER processes only");
    }
    MSRT_CHECK_VALUE(*role == "MS_SCHED" || *role == "MS_WORKER",
                     "the environment variable MS_ROLE must be 'MS_SCHED' or 'MS_WORKER' ('MS_PSERVER' is not "
                     "supported yet), but got '",
                     *role, "'");
    config.role = *role == "MS_SCHED" ? ClusterRole::kScheduler : ClusterRole::kWorker;
    read_address(true);
    config.worker_num = static_cast<int>(EnvInt(env, "MS_WORKER_NUM", 1, 4096));
    if (auto servers = env("MS_SERVER_NUM"); servers.has_value() && !servers->empty()) {
      MSRT_CHECK(EnvInt(env, "MS_SERVER_NUM", 0, 4096) == 0, "MS_SERVER_NUM is ", *servers,
                 ": the parameter server is not supported yet; set MS_SERVER_NUM=0 or leave it unset");
    }
    if (auto node = env("MS_NODE_ID"); node.has_value() && config.role == ClusterRole::kWorker) {
      // A number is the rank asked for; any other id only names the node.
      if (auto id = ParseInt(*node); id.has_value()) {
        MSRT_CHECK_VALUE(*id >= 0 && *id < config.worker_num, "MS_NODE_ID is ", *id,
                         " but a worker's rank must be in [0, MS_WORKER_NUM=", config.worker_num, ")");
        config.requested_rank = static_cast<int>(*id);
      }
    }
    return config;
  }
  const char* rank_name = nullptr;
  const char* size_name = nullptr;
  if (env("OMPI_COMM_WORLD_SIZE").has_value()) {
    config.source = "OpenMPI";
    rank_name = "OMPI_COMM_WORLD_RANK";
    size_name = "OMPI_COMM_WORLD_SIZE";
  } else if (env("RANK_SIZE").has_value()) {
    config.source = "RANK_ID";
    rank_name = "RANK_ID";
    size_name = "RANK_SIZE";
  } else {
    MSRT_CHECK(false,
               "msrt.communication.init() found no cluster environment: not set: MS_ROLE, MS_SCHED_HOST, "
               "MS_SCHED_PORT, MS_WORKER_NUM (nor OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, nor RANK_ID/RANK_SIZE). ",
               LaunchHelp());
  }
  MSRT_CHECK(env(rank_name).has_value(), size_name, " is set but ", rank_name, " is not. ", LaunchHelp());
  config.worker_num = static_cast<int>(EnvInt(env, size_name, 1, 4096));
  config.requested_rank = static_cast<int>(EnvInt(env, rank_name, 0, config.worker_num - 1));
  config.hosts_scheduler = config.requested_rank == 0;
  read_address(false);
  return config;
}

std::string EncodeNodeInfo(const NodeInfo& info) {
  std::ostringstream out;
  out << "worker_num=" << info.worker_num << "\nversion=" << info.version << "\ncontext=" << info.context_hash
      << "\nhost=" << info.host << "\nrank=" << info.requested_rank << "\npid=" << info.pid
      << "\nmachine=" << info.machine << "\n";
  return out.str();
}

std::optional<NodeInfo> DecodeNodeInfo(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  for (const char* name : {"worker_num", "version", "context", "host", "rank", "pid", "machine"}) {
    if (!fields.contains(name)) return std::nullopt;
  }
  NodeInfo info;
  auto worker_num = ParseInt(fields["worker_num"]);
  auto rank = ParseInt(fields["rank"]);
  auto pid = ParseInt(fields["pid"]);
  uint64_t hash = 0;
  const std::string& context = fields["context"];
  auto [end, error] = std::from_chars(context.data(), context.data() + context.size(), hash);
  if (!worker_num || !rank || !pid || error != std::errc() || end != context.data() + context.size()) {
    return std::nullopt;
  }
  if (*worker_num < 0 || *worker_num > 1 << 20 || *rank < -1 || *rank > 1 << 20) return std::nullopt;
  info.worker_num = static_cast<int>(*worker_num);
  info.version = fields["version"];
  info.context_hash = hash;
  info.host = fields["host"];
  info.requested_rank = static_cast<int>(*rank);
  info.pid = *pid;
  info.machine = fields["machine"];
  return info;
}

std::string AddressToward(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  std::string fallback = "127.0.0.1";
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || found == nullptr) {
    return fallback;
  }
  std::string address = fallback;
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  // Connecting a datagram socket sends nothing; it only picks the route.
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t length = sizeof(local);
    char text[INET_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr) {
      address = text;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return address;
}

std::string LocalHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

std::string LocalMachine() {
  std::string boot_id;
  if (std::ifstream in("/proc/sys/kernel/random/boot_id"); in) std::getline(in, boot_id);
  std::error_code error;
  std::string pid_namespace = std::filesystem::read_symlink("/proc/self/ns/pid", error).string();
  return StrCat(LocalHostName(), "/", boot_id, "/", pid_namespace);
}

milliseconds HeartbeatInterval(milliseconds heartbeat_timeout) {
  return std::clamp(heartbeat_timeout / 5, milliseconds(20), milliseconds(1000));
}

// ------------------------------------------------------------ scheduler

Scheduler::Scheduler(SchedulerOptions options, std::unique_ptr<StoreServer> server)
    : options_(std::move(options)), server_(std::move(server)) {}

Scheduler::~Scheduler() { server_->Stop(); }

std::unique_ptr<Scheduler> Scheduler::Listen(const SchedulerOptions& options) {
  MSRT_CHECK_VALUE(options.worker_num >= 1,
                   "the scheduler needs at least one worker, got worker_num=", options.worker_num);
  StoreServerOptions store;
  store.host = options.host;
  store.port = options.port;
  auto server = StoreServer::Listen(store);
  return std::unique_ptr<Scheduler>(new Scheduler(options, std::move(server)));
}

uint16_t Scheduler::port() const { return server_->port(); }

int Scheduler::Fail(std::string reason) {
  error_ = std::move(reason);
  server_->Abort("the cluster failed: " + error_);
  // Leave the store up a moment so the workers' heartbeats read the reason.
  std::this_thread::sleep_for(std::min(2 * HeartbeatInterval(options_.heartbeat_timeout), milliseconds(1000)));
  return 1;
}

bool Scheduler::Register(std::vector<NodeInfo>* nodes, int* failed_code) {
  const int expected = options_.worker_num;
  const auto deadline = Clock::now() + options_.cluster_timeout;
  const milliseconds poll(10);
  while (static_cast<int>(nodes->size()) < expected) {
    auto arrivals = server_->Get(kArrivals);
    int64_t arrived = arrivals ? ParseInt(ToText(*arrivals)).value_or(0) : 0;
    while (static_cast<int64_t>(nodes->size()) < arrived) {
      int index = static_cast<int>(nodes->size());
      auto text = server_->Get(NodeKey(index));
      if (!text.has_value()) break;  // counted, not yet described
      auto node = DecodeNodeInfo(ToText(*text));
      if (!node.has_value()) {
        *failed_code = Fail(StrCat("node ", index, " sent a malformed registration"));
        return false;
      }
      std::string refused;
      if (node->worker_num != expected) {
        refused = StrCat("its MS_WORKER_NUM is ", node->worker_num, " but the scheduler's is ", expected);
      } else if (index >= expected) {
        refused = StrCat("more than MS_WORKER_NUM=", expected, " workers registered");
      } else if (node->version != options_.version) {
        refused = StrCat("it runs msrt ", node->version, " but the scheduler runs msrt ", options_.version);
      } else if (!nodes->empty() && node->context_hash != nodes->front().context_hash) {
        refused =
            "its compile-affecting context (set_context / set_auto_parallel_context) differs from the first "
            "worker's; every worker must set the same";
      } else if (node->requested_rank >= expected) {
        refused = StrCat("it asks for rank ", node->requested_rank, " but MS_WORKER_NUM is ", expected);
      } else if (node->requested_rank >= 0) {
        for (const auto& other : *nodes) {
          if (other.requested_rank == node->requested_rank) {
            refused = StrCat("rank ", node->requested_rank, " (MS_NODE_ID) is already taken by the worker at ",
                             Describe(other));
          }
        }
      }
      if (!refused.empty()) {
        std::string who = node->requested_rank >= 0 ? StrCat("the worker asking for rank ", node->requested_rank)
                                                    : StrCat("worker ", index, " to register");
        *failed_code = Fail(StrCat("registration refused for ", who, " (", Describe(*node), "): ", refused));
        return false;
      }
      nodes->push_back(*node);
    }
    if (static_cast<int>(nodes->size()) >= expected) break;
    if (Clock::now() >= deadline) {
      // The ranks nobody asked for go in arrival order: the last ones are missing.
      std::set<int> free_ranks;
      for (int rank = 0; rank < expected; ++rank) free_ranks.insert(rank);
      int unrequested = 0;
      for (const auto& node : *nodes) {
        if (node.requested_rank >= 0) {
          free_ranks.erase(node.requested_rank);
        } else {
          ++unrequested;
        }
      }
      std::vector<int> missing(free_ranks.begin(), free_ranks.end());
      auto dropped = static_cast<std::ptrdiff_t>(std::min(missing.size(), static_cast<size_t>(unrequested)));
      missing.erase(missing.begin(), missing.begin() + dropped);
      *failed_code = Fail(StrCat("cluster_time_out (", Seconds(options_.cluster_timeout), " s) passed with ",
                                 nodes->size(), " of ", expected, " workers registered; rank(s) ", RankList(missing),
                                 " did not register"));
      return false;
    }
    std::this_thread::sleep_for(poll);
  }
  return true;
}

void Scheduler::Assign(const std::vector<NodeInfo>& nodes) {
  const int size = options_.worker_num;
  std::vector<bool> taken(static_cast<size_t>(size), false);
  rank_of_arrival_.assign(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].requested_rank >= 0) {
      rank_of_arrival_[i] = nodes[i].requested_rank;
      taken[static_cast<size_t>(nodes[i].requested_rank)] = true;
    }
  }
  int next = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (rank_of_arrival_[i] >= 0) continue;
    while (taken[static_cast<size_t>(next)]) ++next;
    rank_of_arrival_[i] = next;
    taken[static_cast<size_t>(next)] = true;
  }
  node_of_rank_.assign(static_cast<size_t>(size), NodeInfo{});
  for (size_t i = 0; i < nodes.size(); ++i) node_of_rank_[static_cast<size_t>(rank_of_arrival_[i])] = nodes[i];
  std::string machines;
  for (const auto& node : node_of_rank_) machines += node.machine + "\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    server_->Set(AssignKey(static_cast<int>(i)), ToBytes(std::to_string(rank_of_arrival_[i]) + "\n" + machines));
  }
}

int Scheduler::Run() {
  server_->Start();
  std::vector<NodeInfo> nodes;
  int code = 0;
  if (!Register(&nodes, &code)) return code;
  Assign(nodes);
  const int size = options_.worker_num;
  const std::string here = LocalMachine();
  auto now = Clock::now();
  std::vector<std::optional<Bytes>> last_beat(static_cast<size_t>(size));
  std::vector<Clock::time_point> last_seen(static_cast<size_t>(size), now);
  std::vector<bool> released(static_cast<size_t>(size), false);
  const milliseconds poll(std::min<int64_t>(20, HeartbeatInterval(options_.heartbeat_timeout).count()));
  int remaining = size;
  while (remaining > 0) {
    now = Clock::now();
    for (int rank = 0; rank < size; ++rank) {
      auto r = static_cast<size_t>(rank);
      if (released[r]) continue;
      if (server_->Get(ReleasedKey(rank)).has_value()) {
        released[r] = true;
        --remaining;
        continue;
      }
      const NodeInfo& node = node_of_rank_[r];
      auto beat = server_->Get(HeartbeatKey(rank));
      if (beat != last_beat[r]) {
        last_beat[r] = beat;
        last_seen[r] = now;
      }
      if (node.machine == here && ProcessGone(node.pid)) {
        return Fail(StrCat("rank ", rank, " (", Describe(node), ") exited without msrt.communication.release()"));
      }
      if (now - last_seen[r] > options_.heartbeat_timeout) {
        return Fail(StrCat("rank ", rank, " (", Describe(node), ") lost: no heartbeat for ",
                           Seconds(options_.heartbeat_timeout), " s"));
      }
    }
    if (remaining > 0) std::this_thread::sleep_for(poll);
  }
  return 0;
}

// --------------------------------------------------------------- worker

ClusterWorker::ClusterWorker(WorkerOptions options) : options_(std::move(options)) {}

std::unique_ptr<ClusterWorker> ClusterWorker::Join(const WorkerOptions& options) {
  std::unique_ptr<ClusterWorker> worker(new ClusterWorker(options));
  StoreClientOptions client;
  client.host = options.sched_host;
  client.port = options.sched_port;
  client.connect_timeout = options.cluster_timeout;
  client.timeout = options.cluster_timeout;
  try {
    worker->store_ = std::make_shared<StoreClient>(client);
  } catch (const Error& e) {
    MSRT_CHECK(false, "could not reach the scheduler at ", options.sched_host, ":", options.sched_port,
               " within cluster_time_out: ", e.what());
  }
  StoreClient& store = *worker->store_;
  int arrival = static_cast<int>(store.Add(kArrivals, 1) - 1);
  store.Set(NodeKey(arrival), ToBytes(EncodeNodeInfo(options.info)));
  // Longer than the scheduler's own limit: its reason arrives first.
  std::string assignment = ToText(store.Get(AssignKey(arrival), options.cluster_timeout + milliseconds(5000)));
  std::istringstream in(assignment);
  std::string line;
  std::getline(in, line);
  auto rank = ParseInt(line);
  MSRT_CHECK(rank.has_value(), "the scheduler sent a malformed rank assignment");
  while (std::getline(in, line)) worker->machines_.push_back(line);
  MSRT_CHECK(*rank >= 0 && *rank < static_cast<int64_t>(worker->machines_.size()),
             "the scheduler sent a malformed rank assignment");
  worker->rank_ = static_cast<int>(*rank);
  client.connect_timeout = milliseconds(5000);
  worker->heartbeat_store_ = std::make_unique<StoreClient>(client);
  worker->heartbeat_store_->Add(HeartbeatKey(worker->rank_), 1);
  worker->heartbeat_thread_ = std::thread([w = worker.get()] { w->Heartbeat(); });
  return worker;
}

void ClusterWorker::Heartbeat() {
  const milliseconds interval = HeartbeatInterval(options_.heartbeat_timeout);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    std::string failure;
    try {
      heartbeat_store_->Add(HeartbeatKey(rank_), 1);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    lock.lock();
    if (failure.empty() || stopping_) continue;
    failure_ = failure;
    if (options_.exit_on_failure) {
      std::fprintf(stderr, "msrt: rank %d stops: %s\n", rank_, failure.c_str());
      std::fflush(stderr);
      std::_Exit(1);
    }
    return;
  }
}

void ClusterWorker::Release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (released_) return;
    released_ = true;
    stopping_ = true;
  }
  stop_.notify_all();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (failure().empty()) store_->Set(ReleasedKey(rank_), ToBytes("1"));
}

ClusterWorker::~ClusterWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

std::string ClusterWorker::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

int ClusterWorker::LocalRank(const std::vector<int>& members, int world_rank) const {
  int local = 0;
  for (int member : members) {
    if (member == world_rank) return local;
    if (machines_.at(static_cast<size_t>(member)) == machines_.at(static_cast<size_t>(world_rank))) ++local;
  }
  MSRT_CHECK_VALUE(false, "rank ", world_rank, " is not a member of the group");
}

int ClusterWorker::LocalSize(const std::vector<int>& members, int world_rank) const {
  int count = 0;
  for (int member : members) {
    if (machines_.at(static_cast<size_t>(member)) == machines_.at(static_cast<size_t>(world_rank))) ++count;
  }
  return count;
}

// ------------------------------------------------------- process world

namespace {

struct World {
  std::mutex mutex;
  std::optional<WorldInfo> info;
  std::unique_ptr<ClusterWorker> worker;
  std::unique_ptr<Scheduler> scheduler;  // rank 0 under mpirun or RANK_ID
  std::thread scheduler_thread;
  int scheduler_code = 0;
  context::Subscription context_validator;
};

World& GetWorld() {
  static World* world = new World();  // never destroyed: release() may run from exit handlers
  return *world;
}

namespace parallel_options = context::parallel_options;

// device_num set to another size than the world's is refused.
void CheckDeviceNum(int size) {
  const auto& key = parallel_options::DeviceNum();
  context::Explanation device_num = context::Global().Explain(key.family(), key.key());
  bool is_set = device_num.source != context::Source::kDefault;
  MSRT_CHECK_VALUE(!is_set || device_num.requested.as_int() == size,
                   "set_auto_parallel_context(device_num=", device_num.requested.as_int(),
                   ") does not match the cluster's ", size,
                   " workers (MS_WORKER_NUM); leave device_num unset or set it to ", size);
}

// Sets device_num and global_rank to the world's; the returned validator
// refuses other values while the world exists.
context::Subscription ApplyToContext(int rank, int size) {
  const auto& device_num = parallel_options::DeviceNum();
  const auto& global_rank = parallel_options::GlobalRank();
  auto& store = context::Global();
  store.Set(device_num.family(),
            Dict{{std::string(device_num.key()), Value(size)}, {std::string(global_rank.key()), Value(rank)}});
  return store.AddValidator(
      {device_num, global_rank}, "msrt.communication (the cluster's world)",
      [rank, size, &device_num, &global_rank](const context::Store::PendingGet& get) {
        int64_t pending_size = device_num.Pending(get);
        int64_t pending_rank = global_rank.Pending(get);
        MSRT_CHECK_VALUE(pending_size == size, "device_num is ", size,
                         " (the cluster's world size, set by msrt.communication.init()) but got ", pending_size);
        MSRT_CHECK_VALUE(pending_rank == rank, "global_rank is ", rank,
                         " (this process's rank, set by msrt.communication.init()) but got ", pending_rank);
      },
      // reset_auto_parallel_context() keeps the world's values.
      Dict{{std::string(device_num.key()), Value(size)}, {std::string(global_rank.key()), Value(rank)}});
}

std::string NormalizedBackend(const std::string& backend) {
  if (backend == "mccl" || backend == "gloo") return "mccl";
  if (backend == "nccl") return "nccl";
  MSRT_CHECK(backend != "hccl",
             "init(backend_name='hccl'): msrt has no Ascend backend; use 'mccl' (CPU, over "
             "Gloo) or 'nccl' (GPU)");
  MSRT_CHECK_VALUE(false, "init(): backend_name must be 'mccl' (CPU, over Gloo), 'nccl' (GPU) or 'hccl', but got '",
                   backend, "'");
}

// The options of the scheduler a job's configuration describes.
SchedulerOptions SchedulerOptionsFor(const ClusterConfig& config, const std::string& version) {
  SchedulerOptions options;
  options.host = config.sched_host;
  options.port = config.sched_port;
  options.worker_num = config.worker_num;
  options.version = version;
  options.cluster_timeout = config.cluster_timeout;
  options.heartbeat_timeout = config.heartbeat_timeout;
  return options;
}

}  // namespace

WorldInfo InitWorld(const ClusterConfig& config, const std::string& backend, const std::string& version,
                    uint64_t context_hash) {
  World& world = GetWorld();
  std::lock_guard<std::mutex> lock(world.mutex);
  MSRT_CHECK(!world.info.has_value(), "msrt.communication.init() was already called; call release() first");
  MSRT_CHECK(config.role == ClusterRole::kWorker, "InitWorld runs on a worker (MS_ROLE=MS_WORKER)");
  const std::string name = NormalizedBackend(backend);
  MSRT_CHECK(name != "nccl" || BuiltWithNccl(),
             "init(backend_name='nccl'): msrt was built without NCCL (no CUDA); "
             "use 'mccl' (CPU, over Gloo)");
  MSRT_CHECK(name != "mccl" || BuiltWithGloo(), "init(backend_name='mccl'): msrt was built without Gloo");
  CheckDeviceNum(config.worker_num);
  if (config.hosts_scheduler) {
    world.scheduler = Scheduler::Listen(SchedulerOptionsFor(config, version));
    world.scheduler_thread = std::thread([&world, scheduler = world.scheduler.get()] {
      int code = scheduler->Run();
      world.scheduler_code = code;
    });
  }
  try {
    WorkerOptions options;
    options.sched_host = config.sched_host;
    options.sched_port = config.sched_port;
    options.cluster_timeout = config.cluster_timeout;
    options.heartbeat_timeout = config.heartbeat_timeout;
    options.info.worker_num = config.worker_num;
    options.info.version = version;
    options.info.context_hash = context_hash;
    options.info.host = LocalHostName();
    options.info.machine = LocalMachine();
    options.info.requested_rank = config.requested_rank;
    options.info.pid = ::getpid();
    auto worker = ClusterWorker::Join(options);
    CommunicatorOptions comm;
    comm.timeout = config.cluster_timeout;
    comm.store_prefix = kStorePrefix;
    if (auto ip = ProcessEnv()("MSRT_HOST_IP"); ip.has_value() && !ip->empty()) {
      comm.hostname = *ip;
    } else {
      comm.hostname = AddressToward(config.sched_host, config.sched_port);
    }
    std::shared_ptr<Communicator> communicator = name == "nccl"
                                                     ? CreateNcclCommunicator(worker->store(), worker->rank(),
                                                                              worker->size(), comm)
                                                     : CreateGlooCommunicator(worker->store(), worker->rank(),
                                                                              worker->size(), comm);
    WorldInfo info;
    info.rank = worker->rank();
    info.size = worker->size();
    std::vector<int> all(static_cast<size_t>(info.size));
    for (int i = 0; i < info.size; ++i) all[static_cast<size_t>(i)] = i;
    info.local_rank = worker->LocalRank(all, info.rank);
    info.local_size = worker->LocalSize(all, info.rank);
    info.backend = name;
    info.world_name = name == "nccl" ? kNcclWorldGroup : kMcclWorldGroup;
    communicator->Barrier();  // every rank has connected before any may close
    RegisterGroup(info.world_name, communicator);
    world.context_validator = ApplyToContext(info.rank, info.size);
    world.worker = std::move(worker);
    world.info = info;
    return info;
  } catch (...) {
    if (world.scheduler_thread.joinable()) {
      // The scheduler ends by itself (the job fails without this worker's
      // heartbeats); it keeps its object.
      world.scheduler_thread.detach();
      (void)world.scheduler.release();
    }
    throw;
  }
}

bool WorldInitialized() {
  World& world = GetWorld();
  std::lock_guard<std::mutex> lock(world.mutex);
  return world.info.has_value();
}

const WorldInfo& CurrentWorld() {
  World& world = GetWorld();
  std::lock_guard<std::mutex> lock(world.mutex);
  MSRT_CHECK(world.info.has_value(),
             "the communication service is not initialized; call msrt.communication.init() first");
  return *world.info;
}

const ClusterWorker& CurrentWorker() {
  World& world = GetWorld();
  std::lock_guard<std::mutex> lock(world.mutex);
  MSRT_CHECK(world.worker != nullptr,
             "the communication service is not initialized; call msrt.communication.init() first");
  return *world.worker;
}

void ReleaseWorld() {
  World& world = GetWorld();
  std::lock_guard<std::mutex> lock(world.mutex);
  if (!world.info.has_value()) return;
  ClearGroups();
  world.context_validator.Reset();
  world.worker->Release();
  world.worker.reset();
  world.info.reset();
  if (world.scheduler_thread.joinable()) world.scheduler_thread.join();  // every rank released or failed
  world.scheduler.reset();
}

void CreateGroup(const std::string& name, const std::vector<int>& world_ranks) {
  MSRT_CHECK_VALUE(!IsWorldGroupName(name), "create_group: '", name,
                   "' is the name of the world group; choose another name");
  auto world = GetGroup(kWorldGroup);
  MSRT_CHECK_VALUE(!HasGroup(name), "create_group: the group '", name, "' already exists");
  std::shared_ptr<Communicator> group = world->NewGroup(world_ranks);
  group->Barrier();
  RegisterGroup(name, std::move(group));
}

void DestroyGroup(const std::string& name) {
  GetGroup(name);  // RuntimeError before init, ValueError for an unknown name
  MSRT_CHECK_VALUE(!IsWorldGroupName(name), "destroy_group: the world group '", name,
                   "' can not be destroyed; release() ends it");
  UnregisterGroup(name);
}

int RunSchedulerProcess(const ClusterConfig& config, const std::string& version) {
  // The scheduler listens on every address when MS_SCHED_HOST names another host's view of it.
  auto scheduler = Scheduler::Listen(SchedulerOptionsFor(config, version));
  int code = scheduler->Run();
  if (code != 0) {
    std::fprintf(stderr, "msrt scheduler: the job failed: %s\n", scheduler->error().c_str());
    std::fflush(stderr);
  }
  return code;
}

}  // namespace msrt::parallel
