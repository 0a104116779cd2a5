// The front door of graph compilation: one CompiledFunction per jit function,
// GRAPH_MODE Cell or compiled gradient function.
//
// Note [Compiled function keys]
// A call is looked up by a CallKey: the identity it is called with (the
// owning Cell and its training flag), the CallSignature of its arguments
// (tensors by shape and dtype, Python values by type and value) and the hash
// of every compile-affecting context key (Store::CompileKeyHash). A changed
// part compiles again; an unchanged key reuses the entry, which may also say
// that the call runs eagerly (its capture fell back, Note [Capture
// fallback]). Python values enter the in-memory key by type, repr and hash;
// the on-disk key (the record's "key") leaves the hash out, since Python's
// string hashes differ between processes. With the persistent compile cache
// on, an entry is also checked against a dependency hash: SHA-256 over msrt's
// version, the context hash and the source files of the network (path and
// content), kept in compile_dependency.hash and in the entry's record.
//
// Note [Capture fallback]
// Tracing a body that reads a tensor's value fails. With
// jit_syntax_level=STRICT (or where no fallback is allowed: ms.export) that
// is a RuntimeError naming the line; with LAX or COMPATIBLE a warning, and
// the call runs eagerly, then and on every later call with the same key.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/pipeline.h"
#include "msrt/core/dtype.h"
#include "msrt/core/shape.h"

namespace msrt::compiler {

/// The canonical description of one call's arguments, built while the front
/// end walks them (Note [Compiled function keys]).
class CallSignature {
 public:
  void AddTensor(const Shape& shape, DType dtype);
  /// A Python value: its type's qualified name, its repr, and its hash (only
  /// in the in-memory key).
  void AddConstant(std::string_view type, std::string_view repr, int64_t hash);
  /// A value whose equality Python can not decide (unhashable): by repr.
  void AddUnhashable(std::string_view type, std::string_view repr);
  /// Starts a tuple, list or dict (`kind` is the container's type name).
  void Begin(std::string_view kind);
  /// A dict key (its repr), before its value.
  void AddKey(std::string_view repr);
  void End();

  /// Stable across processes: the compile cache's key.
  const std::string& text() const { return text_; }
  /// The in-memory key: text() plus the hashes of the Python values.
  std::string memory_text() const { return text_ + "#" + hashes_; }

 private:
  void Separate();
  std::string text_;
  std::string hashes_;
  bool first_ = true;
};

struct CallKey {
  std::string identity;   // the owner and training flag the call is made with
  std::string signature;  // CallSignature::memory_text()
  uint64_t context_hash = 0;
  bool operator==(const CallKey& other) const = default;
};

struct CallKeyHash {
  size_t operator()(const CallKey& key) const;
};

/// `identity` for an owner (its id, or none) and a training flag (or none).
std::string CallIdentity(std::optional<int64_t> owner_id, std::optional<bool> training);

/// The key of a call now: with the context's current compile-affecting hash.
CallKey MakeCallKey(std::string identity, const CallSignature& signature);

/// SHA-256 of `data`, as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

/// Note [Compiled function keys]: SHA-256 over msrt's version, `context_hash`
/// and each source file's path and content ("<unreadable>" when it can not
/// be read).
std::string DependencyHash(uint64_t context_hash, const std::vector<std::string>& source_files);

/// msrt's version (the project version of the build).
std::string_view Version();

enum class CacheUse { kNone, kLoaded, kStored };

/// What the front end keeps with an entry (msrt/_jit.py's Python objects).
class EntryPayload {
 public:
  virtual ~EntryPayload() = default;
};

struct CompiledEntry {
  std::shared_ptr<const Compiled> compiled;  // nullptr: the call runs eagerly (its capture fell back)
  std::shared_ptr<EntryPayload> payload;
  double seconds = 0;  // to make the entry: capture and compile, or load
  CacheUse cache = CacheUse::kNone;
  std::string file;  // its compile cache file, when loaded or stored
  bool eager() const { return compiled == nullptr; }
};

/// What tracing the body gave: a compiled graph and its payload, or where and
/// why the capture failed (it read a tensor's value).
struct TraceResult {
  std::shared_ptr<const Compiled> compiled;
  std::shared_ptr<EntryPayload> payload;
  std::string failed_at;  // "file:line: 'code'"; empty when the capture succeeded
  std::string error;
};

/// What only the front end can do for a call being compiled.
class CallHooks {
 public:
  virtual ~CallHooks() = default;
  /// Traces the body on symbolic arguments and compiles it. Errors other
  /// than a failed capture propagate.
  virtual TraceResult Trace() = 0;
  /// The source files the body's graph depends on (for DependencyHash).
  virtual std::vector<std::string> SourceFiles() = 0;
  /// A payload for a graph loaded from the compile cache file `file` with
  /// this result template (JSON), or nullptr (having warned) when this call
  /// can not use it.
  virtual std::shared_ptr<EntryPayload> Adopt(const std::shared_ptr<const Compiled>& compiled,
                                              const std::string& template_json, const std::string& file) = 0;
  /// The result template (JSON) to store with `entry`, or nullopt with the
  /// warning saying why it can not be cached in `why_not`.
  virtual std::optional<std::string> CacheTemplate(const CompiledEntry& entry, std::string* why_not) = 0;
};

/// Note [Capture fallback]: raises RuntimeError when the capture of `name`
/// must not fall back (`allow_fallback` false or jit_syntax_level=STRICT);
/// otherwise warns that it runs eagerly.
void DecideFallback(std::string_view name, std::string_view failed_at, std::string_view error, bool allow_fallback);

/// The persistent compile cache of this process (enable_compile_cache,
/// compile_cache_path): `<path>/rank_<r>/graph_cache/compile_cache_<n>.msgraph`
/// for the n-th graph compiled through it, and compile_dependency.hash with
/// "<n> <dependency hash>" lines. Files are checksummed graph files (Note
/// [Graph file format]) written atomically (Note [Safe file writes]); nothing
/// that goes wrong with them stops the program: it warns and compiles.
class CompileCache {
 public:
  explicit CompileCache(std::string dir);
  /// The cache the context asks for, or nullopt when it is off.
  static std::optional<CompileCache> Active();

