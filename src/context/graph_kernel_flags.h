// The `graph_kernel_flags` mini-language: "--key=value --flag ..." parsed
// into the switches the graph-kernel fusion passes read.
//
// See Note [Graph kernel flags] in graph_kernel_flags.cc for the rules. The
// parser never throws on bad input: every problem becomes a warning and the
// flag keeps its default, as MindSpore does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace msrt::context {

/// Optimisation levels of graph-kernel fusion.
inline constexpr int kGraphKernelOptLevelOff = 0;      // fusion disabled
inline constexpr int kGraphKernelOptLevelBasic = 1;    // basic fusion only
inline constexpr int kGraphKernelOptLevelDefault = 2;  // all stable optimisations
inline constexpr int kGraphKernelOptLevelMax = 3;      // experimental optimisations too

/// The parsed flags. Fields carry their effective values (defaults filled in).
struct GraphKernelFlags {
  /// 0 (off) to 3; 2 by default when enable_graph_kernel is set, else 0.
  int opt_level = kGraphKernelOptLevelOff;

  // Boolean switches.
  bool dump_as_text = false;             // write the passes' details as text files
  bool enable_stitch_fusion = false;     // default: opt_level == 3
  bool enable_recompute_fusion = false;  // default: opt_level >= 2
  bool enable_parallel_fusion = false;   // default: opt_level == 3
  bool enable_low_precision = false;
  bool enable_trans_op_optimize = false;

  // Integer switches.
  int online_tuning = 0;
  int fusion_ops_level = 0;

  // String switches.
  std::string repository_path;

  // Operator and pass lists (comma-separated in the flag string).
  std::vector<std::string> enable_expand_ops;
  std::vector<std::string> enable_expand_ops_only;
  std::vector<std::string> disable_expand_ops;
  std::vector<std::string> enable_cluster_ops;
  std::vector<std::string> enable_cluster_ops_only;
  std::vector<std::string> disable_cluster_ops;
  std::vector<std::string> enable_simplify_exprs_only;
  std::vector<std::string> disable_simplify_exprs;
  std::vector<std::string> enable_pass;
  std::vector<std::string> disable_pass;

  /// Graph-kernel fusion runs iff opt_level > 0.
  bool enabled() const { return opt_level > kGraphKernelOptLevelOff; }
  /// Every flag and its value as one JSON object (for logs and Explain).
  std::string ToJson() const;
};

/// Parses a flag string. `enable_graph_kernel` and `graph_mode` are the
/// context values it is read with; each problem found is appended to
/// `warnings` (if not null) as one readable sentence. Never throws on any
/// input bytes.
GraphKernelFlags ParseGraphKernelFlags(std::string_view flags, bool enable_graph_kernel, bool graph_mode,
                                       std::vector<std::string>* warnings);

}  // namespace msrt::context
