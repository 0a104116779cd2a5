#include "runtime/rank.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "context/options.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "parallel/cluster.h"

namespace msrt::runtime {

namespace {

// RANK_ID when it holds a non-negative integer.
std::optional<int64_t> EnvRank() {
  const char* env = std::getenv("RANK_ID");
  if (env == nullptr || *env == '\0') return std::nullopt;
  std::string text(env);
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) return std::nullopt;
  return std::stoll(text);
}

}  // namespace

int64_t RankId() {
  if (parallel::WorldInitialized()) return parallel::CurrentWorld().rank;
  int64_t rank = context::parallel_options::GlobalRank().Get();
  if (rank != 0) return rank;
  return EnvRank().value_or(0);
}

bool InDistributedJob() {
  return parallel::WorldInitialized() || EnvRank().has_value() || context::parallel_options::GlobalRank().Get() != 0;
}

std::filesystem::path RankPlace(const std::filesystem::path& base) {
  if (!InDistributedJob()) return base;
  return base / StrCat("rank_", RankId());
}

namespace {
const bool kConsumerDeclared = [] {
  context::Global().DeclareConsumer(context::parallel_options::GlobalRank(),
                                    "kernel dump, profiler and the per-rank places of files (rank_<id> folders)");
  return true;
}();
}  // namespace

}  // namespace msrt::runtime
