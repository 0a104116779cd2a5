// Communicator over Gloo's TCP transport (CPU tensors).
//
// Note [Gloo algorithms]
//   Small messages (up to kBcubeMaxBytes) take Gloo's bcube all-reduce, which
//   for a power of two ranks is recursive halving-doubling: log2(size)
//   exchange steps, against the ring's 2 * (size - 1), so latency wins.
//   Larger ones take the ring written here (RingAllReduce) on Gloo's unbound
//   buffers: a reduce-scatter then an all-gather, each rank sending
//   2 * (size - 1) / size of the buffer (bandwidth-optimal). It works in the
//   output's own memory: the input is read where it lies (no copy into the
//   output first, no copy out of a work buffer at the end), received
//   partial sums land in a small scratch of a few segments, and final chunks
//   land in the output directly. Each chunk moves in segments of
//   kRingSegmentBytes, and a segment is sent on as soon as it is reduced, so
//   sending, receiving and reducing overlap along the ring. Gloo's own ring
//   copies the input into the output, then reduces through a work buffer in
//   segments it sizes from the message. ReduceScatter is a ring written here
//   too (Gloo's own is tied to the buffers it was built with); the others
//   are Gloo's.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>
#include <complex>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/gloo/gloo_store.h"
#include "parallel/gloo/reductions.h"
#include "parallel/store.h"

namespace msrt::parallel {

namespace {

// Messages up to this size use bcube (Note [Gloo algorithms]).
constexpr size_t kBcubeMaxBytes = 256 << 10;
// Slot prefixes of the exchanges written here (Gloo's own use 0x01..0x08).
constexpr uint8_t kReduceScatterSlotPrefix = 0x21;
constexpr uint8_t kPointToPointSlotPrefix = 0x22;
constexpr uint8_t kRingAllReduceSlotPrefix = 0x23;
// The ring all-reduce's segment, and how many segments a rank has asked its
// left neighbour for ahead of the one it reduces (the scratch holds that many).
constexpr size_t kRingSegmentBytes = 1 << 20;
constexpr size_t kRingWindow = 4;

// Gloo's typed setters only use sizeof(T): an unsigned type of the item size.
template <typename Options>
void SetInput(Options& options, const void* data, size_t count, DType dtype) {
  auto* p = const_cast<void*>(data);  // Gloo's API is not const-correct; inputs are only read
  switch (ItemSize(dtype)) {
    case 1: options.setInput(static_cast<uint8_t*>(p), count); return;
    case 2: options.setInput(static_cast<uint16_t*>(p), count); return;
    case 4: options.setInput(static_cast<uint32_t*>(p), count); return;
    case 8: options.setInput(static_cast<uint64_t*>(p), count); return;
    case 16: options.setInput(static_cast<std::complex<double>*>(p), count); return;  // complex128
    default: MSRT_INTERNAL_ASSERT(false, "item size ", ItemSize(dtype));
  }
}

template <typename Options>
void SetOutput(Options& options, void* data, size_t count, DType dtype) {
  switch (ItemSize(dtype)) {
    case 1: options.setOutput(static_cast<uint8_t*>(data), count); return;
    case 2: options.setOutput(static_cast<uint16_t*>(data), count); return;
    case 4: options.setOutput(static_cast<uint32_t*>(data), count); return;
    case 8: options.setOutput(static_cast<uint64_t*>(data), count); return;
    case 16: options.setOutput(static_cast<std::complex<double>*>(data), count); return;  // complex128
    default: MSRT_INTERNAL_ASSERT(false, "item size ", ItemSize(dtype));
  }
}

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(int rank, std::vector<int> world_ranks, std::string key, CommunicatorOptions options,
                   std::shared_ptr<StoreClient> store, std::shared_ptr<gloo::transport::Device> device)
      : Communicator(rank, std::move(world_ranks), options.timeout, std::move(key)),
        options_(std::move(options)),
        store_(std::move(store)),
        device_(std::move(device)) {
    auto context = std::make_shared<gloo::rendezvous::Context>(this->rank(), size());
    context->setTimeout(timeout());
    GlooStore rendezvous(store_, this->key(), timeout());
    try {
      context->connectFullMesh(rendezvous, device_);
    } catch (const gloo::Exception& e) {
      ThrowError(ErrorKind::kRuntime, StrCat(Describe("connecting"), " failed: ", e.what()));
    } catch (const Error& e) {  // the store's: a peer that never arrived, an aborted store
      ThrowError(e.kind(), StrCat(Describe("connecting"), " failed: ", e.what()));
    }
    context_ = std::move(context);
  }

