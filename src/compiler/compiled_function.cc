#include "compiler/compiled_function.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "context/options.h"
#include "core/file_io.h"
#include "ir/serialize.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"
#include "runtime/rank.h"

#ifndef MSRT_VERSION_STRING
#error "MSRT_VERSION_STRING (the project version) must be defined by the build"
#endif

namespace msrt::compiler {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int64_t kStrictSyntax = 0;  // jit_syntax_level=STRICT
constexpr std::string_view kFileSuffix = ".msgraph";
constexpr std::string_view kDependencyFile = "compile_dependency.hash";

// FIPS 180-4 SHA-256, streaming.
class Sha256 {
 public:
  void Update(std::string_view data) {
    for (char c : data) {
      block_[fill_++] = static_cast<uint8_t>(c);
      if (fill_ == 64) {
        Compress();
        fill_ = 0;
      }
    }
    length_ += data.size();
  }

  std::string HexDigest() {
    uint64_t bits = length_ * 8;
    uint8_t pad = 0x80;
    Update(std::string_view(reinterpret_cast<const char*>(&pad), 1));
    uint8_t zero = 0;
    while (fill_ != 56) Update(std::string_view(reinterpret_cast<const char*>(&zero), 1));
    for (int i = 7; i >= 0; --i) {
      uint8_t byte = static_cast<uint8_t>(bits >> (8 * i));
      Update(std::string_view(reinterpret_cast<const char*>(&byte), 1));
    }
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (uint32_t word : state_) {
      for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kHex[(word >> shift) & 0xF]);
    }
    return out;
  }

