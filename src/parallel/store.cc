// The rendezvous store (Note [Rendezvous store] in store.h).
#include "parallel/store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "msrt/core/errors.h"

namespace msrt::parallel {

namespace store_wire {

void PutU32(Bytes* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void PutU64(Bytes* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void PutString(Bytes* out, std::string_view text) {
  PutU32(out, static_cast<uint32_t>(text.size()));
  out->insert(out->end(), text.begin(), text.end());
}

Bytes Frame(uint8_t op_or_status, const Bytes& payload) {
  Bytes frame;
  frame.reserve(kStoreHeaderBytes + payload.size());
  frame.push_back(op_or_status);
  PutU32(&frame, static_cast<uint32_t>(payload.size()));
  frame.insert(frame.end(), payload.begin(), payload.end());
  return frame;
}

}  // namespace store_wire

namespace {

using store_wire::PutString;
using store_wire::PutU64;
using Clock = std::chrono::steady_clock;

// Timeouts beyond this (about 11 days) are taken as this: no overflow later.
constexpr uint64_t kMaxTimeoutMs = 1'000'000'000;

uint32_t ReadU32(const uint8_t* p) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(p[i]) << (8 * i);
  return value;
}

uint64_t ReadU64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(p[i]) << (8 * i);
  return value;
}

// Reads the fields of a payload; every read is bounds-checked and a failed
// one leaves `ok()` false for good.
class Reader {
 public:
  explicit Reader(const Bytes& bytes) : data_(bytes.data()), size_(bytes.size()) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == size_; }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t value = ReadU32(data_ + pos_);
    pos_ += 4;
    return value;
  }
  uint64_t U64() {
    if (!Need(8)) return 0;
    uint64_t value = ReadU64(data_ + pos_);
    pos_ += 8;
    return value;
  }
  std::string String() {
    uint32_t length = U32();
    if (!Need(length)) return {};
    std::string text(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return text;
  }
  Bytes Blob() {
    uint32_t length = U32();
    if (!Need(length)) return {};
    Bytes blob(data_ + pos_, data_ + pos_ + length);
    pos_ += length;
    return blob;
  }
  std::vector<std::string> Strings() {
    uint32_t count = U32();
    // Each string costs at least its 4-byte length: a count the payload can
    // not hold is refused before anything is reserved.
    if (!ok_ || count > (size_ - pos_) / 4) {
      ok_ = false;
      return {};
    }
    std::vector<std::string> list;
    list.reserve(count);
    for (uint32_t i = 0; i < count && ok_; ++i) list.push_back(String());
    return list;
  }

 private:
  bool Need(size_t n) {
    if (!ok_ || n > size_ - pos_) ok_ = false;
    return ok_;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

std::string SystemError(int error) { return std::strerror(error); }

// Writes all of `data`; false when the peer is gone.
bool WriteAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

enum class ReadResult { kOk, kClosed, kTimeout };

// Reads exactly `size` bytes, waiting at most until `deadline` (none: forever).
ReadResult ReadAll(int fd, uint8_t* data, size_t size, std::optional<Clock::time_point> deadline) {
  while (size > 0) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return ReadResult::kTimeout;
      pollfd p{fd, POLLIN, 0};
      int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, INT32_MAX)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return ReadResult::kClosed;
      if (ready == 0) return ReadResult::kTimeout;
    }
    ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadResult::kClosed;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return ReadResult::kOk;
}

struct AddressList {
  addrinfo* head = nullptr;
  AddressList() = default;
  AddressList(const AddressList&) = delete;
  AddressList& operator=(const AddressList&) = delete;
  ~AddressList() {
    if (head != nullptr) ::freeaddrinfo(head);
  }
};

// Resolves host:port; the error text is empty on success.
std::string Resolve(const std::string& host, uint16_t port, bool passive, AddressList* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  std::string service = std::to_string(port);
  int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &out->head);
  if (status != 0) return ::gai_strerror(status);
  return "";
}

std::string Address(const std::string& host, uint16_t port) { return StrCat(host, ":", port); }

bool IsKnownOp(uint8_t op) {
  return op >= static_cast<uint8_t>(StoreOp::kSet) && op <= static_cast<uint8_t>(StoreOp::kDelete);
}

Bytes Text(std::string_view text) { return Bytes(text.begin(), text.end()); }

std::string AsText(const Bytes& bytes) { return {bytes.begin(), bytes.end()}; }

