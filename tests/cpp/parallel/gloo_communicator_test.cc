// Collectives over Gloo in 1, 2 and 4 forked processes on 127.0.0.1, each
// against values computed here.
#include <gtest/gtest.h>
#include <cmath>
#include <complex>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/multiprocess.h"
#include "parallel/store.h"

namespace msrt::parallel {
namespace {

using namespace std::chrono_literals;
using parallel::testing::ConnectStore;
using parallel::testing::Failures;
using parallel::testing::RunRanks;

constexpr DType kAllDTypes[] = {DType::kBool,    DType::kUInt8,     DType::kInt8,      DType::kInt16,
                                DType::kInt32,   DType::kInt64,     DType::kFloat16,   DType::kBFloat16,
                                DType::kFloat32, DType::kFloat64,   DType::kUInt16,    DType::kUInt32,
                                DType::kUInt64,  DType::kComplex64, DType::kComplex128};
constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd};

// Failures inside a rank process are exceptions (the harness reports them).
#define RANK_CHECK(cond, ...)                                                                                        \
  do {                                                                                                               \
    if (!(cond)) throw std::runtime_error(::msrt::StrCat(#cond, " failed at line ", __LINE__, ": ", ##__VA_ARGS__)); \
  } while (0)

std::unique_ptr<Communicator> Connect(int rank, int size, uint16_t port,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  CommunicatorOptions options;
  options.timeout = timeout;
  return CreateGlooCommunicator(ConnectStore(port), rank, size, options);
}

// Tensors from doubles and back (values are small integers: exact in every dtype).
Tensor Make(const std::vector<double>& values, DType dtype, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  Tensor t = Tensor::Empty(shape, dtype);
  void* p = t.mutable_data();
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    switch (dtype) {
      case DType::kBool: static_cast<uint8_t*>(p)[i] = v != 0; break;
      case DType::kUInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
      case DType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
      case DType::kInt16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
      case DType::kInt32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
      case DType::kInt64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
      case DType::kFloat16: static_cast<Half*>(p)[i] = FloatToHalf(static_cast<float>(v)); break;
      case DType::kBFloat16: static_cast<BFloat16*>(p)[i] = FloatToBFloat16(static_cast<float>(v)); break;
      case DType::kFloat32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
      case DType::kFloat64: static_cast<double*>(p)[i] = v; break;
      case DType::kUInt16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); break;
      case DType::kUInt32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
      case DType::kUInt64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
      case DType::kComplex64: static_cast<std::complex<float>*>(p)[i] = {static_cast<float>(v), 0.0F}; break;
      case DType::kComplex128: static_cast<std::complex<double>*>(p)[i] = {v, 0.0}; break;
    }
  }
  return t;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  const void* p = t.data();
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t.dtype()) {
      case DType::kBool: out[i] = static_cast<const uint8_t*>(p)[i]; break;
      case DType::kUInt8: out[i] = static_cast<const uint8_t*>(p)[i]; break;
      case DType::kInt8: out[i] = static_cast<const int8_t*>(p)[i]; break;
      case DType::kInt16: out[i] = static_cast<const int16_t*>(p)[i]; break;
      case DType::kInt32: out[i] = static_cast<const int32_t*>(p)[i]; break;
      case DType::kInt64: out[i] = static_cast<double>(static_cast<const int64_t*>(p)[i]); break;
      case DType::kFloat16: out[i] = HalfToFloat(static_cast<const Half*>(p)[i]); break;
      case DType::kBFloat16: out[i] = BFloat16ToFloat(static_cast<const BFloat16*>(p)[i]); break;
      case DType::kFloat32: out[i] = static_cast<const float*>(p)[i]; break;
      case DType::kFloat64: out[i] = static_cast<const double*>(p)[i]; break;
      case DType::kUInt16: out[i] = static_cast<const uint16_t*>(p)[i]; break;
      case DType::kUInt32: out[i] = static_cast<const uint32_t*>(p)[i]; break;
      case DType::kUInt64: out[i] = static_cast<double>(static_cast<const uint64_t*>(p)[i]); break;
      // Complex values are made real (imaginary part 0); a nonzero one reads as NaN, which fails every check.
      case DType::kComplex64: {
        std::complex<float> c = static_cast<const std::complex<float>*>(p)[i];
        out[i] = c.imag() == 0.0F ? c.real() : std::nan("");
        break;
      }
      case DType::kComplex128: {
        std::complex<double> c = static_cast<const std::complex<double>*>(p)[i];
        out[i] = c.imag() == 0.0 ? c.real() : std::nan("");
        break;
      }
    }
  }
  return out;
}