  std::string_view backend() const override { return "gloo"; }
  DeviceTarget device() const override { return DeviceTarget::kCPU; }

 protected:
  void RunAllReduce(const void* input, void* output, size_t count, DType dtype, ReduceOp op) override {
    Guarded("AllReduce", [&] {
      if (count == 0) return;
      const size_t bytes = count * ItemSize(dtype);
      if (bytes > kBcubeMaxBytes && count >= static_cast<size_t>(size())) {
        RingAllReduce(input, output, count, dtype, op);
        return;
      }
      gloo::AllreduceOptions options(context_);
      if (input != output) SetInput(options, input, count, dtype);
      SetOutput(options, output, count, dtype);
      options.setReduceFunction(gloo_backend::ReductionFor(dtype, op));
      options.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
      options.setTag(NextTag());
      options.setTimeout(timeout());
      gloo::allreduce(options);
    });
  }

  void RunAllGather(const void* input, void* output, size_t count, DType dtype) override {
    Guarded("AllGather", [&] {
      if (count == 0) return;
      gloo::AllgatherOptions options(context_);
      SetInput(options, input, count, dtype);
      SetOutput(options, output, count * static_cast<size_t>(size()), dtype);
      options.setTag(NextTag());
      options.setTimeout(timeout());
      gloo::allgather(options);
    });
  }

  void RunReduceScatter(const void* input, void* output, size_t count, DType dtype, ReduceOp op) override {
    Guarded("ReduceScatter", [&] {
      if (count == 0) return;
      size_t chunk = count * ItemSize(dtype);
      const auto* in = static_cast<const uint8_t*>(input);
      const auto p = static_cast<size_t>(size());
      const auto r = static_cast<size_t>(rank());
      if (p == 1) {
        std::memmove(output, input, chunk);
        return;
      }
      // Ring: at step s this rank sends its partial sum of chunk (r-s-1) to
      // rank r+1 and receives chunk (r-s-2)'s from rank r-1, adding its own
      // part; after size-1 steps it holds the full sum of chunk r.
      auto reduce = gloo_backend::ReductionFor(dtype, op);
      std::unique_ptr<uint8_t[]> scratch(new uint8_t[3 * chunk]);  // [partial 0 | partial 1 | received]
      auto scratch_buffer = context_->createUnboundBuffer(scratch.get(), 3 * chunk);
      auto input_buffer = context_->createUnboundBuffer(const_cast<uint8_t*>(in), p * chunk);
      const auto slot = gloo::Slot::build(kReduceScatterSlotPrefix, NextTag());
      const int right = static_cast<int>((r + 1) % p);
      const int left = static_cast<int>((r + p - 1) % p);
      for (size_t s = 0; s + 1 < p; ++s) {
        size_t send_index = (r + 2 * p - s - 1) % p;
        size_t recv_index = (r + 2 * p - s - 2) % p;
        scratch_buffer->recv(left, slot, 2 * chunk, chunk);
        if (s == 0) {
          input_buffer->send(right, slot, send_index * chunk, chunk);
        } else {
          scratch_buffer->send(right, slot, ((s - 1) % 2) * chunk, chunk);
        }
        scratch_buffer->waitRecv(timeout());
        uint8_t* target = s + 2 == p ? static_cast<uint8_t*>(output) : scratch.get() + (s % 2) * chunk;
        reduce(target, in + recv_index * chunk, scratch.get() + 2 * chunk, count);
        if (s == 0) {
          input_buffer->waitSend(timeout());
        } else {
          scratch_buffer->waitSend(timeout());
        }
      }
    });
  }

  void RunBroadcast(void* buffer, size_t count, DType dtype, int root) override {
    Guarded("Broadcast", [&] {
      if (count == 0) return;
      gloo::BroadcastOptions options(context_);
      SetOutput(options, buffer, count, dtype);
      options.setRoot(root);
      options.setTag(NextTag());
      options.setTimeout(timeout());
      gloo::broadcast(options);
    });
  }