std::optional<int64_t> ParseCounter(const Bytes& value) {
  int64_t number = 0;
  const char* begin = reinterpret_cast<const char*>(value.data());
  const char* end = begin + value.size();
  auto [ptr, error] = std::from_chars(begin, end, number);
  if (error != std::errc() || ptr != end || value.empty()) return std::nullopt;
  return number;
}

}  // namespace

namespace store_wire {

Bytes EncodeRequest(const StoreRequest& request) {
  Bytes payload;
  switch (request.op) {
    case StoreOp::kSet:
      PutString(&payload, request.keys.at(0));
      PutU32(&payload, static_cast<uint32_t>(request.value.size()));
      payload.insert(payload.end(), request.value.begin(), request.value.end());
      break;
    case StoreOp::kGet:
      PutString(&payload, request.keys.at(0));
      PutU64(&payload, request.timeout_ms);
      break;
    case StoreOp::kWait:
      PutU32(&payload, static_cast<uint32_t>(request.keys.size()));
      for (const auto& key : request.keys) PutString(&payload, key);
      PutU64(&payload, request.timeout_ms);
      break;
    case StoreOp::kAdd:
      PutString(&payload, request.keys.at(0));
      PutU64(&payload, static_cast<uint64_t>(request.delta));
      break;
    case StoreOp::kCheck:
      PutU32(&payload, static_cast<uint32_t>(request.keys.size()));
      for (const auto& key : request.keys) PutString(&payload, key);
      break;
    case StoreOp::kDelete: PutString(&payload, request.keys.at(0)); break;
  }
  return payload;
}

std::optional<StoreRequest> DecodeRequest(uint8_t op, const Bytes& payload, std::string* error) {
  if (!IsKnownOp(op)) {
    *error = StrCat("unknown operation ", static_cast<int>(op));
    return std::nullopt;
  }
  StoreRequest request;
  request.op = static_cast<StoreOp>(op);
  Reader in(payload);
  switch (request.op) {
    case StoreOp::kSet:
      request.keys.push_back(in.String());
      request.value = in.Blob();
      break;
    case StoreOp::kGet:
      request.keys.push_back(in.String());
      request.timeout_ms = in.U64();
      break;
    case StoreOp::kWait:
      request.keys = in.Strings();
      request.timeout_ms = in.U64();
      break;
    case StoreOp::kAdd:
      request.keys.push_back(in.String());
      request.delta = static_cast<int64_t>(in.U64());
      break;
    case StoreOp::kCheck: request.keys = in.Strings(); break;
    case StoreOp::kDelete: request.keys.push_back(in.String()); break;
  }
  if (!in.done()) {
    static constexpr const char* kNames[] = {"", "set", "get", "wait", "add", "check", "delete"};
    *error = StrCat("malformed ", kNames[op], " request (", payload.size(), " payload bytes)");
    return std::nullopt;
  }
  return request;
}

}  // namespace store_wire

// ---------------------------------------------------------------- server

std::unique_ptr<StoreServer> StoreServer::Listen(const StoreServerOptions& options) {
  MSRT_CHECK_VALUE(options.max_message_bytes >= 64, "StoreServer: max_message_bytes must be at least 64, got ",
                   options.max_message_bytes);
  AddressList addresses;
  std::string why = Resolve(options.host, options.port, true, &addresses);
  MSRT_CHECK(why.empty(), "the rendezvous store can not listen on ", Address(options.host, options.port),
             ": the host name does not resolve (", why, ")");
  int last_error = 0;
  for (addrinfo* a = addresses.head; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 512) != 0) {
      last_error = errno;
      ::close(fd);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof(bound);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
    uint16_t port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                                : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    return std::unique_ptr<StoreServer>(new StoreServer(options, fd, port));
  }
  MSRT_CHECK(false, "the rendezvous store can not listen on ", Address(options.host, options.port), ": ",
             SystemError(last_error));
  return nullptr;
}

StoreServer::StoreServer(StoreServerOptions options, int listen_fd, uint16_t port)
    : options_(std::move(options)), listen_fd_(listen_fd), port_(port) {}

StoreServer::~StoreServer() {
  Stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void StoreServer::Start() {
  std::lock_guard<std::mutex> lock(mutex_);
  MSRT_CHECK(!stopping_, "the rendezvous store at ", Address(options_.host, port_), " was stopped");
  if (started_) return;
  started_ = true;
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

void StoreServer::Stop() {
  std::map<int, std::thread> connections;
  std::vector<std::thread> finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    for (auto& entry : connections_) ::shutdown(entry.first, SHUT_RDWR);
  }
  changed_.notify_all();
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connections.swap(connections_);
  }
  // Connection threads unregister themselves: they wait for the lock, find
  // their entry moved here, and close their socket.
  for (auto& entry : connections) entry.second.join();
  std::lock_guard<std::mutex> lock(mutex_);
  finished.swap(finished_);
  for (auto& thread : finished) thread.join();
}

