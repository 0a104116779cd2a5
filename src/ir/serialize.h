// Saving and loading graphs (Note [Graph file format] in serialize.cc).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace msrt::ir {

/// The bytes of `graph` (unfused, no deleted nodes). Constants are always
/// saved; weights only with `embed_weights` (else they are bound by name
/// when the graph runs). `metadata` is stored as is for the caller.
std::string SerializeGraph(const Graph& graph, bool embed_weights, std::string_view metadata);

struct LoadedGraph {
  std::shared_ptr<Graph> graph;
  std::string metadata;
};

/// Reads what SerializeGraph wrote; ValueError naming `what` (a file name)
/// for anything truncated, corrupt or from another format version.
LoadedGraph DeserializeGraph(std::string_view bytes, std::string_view what);

/// Checks the JSON record Python keeps in a graph file's metadata (schema
/// "msrt-graph-record" version 1, Note [Graph record] in serialize.cc) for
/// `kind` ("export" or "compile_cache"); ValueError naming `what` and the
/// fault otherwise. What passes decodes in Python without further checks.
void CheckGraphRecord(std::string_view json, std::string_view kind, std::string_view what);

}  // namespace msrt::ir
