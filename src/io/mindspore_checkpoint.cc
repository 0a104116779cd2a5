// Note [MindSpore checkpoint format]
//   A MindSpore .ckpt file is a serialized protobuf `Checkpoint` message
//   (mindspore_checkpoint.proto): a sequence of field-1 records, each a
//   `Checkpoint.Value { tag, TensorProto { dims, tensor_type, tensor_content } }`.
//   MindSpore writes each record as its own one-value Checkpoint message and
//   appends them, which on the wire is the same thing. Its conventions:
//   - tensor_type is MindSpore's dtype name ("Float32", "Int64", "Bool", ...,
//     "str" for append_dict strings, stored as NumPy's UTF-32 'U' array);
//   - a scalar has no dims (current MindSpore); earlier releases wrote dims
//     [0] and one element of content, which is read as a scalar too;
//   - a tensor over 512 MiB is written as consecutive records with the same
//     tag, dims and type, whose contents are joined on reading;
//   - BFloat16 content is 2-byte bfloat16 (current MindSpore); content of
//     float32 values under that name (older releases) is read too, the
//     content size telling which;
//   - with save_checkpoint(crc_check=True) (MindSpore 2.3 and later) the file
//     ends with the 7 ASCII bytes "crc_num" and the zlib CRC-32 of all bytes
//     before them as a 10-byte big-endian integer. MindSpore's reader strips
//     such a trailer always and checks it only with crc_check=True; msrt
//     checks it whenever it is there.
// The reader walks the records itself (so a file may exceed protobuf's 2 GiB
// message limit and no byte is copied before it is checked), parses each
// record with protoc's generated code, and accepts nothing but field-1
// records: bytes that are not a checkpoint are refused, not skipped as
// unknown fields.
#include "io/mindspore_checkpoint.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <set>

#include "core/file_io.h"
#include "io/mindspore_checkpoint.pb.h"
#include "msrt/core/errors.h"
#include "msrt/core/shape.h"