  void RunAllToAll(const void* input, void* output, size_t count, DType dtype) override {
    Guarded("AllToAll", [&] {
      if (count == 0) return;
      gloo::AlltoallOptions options(context_);
      SetInput(options, input, count * static_cast<size_t>(size()), dtype);
      SetOutput(options, output, count * static_cast<size_t>(size()), dtype);
      options.setTag(NextTag());
      options.setTimeout(timeout());
      gloo::alltoall(options);
    });
  }

  void RunSend(const void* data, size_t count, DType dtype, int dst, uint32_t tag) override {
    Guarded("Send", [&] {
      if (count == 0) return;
      auto buffer = context_->createUnboundBuffer(const_cast<void*>(data), count * ItemSize(dtype));
      buffer->send(dst, gloo::Slot::build(kPointToPointSlotPrefix, tag));
      buffer->waitSend(timeout());
    });
  }

  void RunRecv(void* data, size_t count, DType dtype, int src, uint32_t tag) override {
    Guarded("Receive", [&] {
      if (count == 0) return;
      auto buffer = context_->createUnboundBuffer(data, count * ItemSize(dtype));
      buffer->recv(src, gloo::Slot::build(kPointToPointSlotPrefix, tag));
      buffer->waitRecv(timeout());
    });
  }

  void RunBarrier() override {
    Guarded("Barrier", [&] {
      gloo::BarrierOptions options(context_);
      options.setTag(NextTag());
      options.setTimeout(timeout());
      gloo::barrier(options);
    });
  }

  std::unique_ptr<Communicator> RunNewGroup(const std::vector<int>& world_ranks, const std::string& key) override {
    Guarded("NewGroup", [] {});  // a failed communicator makes no groups
    int own = this->world_ranks()[static_cast<size_t>(rank())];
    int group_rank = static_cast<int>(std::find(world_ranks.begin(), world_ranks.end(), own) - world_ranks.begin());
    return std::make_unique<GlooCommunicator>(group_rank, world_ranks, key, options_, store_, device_);
  }

 private:
  uint32_t NextTag() { return next_tag_++; }