void StoreServer::AcceptLoop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::vector<std::thread> finished;
    std::lock_guard<std::mutex> lock(mutex_);
    finished.swap(finished_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      for (auto& thread : finished) thread.join();
      return;
    }
    if (fd < 0) {
      for (auto& thread : finished) thread.join();
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    connections_.emplace(fd, std::thread([this, fd] { Serve(fd); }));
    for (auto& thread : finished) thread.join();  // threads that have returned: quick
  }
}

void StoreServer::Unregister(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = connections_.find(fd);
  if (it != connections_.end()) {
    finished_.push_back(std::move(it->second));
    connections_.erase(it);
  }
  ::close(fd);
}

size_t StoreServer::connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return connections_.size();
}

void StoreServer::Serve(int fd) {
  for (;;) {
    uint8_t header[kStoreHeaderBytes];
    if (ReadAll(fd, header, sizeof(header), std::nullopt) != ReadResult::kOk) break;
    uint8_t op = header[0];
    uint32_t length = ReadU32(header + 1);
    Bytes reply;
    StoreStatus status;
    if (length > options_.max_message_bytes) {
      status = StoreStatus::kBadRequest;
      reply = Text(StrCat("a message of ", length, " bytes exceeds the store's limit of ", options_.max_message_bytes));
    } else if (!IsKnownOp(op)) {
      status = StoreStatus::kBadRequest;
      reply = Text(StrCat("unknown operation ", static_cast<int>(op)));
    } else {
      Bytes payload(length);
      if (ReadAll(fd, payload.data(), length, std::nullopt) != ReadResult::kOk) break;
      status = Handle(op, payload, &reply);
    }
    Bytes frame = store_wire::Frame(static_cast<uint8_t>(status), reply);
    if (!WriteAll(fd, frame.data(), frame.size())) break;
    if (status == StoreStatus::kBadRequest) break;  // never read on after a broken frame
  }
  Unregister(fd);
}

StoreStatus StoreServer::Handle(uint8_t op, const Bytes& payload, Bytes* reply) {
  std::string why;
  std::optional<StoreRequest> request = store_wire::DecodeRequest(op, payload, &why);
  if (!request) {
    *reply = Text(why);
    return StoreStatus::kBadRequest;
  }
  const std::vector<std::string>& keys = request->keys;
  auto all_present = [&] {
    return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return data_.contains(k); });
  };
  std::unique_lock<std::mutex> lock(mutex_);
  if (abort_reason_) {
    *reply = Text(*abort_reason_);
    return StoreStatus::kAborted;
  }
  switch (request->op) {
    case StoreOp::kSet:
      data_[keys[0]] = std::move(request->value);
      lock.unlock();
      changed_.notify_all();
      return StoreStatus::kOk;
    case StoreOp::kGet:
    case StoreOp::kWait: {
      changed_.wait_for(lock, std::chrono::milliseconds(std::min(request->timeout_ms, kMaxTimeoutMs)),
                        [&] { return stopping_ || abort_reason_ || all_present(); });
      if (abort_reason_) {
        *reply = Text(*abort_reason_);
        return StoreStatus::kAborted;
      }
      if (!all_present()) {
        for (const auto& key : keys) {
          if (!data_.contains(key)) PutString(reply, key);
        }
        return StoreStatus::kTimeout;
      }
      if (request->op == StoreOp::kGet) *reply = data_[keys[0]];
      return StoreStatus::kOk;
    }
    case StoreOp::kAdd: {
      const std::string& key = keys[0];
      int64_t value = 0;
      auto it = data_.find(key);
      if (it != data_.end()) {
        auto parsed = ParseCounter(it->second);
        if (!parsed) {
          *reply = Text(StrCat("the value at key '", key, "' is not a counter"));
          return StoreStatus::kRefused;
        }
        value = *parsed;
      }
      if (__builtin_add_overflow(value, request->delta, &value)) {
        *reply = Text(StrCat("adding ", request->delta, " to the counter at key '", key, "' overflows int64"));
        return StoreStatus::kRefused;
      }
      data_[key] = Text(std::to_string(value));
      PutU64(reply, static_cast<uint64_t>(value));
      lock.unlock();
      changed_.notify_all();
      return StoreStatus::kOk;
    }
    case StoreOp::kCheck: reply->push_back(all_present() ? 1 : 0); return StoreStatus::kOk;
    case StoreOp::kDelete: reply->push_back(data_.erase(keys[0]) > 0 ? 1 : 0); return StoreStatus::kOk;
  }
  MSRT_INTERNAL_ASSERT(false, "DecodeRequest let through op ", static_cast<int>(op));
  return StoreStatus::kBadRequest;
}

