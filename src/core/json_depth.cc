#include "core/json_depth.h"

namespace msrt {

size_t JsonNestingDepth(std::string_view json_text) {
  size_t depth = 0;
  size_t deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json_text.size(); ++i) {
    char c = json_text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character can not end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace msrt