  // Note [Gloo algorithms]. The buffer is `size` chunks (their element
  // counts differ by at most one), each cut into segments. Rank r's messages
  // to its right neighbour, in order: reduce-scatter steps s = 0..size-2
  // send chunk (r - s) (step 0 from the input, later ones the partial sums
  // it reduced the step before), then all-gather steps t = 0..size-2 send
  // chunk (r + 1 - t) (at t = 0 the chunk it finished reducing, then the
  // chunk it received the step before). It receives the same sequence from
  // its left neighbour and posts its receives in that order (messages of one
  // slot between two ranks match in order), at most kRingWindow ahead.
  // Overwriting a segment with the all-gather's result is safe while its
  // earlier send may still be reported pending: that result includes the
  // sent bytes, so they were already read.
  void RingAllReduce(const void* input, void* output, size_t count, DType dtype, ReduceOp op) {
    const auto p = static_cast<size_t>(size());
    const auto r = static_cast<size_t>(rank());
    const auto item = static_cast<size_t>(ItemSize(dtype));
    if (p == 1) {
      if (input != output) std::memmove(output, input, count * item);
      return;
    }
    const auto reduce = gloo_backend::ReductionFor(dtype, op);
    const size_t segment = std::max<size_t>(1, kRingSegmentBytes / item);  // elements
    auto chunk_begin = [&](size_t c) { return count / p * c + std::min(c, count % p); };
    auto chunk_of = [&](size_t step) {  // the chunk received at message step `step`
      return step + 1 < p ? (r + 2 * p - step - 1) % p : (r + 2 * p - (step - (p - 1))) % p;
    };
    auto sent_chunk_of = [&](size_t step) {
      return step + 1 < p ? (r + p - step) % p : (r + 1 + 2 * p - (step - (p - 1))) % p;
    };
    // Every message: its step, and the element range of its segment.
    struct Message {
      size_t step, begin, end;
    };
    auto messages = [&](auto chunk_at) {
      std::vector<Message> list;
      for (size_t step = 0; step + 2 < 2 * p; ++step) {
        size_t c = chunk_at(step);
        for (size_t b = chunk_begin(c), e = chunk_begin(c + 1); b < e; b += segment) {
          list.push_back({step, b, std::min(b + segment, e)});
        }
      }
      return list;
    };
    const std::vector<Message> incoming = messages(chunk_of);
    const std::vector<Message> outgoing = messages(sent_chunk_of);
    auto* out = static_cast<uint8_t*>(output);
    const auto* in = static_cast<const uint8_t*>(input);
    const size_t scratch_bytes = kRingWindow * segment * item;
    std::unique_ptr<uint8_t[]> scratch(new uint8_t[scratch_bytes]);
    auto scratch_buffer = context_->createUnboundBuffer(scratch.get(), scratch_bytes);
    auto output_buffer = context_->createUnboundBuffer(output, count * item);
    auto input_buffer = context_->createUnboundBuffer(const_cast<void*>(input), count * item);
    const auto slot = gloo::Slot::build(kRingAllReduceSlotPrefix, NextTag());
    const int right = static_cast<int>((r + 1) % p);
    const int left = static_cast<int>((r + p - 1) % p);
    auto post_recv = [&](size_t m) {
      const Message& msg = incoming[m];
      const size_t nbytes = (msg.end - msg.begin) * item;
      if (msg.step + 1 < p) {
        scratch_buffer->recv(left, slot, (m % kRingWindow) * segment * item, nbytes);
      } else {
        output_buffer->recv(left, slot, msg.begin * item, nbytes);
      }
    };
    size_t input_sends = 0, output_sends = 0, next_send = 0;
    // Sends every outgoing message of `step` whose range lies within [.., up_to).
    auto send_through = [&](size_t step, size_t up_to) {
      while (next_send < outgoing.size() && outgoing[next_send].step == step && outgoing[next_send].end <= up_to) {
        const Message& msg = outgoing[next_send++];
        const size_t nbytes = (msg.end - msg.begin) * item;
        if (msg.step == 0) {
          input_buffer->send(right, slot, msg.begin * item, nbytes);
          ++input_sends;
        } else {
          output_buffer->send(right, slot, msg.begin * item, nbytes);
          ++output_sends;
        }
      }
    };
    send_through(0, count);  // step 0 sends the input's own chunk as it is
    size_t posted = 0;
    for (size_t m = 0; m < incoming.size(); ++m) {
      while (posted < incoming.size() && posted < m + kRingWindow) post_recv(posted++);
      const Message& msg = incoming[m];
      const size_t offset = msg.begin * item;
      if (msg.step + 1 < p) {
        scratch_buffer->waitRecv(timeout());
        reduce(out + offset, in + offset, scratch.get() + (m % kRingWindow) * segment * item, msg.end - msg.begin);
      } else {
        output_buffer->waitRecv(timeout());
      }
      // What this segment became is the next step's message over the same range.
      if (msg.step + 2 < 2 * p - 1) send_through(msg.step + 1, msg.end);
    }
    for (; input_sends > 0; --input_sends) input_buffer->waitSend(timeout());
    for (; output_sends > 0; --output_sends) output_buffer->waitSend(timeout());
  }

  // Runs a call; a Gloo failure leaves the communicator unusable (its pairs
  // may hold half-sent data) and is raised as a RuntimeError naming the call.
  template <typename Body>
  void Guarded(std::string_view call, Body&& body) {
    MSRT_CHECK(!failure_, Describe(call),
               ": the communicator is unusable after an earlier failure: ", failure_.value_or(""));
    try {
      body();
    } catch (const gloo::Exception& e) {
      failure_ = StrCat(Describe(call), " failed: ", e.what());
      ThrowError(ErrorKind::kRuntime, StrCat(*failure_, " (timeout ", timeout().count(), " ms)"));
    }
  }

  CommunicatorOptions options_;
  std::shared_ptr<StoreClient> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t next_tag_ = 0;
  std::optional<std::string> failure_;
};

}  // namespace

bool BuiltWithGloo() { return true; }

std::unique_ptr<Communicator> CreateGlooCommunicator(std::shared_ptr<StoreClient> store, int rank, int size,
                                                     const CommunicatorOptions& options) {
  CheckWorld(rank, size);
  MSRT_CHECK_VALUE(store != nullptr, "CreateGlooCommunicator needs a store client, got none");
  gloo::transport::tcp::attr attr;
  attr.hostname = options.hostname;
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const gloo::Exception& e) {
    ThrowError(ErrorKind::kRuntime,
               StrCat("Gloo can not open its TCP transport on '", options.hostname, "': ", e.what()));
  }
  std::vector<int> world(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) world[static_cast<size_t>(r)] = r;
  return std::make_unique<GlooCommunicator>(rank, std::move(world), options.store_prefix + "/world", options,
                                            std::move(store), std::move(device));
}

}  // namespace msrt::parallel
