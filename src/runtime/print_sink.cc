// Note [Print file format]
// A print file is a header followed by one record per Print call; integers
// are little-endian.
//   header:  8 bytes "MSRTPRNT", u32 version (2), u32 flags (0),
//            u32 CRC-32C of the 16 bytes before it
//   record:  u64 body length B, B bytes of body, u32 CRC-32C of the length
//            and the body; the body is a u32 item count, then per item a
//            u8 kind:
//     0 text:    u64 byte length, UTF-8 bytes
//     1 tensor:  u8 dtype-name length, dtype name ("float32", "int64",
//                "bool_", ... as ms.dtype names them), u8 rank, i64 dims[rank],
//                u64 byte length, the elements in C order
// Records are appended with one write each (the file opened with O_NOFOLLOW),
// so a reader sees whole records of a file still being written up to the last
// complete one. A reader checks every checksum before it reads what it covers
// and rejects other versions: a new layout gets a new version number.
#include "runtime/print_sink.h"

#include "msrt/core/shape.h"

#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "context/option_spec.h"
#include "context/options.h"
#include "core/file_io.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "runtime/rank.h"

namespace msrt::runtime {
namespace {

namespace fs = std::filesystem;
using context::Printable;
using kernels::PrintItem;

constexpr char kMagic[8] = {'M', 'S', 'R', 'T', 'P', 'R', 'N', 'T'};
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderSize = 20;
constexpr int64_t kSummaryThreshold = 1000;  // elements; beyond it only the edges print
constexpr int64_t kEdgeItems = 3;

// --- screen form ---------------------------------------------------------

const Tensor& HostTensor(const Tensor& t) {
  if (t.device() != DeviceTarget::kCPU) {
    throw RuntimeError(StrCat("[print] can only print host (CPU) tensors in this build, but got a tensor on ",
                              DeviceTargetName(t.device()), "."));
  }
  return t;
}

double ElementAsDouble(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw()) + i * static_cast<int64_t>(ItemSize(t.dtype()));
  auto load = [p]<typename T>() {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (t.dtype()) {
    case DType::kBool: return load.operator()<uint8_t>() != 0 ? 1.0 : 0.0;
    case DType::kUInt8: return load.operator()<uint8_t>();
    case DType::kInt8: return load.operator()<int8_t>();
    case DType::kInt16: return load.operator()<int16_t>();
    case DType::kInt32: return load.operator()<int32_t>();
    case DType::kInt64: return static_cast<double>(load.operator()<int64_t>());
    case DType::kFloat16: return HalfToFloat(load.operator()<Half>());
    case DType::kBFloat16: return BFloat16ToFloat(load.operator()<BFloat16>());
    case DType::kFloat32: return load.operator()<float>();
    case DType::kFloat64: return load.operator()<double>();
    case DType::kUInt16: return load.operator()<uint16_t>();
    case DType::kUInt32: return load.operator()<uint32_t>();
    case DType::kUInt64: return static_cast<double>(load.operator()<uint64_t>());
    case DType::kComplex64:
    case DType::kComplex128: break;  // ElementAsComplex reads them
  }
  return 0.0;
}

// A complex element as (real, imaginary) in double.
std::complex<double> ElementAsComplex(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw()) + i * static_cast<int64_t>(ItemSize(t.dtype()));
  if (t.dtype() == DType::kComplex64) {
    std::complex<float> v;
    std::memcpy(&v, p, sizeof(v));
    return {v.real(), v.imag()};
  }
  std::complex<double> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// An integer element in full (int64 and uint64 do not fit a double).
std::string IntegerText(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw()) + i * 8;
  if (t.dtype() == DType::kInt64) {
    int64_t v;
    std::memcpy(&v, p, sizeof(v));
    return std::to_string(v);
  }
  if (t.dtype() == DType::kUInt64) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    return std::to_string(v);
  }
  return std::to_string(static_cast<int64_t>(ElementAsDouble(t, i)));
}

// An element inside an array, as NumPy prints it with Tensor.__repr__'s formatter.
std::string FormatElement(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kBool) return ElementAsDouble(t, i) != 0 ? "True" : "False";
  if (IsIntegral(t.dtype())) return IntegerText(t, i);
  char buffer[128];
  if (IsComplex(t.dtype())) {
    std::complex<double> v = ElementAsComplex(t, i);
    std::snprintf(buffer, sizeof(buffer), "% .8e%+.8ej", v.real(), v.imag());
    return buffer;
  }
  std::snprintf(buffer, sizeof(buffer), "% .8e", ElementAsDouble(t, i));
  return buffer;
}

// A real value as Python's repr prints a float, integral ones without ".0".
std::string ShortestText(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e16) return std::to_string(static_cast<int64_t>(v));
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}