void StoreServer::Set(const std::string& key, Bytes value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    data_[key] = std::move(value);
  }
  changed_.notify_all();
}

std::optional<Bytes> StoreServer::Get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

int64_t StoreServer::Add(const std::string& key, int64_t delta) {
  int64_t value = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = data_.find(key);
    if (it != data_.end()) {
      auto parsed = ParseCounter(it->second);
      MSRT_CHECK_VALUE(parsed.has_value(), "the value at key '", key, "' is not a counter");
      value = *parsed;
    }
    MSRT_CHECK_VALUE(!__builtin_add_overflow(value, delta, &value), "adding ", delta, " to the counter at key '", key,
                     "' overflows int64");
    data_[key] = Text(std::to_string(value));
  }
  changed_.notify_all();
  return value;
}

void StoreServer::Abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    abort_reason_ = reason;
  }
  changed_.notify_all();
}

// ---------------------------------------------------------------- client

namespace {

// Connects to one address within `deadline`; 0 or the errno.
int ConnectOnce(const addrinfo* a, Clock::time_point deadline, int* fd_out) {
  int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
  if (fd < 0) return errno;
  int result = ::connect(fd, a->ai_addr, a->ai_addrlen);
  int error = result == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left, 0, INT32_MAX)));
    if (ready <= 0) {
      error = ready == 0 ? ETIMEDOUT : errno;
    } else {
      socklen_t length = sizeof(error);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    }
  }
  if (error != 0) {
    ::close(fd);
    return error;
  }
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  *fd_out = fd;
  return 0;
}

}  // namespace

