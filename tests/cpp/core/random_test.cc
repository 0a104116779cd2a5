// The counter-based generator (Note [Random streams]).
#include "core/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "ops/call.h"

namespace msrt {
namespace {

// Known-answer vectors of Philox4x32-10 from Random123 (kat_vectors).
TEST(Philox, MatchesRandom123KnownAnswers) {
  auto zero = random::Philox4x32({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(zero, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  auto ones = random::Philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(ones, (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  auto pi = random::Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(pi, (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Random, SeedRestartsTheStreams) {
  random::SetSeed(1234);
  EXPECT_EQ(random::GetSeed(), 1234u);
  random::Stream a = random::NextStream();
  random::Stream b = random::NextStream();
  EXPECT_EQ(a.seed, 1234u);
  EXPECT_EQ(b.stream, a.stream + 1);
  random::SetSeed(1234);
  EXPECT_EQ(random::NextStream().stream, a.stream);
  random::SetSeed(0);
}

TEST(Random, StreamsTravelInAttributes) {
  random::SetSeed(99);
  Dict attrs{{"keep_prob", Value(0.5)}};
  random::ReserveStream(attrs);
  random::Stream s = random::StreamOf(attrs);
  EXPECT_EQ(s.seed, 99u);
  EXPECT_EQ(s.stream, 0u);
  EXPECT_EQ(random::StreamOf(attrs).stream, 0u) << "reading does not reserve";
  EXPECT_EQ(random::StreamOf(Dict{}).stream, 1u) << "no stream given: a fresh one";
  // Seeds above 2^63 survive the trip through int64 attributes.
  random::SetSeed(0xfedcba9876543210ull);
  Dict big;
  random::ReserveStream(big);
  EXPECT_EQ(random::StreamOf(big).seed, 0xfedcba9876543210ull);
  random::SetSeed(0);
}

TEST(Random, ConcurrentReservationsAreUnique) {
  random::SetSeed(5);
  constexpr int kThreads = 8, kEach = 2000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) got[t].push_back(random::NextStream().stream);
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint64_t> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i);
  random::SetSeed(0);
}

TEST(Random, BlocksDependOnlyOnSeedStreamAndIndex) {
  random::Stream s{7, 3};
  auto first = random::StreamBlock(s, 41);
  EXPECT_EQ(random::StreamBlock(s, 41), first);
  EXPECT_NE(random::StreamBlock(s, 42), first);
  EXPECT_NE(random::StreamBlock(random::Stream{7, 4}, 41), first);
  EXPECT_NE(random::StreamBlock(random::Stream{8, 3}, 41), first);
  // Uniforms land in [0, 1) and look uniform.
  double sum = 0;
  int n = 0;
  for (uint64_t b = 0; b < 25000; ++b) {
    for (uint32_t w : random::StreamBlock(s, b)) {
      float u = random::UniformFloat(w);
      ASSERT_GE(u, 0.0f);
      ASSERT_LT(u, 1.0f);
      sum += u;
      ++n;
    }
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_LT(random::UniformFloat(0xffffffffu), 1.0f);
}

TEST(Random, DropoutFollowsTheSeed) {
  std::vector<float> ones(10000, 1.0f);
  Tensor x = Tensor::FromHost(ones.data(), ones.size() * sizeof(float), {100, 100}, DType::kFloat32);
  auto mask = [&] {
    Tensor m = ops::Call("dropout", {x}, Dict{{"keep_prob", Value(0.3)}})[1];
    m.Sync();
    return std::vector<float>(m.raw<float>(), m.raw<float>() + m.numel());
  };
  random::SetSeed(2024);
  auto a = mask();
  auto b = mask();
  random::SetSeed(2024);
  EXPECT_EQ(mask(), a);
  EXPECT_EQ(mask(), b);
  EXPECT_NE(a, b);
  random::SetSeed(0);
}

}  // namespace
}  // namespace msrt