namespace msrt::io {
namespace proto = mindspore_proto;

namespace {

constexpr char kMsrtMagic[8] = {'M', 'S', 'R', 'T', 'C', 'K', 'P', 'T'};
constexpr std::string_view kCrcMarker = "crc_num";
constexpr size_t kCrcTrailerSize = 17;  // "crc_num" + 10 bytes
constexpr size_t kMaxRank = 64;
constexpr uint64_t kValueKey = (1u << 3) | 2u;  // field 1, length-delimited

[[noreturn]] void Corrupt(std::string_view what, std::string_view why) {
  throw ValueError(StrCat("The checkpoint file '", what, "' is corrupt: ", why, "."));
}

[[noreturn]] void Truncated(std::string_view what, std::string_view why) {
  throw ValueError(StrCat("The checkpoint file '", what, "' is truncated: ", why, "."));
}

// A base-128 varint; false when the bytes end first or it is longer than 10 bytes.
bool ReadVarint(std::string_view bytes, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos >= bytes.size()) return false;
    auto byte = static_cast<unsigned char>(bytes[pos++]);
    if (shift == 63 && byte > 1) return false;  // past 64 bits
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

std::optional<DType> MindSporeType(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto dtype = static_cast<DType>(i);
    if (DTypeName(dtype) == name) return dtype;
  }
  return std::nullopt;
}

std::string SupportedTypes() {
  std::string out;
  for (int i = 0; i < kDTypeCount; ++i) out += StrCat(DTypeName(static_cast<DType>(i)), ", ");
  return out + "str";
}

std::string DimsRepr(const google::protobuf::RepeatedField<int64_t>& dims) {
  std::string out = "[";
  for (int i = 0; i < dims.size(); ++i) out += StrCat(i ? ", " : "", dims[i]);
  return out + "]";
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// One entry while its slices are read.
struct Pending {
  std::string name;
  std::string type;
  google::protobuf::RepeatedField<int64_t> dims;
  std::string content;
};

// Checks a complete entry and turns it into the decoded form.
MindSporeCheckpointEntry Finish(Pending& p, std::string_view what) {
  MindSporeCheckpointEntry e;
  e.name = std::move(p.name);
  if (p.type == "str") {
    // NumPy's 'U' array bytes: UTF-32LE code points, NUL-padded at the end.
    if (p.content.size() % 4 != 0) {
      Corrupt(what, StrCat("string '", e.name, "' has ", p.content.size(), " bytes, not a multiple of 4 (UTF-32)"));
    }
    size_t end = p.content.size() / 4;
    auto code_point = [&](size_t i) {
      uint32_t cp;
      std::memcpy(&cp, p.content.data() + 4 * i, 4);
      return cp;
    };
    while (end > 0 && code_point(end - 1) == 0) --end;
    for (size_t i = 0; i < end; ++i) {
      uint32_t cp = code_point(i);
      if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        Corrupt(what, StrCat("string '", e.name, "' holds the invalid code point ", cp));
      }
      AppendUtf8(e.text, cp);
    }
    e.is_string = true;
    return e;
  }
  std::optional<DType> dtype = MindSporeType(p.type);
  if (!dtype) {
    throw ValueError(StrCat("The checkpoint file '", what, "' holds '", e.name, "' of tensor_type '", p.type,
                            "', which msrt does not support (it reads ", SupportedTypes(), ")."));
  }
  e.dtype = *dtype;
  if (static_cast<size_t>(p.dims.size()) > kMaxRank) {
    Corrupt(what, StrCat("tensor '", e.name, "' has ", p.dims.size(), " dimensions, at most ", kMaxRank));
  }
  for (int64_t d : p.dims) {
    if (d < 0) Corrupt(what, StrCat("tensor '", e.name, "' has the negative dimension ", d));
    e.shape.push_back(d);
  }
  // bfloat16 content is 2-byte bfloat16 or (older MindSpore) float32 values.
  size_t item = ItemSize(e.dtype);
  bool bf16_as_f32 = false;
  auto fits = [&](size_t bytes_per_item, size_t count) {
    return p.content.size() / bytes_per_item == count && p.content.size() % bytes_per_item == 0;
  };
  // MindSpore's scalars: dims [0] and one element of content.
  if (p.dims.size() == 1 && p.dims[0] == 0 && !p.content.empty()) {
    if (fits(item, 1) || (e.dtype == DType::kBFloat16 && fits(4, 1))) e.shape.clear();
  }
  uint64_t expected = 0;
  try {
    expected = NumBytes(e.shape, e.dtype);
  } catch (const Error&) {
    Corrupt(what, StrCat("the byte size of tensor '", e.name, "' of dims ", DimsRepr(p.dims), " overflows"));
  }
  if (e.dtype == DType::kBFloat16 && expected != p.content.size() && expected <= UINT64_MAX / 2 &&
      expected * 2 == p.content.size()) {
    bf16_as_f32 = true;
  } else if (p.content.size() != expected) {
    Corrupt(what, StrCat("tensor '", e.name, "' of dims ", DimsRepr(p.dims), " and type ", p.type, " should hold ",
                         expected, " bytes, but its content has ", p.content.size()));
  }
  if (e.dtype == DType::kBool) {
    for (char c : p.content) {
      if (c != 0 && c != 1) {
        Corrupt(what, StrCat("boolean tensor '", e.name, "' holds the byte ", int{static_cast<unsigned char>(c)},
                             "; booleans are 0 or 1"));
      }
    }
  }
  if (e.dtype == DType::kBFloat16 && !bf16_as_f32) {
    // Widening bfloat16 to float32 is exact: the bits move up 16 places.
    size_t n = p.content.size() / 2;
    e.data.resize(n * 4);
    for (size_t i = 0; i < n; ++i) {
      uint16_t b;
      std::memcpy(&b, p.content.data() + 2 * i, 2);
      float f = BFloat16ToFloat(BFloat16{b});
      std::memcpy(e.data.data() + 4 * i, &f, 4);
    }
  } else {
    e.data = std::move(p.content);
  }
  return e;
}

// A string as MindSpore writes one (dims [0], type "str", the UTF-32LE code
// points NumPy's np.array(text) holds: at least one, NUL for "").
std::string EncodeString(const CheckpointTensorView& t) {
  if (!IsValidUtf8(t.data)) throw ValueError(StrCat("The string '", t.name, "' is not valid UTF-8."));
  std::string content;
  for (size_t i = 0; i < t.data.size();) {
    auto c = static_cast<unsigned char>(t.data[i]);
    size_t extra = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
    uint32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (size_t k = 1; k <= extra; ++k) cp = (cp << 6) | (static_cast<unsigned char>(t.data[i + k]) & 0x3F);
    content.append(reinterpret_cast<const char*>(&cp), 4);
    i += extra + 1;
  }
  if (content.empty()) content.assign(4, '\0');
  proto::Checkpoint checkpoint;
  proto::Checkpoint::Value* value = checkpoint.add_value();
  value->set_tag(std::string(t.name));
  proto::TensorProto* tensor = value->mutable_tensor();
  tensor->add_dims(0);
  tensor->set_tensor_type("str");
  tensor->set_tensor_content(content);
  return checkpoint.SerializeAsString();
}

}  // namespace

