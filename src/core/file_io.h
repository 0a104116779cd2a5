// Files msrt writes and reads back, through one set of helpers.
//
// Note [Safe file writes]
//   A whole file is written to a fresh temporary file in the target's folder
//   (mkstemp: O_CREAT|O_EXCL, so a symlink planted at any name is never
//   followed), flushed with fsync, renamed over the target (rename replaces a
//   symlink at the target rather than writing through it) and the folder is
//   fsynced. Readers therefore see the old file or the new one, never a part;
//   two writers racing on one path leave one of the two complete files.
//   Files that grow (the print file, kernel-dump index) are opened with
//   O_NOFOLLOW and must be regular files. Every failure is an OSError naming
//   the path and the system's reason; a path holding a NUL byte is a
//   ValueError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace msrt {

/// ValueError when `path` is empty or holds a NUL byte; `what` names the
/// argument in the message ("For 'save_checkpoint', the path ...").
void CheckPath(std::string_view path, std::string_view what);

/// Whether WriteFileAtomic waits for the bytes to reach the disk (fsync of
/// the file and its folder). Diagnostics (IR dumps, traces) skip it.
enum class Durability { kSync, kNoSync };

/// Replaces `path` with `data` atomically (Note [Safe file writes]).
void WriteFileAtomic(const std::string& path, std::string_view data, Durability durability = Durability::kSync);

/// The whole content of the regular file `path`; OSError when it can not be
/// read, ValueError beyond `max_bytes`.
std::string ReadFile(const std::string& path, uint64_t max_bytes = UINT64_MAX);

/// Creates `path` and its missing parents (mode 0777 minus umask). OSError
/// naming the path when a component is not a folder or can not be made.
/// `created` (optional) receives the folders made, parents first.
void CreateDirectories(const std::string& path, std::vector<std::string>* created = nullptr);

/// Removes the empty folders of `created`, last first (undoes
/// CreateDirectories); never raises.
void RemoveCreatedDirectories(const std::vector<std::string>& created) noexcept;

/// Why a file could not be created under `dir` (the nearest existing
/// ancestor is not a folder or not writable), or "" when it looks possible.
/// Nothing is created.
std::string WhyNotCreatable(const std::string& dir);

/// A regular file opened for appending, never through a symlink.
class AppendFile {
 public:
  /// Opens (creating it when missing) `path` for appending. OSError when it is
  /// a symlink, not a regular file or can not be opened.
  explicit AppendFile(const std::string& path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  /// Current size of the file.
  uint64_t size() const;
  /// Up to `n` bytes from the start of the file.
  std::string ReadPrefix(size_t n) const;
  /// Appends all of `data` (one write when possible).
  void Append(std::string_view data);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

/// CRC-32C (Castagnoli) of `size` bytes, continuing from `crc` (0 to start).
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);
inline uint32_t Crc32c(std::string_view data, uint32_t crc = 0) { return Crc32c(data.data(), data.size(), crc); }

/// CRC-32 (IEEE, as zlib.crc32) of `size` bytes: read older formats only.
uint32_t Crc32Ieee(const void* data, size_t size, uint32_t crc = 0);

}  // namespace msrt