// Rank `rank`'s element i for a reduction test: 1 or 2 for prod (no
// overflow in int8 over 4 ranks), 0/1 for bool, -5..5 otherwise (0..10 unsigned).
double Input(DType dtype, ReduceOp op, int rank, size_t i) {
  if (dtype == DType::kBool) return static_cast<double>((static_cast<size_t>(rank) + i) % 3 == 0);
  if (op == ReduceOp::kProd) return 1.0 + static_cast<double>((static_cast<size_t>(rank) + i) % 2);
  double v = static_cast<double>((static_cast<size_t>(rank) * 7 + i * 3) % 11);
  bool is_unsigned = dtype == DType::kUInt8 || dtype == DType::kUInt16 || dtype == DType::kUInt32 ||
                     dtype == DType::kUInt64;
  return is_unsigned ? v : v - 5;
}

double Expected(DType dtype, ReduceOp op, int size, size_t i) {
  double acc = Input(dtype, op, 0, i);
  for (int r = 1; r < size; ++r) {
    double v = Input(dtype, op, r, i);
    bool logical_or = dtype == DType::kBool && (op == ReduceOp::kSum || op == ReduceOp::kMax);
    bool logical_and = dtype == DType::kBool && !logical_or;
    if (logical_or) {
      acc = (acc != 0 || v != 0) ? 1 : 0;
    } else if (logical_and) {
      acc = (acc != 0 && v != 0) ? 1 : 0;
    } else if (op == ReduceOp::kSum) {
      acc += v;
    } else if (op == ReduceOp::kProd) {
      acc *= v;
    } else if (op == ReduceOp::kMax) {
      acc = std::max(acc, v);
    } else {
      acc = std::min(acc, v);
    }
  }
  return acc;
}

std::string Where(DType dtype, ReduceOp op, size_t i, double got, double want) {
  return StrCat(DTypeName(dtype), " ", ReduceOpName(op), " element ", i, ": got ", got, ", expected ", want);
}

class GlooCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BuiltWithGloo()) GTEST_SKIP() << "msrt was built without Gloo";
  }
};

void ExpectRanksSucceed(int ranks, const std::function<void(int, uint16_t)>& body,
                        std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  auto outcomes = RunRanks(ranks, body, deadline);
  EXPECT_EQ(Failures(outcomes), "");
}

// Every dtype and reduce op, in place and into another tensor; a count that
// no rank count divides, and one large enough for the ring (> 256 KB).
void AllReduceEverything(int ranks) {
  ExpectRanksSucceed(ranks, [ranks](int rank, uint16_t port) {
    auto comm = Connect(rank, ranks, port);
    RANK_CHECK(comm->rank() == rank && comm->size() == ranks && comm->backend() == "gloo");
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : kAllOps) {
        for (size_t count : {size_t{1}, size_t{37}, size_t{70001}}) {
          if (count > 37 && op != ReduceOp::kSum && dtype != DType::kFloat32) continue;
          std::vector<double> in(count);
          for (size_t i = 0; i < count; ++i) in[i] = Input(dtype, op, rank, i);
          Tensor t = Make(in, dtype);
          Tensor out = Tensor::Empty(t.shape(), dtype);
          bool complex = dtype == DType::kComplex64 || dtype == DType::kComplex128;
          if (complex && (op == ReduceOp::kMax || op == ReduceOp::kMin)) {  // not ordered: refused before sending
            bool refused = false;
            try {
              comm->AllReduce(t, op);
            } catch (const TypeError&) {
              refused = true;
            }
            RANK_CHECK(refused, DTypeName(dtype), " ", ReduceOpName(op), " was not refused");
            continue;
          }
          comm->AllReduce(t, out, op);
          comm->AllReduce(t, op);
          std::vector<double> got = Values(t);
          std::vector<double> got_out = Values(out);
          for (size_t i = 0; i < count; ++i) {
            double want = Expected(dtype, op, ranks, i);
            RANK_CHECK(got[i] == want, Where(dtype, op, i, got[i], want));
            RANK_CHECK(got_out[i] == want, "out of place: ", Where(dtype, op, i, got_out[i], want));
          }
        }
      }
    }
  });
}

TEST_F(GlooCommunicatorTest, AllReduceEveryDTypeAndOpOnTwoRanks) { AllReduceEverything(2); }

