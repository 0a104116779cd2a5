#include "runtime/rank.h"

#include <cstdlib>
#include <string>

#include "msrt/context/context.h"

namespace msrt::runtime {

int64_t RankId() {
  static const context::OptionRef<int64_t> kGlobalRank(context::Family::kAutoParallel, "global_rank");
  int64_t rank = kGlobalRank.Get();
  if (rank != 0) return rank;
  const char* env = std::getenv("RANK_ID");
  if (env == nullptr || *env == '\0') return 0;
  std::string text(env);
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) return 0;
  return std::stoll(text);
}

namespace {
const bool kConsumerDeclared = [] {
  context::Global().DeclareConsumer(context::Family::kAutoParallel, "global_rank",
                                    "kernel dump and profiler (rank_<id> folders)");
  return true;
}();
}  // namespace

}  // namespace msrt::runtime
