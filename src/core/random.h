// The global random generator: counter-based (Philox4x32-10), so any
// element of any draw can be computed independently, in parallel, in any
// order, and async execution stays reproducible.
//
// Note [Random streams]
// Every call of a random op takes one *stream*: the pair (seed, stream
// number), reserved when the op is dispatched (on the calling thread, in
// program order), not when its kernel runs. Element i of the draw is word
// i % 4 of Philox(key = seed, counter = (i / 4, stream)). So the values an op
// sees depend only on the seed and on how many random ops were dispatched
// since it was set, never on thread counts, chunking or when the kernel ran.
// SetSeed restarts the stream numbers. Executors hand the reserved stream to
// the kernel in the op's attributes (ReserveStream); a kernel called without
// one (e.g. directly from C++) reserves its own when it runs.
#pragma once

#include <array>
#include <cstdint>

#include "msrt/core/value.h"

namespace msrt::random {

/// Sets the global seed and restarts the stream numbers (thread-safe).
void SetSeed(uint64_t seed);
/// The seed last set (0 until one is).
uint64_t GetSeed();

/// A reserved, never reused (seed, stream) pair.
struct Stream {
  uint64_t seed = 0;
  uint64_t stream = 0;
};
/// Reserves the next stream of the current seed (thread-safe).
Stream NextStream();

/// Attribute names executors use to hand a stream to a kernel.
inline constexpr const char* kSeedAttr = "__random_seed";
inline constexpr const char* kStreamAttr = "__random_stream";
/// Adds a freshly reserved stream to an op's attributes (at dispatch time).
void ReserveStream(Dict& attrs);
/// The stream in `attrs`, or a freshly reserved one when there is none.
Stream StreamOf(const Dict& attrs);

/// Philox4x32 with 10 rounds: four random words for a 128-bit counter and a 64-bit key.
inline std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * counter[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * counter[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    key[0] += kW0;
    key[1] += kW1;
  }
  return counter;
}

/// The four words of block `block` of a stream (elements 4*block .. 4*block+3).
inline std::array<uint32_t, 4> StreamBlock(const Stream& s, uint64_t block) {
  return Philox4x32({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(s.stream),
                     static_cast<uint32_t>(s.stream >> 32)},
                    {static_cast<uint32_t>(s.seed), static_cast<uint32_t>(s.seed >> 32)});
}

/// A uniform float in [0, 1) from 24 random bits.
inline float UniformFloat(uint32_t bits) { return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f); }

}  // namespace msrt::random
