// Note [Checkpoint format]
//   header   8 bytes "MSRTCKPT", u32 version (2), u32 tensor count,
//            u64 payload size P                          (little endian)
//   payload  per tensor: u32 name length, UTF-8 name, u8 dtype code (the
//            order of DType; bfloat16 stored as float32 values), u8 rank,
//            u64 dims[rank], u64 byte size, the data (little endian, C order)
//   trailer  u32 CRC-32C of the header and the payload
// Version 1 (read, never written) is the same with a CRC-32 (zlib's) of the
// payload alone. The reader checks the size and the checksum before anything
// else, then every length against the bytes present, every byte size with
// overflow checks, booleans (0 or 1 only), names (UTF-8, unique).
#include "io/checkpoint.h"

#include "msrt/core/shape.h"

#include <cstring>
#include <set>

#include "core/file_io.h"
#include "msrt/core/errors.h"

namespace msrt::io {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'R', 'T', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderSize = 24;
constexpr size_t kMaxRank = 64;

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

namespace {

// Bounds-checked reads; every failure names the file and the part.
class Reader {
 public:
  Reader(std::string_view bytes, size_t begin, size_t end, std::string_view what)
      : bytes_(bytes), pos_(begin), end_(end), what_(what) {}

  template <typename T>
  T Get(std::string_view part) {
    Need(sizeof(T), part);
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof value);
    pos_ += sizeof value;
    return value;
  }
  std::string_view Take(uint64_t n, std::string_view part) {
    Need(n, part);
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return end_ - pos_; }
  [[noreturn]] void Fail(std::string_view why) const {
    throw ValueError(StrCat("The checkpoint file '", what_, "' is corrupt: ", why, "."));
  }

 private:
  void Need(uint64_t n, std::string_view part) const {
    if (n > end_ - pos_) {
      Fail(StrCat(part, " needs ", n, " bytes at offset ", pos_, ", but the payload has ", end_ - pos_, " bytes left"));
    }
  }
  std::string_view bytes_;
  size_t pos_;
  size_t end_;
  std::string_view what_;
};

}  // namespace

size_t StoredItemSize(DType dtype) { return dtype == DType::kBFloat16 ? 4 : ItemSize(dtype); }

namespace {
// bfloat16 is stored as float32 values; sizes are overflow-checked in one place (msrt/core/shape.h).
uint64_t StoredBytes(const Shape& shape, DType dtype) {
  return NumBytes(shape, dtype == DType::kBFloat16 ? DType::kFloat32 : dtype);
}
}  // namespace

std::string EncodeCheckpoint(const std::vector<CheckpointTensorView>& tensors) {
  std::string payload;
  std::set<std::string_view> seen;
  for (const CheckpointTensorView& t : tensors) {
    if (!seen.insert(t.name).second) throw ValueError(StrCat("The name '", t.name, "' appears twice."));
    if (t.is_string) {
      throw ValueError(StrCat("'", t.name, "' is a string; only MindSpore's checkpoint format holds strings."));
    }
    if (t.shape.size() > kMaxRank) {
      throw ValueError(
          StrCat("Tensor '", t.name, "' has ", t.shape.size(), " dimensions, at most ", kMaxRank, " can be saved."));
    }
    uint64_t nbytes = 0;
    try {
      nbytes = StoredBytes(t.shape, t.dtype);
    } catch (const Error&) {
      throw ValueError(StrCat("Tensor '", t.name, "' has an invalid shape."));
    }
    if (nbytes != t.data.size()) {
      throw ValueError(
          StrCat("Tensor '", t.name, "' should hold ", nbytes, " bytes, but ", t.data.size(), " were given."));
    }
    Put<uint32_t>(payload, static_cast<uint32_t>(t.name.size()));
    payload += t.name;
    Put<uint8_t>(payload, static_cast<uint8_t>(t.dtype));
    Put<uint8_t>(payload, static_cast<uint8_t>(t.shape.size()));
    for (int64_t d : t.shape) Put<uint64_t>(payload, static_cast<uint64_t>(d));
    Put<uint64_t>(payload, nbytes);
    payload += t.data;
  }
  std::string out(kMagic, sizeof kMagic);
  Put<uint32_t>(out, kVersion);
  Put<uint32_t>(out, static_cast<uint32_t>(tensors.size()));
  Put<uint64_t>(out, payload.size());
  out += payload;
  Put<uint32_t>(out, Crc32c(out));
  return out;
}

