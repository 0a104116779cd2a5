// MindSpore's checkpoint files (.ckpt, protobuf): read and written so that
// checkpoints move between MindSpore and msrt both ways. Note [MindSpore
// checkpoint format] in mindspore_checkpoint.cc; docs/checkpoint.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/checkpoint.h"
#include "msrt/core/dtype.h"

namespace msrt::io {

/// Which format a checkpoint file is in, told by its bytes.
enum class CheckpointFormat { kMsrt, kMindSpore };

/// kMsrt when `bytes` starts with msrt's magic, kMindSpore otherwise (the
/// MindSpore reader then says whether the bytes are one).
CheckpointFormat DetectCheckpointFormat(std::string_view bytes);

/// One entry of a MindSpore checkpoint, its slices joined.
struct MindSporeCheckpointEntry {
  std::string name;
  /// True for MindSpore's "str" entries (append_dict strings): `text` holds
  /// the string (UTF-8), and dtype, shape and data are unused.
  bool is_string = false;
  std::string text;
  DType dtype = DType::kFloat32;
  /// The shape; MindSpore's scalars (dims [0] holding one element) are ().
  std::vector<int64_t> shape;
  /// Little-endian elements in C order; bfloat16 as float32 values (as
  /// CheckpointTensorView has them), whichever way the file stored them.
  std::string data;
};

/// A decoded MindSpore checkpoint.
struct MindSporeCheckpoint {
  std::vector<MindSporeCheckpointEntry> entries;
  /// Whether the file ends with MindSpore's "crc_num" trailer (it was then
  /// checked and matched).
  bool has_crc = false;
};

/// Decodes a MindSpore checkpoint. Every fault raises ValueError naming
/// `what` (the file): an empty file, bytes that are not protobuf Checkpoint messages, a
/// truncated record, a CRC trailer that does not match, an unknown or
/// unsupported tensor_type, a content size that disagrees with dims and type
/// (computed with overflow checks), booleans other than 0 and 1, names that
/// are not UTF-8 or appear twice. Never a partial or wrong result.
MindSporeCheckpoint DecodeMindSporeCheckpoint(std::string_view bytes, std::string_view what);

/// The largest tensor_content of one record; bigger tensors are written as
/// consecutive records of the same tag, as MindSpore does (its SLICE_SIZE).
inline constexpr size_t kMindSporeSliceBytes = size_t{512} * 1024 * 1024;

/// The bytes MindSpore's save_checkpoint writes for `tensors` (data as for
/// EncodeCheckpoint: bfloat16 given as float32 values, stored as bfloat16;
/// strings as MindSpore's "str" entries);
/// `crc` appends the "crc_num" trailer (save_checkpoint's crc_check).
/// ValueError for duplicate names, data whose size does not match, or a
/// string that is not UTF-8.
std::string EncodeMindSporeCheckpoint(const std::vector<CheckpointTensorView>& tensors, bool crc,
                                      size_t slice_bytes = kMindSporeSliceBytes);

/// EncodeMindSporeCheckpoint + an atomic, durable write (Note [Safe file writes]).
void SaveMindSporeCheckpoint(const std::string& path, const std::vector<CheckpointTensorView>& tensors, bool crc);

}  // namespace msrt::io
