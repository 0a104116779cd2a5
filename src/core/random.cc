#include "core/random.h"

#include <mutex>

namespace msrt::random {
namespace {

struct State {
  std::mutex mutex;
  uint64_t seed = 0;
  uint64_t next_stream = 0;
};

State& Global() {
  static auto* state = new State();
  return *state;
}

}  // namespace

void SetSeed(uint64_t seed) {
  State& s = Global();
  std::lock_guard lock(s.mutex);
  s.seed = seed;
  s.next_stream = 0;
}

uint64_t GetSeed() {
  State& s = Global();
  std::lock_guard lock(s.mutex);
  return s.seed;
}

Stream NextStream() {
  State& s = Global();
  std::lock_guard lock(s.mutex);
  return Stream{s.seed, s.next_stream++};
}

void ReserveStream(Dict& attrs) {
  Stream s = NextStream();
  // Value holds int64: the bits are stored as is.
  attrs.Set(kSeedAttr, Value(static_cast<int64_t>(s.seed)));
  attrs.Set(kStreamAttr, Value(static_cast<int64_t>(s.stream)));
}

Stream StreamOf(const Dict& attrs) {
  const Value* seed = attrs.Find(kSeedAttr);
  const Value* stream = attrs.Find(kStreamAttr);
  if (seed == nullptr || stream == nullptr || !seed->is_int() || !stream->is_int()) return NextStream();
  return Stream{static_cast<uint64_t>(seed->as_int()), static_cast<uint64_t>(stream->as_int())};
}

}  // namespace msrt::random