TEST_F(GlooCommunicatorTest, AllReduceEveryDTypeAndOpOnFourRanks) { AllReduceEverything(4); }

// The ring (messages over 256 KB) in segments of 1 MB: every dtype and
// reduce op, counts of several segments per rank's chunk with a partial last
// segment and chunks of unequal length, in place and into another tensor.
void RingAllReduceEverything(int ranks) {
  ExpectRanksSucceed(
      ranks,
      [ranks](int rank, uint16_t port) {
        auto comm = Connect(rank, ranks, port);
        for (DType dtype : kAllDTypes) {
          const auto item = static_cast<size_t>(ItemSize(dtype));
          // 1.5 segments per chunk, plus an odd count that no rank count divides.
          const size_t count = static_cast<size_t>(ranks) * (3 << 20) / 2 / item + 13;
          for (ReduceOp op : kAllOps) {
            bool complex = dtype == DType::kComplex64 || dtype == DType::kComplex128;
            if (complex && (op == ReduceOp::kMax || op == ReduceOp::kMin)) continue;  // refused (above)
            std::vector<double> in(count);
            for (size_t i = 0; i < count; ++i) in[i] = Input(dtype, op, rank, i);
            Tensor t = Make(in, dtype);
            Tensor out = Tensor::Empty(t.shape(), dtype);
            comm->AllReduce(t, out, op);
            std::vector<double> got_out = Values(out);
            RANK_CHECK(Values(t) == in, DTypeName(dtype), " ", ReduceOpName(op), ": the input changed out of place");
            comm->AllReduce(t, op);
            std::vector<double> got = Values(t);
            for (size_t i = 0; i < count; ++i) {
              double want = Expected(dtype, op, ranks, i);
              RANK_CHECK(got[i] == want, Where(dtype, op, i, got[i], want));
              RANK_CHECK(got_out[i] == want, "out of place: ", Where(dtype, op, i, got_out[i], want));
            }
          }
        }
      },
      std::chrono::seconds(180));  // 4 ranks on 2 cores move about 300 MB
}

TEST_F(GlooCommunicatorTest, RingAllReduceEveryDTypeAndOpOnTwoRanks) { RingAllReduceEverything(2); }

TEST_F(GlooCommunicatorTest, RingAllReduceEveryDTypeAndOpOnFourRanks) { RingAllReduceEverything(4); }

// Three ranks: bcube's groups are not powers of two, the ring's chunks uneven.
TEST_F(GlooCommunicatorTest, AllReduceAndReduceScatterOnThreeRanks) {
  ExpectRanksSucceed(3, [](int rank, uint16_t port) {
    auto comm = Connect(rank, 3, port);
    for (size_t count : {size_t{2}, size_t{3}, size_t{1001}, size_t{100003}}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        std::vector<double> in(count);
        for (size_t i = 0; i < count; ++i) in[i] = Input(DType::kFloat32, op, rank, i);
        Tensor t = Make(in, DType::kFloat32);
        comm->AllReduce(t, op);
        std::vector<double> got = Values(t);
        for (size_t i = 0; i < count; ++i) {
          double want = Expected(DType::kFloat32, op, 3, i);
          RANK_CHECK(got[i] == want, "count ", count, ": ", Where(DType::kFloat32, op, i, got[i], want));
        }
      }
    }
    std::vector<double> in(3 * 5);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i) * (rank + 1);
    Tensor out = Tensor::Empty({5}, DType::kInt32);
    comm->ReduceScatter(Make(in, DType::kInt32), out, ReduceOp::kSum);
    std::vector<double> got = Values(out);
    for (size_t j = 0; j < 5; ++j) {
      double want = static_cast<double>(static_cast<size_t>(rank) * 5 + j) * 6;  // (1 + 2 + 3) * i
      RANK_CHECK(got[j] == want, "ReduceScatter element ", j, ": got ", got[j], ", expected ", want);
    }
  });
}