CheckpointFormat DetectCheckpointFormat(std::string_view bytes) {
  if (bytes.size() >= sizeof kMsrtMagic && std::memcmp(bytes.data(), kMsrtMagic, sizeof kMsrtMagic) == 0) {
    return CheckpointFormat::kMsrt;
  }
  return CheckpointFormat::kMindSpore;
}

MindSporeCheckpoint DecodeMindSporeCheckpoint(std::string_view bytes, std::string_view what) {
  MindSporeCheckpoint out;
  if (bytes.empty()) {
    // MindSpore writes no byte for nothing saved, but an empty file is far more
    // often one whose writing never happened: refused rather than read as {}.
    throw ValueError(StrCat("The checkpoint file '", what, "' is empty."));
  }
  std::string_view body = bytes;
  if (bytes.size() >= kCrcTrailerSize && bytes.substr(bytes.size() - kCrcTrailerSize, 7) == kCrcMarker) {
    body = bytes.substr(0, bytes.size() - kCrcTrailerSize);
    std::string_view stored = bytes.substr(bytes.size() - 10);
    uint64_t crc = 0;
    for (char c : stored) crc = (crc << 8) | static_cast<unsigned char>(c);
    bool high_zero = stored.substr(0, 6).find_first_not_of('\0') == std::string_view::npos;
    if (!high_zero || crc != Crc32Ieee(body.data(), body.size())) {
      Corrupt(what, "the CRC-32 in its crc_num trailer does not match its contents");
    }
    out.has_crc = true;
  }

  std::vector<Pending> pending;
  std::set<std::string> names;
  size_t pos = 0;
  for (size_t record = 0; pos < body.size(); ++record) {
    size_t start = pos;
    uint64_t key = 0;
    if (!ReadVarint(body, pos, key)) {
      Truncated(what, StrCat("the key of record ", record, " at offset ", start, " is cut off"));
    }
    if (key != kValueKey) {
      if (start == 0) {
        throw ValueError(StrCat("The checkpoint file '", what,
                                "' is not a checkpoint: it is neither in msrt's format (which starts with "
                                "b'MSRTCKPT') nor in MindSpore's (protobuf Checkpoint messages)."));
      }
      Corrupt(what, StrCat("offset ", start, " holds field ", key >> 3, " (wire type ", key & 7,
                           ") where a Checkpoint.value record (field 1) was expected"));
    }
    uint64_t size = 0;
    if (!ReadVarint(body, pos, size)) {
      Truncated(what, StrCat("the length of record ", record, " at offset ", start, " is cut off"));
    }
    if (size > body.size() - pos) {
      Truncated(what, StrCat("record ", record, " at offset ", start, " needs ", size, " bytes, but ",
                             body.size() - pos, " remain"));
    }
    if (size > static_cast<uint64_t>(INT_MAX)) {
      Corrupt(what, StrCat("record ", record, " at offset ", start, " is ", size,
                           " bytes long, more than a protobuf message may be"));
    }
    proto::Checkpoint::Value value;
    if (!value.ParsePartialFromArray(body.data() + pos, static_cast<int>(size))) {
      Corrupt(what, StrCat("record ", record, " at offset ", start, " is not a valid Checkpoint.Value message"));
    }
    pos += size;
    if (!value.IsInitialized()) {
      Corrupt(what, StrCat("record ", record, " at offset ", start, " lacks required fields (",
                           value.InitializationErrorString(), ")"));
    }
    if (!IsValidUtf8(value.tag())) Corrupt(what, StrCat("the tag of record ", record, " is not UTF-8"));
    if (value.value_case() == proto::Checkpoint::Value::kMaptensor) {
      throw ValueError(StrCat("The checkpoint file '", what, "' holds '", value.tag(),
                              "', a MindSpore MapParameter, which msrt does not support."));
    }
    if (value.value_case() != proto::Checkpoint::Value::kTensor) {
      Corrupt(what, StrCat("record ", record, " ('", value.tag(), "') holds no tensor"));
    }
    proto::TensorProto* tensor = value.mutable_tensor();
    if (!pending.empty() && pending.back().name == value.tag()) {
      // Another slice of the same tensor: same dims and type, content joined.
      Pending& last = pending.back();
      if (last.type != tensor->tensor_type() || last.dims.size() != tensor->dims_size() ||
          !std::equal(last.dims.begin(), last.dims.end(), tensor->dims().begin())) {
        Corrupt(what, StrCat("the slices of tensor '", last.name, "' disagree on their dims or type"));
      }
      last.content += tensor->tensor_content();
      continue;
    }
    if (!names.insert(value.tag()).second) Corrupt(what, StrCat("the name '", value.tag(), "' appears twice"));
    Pending p;
    p.name = value.tag();
    p.type = tensor->tensor_type();
    p.dims = tensor->dims();
    p.content = std::move(*tensor->mutable_tensor_content());
    pending.push_back(std::move(p));
  }
  out.entries.reserve(pending.size());
  for (Pending& p : pending) out.entries.push_back(Finish(p, what));
  return out;
}