StoreClient::StoreClient(StoreClientOptions options) : options_(std::move(options)) {
  MSRT_CHECK_VALUE(options_.port != 0, "the rendezvous store's port must be 1..65535, got 0");
  const std::string where = address();
  auto deadline = Clock::now() + options_.connect_timeout;
  std::string last_reason;
  for (;;) {
    AddressList addresses;
    std::string why = Resolve(options_.host, options_.port, false, &addresses);
    if (!why.empty()) {
      last_reason = StrCat("the host name does not resolve (", why, ")");
    } else {
      for (addrinfo* a = addresses.head; a != nullptr && fd_ < 0; a = a->ai_next) {
        int error = ConnectOnce(a, deadline, &fd_);
        if (error != 0) last_reason = SystemError(error);
      }
      if (fd_ >= 0) return;
    }
    if (Clock::now() + std::chrono::milliseconds(50) >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the server may not be up yet
  }
  MSRT_CHECK(false, "could not reach the rendezvous store at ", where, " within ", options_.connect_timeout.count(),
             " ms: ", last_reason);
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string StoreClient::address() const { return Address(options_.host, options_.port); }

StoreStatus StoreClient::Call(const StoreRequest& request, Bytes* reply, std::chrono::milliseconds wait) {
  Bytes payload = store_wire::EncodeRequest(request);
  std::lock_guard<std::mutex> lock(mutex_);
  MSRT_CHECK(fd_ >= 0, "the connection to the rendezvous store at ", address(), " was lost earlier");
  auto lose = [&](const std::string& message) {
    ::close(fd_);
    fd_ = -1;
    ThrowError(ErrorKind::kRuntime, message);
  };
  MSRT_CHECK_VALUE(payload.size() <= options_.max_message_bytes, "a rendezvous store request of ", payload.size(),
                   " bytes exceeds the limit of ", options_.max_message_bytes);
  Bytes frame = store_wire::Frame(static_cast<uint8_t>(request.op), payload);
  if (!WriteAll(fd_, frame.data(), frame.size())) {
    lose(StrCat("the rendezvous store at ", address(), " closed the connection"));
  }
  // The server answers a parked request when its timeout passes; allow it
  // a grace period before deciding it is gone.
  auto deadline = Clock::now() + wait + std::chrono::seconds(10);
  uint8_t header[kStoreHeaderBytes];
  ReadResult result = ReadAll(fd_, header, sizeof(header), deadline);
  if (result == ReadResult::kTimeout) lose(StrCat("the rendezvous store at ", address(), " did not answer"));
  if (result == ReadResult::kClosed) lose(StrCat("the rendezvous store at ", address(), " closed the connection"));
  uint8_t status = header[0];
  uint32_t length = ReadU32(header + 1);
  if (status > static_cast<uint8_t>(StoreStatus::kRefused) || length > options_.max_message_bytes) {
    lose(StrCat("the rendezvous store at ", address(), " sent a malformed response (status ", static_cast<int>(status),
                ", ", length, " bytes)"));
  }
  reply->assign(length, 0);
  if (ReadAll(fd_, reply->data(), length, deadline) != ReadResult::kOk) {
    lose(StrCat("the rendezvous store at ", address(), " closed the connection mid-response"));
  }
  auto kind = static_cast<StoreStatus>(status);
  if (kind == StoreStatus::kBadRequest) {
    lose(StrCat("the rendezvous store at ", address(), " refused a request: ", AsText(*reply)));
  }
  if (kind == StoreStatus::kAborted) {
    ThrowError(ErrorKind::kRuntime, StrCat("the rendezvous store at ", address(), " was aborted: ", AsText(*reply)));
  }
  if (kind == StoreStatus::kRefused) ThrowError(ErrorKind::kValue, AsText(*reply));
  return kind;
}

void StoreClient::Set(const std::string& key, const Bytes& value) {
  Bytes reply;
  Call(StoreRequest{.op = StoreOp::kSet, .keys = {key}, .value = value}, &reply, std::chrono::milliseconds(0));
}

Bytes StoreClient::Get(const std::string& key, std::optional<std::chrono::milliseconds> timeout) {
  auto wait = timeout.value_or(options_.timeout);
  MSRT_CHECK_VALUE(wait.count() >= 0, "a timeout must not be negative, got ", wait.count(), " ms");
  Bytes reply;
  StoreRequest request{.op = StoreOp::kGet, .keys = {key}, .timeout_ms = static_cast<uint64_t>(wait.count())};
  if (Call(request, &reply, wait) == StoreStatus::kTimeout) {
    ThrowError(ErrorKind::kRuntime, StrCat("timed out after ", wait.count(), " ms waiting for key '", key,
                                           "' in the rendezvous store at ", address()));
  }
  return reply;
}

void StoreClient::Wait(const std::vector<std::string>& keys, std::optional<std::chrono::milliseconds> timeout) {
  auto wait = timeout.value_or(options_.timeout);
  MSRT_CHECK_VALUE(wait.count() >= 0, "a timeout must not be negative, got ", wait.count(), " ms");
  Bytes reply;
  StoreRequest request{.op = StoreOp::kWait, .keys = keys, .timeout_ms = static_cast<uint64_t>(wait.count())};
  if (Call(request, &reply, wait) == StoreStatus::kTimeout) {
    std::string missing;
    Reader in(reply);
    while (in.ok() && !in.done()) {
      std::string key = in.String();
      if (in.ok()) missing += StrCat(missing.empty() ? "" : ", ", "'", key, "'");
    }
    ThrowError(ErrorKind::kRuntime, StrCat("timed out after ", wait.count(), " ms waiting for keys in the rendezvous ",
                                           "store at ", address(), "; missing: ", missing));
  }
}

int64_t StoreClient::Add(const std::string& key, int64_t delta) {
  Bytes reply;
  Call(StoreRequest{.op = StoreOp::kAdd, .keys = {key}, .delta = delta}, &reply, std::chrono::milliseconds(0));
  MSRT_CHECK(reply.size() == 8, "the rendezvous store at ", address(), " sent a malformed add response");
  return static_cast<int64_t>(ReadU64(reply.data()));
}

bool StoreClient::Check(const std::vector<std::string>& keys) {
  Bytes reply;
  Call(StoreRequest{.op = StoreOp::kCheck, .keys = keys}, &reply, std::chrono::milliseconds(0));
  MSRT_CHECK(reply.size() == 1, "the rendezvous store at ", address(), " sent a malformed check response");
  return reply[0] != 0;
}

bool StoreClient::Delete(const std::string& key) {
  Bytes reply;
  Call(StoreRequest{.op = StoreOp::kDelete, .keys = {key}}, &reply, std::chrono::milliseconds(0));
  MSRT_CHECK(reply.size() == 1, "the rendezvous store at ", address(), " sent a malformed delete response");
  return reply[0] != 0;
}

Bytes ShareFromRoot(StoreClient& store, const std::string& key, int rank, const std::function<Bytes()>& make,
                    std::chrono::milliseconds timeout) {
  if (rank == 0) {
    Bytes value = make();
    store.Set(key, value);
    return value;
  }
  return store.Get(key, timeout);
}

}  // namespace msrt::parallel