// AllGather, ReduceScatter, Broadcast, AllToAll, Send/Recv, Barrier.
void OtherCollectives(int ranks) {
  ExpectRanksSucceed(ranks, [ranks](int rank, uint16_t port) {
    auto comm = Connect(rank, ranks, port);
    for (DType dtype :
         {DType::kFloat32, DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kInt8, DType::kBool}) {
      // AllGather: rank r contributes (2, 3) of r*10 + i; output (2*ranks, 3).
      std::vector<double> mine(6);
      for (size_t i = 0; i < 6; ++i) mine[i] = dtype == DType::kBool ? (rank + i) % 2 : rank * 10 + i;
      Tensor gathered = Tensor::Empty({2 * ranks, 3}, dtype);
      comm->AllGather(Make(mine, dtype, {2, 3}), gathered);
      std::vector<double> got = Values(gathered);
      for (int r = 0; r < ranks; ++r) {
        for (size_t i = 0; i < 6; ++i) {
          double want = dtype == DType::kBool ? (r + i) % 2 : r * 10 + i;
          RANK_CHECK(got[static_cast<size_t>(r) * 6 + i] == want, "AllGather ", DTypeName(dtype), " from rank ", r);
        }
      }
      if (dtype == DType::kBool) continue;
      // ReduceScatter (sum and max): input (ranks * 3, 2) of rank + index.
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        std::vector<double> in(static_cast<size_t>(ranks) * 6);
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>((static_cast<size_t>(rank) * 5 + i) % 9);
        Tensor out = Tensor::Empty({3, 2}, dtype);
        comm->ReduceScatter(Make(in, dtype, {3 * ranks, 2}), out, op);
        std::vector<double> got_rs = Values(out);
        for (size_t j = 0; j < 6; ++j) {
          size_t i = static_cast<size_t>(rank) * 6 + j;
          double want = op == ReduceOp::kSum ? 0 : -1e9;
          for (int r = 0; r < ranks; ++r) {
            double v = static_cast<double>((static_cast<size_t>(r) * 5 + i) % 9);
            want = op == ReduceOp::kSum ? want + v : std::max(want, v);
          }
          RANK_CHECK(got_rs[j] == want, "ReduceScatter ", DTypeName(dtype), " ", ReduceOpName(op), " element ", j,
                     ": got ", got_rs[j], ", expected ", want);
        }
      }
      // Broadcast from the last rank.
      Tensor b = Make({rank * 1.0, 2.0 + rank, -3.0}, dtype);
      comm->Broadcast(b, ranks - 1);
      RANK_CHECK(Values(b) == (std::vector<double>{ranks - 1.0, 2.0 + ranks - 1, -3.0}), "Broadcast");
      // AllToAll: chunk j of rank i is (i*10 + j, i*10 + j + 1); rank r gets chunk r of every rank.
      std::vector<double> send(static_cast<size_t>(ranks) * 2);
      for (int j = 0; j < ranks; ++j) {
        send[static_cast<size_t>(j) * 2] = rank * 10 + j;
        send[static_cast<size_t>(j) * 2 + 1] = rank * 10 + j + 1;
      }
      Tensor received = Tensor::Empty({ranks, 2}, dtype);
      comm->AllToAll(Make(send, dtype, {ranks, 2}), received);
      std::vector<double> got_a2a = Values(received);
      for (int i = 0; i < ranks; ++i) {
        RANK_CHECK(got_a2a[static_cast<size_t>(i) * 2] == i * 10 + rank, "AllToAll chunk from rank ", i);
        RANK_CHECK(got_a2a[static_cast<size_t>(i) * 2 + 1] == i * 10 + rank + 1, "AllToAll chunk from rank ", i);
      }
    }
    // A large ReduceScatter (chunks of 100000 floats).
    {
      const int64_t chunk = 100000;
      std::vector<double> in(static_cast<size_t>(chunk * ranks));
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>((i + static_cast<size_t>(rank)) % 7);
      Tensor out = Tensor::Empty({chunk}, DType::kFloat32);
      comm->ReduceScatter(Make(in, DType::kFloat32), out, ReduceOp::kSum);
      std::vector<double> got = Values(out);
      for (size_t j = 0; j < got.size(); ++j) {
        size_t i = static_cast<size_t>(rank * chunk) + j;
        double want = 0;
        for (int r = 0; r < ranks; ++r) want += static_cast<double>((i + static_cast<size_t>(r)) % 7);
        RANK_CHECK(got[j] == want, "large ReduceScatter element ", j);
      }
    }
    // Send/Recv around the ring, tagged; even ranks send first, odd ones receive first.
    int right = (rank + 1) % ranks;
    int left = (rank + ranks - 1) % ranks;
    Tensor payload = Make({rank + 0.5, rank + 1.5}, DType::kFloat64);
    Tensor incoming = Tensor::Empty({2}, DType::kFloat64);
    if (rank % 2 == 0) {
      comm->Send(payload, right, 7);
      comm->Recv(incoming, left, 7);
    } else {
      comm->Recv(incoming, left, 7);
      comm->Send(payload, right, 7);
    }
    RANK_CHECK(Values(incoming) == (std::vector<double>{left + 0.5, left + 1.5}), "Send/Recv from rank ", left);
    comm->Barrier();
  });
}