  /// The index of the next graph compiled through the cache in this process.
  static int64_t NextIndex();
  /// Test support: the next graph compiled gets index 0 again.
  static void ResetIndexForTesting();

  std::string Path(int64_t index) const;
  /// index -> dependency hash, from what can be read of the dependency file.
  std::map<int64_t, std::string> Hashes() const;

  struct Loaded {
    std::shared_ptr<const Compiled> compiled;
    std::string template_json;
  };
  /// Entry `index` when it was made for `key` with `dependency`; nullopt
  /// (with a warning when an entry exists but can not be used) otherwise.
  std::optional<Loaded> Load(int64_t index, std::string_view key, std::string_view dependency) const;
  /// Writes entry `index`; false (with a warning naming `name`) when the
  /// folder can not be written.
  bool Store(int64_t index, std::string_view key, std::string_view dependency, const Compiled& compiled,
             std::string_view template_json, std::string_view name) const;

 private:
  std::string dir_;
};

/// One compiled callable: its entries by CallKey, in the order they were made.
class CompiledFunction {
 public:
  /// `name` names the graphs and the messages; `allow_fallback` false makes a
  /// failed capture an error whatever jit_syntax_level says.
  explicit CompiledFunction(std::string name, bool allow_fallback = true);

  const std::string& name() const { return name_; }

  /// The entry for `key`, or nullptr.
  std::shared_ptr<CompiledEntry> Lookup(const CallKey& key) const;

  /// The entry for `key`: cached, else loaded from the compile cache or
  /// traced through `hooks` and compiled (`*fresh` true), and cached.
  /// `disk_key` is the call's key in the compile cache.
  std::shared_ptr<CompiledEntry> Resolve(const CallKey& key, std::string_view disk_key, CallHooks& hooks,
                                         bool* fresh = nullptr);

  size_t size() const { return entries_.size(); }
  /// Forgets every entry.
  void Clear();
  /// The entries, in the order they were made.
  const std::vector<std::pair<CallKey, std::shared_ptr<CompiledEntry>>>& entries() const { return entries_; }

 private:
  std::shared_ptr<CompiledEntry> Make(std::string_view disk_key, CallHooks& hooks);
  std::shared_ptr<CompiledEntry> Trace(CallHooks& hooks);

  std::string name_;
  bool allow_fallback_;
  std::unordered_map<CallKey, size_t, CallKeyHash> index_;
  std::vector<std::pair<CallKey, std::shared_ptr<CompiledEntry>>> entries_;
};

}  // namespace msrt::compiler