// A 0-d tensor's value, as Python prints the scalar it holds ("(1+2j)" for complex).
std::string FormatScalar(const Tensor& t) {
  if (t.dtype() == DType::kBool || IsIntegral(t.dtype())) return FormatElement(t, 0);
  if (IsComplex(t.dtype())) {
    std::complex<double> v = ElementAsComplex(t, 0);
    std::string imag = ShortestText(v.imag());
    if (!std::signbit(v.imag()) && imag.front() != '+') imag = "+" + imag;
    return StrCat("(", ShortestText(v.real()), imag, "j)");
  }
  return ShortestText(ElementAsDouble(t, 0));
}

// The indices shown along an axis of size n: all, or the edges around a gap (-1).
std::vector<int64_t> ShownIndices(int64_t n, bool summarize) {
  std::vector<int64_t> out;
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    out.push_back(-1);
    for (int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
  }
  return out;
}

// NumPy's array2string layout (separator ", ", 75 columns, summarised edges),
// so printed tensors read as Tensor.__repr__ shows them.
class ArrayFormatter {
 public:
  explicit ArrayFormatter(const Tensor& t) : t_(t), shape_(t.shape()), strides_(shape_.size(), 1) {
    for (int i = static_cast<int>(shape_.size()) - 2; i >= 0; --i) strides_[i] = strides_[i + 1] * shape_[i + 1];
    summarize_ = t.numel() > kSummaryThreshold;
    Measure(0, 0);
  }

  std::string Format() const { return Recurse(0, 0, " ", kLineWidth); }

 private:
  static constexpr size_t kLineWidth = 75;

  void Measure(size_t axis, int64_t offset) {
    for (int64_t i : ShownIndices(shape_[axis], summarize_)) {
      if (i < 0) continue;
      if (axis + 1 == shape_.size()) {
        width_ = std::max(width_, FormatElement(t_, offset + i).size());
      } else {
        Measure(axis + 1, offset + i * strides_[axis]);
      }
    }
  }

  // Integers and bools are right-aligned; floats and complex values keep the formatter's text
  // (NumPy pads only what its own formatters produce).
  std::string Word(int64_t index) const {
    std::string text = FormatElement(t_, index);
    if (IsFloating(t_.dtype()) || IsComplex(t_.dtype())) return text;
    return std::string(width_ - text.size(), ' ') + text;
  }

  // Appends `word` to `line`, first moving to a new line when it would not fit.
  static void Extend(std::string* s, std::string* line, const std::string& word, size_t width,
                     const std::string& prefix) {
    if (line->size() + word.size() > width && line->size() > prefix.size()) {
      size_t end = line->find_last_not_of(' ');
      *s += line->substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
      *line = prefix;
    }
    *line += word;
  }

  std::string Recurse(size_t axis, int64_t offset, const std::string& indent, size_t width) const {
    const std::string next_indent = indent + " ";
    const size_t next_width = width - 1;
    std::vector<int64_t> shown = ShownIndices(shape_[axis], summarize_);
    std::string s;
    if (axis + 1 == shape_.size()) {
      const size_t element_width = width - 1;  // room for "," or "]"
      std::string line = indent;
      for (size_t k = 0; k < shown.size(); ++k) {
        Extend(&s, &line, shown[k] < 0 ? "..." : Word(offset + shown[k]), element_width, indent);
        if (k + 1 < shown.size()) line += ", ";
      }
      s += line;
    } else {
      const std::string line_sep = "," + std::string(shape_.size() - axis - 1, '\n');
      for (size_t k = 0; k < shown.size(); ++k) {
        s += indent;
        s += shown[k] < 0 ? "..." : Recurse(axis + 1, offset + shown[k] * strides_[axis], next_indent, next_width);
        if (k + 1 < shown.size()) s += line_sep;
      }
    }
    return "[" + s.substr(indent.size()) + "]";
  }

  const Tensor& t_;
  const Shape& shape_;
  std::vector<int64_t> strides_;
  bool summarize_ = false;
  size_t width_ = 0;
};

// --- the file ------------------------------------------------------------

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));  // hosts are little-endian
}

