// Files: the one safe-write helper (Note [Safe file writes]), checksums, the
// checkpoint and IDX codecs and the image decoder, for the Python modules that
// read and write files (serialization, _graph_files, dataset.mnist,
// dataset.vision).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/file_io.h"
#include "io/checkpoint.h"
#include "io/idx.h"
#include "io/image.h"
#include "io/mindspore_checkpoint.h"
#include "ir/serialize.h"
#include "msrt/core/errors.h"

namespace msrt::python {
namespace {

// Views of (name, dtype code, shape, buffer) entries; the buffers stay
// requested (and the names owned) while the views are used.
struct CheckpointViews {
  explicit CheckpointViews(const py::list& entries) {
    names.reserve(entries.size());
    buffers.reserve(entries.size());
    for (py::handle entry : entries) {
      auto tuple = entry.cast<py::tuple>();
      names.push_back(tuple[0].cast<std::string>());
      auto code = tuple[1].cast<int>();  // -1: a string, its UTF-8 in the buffer
      if (code < -1 || code >= kDTypeCount) throw ValueError(StrCat("invalid dtype code ", code));
      buffers.push_back(tuple[3].cast<py::buffer>().request());
      const py::buffer_info& info = buffers.back();
      io::CheckpointTensorView view;
      view.is_string = code == -1;
      view.dtype = code == -1 ? DType::kUInt8 : static_cast<DType>(code);
      view.shape = tuple[2].cast<std::vector<int64_t>>();
      view.data = std::string_view(static_cast<const char*>(info.ptr),
                                   static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize));
      views.push_back(std::move(view));
    }
    for (size_t i = 0; i < views.size(); ++i) views[i].name = names[i];
  }
  std::vector<std::string> names;
  std::vector<py::buffer_info> buffers;
  std::vector<io::CheckpointTensorView> views;
};

}  // namespace

