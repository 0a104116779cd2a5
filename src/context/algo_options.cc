// The strategy-search parameters of auto parallel: set_algo_parameters /
// get_algo_parameters / reset_algo_parameters (mindspore.parallel). msrt
// does not search sharding strategies yet: every key is checked and stored,
// and setting one warns that it has no effect (docs/context.md).
#include <string>

#include "context/option_spec.h"

namespace msrt::context {
namespace {

/// A parser that then says the value has no effect.
Parser Stored(Parser parse) {
  return [parse = std::move(parse)](const Value& in, const KeyEnv& env) -> Value {
    Value out = parse(in, env);
    if (!env.loading) {
      env.Warn(WarningKind::kGeneral,
               StrCat("For '", env.function, "', '", env.key,
                      "' is stored but has no effect: msrt does not search auto-parallel strategies yet."));
    }
    return out;
  };
}

/// algo_approxi_epsilon: a float in (0, 1].
Value ParseEpsilon(const Value& in, const KeyEnv& env) {
  if (in.is_bool() || !(in.is_float() || in.is_int())) env.FailType("float or int", in);
  double value = in.as_float();
  if (!(value > 0.0 && value <= 1.0)) env.FailValue("should be in range (0, 1]", in);
  return Value(value);
}

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
               .parse = Stored(ParseEpsilon),
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
