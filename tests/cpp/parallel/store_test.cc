#include "parallel/store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "msrt/core/errors.h"

namespace msrt::parallel {
namespace {

using namespace std::chrono_literals;
using store_wire::Frame;
using store_wire::PutString;
using store_wire::PutU32;
using store_wire::PutU64;

Bytes B(const std::string& text) { return {text.begin(), text.end()}; }

std::unique_ptr<StoreServer> Serve(uint32_t max_message_bytes = kDefaultMaxStoreMessageBytes) {
  StoreServerOptions options;
  options.max_message_bytes = max_message_bytes;
  auto server = StoreServer::Listen(options);
  server->Start();
  return server;
}

StoreClientOptions ClientOptions(uint16_t port) {
  StoreClientOptions options;
  options.port = port;
  options.connect_timeout = 2s;
  options.timeout = 2s;
  return options;
}

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(ErrorKindName(e.kind())) + ": " + e.what();
  }
  return "";
}

// A raw connection, to send what a client never would.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    timeval limit{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void Send(const Bytes& bytes) const {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  // The response's status and payload text; status -1 when the server closed.
  std::pair<int, std::string> Receive() const {
    uint8_t header[kStoreHeaderBytes];
    if (!ReadExactly(header, sizeof(header))) return {-1, ""};
    uint32_t length = header[1] | header[2] << 8 | header[3] << 16 | static_cast<uint32_t>(header[4]) << 24;
    std::string payload(length, '\0');
    if (!ReadExactly(payload.data(), length)) return {-1, ""};
    return {header[0], payload};
  }
  bool Closed() const {
    char byte;
    return ::recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  bool ReadExactly(void* data, size_t size) const {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
      ssize_t n = ::recv(fd_, p, size, 0);
      if (n <= 0) return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }
  int fd_;
};

TEST(RendezvousStoreTest, EveryRequestDecodesToWhatWasEncoded) {
  std::vector<StoreRequest> requests = {
      {.op = StoreOp::kSet, .keys = {"k"}, .value = B("v\0w"), .timeout_ms = 0, .delta = 0},
      {.op = StoreOp::kGet, .keys = {"k"}, .value = {}, .timeout_ms = 1234, .delta = 0},
      {.op = StoreOp::kWait, .keys = {"a", "", "c"}, .value = {}, .timeout_ms = 5, .delta = 0},
      {.op = StoreOp::kAdd, .keys = {"n"}, .value = {}, .timeout_ms = 0, .delta = -9},
      {.op = StoreOp::kCheck, .keys = {}, .value = {}, .timeout_ms = 0, .delta = 0},
      {.op = StoreOp::kDelete, .keys = {"gone"}, .value = {}, .timeout_ms = 0, .delta = 0},
  };
  for (const auto& request : requests) {
    std::string error;
    auto decoded = store_wire::DecodeRequest(static_cast<uint8_t>(request.op), store_wire::EncodeRequest(request),
                                             &error);
    ASSERT_TRUE(decoded.has_value()) << error;
    EXPECT_EQ(decoded->op, request.op);
    EXPECT_EQ(decoded->keys, request.keys);
    EXPECT_EQ(decoded->value, request.value);
    EXPECT_EQ(decoded->timeout_ms, request.timeout_ms);
    EXPECT_EQ(decoded->delta, request.delta);
    // One byte less is malformed, never a shorter request.
    Bytes cut = store_wire::EncodeRequest(request);
    if (cut.empty()) continue;
    cut.pop_back();
    EXPECT_FALSE(store_wire::DecodeRequest(static_cast<uint8_t>(request.op), cut, &error).has_value());
    EXPECT_NE(error.find("malformed"), std::string::npos) << error;
  }
}