TEST_F(GlooCommunicatorTest, OtherCollectivesOnTwoRanks) { OtherCollectives(2); }

TEST_F(GlooCommunicatorTest, OtherCollectivesOnFourRanks) { OtherCollectives(4); }

TEST_F(GlooCommunicatorTest, SubGroupsMapRanksAndReduceAmongTheirMembers) {
  ExpectRanksSucceed(4, [](int rank, uint16_t port) {
    auto world = Connect(rank, 4, port);
    // Groups {1, 3} and {2, 0}: the group rank is the position in the list.
    std::vector<int> members = rank % 2 == 1 ? std::vector<int>{1, 3} : std::vector<int>{2, 0};
    auto group = world->NewGroup(members);
    RANK_CHECK(group->size() == 2);
    RANK_CHECK(group->world_ranks() == members);
    RANK_CHECK(group->WorldRank(group->rank()) == rank);
    RANK_CHECK(group->GroupRank(members[0]) == 0 && group->GroupRank(members[1]) == 1);
    RANK_CHECK(group->GroupRank(rank % 2 == 1 ? 0 : 1) == -1);
    Tensor t = Make({static_cast<double>(rank)}, DType::kInt32);
    group->AllReduce(t, ReduceOp::kSum);
    RANK_CHECK(Values(t)[0] == members[0] + members[1], "group sum ", Values(t)[0]);
    // Broadcast from group rank 0 (world rank members[0]).
    Tensor b = Make({static_cast<double>(rank)}, DType::kFloat32);
    group->Broadcast(b, 0);
    RANK_CHECK(Values(b)[0] == members[0]);
    // A second group of the same ranks is a distinct group; the world still works.
    auto again = world->NewGroup(members);
    again->Barrier();
    Tensor w = Make({1.0}, DType::kFloat32);
    world->AllReduce(w, ReduceOp::kSum);
    RANK_CHECK(Values(w)[0] == 4);
    // A one-rank group of a group.
    auto self = group->NewGroup({rank});
    RANK_CHECK(self->size() == 1 && self->rank() == 0 && self->WorldRank(0) == rank);
    Tensor s = Make({3.0}, DType::kFloat32);
    self->AllReduce(s, ReduceOp::kProd);
    RANK_CHECK(Values(s)[0] == 3);
  });
}

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(ErrorKindName(e.kind())) + ": " + e.what();
  }
  return "(no error)";
}

