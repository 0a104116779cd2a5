// CPU kernel of print: gathers the items of one call and hands them to the
// print sink (kernels/print_sink.h).
#include "kernels/kernel.h"
#include "kernels/print_sink.h"

namespace msrt::kernels::cpu {
namespace {

void Print(KernelArgs& args) {
  const List& layout = ops::Attr(args.attrs, "items").as_list();
  std::vector<PrintItem> items;
  if (layout.empty()) {
    items.assign(args.inputs.begin(), args.inputs.end());
  } else {
    size_t next = 0;
    items.reserve(layout.size());
    for (const Value& item : layout) {
      if (item.is_none()) {
        items.emplace_back(args.inputs.at(next++));
      } else {
        items.emplace_back(item.str());
      }
    }
  }
  EmitPrint(items);
  *args.outputs[0].raw<int32_t>() = 0;
}

MSRT_REGISTER_KERNEL({.op = "print", .impl = "reference", .run = &Print});

}  // namespace
}  // namespace msrt::kernels::cpu
