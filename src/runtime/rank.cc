#include "runtime/rank.h"

#include <cstdlib>
#include <string>

#include "context/options.h"
#include "msrt/context/context.h"

namespace msrt::runtime {

int64_t RankId() {
  int64_t rank = context::parallel_options::GlobalRank().Get();
  if (rank != 0) return rank;
  const char* env = std::getenv("RANK_ID");
  if (env == nullptr || *env == '\0') return 0;
  std::string text(env);
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) return 0;
  return std::stoll(text);
}

namespace {
const bool kConsumerDeclared = [] {
  context::Global().DeclareConsumer(context::parallel_options::GlobalRank(),
                                    "kernel dump and profiler (rank_<id> folders)");
  return true;
}();
}  // namespace

}  // namespace msrt::runtime