TEST(RendezvousStoreTest, SetGetAddCheckDelete) {
  auto server = Serve();
  StoreClient client(ClientOptions(server->port()));
  client.Set("a", B("hello"));
  EXPECT_EQ(client.Get("a"), B("hello"));
  client.Set("a", B(""));  // overwrite, with an empty value
  EXPECT_EQ(client.Get("a"), B(""));
  EXPECT_TRUE(client.Check({"a"}));
  EXPECT_FALSE(client.Check({"a", "b"}));
  EXPECT_TRUE(client.Check({}));
  EXPECT_EQ(client.Add("n", 5), 5);
  EXPECT_EQ(client.Add("n", -7), -2);
  EXPECT_EQ(client.Get("n"), B("-2"));  // counters read back as decimal text
  EXPECT_TRUE(client.Delete("a"));
  EXPECT_FALSE(client.Delete("a"));
  EXPECT_FALSE(client.Check({"a"}));
  // The hosting process sees and writes the same keys.
  EXPECT_EQ(server->Get("n"), B("-2"));
  server->Set("from-host", B("x"));
  EXPECT_EQ(client.Get("from-host"), B("x"));
  EXPECT_EQ(server->Add("n", 2), 0);
  EXPECT_FALSE(server->Get("missing").has_value());
}

TEST(RendezvousStoreTest, BinaryValuesAndLongKeysRoundTrip) {
  auto server = Serve();
  StoreClient client(ClientOptions(server->port()));
  Bytes value(70000);
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<uint8_t>(i * 31);
  std::string key(5000, 'k');
  key[17] = '\0';
  client.Set(key, value);
  EXPECT_EQ(client.Get(key), value);
}

TEST(RendezvousStoreTest, GetWaitsForAnotherClientsSet) {
  auto server = Serve();
  StoreClient reader(ClientOptions(server->port()));
  std::thread writer([port = server->port()] {
    StoreClient client(ClientOptions(port));
    std::this_thread::sleep_for(50ms);
    client.Set("late", B("v"));
    client.Set("later", B("w"));
  });
  EXPECT_EQ(reader.Get("late", 5s), B("v"));
  reader.Wait({"late", "later"}, 5s);
  writer.join();
}

TEST(RendezvousStoreTest, TimeoutsNameTheMissingKeys) {
  auto server = Serve();
  StoreClient client(ClientOptions(server->port()));
  client.Set("here", B("1"));
  auto start = std::chrono::steady_clock::now();
  std::string error = ErrorOf([&] { client.Get("absent", 100ms); });
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_NE(error.find("RuntimeError"), std::string::npos) << error;
  EXPECT_NE(error.find("'absent'"), std::string::npos) << error;
  EXPECT_NE(error.find("100 ms"), std::string::npos) << error;
  error = ErrorOf([&] { client.Wait({"here", "gone1", "gone2"}, 50ms); });
  EXPECT_NE(error.find("missing: 'gone1', 'gone2'"), std::string::npos) << error;
  EXPECT_EQ(error.find("'here'"), std::string::npos) << error;
  // The connection is still good after a timeout.
  EXPECT_EQ(client.Get("here"), B("1"));
}

TEST(RendezvousStoreTest, AddOnANonCounterIsAValueErrorAndChangesNothing) {
  auto server = Serve();
  StoreClient client(ClientOptions(server->port()));
  client.Set("text", B("abc"));
  std::string error = ErrorOf([&] { client.Add("text", 1); });
  EXPECT_NE(error.find("ValueError"), std::string::npos) << error;
  EXPECT_NE(error.find("not a counter"), std::string::npos) << error;
  EXPECT_EQ(client.Get("text"), B("abc"));
  client.Add("big", INT64_MAX);
  error = ErrorOf([&] { client.Add("big", 1); });
  EXPECT_NE(error.find("overflows"), std::string::npos) << error;
  EXPECT_EQ(client.Add("big", 0), INT64_MAX);
}