std::string EncodeBody(const std::vector<PrintItem>& items) {
  std::string out;
  Put<uint32_t>(&out, static_cast<uint32_t>(items.size()));
  for (const PrintItem& item : items) {
    if (const auto* text = std::get_if<std::string>(&item)) {
      Put<uint8_t>(&out, 0);
      Put<uint64_t>(&out, text->size());
      out += *text;
      continue;
    }
    const Tensor& t = HostTensor(std::get<Tensor>(item));
    std::string_view dtype = DTypeAttrName(t.dtype());
    Put<uint8_t>(&out, 1);
    Put<uint8_t>(&out, static_cast<uint8_t>(dtype.size()));
    out += dtype;
    Put<uint8_t>(&out, static_cast<uint8_t>(t.ndim()));
    for (int64_t d : t.shape()) Put<int64_t>(&out, d);
    Put<uint64_t>(&out, t.nbytes());
    out.append(static_cast<const char*>(t.raw()), t.nbytes());
  }
  return out;
}

std::string EncodeRecord(const std::vector<PrintItem>& items) {
  std::string body = EncodeBody(items);
  std::string out;
  Put<uint64_t>(&out, body.size());
  out += body;
  Put<uint32_t>(&out, Crc32c(out));
  return out;
}

std::string Header() {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, kVersion);
  Put<uint32_t>(&out, 0);
  Put<uint32_t>(&out, Crc32c(out));
  return out;
}

// Reads a print file front to back; every failure names the offset.
class Reader {
 public:
  Reader(std::string path, std::string data) : path_(std::move(path)), data_(std::move(data)) {}

  std::vector<PrintItem> ReadAll() {
    if (data_.size() < kHeaderSize || std::memcmp(data_.data(), kMagic, sizeof(kMagic)) != 0) {
      Fail("it is not an msrt print file (no MSRTPRNT header)");
    }
    pos_ = sizeof(kMagic);
    uint32_t version = Get<uint32_t>("the version");
    if (version != kVersion) {
      Fail(StrCat("its format version is ", version, ", but this build reads version ", kVersion));
    }
    uint32_t flags = Get<uint32_t>("the flags");
    uint32_t header_crc = Get<uint32_t>("the header checksum");
    if (header_crc != Crc32c(data_.data(), 16)) Fail("the header's checksum does not match (the file is corrupt)");
    if (flags != 0) Fail(StrCat("its flags are ", flags, ", expected 0"));
    std::vector<PrintItem> items;
    while (pos_ < data_.size()) {
      size_t start = pos_;
      uint64_t length = Get<uint64_t>("a record's length");
      if (length < sizeof(uint32_t) || data_.size() - pos_ < length || data_.size() - pos_ - length < 4) {
        Fail(StrCat("a record of ", length, " bytes does not fit in the file"));
      }
      uint32_t expected = Crc32c(data_.data() + start, sizeof(uint64_t) + length);
      uint32_t stored;
      std::memcpy(&stored, data_.data() + pos_ + length, sizeof stored);
      if (stored != expected) Fail("the record's checksum does not match (the file is corrupt)");
      end_ = pos_ + length;
      uint32_t count = Get<uint32_t>("a record's item count");
      for (uint32_t i = 0; i < count; ++i) items.push_back(ReadItem());
      if (pos_ != end_) Fail(StrCat(end_ - pos_, " bytes follow the record's last item"));
      end_ = data_.size();
      pos_ += sizeof(uint32_t);
    }
    return items;
  }

 private:
  PrintItem ReadItem() {
    uint8_t kind = Get<uint8_t>("an item kind");
    if (kind == 0) return Bytes(Get<uint64_t>("a text length"), "text");
    if (kind != 1) Fail(StrCat("item kind ", static_cast<int>(kind), " is unknown (0 is text, 1 a tensor)"));
    std::string name = Bytes(Get<uint8_t>("a dtype-name length"), "a dtype name");
    auto dtype = ParseDType(name);
    if (!dtype) Fail(StrCat("'", Printable(name), "' is not a dtype"));
    uint8_t rank = Get<uint8_t>("a tensor rank");
    Shape shape;
    for (uint8_t d = 0; d < rank; ++d) {
      shape.push_back(Get<int64_t>("a dimension"));
      if (shape.back() < 0) Fail(StrCat("dimension ", shape.back(), " is negative"));
    }
    uint64_t nbytes = Get<uint64_t>("a tensor's byte length");
    uint64_t expected = 0;
    try {
      expected = NumBytes(shape, *dtype);
    } catch (const Error&) {
      Fail(StrCat("the byte size of a ", name, ShapeRepr(shape), " tensor overflows"));
    }
    if (nbytes != expected) {
      Fail(StrCat("a ", name, ShapeRepr(shape), " tensor holds ", expected, " bytes, but the record says ", nbytes));
    }
    std::string bytes = Bytes(nbytes, "tensor data");
    return Tensor::FromHost(bytes.data(), bytes.size(), shape, *dtype);
  }

