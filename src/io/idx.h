// IDX files (MNIST, Fashion-MNIST): the header check, in C++ so that it can
// be fuzzed; MnistDataset (python/msrt/dataset/mnist.py) reads through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace msrt::io {

/// What an MNIST IDX file holds.
enum class MnistKind { kImages, kLabels };

/// Where the elements of a checked MNIST file lie.
struct MnistIdx {
  uint64_t count = 0;  // images or labels
  uint64_t rows = 0;   // 28 for images, 0 for labels
  uint64_t cols = 0;
  size_t data_offset = 0;  // 16 for images, 8 for labels
};

/// Checks that `bytes` are a well-formed MNIST `kind` file (unsigned bytes,
/// 3 dimensions of 28x28 images or 1 of labels, exactly the bytes the header
/// declares). ValueError naming `what` (the file) and the fault otherwise.
MnistIdx CheckMnistIdx(std::string_view bytes, std::string_view what, MnistKind kind);

}  // namespace msrt::io
