// Note [Safe file writes] in file_io.h.
#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "msrt/core/errors.h"

namespace msrt {
namespace {

// Control bytes escaped so that a message stays on one line.
std::string Shown(std::string_view path) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

[[noreturn]] void ThrowOs(std::string_view action, std::string_view path, int error) {
  throw OSError(StrCat("Can not ", action, " '", Shown(path), "': ", std::strerror(error), " (errno ", error, ")."));
}

// The folder part of `path` ("." when it has none) and the last component.
std::pair<std::string, std::string> Split(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  return {dir, path.substr(slash + 1)};
}

mode_t CurrentUmask() {
  // /proc/self/status says it without changing it (umask() would race with threads).
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

void WriteAll(int fd, std::string_view data, const std::string& path) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ThrowOs("write", path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace

void CheckPath(std::string_view path, std::string_view what) {
  if (path.empty()) throw ValueError(StrCat(what, " must be a non-empty path, but got ''."));
  if (path.find('\0') != std::string_view::npos) {
    throw ValueError(StrCat(what, " must be a path without NUL bytes, but got '", Shown(path), "'."));
  }
}

void WriteFileAtomic(const std::string& path, std::string_view data, Durability durability) {
  CheckPath(path, "The file path");
  auto [dir, base] = Split(path);
  if (base.empty() || base == "." || base == "..") {
    throw OSError(StrCat("Can not write '", Shown(path), "': it names a folder, not a file."));
  }
  std::string temp = StrCat(dir, "/.", base.substr(0, 200), ".XXXXXX");
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) ThrowOs("create a temporary file in the folder of", path, errno);
  Fd file(fd);
  bool renamed = false;
  try {
    static const mode_t kMode = 0666 & ~CurrentUmask();
    if (::fchmod(fd, kMode) != 0) ThrowOs("set the permissions of", temp, errno);
    WriteAll(fd, data, path);
    if (durability == Durability::kSync && ::fsync(fd) != 0) ThrowOs("flush", path, errno);
    if (::close(file.release()) != 0) ThrowOs("close", path, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) ThrowOs("replace", path, errno);
    renamed = true;
    if (durability == Durability::kSync) {
      Fd folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (folder.get() >= 0) ::fsync(folder.get());  // best effort: some filesystems refuse
    }
  } catch (...) {
    if (!renamed) ::unlink(temp.c_str());
    throw;
  }
}

std::string ReadFile(const std::string& path, uint64_t max_bytes) {
  CheckPath(path, "The file path");
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) ThrowOs("open", path, errno);
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) ThrowOs("inspect", path, errno);
  if (!S_ISREG(st.st_mode)) throw OSError(StrCat("Can not read '", Shown(path), "': it is not a regular file."));
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    throw ValueError(
        StrCat("The file '", Shown(path), "' has ", st.st_size, " bytes, more than the ", max_bytes, " expected."));
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (true) {
    if (done == out.size()) out.resize(out.size() + 65536);  // the file grew meanwhile
    ssize_t n = ::read(file.get(), out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ThrowOs("read", path, errno);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
    if (done > max_bytes) {
      throw ValueError(StrCat("The file '", Shown(path), "' has more than the ", max_bytes, " bytes expected."));
    }
  }
  out.resize(done);
  return out;
}

void CreateDirectories(const std::string& path, std::vector<std::string>* created) {
  CheckPath(path, "The folder path");
  std::string prefix;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    prefix = path.substr(0, slash);
    at = slash + 1;
    if (prefix.empty() || prefix == "." || prefix == "..") continue;
    if (prefix.back() == '/') continue;
    struct stat st {};
    if (::stat(prefix.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        throw OSError(StrCat("Can not create the folder '", Shown(path), "': '", Shown(prefix), "' is not a folder."));
      }
      continue;
    }
    if (::mkdir(prefix.c_str(), 0777) == 0) {
      if (created != nullptr) created->push_back(prefix);
    } else if (errno != EEXIST) {
      ThrowOs("create the folder", prefix, errno);
    }
    if (::stat(prefix.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      throw OSError(StrCat("Can not create the folder '", Shown(path), "': '", Shown(prefix), "' is not a folder."));
    }
  }
}

void RemoveCreatedDirectories(const std::vector<std::string>& created) noexcept {
  for (auto it = created.rbegin(); it != created.rend(); ++it) ::rmdir(it->c_str());
}

std::string WhyNotCreatable(const std::string& dir) {
  if (dir.find('\0') != std::string::npos) return "the path holds a NUL byte";
  std::string at = dir.empty() ? "." : dir;
  while (true) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return StrCat("'", Shown(at), "' is not a folder");
      if (::access(at.c_str(), W_OK | X_OK) != 0) {
        return StrCat("the folder '", Shown(at), "' is not writable: ", std::strerror(errno));
      }
      return "";
    }
    if (errno == ENOTDIR) return StrCat("a parent of '", Shown(at), "' is not a folder");
    if (errno != ENOENT) return StrCat("'", Shown(at), "': ", std::strerror(errno));
    if (at == "." || at == "/") return StrCat("'", Shown(at), "' does not exist");
    while (at.size() > 1 && at.back() == '/') at.pop_back();
    size_t slash = at.find_last_of('/');
    if (slash == std::string::npos) {
      at = ".";
    } else {
      at = slash == 0 ? "/" : at.substr(0, slash);
    }
  }
}

AppendFile::AppendFile(const std::string& path) : path_(path) {
  CheckPath(path, "The file path");
  fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    int error = errno;
    if (error == ELOOP) throw OSError(StrCat("Can not append to '", Shown(path), "': it is a symbolic link."));
    ThrowOs("open for appending", path, error);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw OSError(StrCat("Can not append to '", Shown(path), "': it is not a regular file."));
  }
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t AppendFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) ThrowOs("inspect", path_, errno);
  return static_cast<uint64_t>(st.st_size);
}

std::string AppendFile::ReadPrefix(size_t n) const {
  std::string out(n, '\0');
  ssize_t got = ::pread(fd_, out.data(), n, 0);
  if (got < 0) ThrowOs("read", path_, errno);
  out.resize(static_cast<size_t>(got));
  return out;
}

void AppendFile::Append(std::string_view data) { WriteAll(fd_, data, path_); }

// --- checksums -------------------------------------------------------------------------------------

namespace {

template <uint32_t kPolynomial>
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};

// Slicing-by-8 over the reflected polynomial (little-endian hosts).
template <uint32_t kPolynomial>
uint32_t Crc(const void* data, size_t size, uint32_t crc) {
  static constexpr CrcTables<kPolynomial> kTables;
  const auto& t = kTables.t;
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  while (size >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return ~crc;
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) { return Crc<0x82F63B78u>(data, size, crc); }

uint32_t Crc32Ieee(const void* data, size_t size, uint32_t crc) { return Crc<0xEDB88320u>(data, size, crc); }

}  // namespace msrt