void BindIo(py::module_& m) {
  m.def(
      "_write_file_atomic",
      [](const std::string& path, const py::bytes& data, bool durable) {
        std::string_view view = data;
        py::gil_scoped_release release;
        WriteFileAtomic(path, view, durable ? Durability::kSync : Durability::kNoSync);
      },
      py::arg("path"), py::arg("data"), py::arg("durable") = true,
      "Replaces the file `path` with `data` atomically, never through a symlink.");
  m.def(
      "_read_file",
      [](const std::string& path) {
        std::string data;
        {
          py::gil_scoped_release release;
          data = ReadFile(path);
        }
        return py::bytes(data);
      },
      py::arg("path"), "The bytes of the regular file `path` (OSError naming it otherwise).");
  m.def(
      "_make_dirs",
      [](const std::string& path) {
        py::gil_scoped_release release;
        CreateDirectories(path);
      },
      py::arg("path"), "Creates the folder `path` and its parents.");
  m.def("_check_path", &CheckPath, py::arg("path"), py::arg("what"),
        "ValueError when `path` is empty or holds a NUL byte.");
  m.def(
      "_crc32c", [](const py::bytes& data) { return Crc32c(std::string_view(data)); }, py::arg("data"),
      "CRC-32C of `data`.");

  m.def(
      "_save_checkpoint",
      [](const std::string& path, const py::list& entries, const std::string& format, bool crc) {
        CheckpointViews views(entries);
        py::gil_scoped_release release;
        if (format == "msrt") {
          io::SaveCheckpoint(path, views.views);
        } else if (format == "mindspore") {
          io::SaveMindSporeCheckpoint(path, views.views, crc);
        } else {
          throw ValueError(StrCat("unknown checkpoint format '", format, "'"));
        }
      },
      py::arg("path"), py::arg("entries"), py::arg("format") = "mindspore", py::arg("crc") = true,
      "Writes a checkpoint of (name, dtype code, shape, C-contiguous little-endian buffer) entries (code -1: "
      "a string, its UTF-8 in the buffer) in MindSpore's format (`crc`: its crc_num trailer) or msrt's own.");
  m.def(
      "_load_checkpoint",
      [](const std::string& path) {
        std::string data;
        io::CheckpointFormat format;
        std::vector<io::CheckpointTensor> tensors;
        io::MindSporeCheckpoint mindspore;
        {
          py::gil_scoped_release release;
          data = ReadFile(path);
          format = io::DetectCheckpointFormat(data);
          if (format == io::CheckpointFormat::kMsrt) {
            tensors = io::DecodeCheckpoint(data, path);
          } else {
            mindspore = io::DecodeMindSporeCheckpoint(data, path);
            data.clear();
            data.shrink_to_fit();
          }
        }
        py::list out;
        if (format == io::CheckpointFormat::kMsrt) {
          for (const io::CheckpointTensor& t : tensors) {
            out.append(py::make_tuple(t.name, static_cast<int>(t.dtype), py::tuple(py::cast(t.shape)), t.data_offset,
                                      t.data_size));
          }
          return py::make_tuple("msrt", py::bytes(data), out, true);
        }
        for (io::MindSporeCheckpointEntry& e : mindspore.entries) {
          if (e.is_string) {
            out.append(py::make_tuple(e.name, -1, py::tuple(), py::str(e.text)));
          } else {
            out.append(
                py::make_tuple(e.name, static_cast<int>(e.dtype), py::tuple(py::cast(e.shape)), py::bytes(e.data)));
            std::string().swap(e.data);
          }
        }
        return py::make_tuple("mindspore", py::none(), out, mindspore.has_crc);
      },
      py::arg("path"),
      "(format, file bytes, entries, has_crc) of a checked checkpoint in msrt's format (\"msrt\": entries "
      "(name, dtype code, shape, data offset, data size)) or MindSpore's (\"mindspore\": entries (name, dtype "
      "code, shape, data bytes), or (name, -1, (), str) for strings).");
  m.def(
      "_check_graph_record",
      [](const py::bytes& data, const std::string& kind, const std::string& what) {
        ir::CheckGraphRecord(std::string_view(data), kind, what);
      },
      py::arg("data"), py::arg("kind"), py::arg("what"),
      "ValueError naming `what` unless `data` is a valid graph record of `kind` (Note [Graph record]).");
  m.def(
      "_check_mnist_idx",
      [](const py::bytes& data, const std::string& what, bool images) {
        io::MnistIdx idx = io::CheckMnistIdx(std::string_view(data), what,
                                             images ? io::MnistKind::kImages : io::MnistKind::kLabels);
        return py::make_tuple(idx.count, idx.data_offset);
      },
      py::arg("data"), py::arg("what"), py::arg("images"),
      "(count, data offset) of a well-formed MNIST IDX file; ValueError naming `what` otherwise.");
  m.def(
      "_decode_image",
      [](const py::buffer& data) {
        py::buffer_info info = data.request();
        if (info.ndim != 1 || info.itemsize != 1 || (info.shape[0] > 1 && info.strides[0] != 1)) {
          throw RuntimeError(
              StrCat("Decode: the input should be the encoded image as a contiguous 1-D array of bytes, "
                     "got ",
                     info.ndim, " dimension(s) of ", info.itemsize, "-byte items."));
        }
        std::string_view bytes(static_cast<const char*>(info.ptr), static_cast<size_t>(info.shape[0]));
        auto image = std::make_unique<io::DecodedImage>();
        {
          py::gil_scoped_release release;
          *image = io::DecodeImage(bytes);
        }
        std::vector<py::ssize_t> shape = {image->height, image->width, 3};
        uint8_t* pixels = image->pixels.data();
        py::capsule owner(image.get(), [](void* p) { delete static_cast<io::DecodedImage*>(p); });
        image.release();
        return py::array_t<uint8_t>(shape, pixels, owner);
      },
      py::arg("data"),
      "The JPEG or PNG image in the bytes `data` as an (H, W, 3) uint8 RGB array; RuntimeError when it is "
      "neither or is corrupt.");
}

}  // namespace msrt::python
