// Kernel data dumps (enable_dump, save_dump_path): every launched kernel's
// inputs and outputs as .npy files (Note [Dump layout] in kernel_dump.cc).
#pragma once

#include <string>

#include "msrt/tensor/tensor.h"

namespace msrt::runtime {

/// Writes a host tensor as a NumPy .npy file (format 1.0). bfloat16 has no
/// NumPy dtype: its raw bits are written as uint16. OSError on failure.
void WriteNpy(const std::string& path, const Tensor& tensor);

/// File-name form of a graph or node name: characters other than letters,
/// digits, '.', '-' and '_' become '_' (and a leading '.' too).
std::string SanitizeFileName(std::string_view name);

}  // namespace msrt::runtime
