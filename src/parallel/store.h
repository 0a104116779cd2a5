// The rendezvous key-value store: a TCP server and its client.
//
// Note [Rendezvous store]
//   Processes of one job find each other through a small key-value store
//   served over TCP by one process (a test's parent, later the scheduler).
//   Gloo publishes each rank's transport address under a key and reads its
//   peers'; NCCL's unique id travels the same way; `Add` is an atomic counter
//   (arrivals, group numbers). Values are bytes.
//
//   Wire format (all integers little-endian):
//     request   u8 op | u32 payload length | payload
//     response  u8 status | u32 payload length | payload
//   Payload fields are `u32 length + bytes` strings, `u32 count` lists of
//   them, u64 timeouts (milliseconds) and i64 counter deltas. A frame whose
//   length exceeds the server's limit, whose op is unknown, whose fields run
//   past the payload or leave bytes over, is answered with status
//   kBadRequest and its connection is closed: nothing in it is used. The
//   client checks responses the same way.
//
//   Blocking reads (`Get`, `Wait`) are parked on the server until the keys
//   exist or their timeout passes, so a client never polls. The server is
//   embeddable: `Listen` binds (the port is known, no thread started yet, so
//   a process may still fork), `Start` serves on background threads, and the
//   host process may read and write keys directly and `Abort` every waiting
//   and future request with its reason (a scheduler that saw a node die).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace msrt::parallel {

using Bytes = std::vector<uint8_t>;

/// Request operations and response statuses of the store protocol.
enum class StoreOp : uint8_t { kSet = 1, kGet = 2, kWait = 3, kAdd = 4, kCheck = 5, kDelete = 6 };
// kBadRequest: the frame was malformed (the connection is closed after it);
// kRefused: well-formed but not doable (`Add` on a value that is no counter).
enum class StoreStatus : uint8_t { kOk = 0, kTimeout = 1, kBadRequest = 2, kAborted = 3, kRefused = 4 };

/// One decoded request. `keys` holds one key except for kWait and kCheck.
struct StoreRequest {
  StoreOp op = StoreOp::kGet;
  std::vector<std::string> keys{};
  Bytes value{};            // kSet
  uint64_t timeout_ms = 0;  // kGet, kWait
  int64_t delta = 0;        // kAdd
};

/// Bytes of a frame header (op or status, then the payload length).
inline constexpr size_t kStoreHeaderBytes = 5;
/// The default limit on one frame's payload (keys and values are small:
/// addresses, ids, counters).
inline constexpr uint32_t kDefaultMaxStoreMessageBytes = 16u << 20;

struct StoreServerOptions {
  /// Address to bind: "127.0.0.1" (default), a host name, or "0.0.0.0".
  std::string host = "127.0.0.1";
  /// 0 picks a free port (read it back with `port()`).
  uint16_t port = 0;
  /// Frames with a larger payload are refused.
  uint32_t max_message_bytes = kDefaultMaxStoreMessageBytes;
};

/// The store's server. Thread-safe.
class StoreServer {
 public:
  /// Binds and listens; serves nothing until `Start`. RuntimeError naming
  /// host:port when the address can not be bound.
  static std::unique_ptr<StoreServer> Listen(const StoreServerOptions& options = {});
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  /// Starts serving on background threads (one per connection). Idempotent.
  void Start();
  /// Stops serving: closes the socket and every connection, joins the threads.
  void Stop();

  const std::string& host() const { return options_.host; }
  uint16_t port() const { return port_; }
  uint32_t max_message_bytes() const { return options_.max_message_bytes; }

  /// Direct access for the hosting process (no socket involved).
  void Set(const std::string& key, Bytes value);
  std::optional<Bytes> Get(const std::string& key) const;
  int64_t Add(const std::string& key, int64_t delta);
  /// Number of connections being served now.
  size_t connections() const;

  /// Fails every parked and future request with `reason` (status kAborted);
  /// the clients raise a RuntimeError carrying it.
  void Abort(const std::string& reason);

 private:
  StoreServer(StoreServerOptions options, int listen_fd, uint16_t port);
  void AcceptLoop();
  void Serve(int fd);
  // Handles one decoded request; returns the response status and payload.
  StoreStatus Handle(uint8_t op, const Bytes& payload, Bytes* reply);
  void Unregister(int fd);

  StoreServerOptions options_;
  int listen_fd_;
  uint16_t port_;
  bool started_ = false;
  bool stopping_ = false;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes> data_;
  std::optional<std::string> abort_reason_;
  std::thread accept_thread_;
  std::map<int, std::thread> connections_;
  std::vector<std::thread> finished_;
};

struct StoreClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  /// How long to keep trying to reach the server.
  std::chrono::milliseconds connect_timeout{30000};
  /// Default timeout of `Get` and `Wait`.
  std::chrono::milliseconds timeout{300000};
  uint32_t max_message_bytes = kDefaultMaxStoreMessageBytes;
};

/// A connection to the store. Calls are serialised (one request in flight);
/// share one client between threads or open one per thread.
class StoreClient {
 public:
  /// Connects, retrying until `connect_timeout`; RuntimeError naming
  /// host:port and the system's reason when the server can not be reached.
  explicit StoreClient(StoreClientOptions options);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  void Set(const std::string& key, const Bytes& value);
  /// Waits until `key` exists (RuntimeError naming it after `timeout`).
  Bytes Get(const std::string& key, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  /// Waits until every key exists (RuntimeError naming the missing ones).
  void Wait(const std::vector<std::string>& keys, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  /// Adds `delta` to the counter at `key` (created at 0); the new value.
  int64_t Add(const std::string& key, int64_t delta);
  /// Whether every key exists, without waiting.
  bool Check(const std::vector<std::string>& keys);
  /// Removes `key`; whether it existed.
  bool Delete(const std::string& key);

  std::chrono::milliseconds timeout() const { return options_.timeout; }
  void set_timeout(std::chrono::milliseconds timeout) { options_.timeout = timeout; }
  /// "host:port".
  std::string address() const;

 private:
  StoreStatus Call(const StoreRequest& request, Bytes* reply, std::chrono::milliseconds wait);

  StoreClientOptions options_;
  int fd_ = -1;
  std::mutex mutex_;
};

/// Rank 0 makes a value with `make` and publishes it under `key`; every
/// rank returns it (the NCCL unique id's way to the other ranks).
Bytes ShareFromRoot(StoreClient& store, const std::string& key, int rank, const std::function<Bytes()>& make,
                    std::chrono::milliseconds timeout);

/// The wire format (Note [Rendezvous store]), public for the protocol tests
/// and the fuzz target.
namespace store_wire {
/// A request's payload.
Bytes EncodeRequest(const StoreRequest& request);
/// The request a frame with `op` and `payload` carries, or nullopt with
/// `error` saying why it is malformed (unknown op, a field running past the
/// payload, bytes left over). Trusts nothing in the bytes.
std::optional<StoreRequest> DecodeRequest(uint8_t op, const Bytes& payload, std::string* error);
void PutU32(Bytes* out, uint32_t value);
void PutU64(Bytes* out, uint64_t value);
void PutString(Bytes* out, std::string_view text);
/// A request frame: header and payload.
Bytes Frame(uint8_t op_or_status, const Bytes& payload);
}  // namespace store_wire

}  // namespace msrt::parallel
