// Checkpoint files (ms.save_checkpoint / ms.load_checkpoint): the codec and
// the file functions, for Python's serialization module and C++ users alike.
// Note [Checkpoint format] in checkpoint.cc; docs/checkpoint.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "msrt/core/dtype.h"

namespace msrt::io {

/// One tensor to save: its bytes are little-endian, C order (bfloat16 is
/// saved as float32 values, and dtype says kBFloat16). With `is_string`, a
/// string instead (`data` is its UTF-8; dtype and shape unused), which only
/// MindSpore's format holds.
struct CheckpointTensorView {
  std::string_view name;
  DType dtype;
  std::vector<int64_t> shape;
  std::string_view data;
  bool is_string = false;
};

/// One tensor read back: `data_offset` and `data_size` locate its bytes in
/// the buffer that was decoded.
struct CheckpointTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  size_t data_size = 0;
};

/// The bytes of a checkpoint holding `tensors` (current format version).
/// ValueError for duplicate names or data whose size does not match.
std::string EncodeCheckpoint(const std::vector<CheckpointTensorView>& tensors);

/// The tensors of the checkpoint `bytes` (versions 1 and 2). ValueError
/// naming `what` (the file) and the part at fault for anything truncated,
/// corrupt, failing its checksum or inconsistent; it never yields a partial
/// or wrong result.
std::vector<CheckpointTensor> DecodeCheckpoint(std::string_view bytes, std::string_view what);

/// Element size of `dtype` as stored (bfloat16 is stored as float32).
size_t StoredItemSize(DType dtype);

/// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code
/// points past U+10FFFF).
bool IsValidUtf8(std::string_view s);

/// EncodeCheckpoint + an atomic, durable write (Note [Safe file writes]).
void SaveCheckpoint(const std::string& path, const std::vector<CheckpointTensorView>& tensors);

}  // namespace msrt::io
