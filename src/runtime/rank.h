// This process's rank, for the rank_<id> folders instruments write into.
#pragma once

#include <cstdint>

namespace msrt::runtime {

/// The auto-parallel context's global_rank when set to a non-zero rank, else
/// the RANK_ID environment variable when it holds a non-negative integer,
/// else 0.
int64_t RankId();

}  // namespace msrt::runtime