TEST(RendezvousStoreTest, UnreachableServerNamesHostAndPort) {
  uint16_t port = 0;
  {
    auto server = StoreServer::Listen();
    port = server->port();
  }  // closed: nothing listens there now
  StoreClientOptions options = ClientOptions(port);
  options.connect_timeout = 200ms;
  auto start = std::chrono::steady_clock::now();
  std::string error = ErrorOf([&] { StoreClient client(options); });
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  EXPECT_NE(error.find("RuntimeError"), std::string::npos) << error;
  EXPECT_NE(error.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << error;
  EXPECT_NE(error.find("within 200 ms"), std::string::npos) << error;
  options.port = 0;
  EXPECT_NE(ErrorOf([&] { StoreClient client(options); }).find("ValueError"), std::string::npos);
  options.port = 1;
  options.host = "no-such-host.invalid";
  error = ErrorOf([&] { StoreClient client(options); });
  EXPECT_NE(error.find("no-such-host.invalid:1"), std::string::npos) << error;
}

TEST(RendezvousStoreTest, ClientWaitsForAServerThatStartsLate) {
  auto server = StoreServer::Listen();  // bound, not yet serving
  std::thread starter([&] {
    std::this_thread::sleep_for(50ms);
    server->Start();
  });
  StoreClient client(ClientOptions(server->port()));
  client.Set("k", B("v"));
  EXPECT_EQ(client.Get("k"), B("v"));
  starter.join();
}

TEST(RendezvousStoreTest, OversizedFrameIsRefusedAndTheConnectionClosed) {
  auto server = Serve(1024);
  RawConnection raw(server->port());
  Bytes header{static_cast<uint8_t>(StoreOp::kSet)};
  PutU32(&header, 1u << 30);  // claims a gigabyte, sends none of it
  raw.Send(header);
  auto [status, text] = raw.Receive();
  EXPECT_EQ(status, static_cast<int>(StoreStatus::kBadRequest));
  EXPECT_NE(text.find("exceeds the store's limit of 1024"), std::string::npos) << text;
  EXPECT_TRUE(raw.Closed());
  // The server goes on serving others.
  StoreClient client(ClientOptions(server->port()));
  client.Set("k", B("v"));
  EXPECT_EQ(client.Get("k"), B("v"));
}

TEST(RendezvousStoreTest, MalformedFramesAreRefusedNeverUsed) {
  auto server = Serve();
  auto refused = [&](const Bytes& frame, const std::string& expected) {
    RawConnection raw(server->port());
    raw.Send(frame);
    auto [status, text] = raw.Receive();
    EXPECT_EQ(status, static_cast<int>(StoreStatus::kBadRequest)) << expected;
    EXPECT_NE(text.find(expected), std::string::npos) << text;
    EXPECT_TRUE(raw.Closed());
  };
  refused(Frame(99, {}), "unknown operation 99");
  refused(Frame(0, {}), "unknown operation 0");
  // A key length running past the payload.
  Bytes payload;
  PutU32(&payload, 1000);
  payload.push_back('x');
  refused(Frame(static_cast<uint8_t>(StoreOp::kSet), payload), "malformed set");
  // A set without its value.
  payload.clear();
  PutString(&payload, "k");
  refused(Frame(static_cast<uint8_t>(StoreOp::kSet), payload), "malformed set");
  // Bytes left over after a complete get.
  payload.clear();
  PutString(&payload, "k");
  PutU64(&payload, 10);
  payload.push_back(0);
  refused(Frame(static_cast<uint8_t>(StoreOp::kGet), payload), "malformed get");
  // A list count the payload can not hold (nothing is reserved for it).
  payload.clear();
  PutU32(&payload, 0xffffffffu);
  refused(Frame(static_cast<uint8_t>(StoreOp::kWait), payload), "malformed wait");
  refused(Frame(static_cast<uint8_t>(StoreOp::kCheck), payload), "malformed check");
  // A short add (no delta) and a delete with a truncated key.
  payload.clear();
  PutString(&payload, "n");
  refused(Frame(static_cast<uint8_t>(StoreOp::kAdd), payload), "malformed add");
  payload.clear();
  PutU32(&payload, 3);
  refused(Frame(static_cast<uint8_t>(StoreOp::kDelete), payload), "malformed delete");
  // None of it was stored.
  EXPECT_FALSE(server->Get("k").has_value());
  EXPECT_FALSE(server->Get("n").has_value());
  // A frame cut short by a disconnect stores nothing either.
  {
    RawConnection raw(server->port());
    Bytes frame = Frame(static_cast<uint8_t>(StoreOp::kSet), [] {
      Bytes p;
      PutString(&p, "cut");
      PutString(&p, "value");
      return p;
    }());
    frame.resize(frame.size() - 2);
    raw.Send(frame);
  }
  StoreClient client(ClientOptions(server->port()));
  EXPECT_FALSE(client.Check({"cut"}));
}

TEST(RendezvousStoreTest, ClientRefusesAMalformedResponse) {
  // A fake server answering every request with an unknown status.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  std::thread fake([fd] {
    int connection = ::accept(fd, nullptr, nullptr);
    uint8_t request[64];
    ::recv(connection, request, sizeof(request), 0);
    Bytes reply{77};
    PutU32(&reply, 0);
    ::send(connection, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::recv(connection, request, sizeof(request), 0);  // until the client hangs up
    ::close(connection);
  });
  {
    StoreClient client(ClientOptions(ntohs(address.sin_port)));
    std::string error = ErrorOf([&] { client.Set("k", B("v")); });
    EXPECT_NE(error.find("malformed response (status 77"), std::string::npos) << error;
    error = ErrorOf([&] { client.Set("k", B("v")); });
    EXPECT_NE(error.find("lost earlier"), std::string::npos) << error;
  }
  fake.join();
  ::close(fd);
}

