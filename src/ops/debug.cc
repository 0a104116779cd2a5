// Ops with effects outside their outputs: print.
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

// `items` lays out one call: a string, int, float or bool prints as text; a
// None takes the next tensor input. Empty: the inputs alone, in order.
void CheckPrintItems(const Metas& in, const Dict& attrs) {
  const Value& items = Attr(attrs, "items");
  if (!items.is_sequence()) {
    OpError(ErrorKind::kType, "print",
            StrCat("attribute 'items' must be a list; expected a list of str, int, float, bool or None, but got ",
                   items.type_name()));
  }
  if (items.as_list().empty()) return;
  size_t placeholders = 0;
  for (const Value& item : items.as_list()) {
    if (item.is_none()) {
      ++placeholders;
    } else if (!item.is_string() && !item.is_int_like() && !item.is_float()) {
      OpError(ErrorKind::kType, "print",
              StrCat("can print Tensors, str, int, float and bool values (and tuples or lists of them); "
                     "expected one of those, but got ",
                     item.type_name(), " (", item.repr(), ")"));
    }
  }
  if (placeholders != in.size()) {
    OpError(ErrorKind::kValue, "print",
            StrCat("attribute 'items' must hold one None per tensor input; expected ", in.size(), ", but got ",
                   placeholders));
  }
}

MSRT_REGISTER_OP({.name = "print",
                  .inputs = {"xs..."},
                  .attrs = {{"items", Value(List{}), "the printed values in order: text, or None for the next tensor"}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        CheckPrintItems(in, attrs);
                        return Metas{{Shape{}, DType::kInt32}};
                      },
                  .props = {.side_effect = true},
                  .doc = "Prints its items to the screen, or appends them to print_file_path; returns int32 0"});

}  // namespace
}  // namespace msrt::ops
