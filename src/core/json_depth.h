// How deeply a JSON text nests, measured before it is parsed.
//
// Parsers and the code that walks a parsed document (printing, comparing,
// destroying) may recurse once per level: a hostile file nested 100000 deep
// must be refused with a clear error, not exhaust the stack.
#pragma once

#include <cstddef>
#include <string_view>

namespace msrt {

/// Nesting allowed in the JSON files msrt reads (configs, graph metadata).
inline constexpr size_t kMaxJsonDepth = 100;

/// The deepest nesting of arrays and objects in `json_text` (0 for a
/// scalar). Brackets inside strings do not count; the text need not be valid
/// JSON (the parser reports that).
size_t JsonNestingDepth(std::string_view json_text);

}  // namespace msrt