TEST(RendezvousStoreTest, AbortFailsParkedAndLaterRequestsWithTheReason) {
  auto server = Serve();
  StoreClient client(ClientOptions(server->port()));
  std::thread aborter([&] {
    std::this_thread::sleep_for(50ms);
    server->Abort("rank 3 did not arrive within cluster_time_out");
  });
  std::string error = ErrorOf([&] { client.Get("never", 10s); });
  aborter.join();
  EXPECT_NE(error.find("RuntimeError"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 3 did not arrive"), std::string::npos) << error;
  error = ErrorOf([&] { client.Set("k", B("v")); });
  EXPECT_NE(error.find("rank 3 did not arrive"), std::string::npos) << error;
}

TEST(RendezvousStoreTest, StopEndsParkedRequestsAndJoinsEverything) {
  auto server = Serve();
  StoreClient client(ClientOptions(server->port()));
  client.Set("k", B("v"));
  EXPECT_EQ(server->connections(), 1u);
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    server->Stop();
  });
  std::string error = ErrorOf([&] { client.Get("never", 10s); });
  stopper.join();
  EXPECT_NE(error.find("closed the connection"), std::string::npos) << error;
  EXPECT_EQ(server->connections(), 0u);
  server->Stop();  // idempotent
}

TEST(RendezvousStoreTest, ShareFromRootPublishesRankZerosValue) {
  auto server = Serve();
  auto root = std::make_shared<StoreClient>(ClientOptions(server->port()));
  auto other = std::make_shared<StoreClient>(ClientOptions(server->port()));
  std::atomic<int> made{0};
  auto make = [&] {
    ++made;
    return B("id-bytes");
  };
  Bytes got_other;
  std::thread t([&] { got_other = ShareFromRoot(*other, "job/id", 1, make, 5s); });
  EXPECT_EQ(ShareFromRoot(*root, "job/id", 0, make, 5s), B("id-bytes"));
  t.join();
  EXPECT_EQ(got_other, B("id-bytes"));
  EXPECT_EQ(made.load(), 1);
}

}  // namespace
}  // namespace msrt::parallel