std::string EncodeMindSporeCheckpoint(const std::vector<CheckpointTensorView>& tensors, bool crc, size_t slice_bytes) {
  std::string out;
  std::set<std::string_view> seen;
  for (const CheckpointTensorView& t : tensors) {
    if (!seen.insert(t.name).second) throw ValueError(StrCat("The name '", t.name, "' appears twice."));
    if (t.is_string) {
      out += EncodeString(t);
      continue;
    }
    if (t.shape.size() > kMaxRank) {
      throw ValueError(
          StrCat("Tensor '", t.name, "' has ", t.shape.size(), " dimensions, at most ", kMaxRank, " can be saved."));
    }
    uint64_t nbytes = 0;
    try {
      nbytes = NumBytes(t.shape, t.dtype == DType::kBFloat16 ? DType::kFloat32 : t.dtype);
    } catch (const Error&) {
      throw ValueError(StrCat("Tensor '", t.name, "' has an invalid shape."));
    }
    if (nbytes != t.data.size()) {
      throw ValueError(
          StrCat("Tensor '", t.name, "' should hold ", nbytes, " bytes, but ", t.data.size(), " were given."));
    }
    std::string converted;
    std::string_view content = t.data;
    if (t.dtype == DType::kBFloat16) {
      // Given as float32 values (exact bfloat16 values), stored as bfloat16.
      size_t n = t.data.size() / 4;
      converted.resize(n * 2);
      for (size_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, t.data.data() + 4 * i, 4);
        uint16_t b = FloatToBFloat16(f).bits;
        std::memcpy(converted.data() + 2 * i, &b, 2);
      }
      content = converted;
    }
    size_t item = ItemSize(t.dtype);
    size_t slice = std::max(item, slice_bytes / item * item);
    size_t offset = 0;
    do {
      size_t n = std::min(slice, content.size() - offset);
      proto::Checkpoint checkpoint;
      proto::Checkpoint::Value* value = checkpoint.add_value();
      value->set_tag(std::string(t.name));
      proto::TensorProto* tensor = value->mutable_tensor();
      for (int64_t d : t.shape) tensor->add_dims(d);  // a scalar has none, as current MindSpore writes it
      tensor->set_tensor_type(std::string(DTypeName(t.dtype)));
      tensor->set_tensor_content(content.data() + offset, n);
      out += checkpoint.SerializeAsString();
      offset += n;
    } while (offset < content.size());
  }
  if (crc) {
    uint32_t value = Crc32Ieee(out.data(), out.size());
    out += kCrcMarker;
    out.append(6, '\0');
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((value >> shift) & 0xFF);
  }
  return out;
}

void SaveMindSporeCheckpoint(const std::string& path, const std::vector<CheckpointTensorView>& tensors, bool crc) {
  CheckPath(path, "For 'save_checkpoint', the 'ckpt_file_name'");
  WriteFileAtomic(path, EncodeMindSporeCheckpoint(tensors, crc), Durability::kSync);
}

}  // namespace msrt::io