  template <typename T>
  T Get(std::string_view what) {
    if (end_ - pos_ < sizeof(T)) Fail(StrCat("it ends inside ", what));
    T value;
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  std::string Bytes(uint64_t n, std::string_view what) {
    if (end_ - pos_ < n) Fail(StrCat("it ends inside ", what));
    std::string out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  [[noreturn]] void Fail(std::string_view why) const {
    throw RuntimeError(StrCat("For 'parse_print', failed to read the print file '", Printable(path_), "' at byte ",
                              pos_, ": ", why, "."));
  }

  std::string path_;
  std::string data_;
  size_t pos_ = 0;
  size_t end_ = data_.size();  // the end of the record being read
};

// --- the sink --------------------------------------------------------------

class Sink {
 public:
  static void Emit(const std::vector<PrintItem>& items) {
    std::string path = context::runtime_options::PrintFilePath().Get();
    if (!path.empty()) {
      std::string record = EncodeRecord(items);
      // A rank of a distributed job appends to <folder>/rank_<id>/<name> (Note [Per-rank places]).
      fs::path file(path);
      fs::path place = RankPlace(file.parent_path()) / file.filename();
      std::lock_guard lock(FileMutex());
      if (place != file) {
        path = place.string();
        try {
          CreateDirectories(place.parent_path().string());
        } catch (const OSError& e) {
          throw OSError(StrCat("[print] print_file_path: ", e.message()));
        }
      }
      Append(path, record);
      return;
    }
    std::string text;
    for (const PrintItem& item : items) {
      if (const auto* s = std::get_if<std::string>(&item)) {
        text += *s;
      } else {
        text += FormatTensor(std::get<Tensor>(item));
      }
      text += '\n';
    }
    std::lock_guard lock(FileMutex());
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }

  // Callers hold FileMutex().
  static void Append(const std::string& path, const std::string& record) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      throw OSError(StrCat("[print] print_file_path '", Printable(path), "' is a directory; expected a file path."));
    }
    try {
      AppendFile file(path);  // O_NOFOLLOW: a symlink planted at the path is refused
      uint64_t size = file.size();
      if (size > 0) {
        std::string head = file.ReadPrefix(kHeaderSize);
        if (head.size() < sizeof(kMagic) || std::memcmp(head.data(), kMagic, sizeof(kMagic)) != 0) {
          throw OSError(StrCat("[print] print_file_path '", Printable(path),
                               "' exists and is not an msrt print file; choose another path."));
        }
        if (head != Header()) {
          throw OSError(StrCat("[print] print_file_path '", Printable(path),
                               "' is a print file of another format version or is corrupt; choose another path."));
        }
      }
      file.Append(size == 0 ? Header() + record : record);
    } catch (const ValueError&) {
      throw;
    } catch (const OSError& e) {
      if (e.message().rfind("[print]", 0) == 0) throw;
      throw OSError(StrCat("[print] print_file_path: ", e.message()));
    }
  }

  static std::mutex& FileMutex() {
    static auto* mutex = new std::mutex();
    return *mutex;
  }
};

void EmitToSink(const std::vector<PrintItem>& items) { Sink::Emit(items); }

const bool kInstalled = [] {
  kernels::SetPrintSink(&EmitToSink);
  context::Global().DeclareConsumer(context::runtime_options::PrintFilePath(), "print sink");
  return true;
}();

}  // namespace

std::string FormatTensor(const Tensor& tensor) {
  const Tensor& t = HostTensor(tensor);
  std::string shape = "[";
  for (int i = 0; i < t.ndim(); ++i) shape += StrCat(i ? ", " : "", t.shape()[i]);
  shape += "]";
  std::string value;
  if (t.ndim() == 0) {
    value = " " + FormatScalar(t);
  } else {
    value = (t.ndim() == 1 ? " " : "\n") + ArrayFormatter(t).Format();
  }
  return StrCat("Tensor(shape=", shape, ", dtype=", DTypeName(t.dtype()), ", value=", value, ")");
}

void AppendPrintRecord(const std::string& path, const std::vector<PrintItem>& items) {
  std::string record = EncodeRecord(items);
  std::lock_guard lock(Sink::FileMutex());
  Sink::Append(path, record);
}

std::vector<PrintItem> ReadPrintFile(const std::string& path) {
  CheckPath(path, "For 'parse_print', the print file");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw ValueError(StrCat("For 'parse_print', the print file '", Printable(path), "' does not exist."));
  }
  std::string data = ReadFile(path);
  if (data.empty()) throw ValueError(StrCat("For 'parse_print', the print file '", Printable(path), "' is empty."));
  return Reader(path, std::move(data)).ReadAll();
}

std::vector<PrintItem> ParsePrintFile(std::string data, const std::string& what) {
  return Reader(what, std::move(data)).ReadAll();
}

}  // namespace msrt::runtime