std::vector<CheckpointTensor> DecodeCheckpoint(std::string_view bytes, std::string_view what) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw ValueError(StrCat("The checkpoint file '", what,
                            "' is not an msrt checkpoint: it does not start with the "
                            "magic bytes b'MSRTCKPT'."));
  }
  if (bytes.size() < kHeaderSize) {
    throw ValueError(StrCat("The checkpoint file '", what, "' is truncated: its header needs ", kHeaderSize,
                            " bytes, but the file has ", bytes.size(), "."));
  }
  uint32_t version, count;
  uint64_t payload_size;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&count, bytes.data() + 12, 4);
  std::memcpy(&payload_size, bytes.data() + 16, 8);
  if (version != 1 && version != kVersion) {
    throw ValueError(StrCat("The checkpoint file '", what, "' has format version ", version,
                            "; this msrt reads versions 1 and ", kVersion, "."));
  }
  if (payload_size > bytes.size() || bytes.size() - kHeaderSize < 4 || payload_size != bytes.size() - kHeaderSize - 4) {
    bool short_file = payload_size > bytes.size() || bytes.size() < kHeaderSize + 4 ||
                      payload_size > bytes.size() - kHeaderSize - 4;
    std::string expected = payload_size > UINT64_MAX - kHeaderSize - 4 ? std::string("more than 2^64")
                                                                       : std::to_string(kHeaderSize + payload_size + 4);
    throw ValueError(StrCat("The checkpoint file '", what, "' is ",
                            short_file ? "truncated" : "corrupt (it has trailing bytes)", ": its header announces ",
                            expected, " bytes, but the file has ", bytes.size(), "."));
  }
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + kHeaderSize + payload_size, 4);
  uint32_t actual = version == 1 ? Crc32Ieee(bytes.data() + kHeaderSize, payload_size)
                                 : Crc32c(bytes.data(), kHeaderSize + payload_size);
  if (stored != actual) {
    throw ValueError(StrCat("The checkpoint file '", what, "' is corrupt: the checksum (",
                            version == 1 ? "CRC32" : "CRC32C", ") of its ", version == 1 ? "data" : "header and data",
                            " does not match."));
  }
  Reader reader(bytes, kHeaderSize, kHeaderSize + payload_size, what);
  std::vector<CheckpointTensor> out;
  std::set<std::string> names;
  for (uint32_t index = 0; index < count; ++index) {
    uint32_t name_size = reader.Get<uint32_t>(StrCat("the name length of tensor ", index));
    std::string_view name = reader.Take(name_size, StrCat("the name of tensor ", index));
    if (!IsValidUtf8(name)) reader.Fail(StrCat("the name of tensor ", index, " is not UTF-8"));
    CheckpointTensor t;
    t.name = std::string(name);
    uint8_t code = reader.Get<uint8_t>(StrCat("the dtype of '", t.name, "'"));
    uint8_t rank = reader.Get<uint8_t>(StrCat("the rank of '", t.name, "'"));
    if (code >= kDTypeCount) reader.Fail(StrCat("tensor '", t.name, "' has an unknown dtype code ", int{code}));
    if (rank > kMaxRank) reader.Fail(StrCat("tensor '", t.name, "' has ", int{rank}, " dimensions"));
    t.dtype = static_cast<DType>(code);
    bool overflow = false;
    for (uint8_t d = 0; d < rank; ++d) {
      auto dim = reader.Get<uint64_t>(StrCat("the shape of '", t.name, "'"));
      if (dim > static_cast<uint64_t>(INT64_MAX)) overflow = true;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    auto nbytes = reader.Get<uint64_t>(StrCat("the size of '", t.name, "'"));
    uint64_t expected = 0;
    if (!overflow) {
      try {
        expected = StoredBytes(t.shape, t.dtype);
      } catch (const Error&) {
        overflow = true;
      }
    }
    if (overflow) reader.Fail(StrCat("the byte size of tensor '", t.name, "' overflows"));
    if (nbytes != expected) {
      std::string shape = "(";
      for (size_t i = 0; i < t.shape.size(); ++i) shape += StrCat(i ? ", " : "", t.shape[i]);
      shape += t.shape.size() == 1 ? ",)" : ")";
      reader.Fail(StrCat("tensor '", t.name, "' of shape ", shape, " and dtype ", DTypeAttrName(t.dtype),
                         " should hold ", expected, " bytes, but ", nbytes, " are recorded"));
    }
    t.data_offset = reader.pos();
    std::string_view data = reader.Take(nbytes, StrCat("the data of '", t.name, "'"));
    t.data_size = data.size();
    if (t.dtype == DType::kBool) {
      for (char c : data) {
        if (c != 0 && c != 1) {
          reader.Fail(StrCat("boolean tensor '", t.name, "' holds the byte ", int{static_cast<unsigned char>(c)},
                             "; booleans are 0 or 1"));
        }
      }
    }
    if (!names.insert(t.name).second) reader.Fail(StrCat("the name '", t.name, "' appears twice"));
    out.push_back(std::move(t));
  }
  if (reader.left() != 0) reader.Fail(StrCat(reader.left(), " bytes follow the last tensor"));
  return out;
}

void SaveCheckpoint(const std::string& path, const std::vector<CheckpointTensorView>& tensors) {
  CheckPath(path, "For 'save_checkpoint', the 'ckpt_file_name'");
  WriteFileAtomic(path, EncodeCheckpoint(tensors), Durability::kSync);
}

}  // namespace msrt::io
