// Small string helpers shared by error messages.
#pragma once

#include <cstddef>
#include <string_view>

namespace msrt {

/// Levenshtein distance (insertions, deletions, substitutions), for
/// "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace msrt
