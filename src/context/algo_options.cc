// The strategy-search parameters of auto parallel: set_algo_parameters /
// get_algo_parameters / reset_algo_parameters (mindspore.parallel). msrt
// does not search sharding strategies yet: every key is checked and stored,
// and setting one warns that it has no effect (docs/context.md).
#include <string>

#include "context/option_spec.h"

namespace msrt::context {
namespace {

/// Every key is kept; nothing acts on it yet.
Parser Stored(Parser parse) { return StoredWithoutEffect(std::move(parse), "search auto-parallel strategies"); }

}  // namespace

const FamilyTable& AlgoTable() {
  static const FamilyTable table{
      .family = Family::kAlgo,
      .set_function = "context.set_algo_parameters",
      .get_function = "context.get_algo_parameters",
      .options =
          {
              {.name = "fully_use_devices",
               .type = "bool",
               .default_value = Value(true),
               .parse = Stored(ParseBool()),
               .doc = "Search only strategies that use every device (with 8 devices, (4, 1) is not a candidate)."},
              {.name = "elementwise_op_strategy_follow",
               .type = "bool",
               .default_value = Value(false),
               .parse = Stored(ParseBool()),
               .doc = "Give an elementwise operator the strategy of the operator that consumes it."},
              {.name = "enable_algo_approxi",
               .type = "bool",
               .default_value = Value(false),
               .parse = Stored(ParseBool()),
               .doc = "Drop candidate strategies to shrink the search space of large networks."},
              {.name = "algo_approxi_epsilon",
               .type = "float",
               .default_value = Value(0.1),
               .parse = Stored(ParseUnitInterval()),
               .doc = "With enable_algo_approxi, at most 1/epsilon candidate strategies are kept per operator."},
              {.name = "tensor_slice_align_enable",
               .type = "bool",
               .default_value = Value(false),
               .parse = Stored(ParseBool()),
               .doc = "Refuse MatMul slices whose last dimension is not a multiple of tensor_slice_align_size."},
              {.name = "tensor_slice_align_size",
               .type = "int",
               .default_value = Value(int64_t{16}),
               .parse = Stored(ParseIntRange(1, 1024, /*allow_bool=*/false)),
               .doc = "Smallest MatMul slice size (1 to 1024) tensor_slice_align_enable allows."},
          },
      .unknown_key =
          [](Profile, bool is_set, std::string_view key) {
            return StrCat("For 'context.", is_set ? "set_algo_parameters" : "get_algo_parameters",
                          "', the keyword argument ", key, " is not recognized!");
          },
  };
  return table;
}

}  // namespace msrt::context