#define RANK_EXPECT_ERROR(statement, kind, text)                                                                      \
  do {                                                                                                                \
    std::string error_ = ErrorOf([&] { statement; });                                                                 \
    RANK_CHECK(error_.rfind(kind, 0) == 0 && error_.find(text) != std::string::npos, #statement, " raised ", error_); \
  } while (0)

TEST_F(GlooCommunicatorTest, LocalChecksRaiseTypedErrorsBeforeSending) {
  ExpectRanksSucceed(1, [](int rank, uint16_t port) {
    auto comm = Connect(rank, 1, port);
    Tensor f = Make({1, 2, 3, 4}, DType::kFloat32, {2, 2});
    Tensor i = Make({1, 2, 3, 4}, DType::kInt32, {2, 2});
    Tensor wide = Tensor::Empty({4}, DType::kFloat32);
    RANK_EXPECT_ERROR(comm->AllReduce(f, i, ReduceOp::kSum), "TypeError", "dtype must be the input's Float32");
    RANK_EXPECT_ERROR(comm->AllReduce(f, wide, ReduceOp::kSum), "ValueError", "shape must be the input's (2, 2)");
    RANK_EXPECT_ERROR(comm->AllGather(f, wide), "ValueError", "shape must be (2, 2)");
    Tensor scalar = Tensor::Scalar(1.0, DType::kFloat32);
    RANK_EXPECT_ERROR(comm->AllGather(scalar, wide), "ValueError", "at least 1 dimension");
    RANK_EXPECT_ERROR(comm->AllGather(f, i), "TypeError", "AllGather");
    RANK_EXPECT_ERROR(comm->ReduceScatter(f, wide, ReduceOp::kSum), "ValueError", "shape must be (2, 2)");
    RANK_EXPECT_ERROR(comm->AllToAll(f, f), "ValueError", "other than the input");
    RANK_EXPECT_ERROR(comm->Broadcast(f, 1), "ValueError", "root must be a group rank in [0, 1), got 1");
    RANK_EXPECT_ERROR(comm->Send(f, 0), "ValueError", "another rank than this one");
    RANK_EXPECT_ERROR(comm->Recv(f, -1), "ValueError", "src must be a group rank");
    Tensor undefined;
    RANK_EXPECT_ERROR(comm->AllReduce(undefined, ReduceOp::kSum), "ValueError", "undefined");
    Tensor symbolic = Tensor::Symbolic({2}, DType::kFloat32, DeviceTarget::kCPU);
    RANK_EXPECT_ERROR(comm->AllReduce(symbolic, ReduceOp::kSum), "ValueError", "graph being captured");
    RANK_EXPECT_ERROR(comm->NewGroup({}), "ValueError", "at least one rank");
    RANK_EXPECT_ERROR(comm->NewGroup({0, 0}), "ValueError", "distinct");
    RANK_EXPECT_ERROR(comm->NewGroup({0, 5}), "ValueError", "rank 5 of the new group [0, 5] is not a member");
    RANK_EXPECT_ERROR(comm->WorldRank(1), "ValueError", "group rank must be in [0, 1)");
    RANK_EXPECT_ERROR(comm->set_timeout(0ms), "ValueError", "positive");
    RANK_EXPECT_ERROR(CreateGlooCommunicator(ConnectStore(port), 2, 2), "ValueError", "rank must be in [0, 2), got 2");
    // Nothing changed: a single-rank collective still works and returns its input.
    comm->AllReduce(f, ReduceOp::kSum);
    RANK_CHECK(Values(f) == (std::vector<double>{1, 2, 3, 4}));
    Tensor out = Tensor::Empty({2, 2}, DType::kFloat32);
    comm->ReduceScatter(f, out, ReduceOp::kMax);
    RANK_CHECK(Values(out) == (std::vector<double>{1, 2, 3, 4}));
  });
}

TEST_F(GlooCommunicatorTest, NonMemberCanNotCreateAGroup) {
  ExpectRanksSucceed(2, [](int rank, uint16_t port) {
    auto comm = Connect(rank, 2, port);
    if (rank == 1) {
      RANK_EXPECT_ERROR(comm->NewGroup({0}), "ValueError", "this process (rank 1) is not in the new group [0]");
    } else {
      auto alone = comm->NewGroup({0});
      RANK_CHECK(alone->size() == 1);
    }
    comm->Barrier();
  });
}

TEST_F(GlooCommunicatorTest, TimeoutRaisesAndLeavesTheCommunicatorUnusable) {
  ExpectRanksSucceed(2, [](int rank, uint16_t port) {
    auto comm = Connect(rank, 2, port, 10s);
    if (rank == 1) {
      comm->Barrier();
      std::this_thread::sleep_for(900ms);  // never sends; stays connected past rank 0's timeout
      return;
    }
    comm->Barrier();
    comm->set_timeout(300ms);
    Tensor t = Tensor::Empty({4}, DType::kFloat32);
    RANK_EXPECT_ERROR(comm->Recv(t, 1), "RuntimeError", "Receive (gloo, rank 0 of 2) failed");
    RANK_EXPECT_ERROR(comm->Barrier(), "RuntimeError", "unusable after an earlier failure");
  });
}

TEST_F(GlooCommunicatorTest, PeersThatNeverArriveTimeOutConnecting) {
  auto outcomes = RunRanks(1, [](int rank, uint16_t port) {
    auto store = ConnectStore(port);
    CommunicatorOptions options;
    options.timeout = 300ms;
    RANK_EXPECT_ERROR(CreateGlooCommunicator(store, 0, 2, options), "RuntimeError",
                      "connecting (gloo, rank 0 of 2) failed");
    RANK_EXPECT_ERROR(CreateGlooCommunicator(store, 0, 2, options), "RuntimeError", "timed out after 300 ms");
  });
  EXPECT_EQ(Failures(outcomes), "");
}

TEST(NoGlooTest, StandInSaysMsrtWasBuiltWithoutGloo) {
  if (BuiltWithGloo()) GTEST_SKIP() << "this build has Gloo";
  auto outcomes = RunRanks(1, [](int rank, uint16_t port) {
    RANK_EXPECT_ERROR(Connect(rank, 1, port), "RuntimeError", "msrt was built without Gloo");
  });
  EXPECT_EQ(Failures(outcomes), "");
}

}  // namespace
}  // namespace msrt::parallel