 private:
  static uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void Compress() {
    static constexpr std::array<uint32_t, 64> kK = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::array<uint32_t, 64> w{};
    for (size_t i = 0; i < 16; ++i) {
      w[i] = (uint32_t{block_[4 * i]} << 24) | (uint32_t{block_[4 * i + 1]} << 16) |
             (uint32_t{block_[4 * i + 2]} << 8) | uint32_t{block_[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
      uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
  }

  std::array<uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint8_t, 64> block_{};
  size_t fill_ = 0;
  uint64_t length_ = 0;
};

std::atomic<int64_t> g_next_index{0};  // graphs compiled through the compile cache in this process

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// --- keys -----------------------------------------------------------------------------------

void CallSignature::Separate() {
  if (!first_) text_ += ", ";
  first_ = false;
}

// Appends rather than StrCat: a signature is built on every compiled call.
void CallSignature::AddTensor(const Shape& shape, DType dtype) {
  Separate();
  text_.append("Tensor[").append(DTypeName(dtype)).append("](");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text_.append(", ");
    text_.append(std::to_string(shape[i]));
  }
  text_.append(shape.size() == 1 ? ",)" : ")");
}

void CallSignature::AddConstant(std::string_view type, std::string_view repr, int64_t hash) {
  Separate();
  text_.append(type).append(":").append(repr);
  hashes_.append(std::to_string(hash)).append(",");
}

void CallSignature::AddUnhashable(std::string_view type, std::string_view repr) {
  Separate();
  text_.append("unhashable ").append(type).append(":").append(repr);
}

void CallSignature::Begin(std::string_view kind) {
  Separate();
  text_.append(kind).append("(");
  first_ = true;
}

void CallSignature::AddKey(std::string_view repr) {
  Separate();
  text_.append(repr).append(": ");
  first_ = true;  // the value follows without a separator
}

void CallSignature::End() {
  text_ += ")";
  first_ = false;
}

size_t CallKeyHash::operator()(const CallKey& key) const {
  size_t h = std::hash<std::string>()(key.identity);
  h = h * 1099511628211ull ^ std::hash<std::string>()(key.signature);
  return h * 1099511628211ull ^ std::hash<uint64_t>()(key.context_hash);
}

std::string CallIdentity(std::optional<int64_t> owner_id, std::optional<bool> training) {
  std::string out = "owner=";
  out.append(owner_id ? std::to_string(*owner_id) : "none");
  out.append(training ? (*training ? " training=true" : " training=false") : " training=none");
  return out;
}

CallKey MakeCallKey(std::string identity, const CallSignature& signature) {
  return {std::move(identity), signature.memory_text(), context::Global().CompileKeyHash()};
}

std::string Sha256Hex(std::string_view data) {
  Sha256 sha;
  sha.Update(data);
  return sha.HexDigest();
}

std::string_view Version() { return MSRT_VERSION_STRING; }

std::string DependencyHash(uint64_t context_hash, const std::vector<std::string>& source_files) {
  Sha256 sha;
  sha.Update(StrCat("msrt ", Version(), "\n", context_hash, "\n"));
  for (const std::string& path : source_files) {
    sha.Update(path);
    sha.Update("\n");
    try {
      sha.Update(ReadFile(path));
    } catch (const std::exception&) {
      sha.Update("<unreadable>");
    }
  }
  return sha.HexDigest();
}

// --- fallback -------------------------------------------------------------------------------

void DecideFallback(std::string_view name, std::string_view failed_at, std::string_view error, bool allow_fallback) {
  if (!allow_fallback || context::runtime_options::JitSyntaxLevel().Get() == kStrictSyntax) {
    throw RuntimeError(StrCat("Graph compilation of '", name, "' failed at ", failed_at,
                              ": the Python code depends on a Tensor's value, which jit_syntax_level=STRICT does "
                              "not allow. ",
                              error));
  }
  Warn(WarningKind::kGeneral,
       StrCat("'", name, "' runs in PYNATIVE mode instead of as a graph: the Python code at ", failed_at,
              " depends on a Tensor's value, which graph capture cannot follow (", error,
              "; set jit_syntax_level=STRICT to make this an error)."));
}

// --- the compile cache ----------------------------------------------------------------------

CompileCache::CompileCache(std::string dir) : dir_(std::move(dir)) {}

std::optional<CompileCache> CompileCache::Active() {
  if (!context::runtime_options::EnableCompileCache().Get()) return std::nullopt;
  std::string base = context::runtime_options::CompileCachePath().Get();
  fs::path root = fs::absolute(base.empty() ? fs::current_path() : fs::path(base)).lexically_normal();
  return CompileCache((root / StrCat("rank_", runtime::RankId()) / "graph_cache").string());
}

int64_t CompileCache::NextIndex() { return g_next_index.fetch_add(1); }
void CompileCache::ResetIndexForTesting() { g_next_index = 0; }

std::string CompileCache::Path(int64_t index) const {
  return (fs::path(dir_) / StrCat("compile_cache_", index, kFileSuffix)).string();
}

std::map<int64_t, std::string> CompileCache::Hashes() const {
  std::map<int64_t, std::string> hashes;
  std::string text;
  try {
    text = ReadFile((fs::path(dir_) / kDependencyFile).string());
  } catch (const std::exception&) {
    return hashes;  // missing or unreadable: no entry is known
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string index, hash, extra;
    if (!(words >> index >> hash) || (words >> extra)) continue;
    if (index.empty() || index.size() >= 10 || index.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    hashes[std::stoll(index)] = hash;
  }
  return hashes;
}

std::optional<CompileCache::Loaded> CompileCache::Load(int64_t index, std::string_view key,
                                                       std::string_view dependency) const {
  std::string path = Path(index);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return std::nullopt;
  std::string outdated = StrCat("Compile cache entry ", path,
                                " is out of date (the network's source files, msrt or "
                                "the compile-affecting context keys changed): compiling again.");
  auto hashes = Hashes();
  auto it = hashes.find(index);
  if (it == hashes.end() || it->second != dependency) {
    Warn(WarningKind::kGeneral, outdated);
    return std::nullopt;
  }
  Loaded loaded;
  Json record;
  try {
    ir::LoadedGraph graph = ir::DeserializeGraph(ReadFile(path), path);  // checksum checked
    ir::CheckGraphRecord(graph.metadata, "compile_cache", path);
    record = Json::parse(graph.metadata);
    loaded.template_json = record.at("template").dump();
    loaded.compiled = std::make_shared<const Compiled>(Compile(graph.graph, NextGraphId(), false));
  } catch (const std::exception& e) {  // a corrupt, truncated or unreadable entry must never stop the program
    Warn(WarningKind::kGeneral,
         StrCat("Compile cache entry ", path, " can not be read (", e.what(), "): compiling again."));
    return std::nullopt;
  }
  if (record.at("dependency").get<std::string>() != dependency) {
    Warn(WarningKind::kGeneral, outdated);
    return std::nullopt;
  }
  std::string stored_key = record.at("key").get<std::string>();
  if (stored_key != key) {
    Warn(WarningKind::kGeneral, StrCat("Compile cache entry ", path, " was compiled for another call (", stored_key,
                                       "), not ", key, ": compiling again."));
    return std::nullopt;
  }
  return loaded;
}

bool CompileCache::Store(int64_t index, std::string_view key, std::string_view dependency, const Compiled& compiled,
                         std::string_view template_json, std::string_view name) const {
  Json record = {{"schema", "msrt-graph-record"},
                 {"version", 1},
                 {"kind", "compile_cache"},
                 {"key", std::string(key)},
                 {"dependency", std::string(dependency)},
                 {"template", Json::parse(template_json)}};
  std::string meta = record.dump();
  try {
    CreateDirectories(dir_);
    WriteFileAtomic(Path(index), ir::SerializeGraph(*compiled.optimized, /*embed_weights=*/false, meta));
    auto hashes = Hashes();
    hashes[index] = std::string(dependency);
    std::string lines;
    for (const auto& [i, hash] : hashes) lines += StrCat(i, " ", hash, "\n");
    WriteFileAtomic((fs::path(dir_) / kDependencyFile).string(), lines);
  } catch (const OSError& e) {  // an unwritable cache must never stop training
    Warn(WarningKind::kGeneral,
         StrCat("The compile cache can not be written (", e.what(), "): going on without caching '", name, "'."));
    return false;
  }
  return true;
}

// --- compiled functions ---------------------------------------------------------------------

CompiledFunction::CompiledFunction(std::string name, bool allow_fallback)
    : name_(std::move(name)), allow_fallback_(allow_fallback) {}

std::shared_ptr<CompiledEntry> CompiledFunction::Lookup(const CallKey& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : entries_[it->second].second;
}

void CompiledFunction::Clear() {
  index_.clear();
  entries_.clear();
}

std::shared_ptr<CompiledEntry> CompiledFunction::Resolve(const CallKey& key, std::string_view disk_key,
                                                         CallHooks& hooks, bool* fresh) {
  if (auto entry = Lookup(key)) {
    if (fresh != nullptr) *fresh = false;
    return entry;
  }
  auto entry = Make(disk_key, hooks);
  // Another thread may have made this key while the trace ran (Python lets go
  // of the GIL): one entry per key.
  if (auto made = Lookup(key)) {
    if (fresh != nullptr) *fresh = false;
    return made;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(key, entry);
  if (fresh != nullptr) *fresh = true;
  return entry;
}

std::shared_ptr<CompiledEntry> CompiledFunction::Trace(CallHooks& hooks) {
  TraceResult traced = hooks.Trace();
  auto entry = std::make_shared<CompiledEntry>();
  if (!traced.failed_at.empty()) {
    DecideFallback(name_, traced.failed_at, traced.error, allow_fallback_);
    return entry;  // runs eagerly
  }
  MSRT_INTERNAL_ASSERT(traced.compiled != nullptr, "a trace gave neither a graph nor a failure");
  entry->compiled = std::move(traced.compiled);
  entry->payload = std::move(traced.payload);
  return entry;
}

std::shared_ptr<CompiledEntry> CompiledFunction::Make(std::string_view disk_key, CallHooks& hooks) {
  auto start = std::chrono::steady_clock::now();
  std::optional<CompileCache> disk = CompileCache::Active();
  if (!disk) {
    auto entry = Trace(hooks);
    entry->seconds = SecondsSince(start);
    return entry;
  }
  int64_t index = CompileCache::NextIndex();
  std::string dependency = DependencyHash(context::Global().CompileKeyHash(), hooks.SourceFiles());
  if (auto loaded = disk->Load(index, disk_key, dependency)) {
    if (auto payload = hooks.Adopt(loaded->compiled, loaded->template_json, disk->Path(index))) {
      auto entry = std::make_shared<CompiledEntry>();
      entry->compiled = std::move(loaded->compiled);
      entry->payload = std::move(payload);
      entry->seconds = SecondsSince(start);
      entry->cache = CacheUse::kLoaded;
      entry->file = disk->Path(index);
      return entry;
    }
  }
  auto entry = Trace(hooks);
  if (entry->eager()) return entry;
  entry->seconds = SecondsSince(start);
  std::string why_not;
  std::optional<std::string> template_json = hooks.CacheTemplate(*entry, &why_not);
  if (!template_json) {
    Warn(WarningKind::kGeneral, why_not);
  } else if (disk->Store(index, disk_key, dependency, *entry->compiled, *template_json, name_)) {
    entry->cache = CacheUse::kStored;
    entry->file = disk->Path(index);
  }
  return entry;
}

}  // namespace msrt::compiler
