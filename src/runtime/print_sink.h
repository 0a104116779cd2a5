// The print sink: where the Print op's values go. With print_file_path empty
// they are written to stdout, one value per line, tensors in the same form as
// Python's Tensor repr; otherwise each Print call is appended to that file as
// one record (Note [Print file format] in print_sink.cc, docs/observability.md)
// and parse_print reads them back.
#pragma once

#include <string>
#include <vector>

#include "kernels/print_sink.h"

namespace msrt::runtime {

/// "Tensor(shape=[2, 3], dtype=Float32, value=\n[[...]])": Python's repr form.
std::string FormatTensor(const Tensor& tensor);

/// Appends one record to a print file, writing the header first if the file
/// is new or empty. OSError if it cannot be written or is not a print file.
void AppendPrintRecord(const std::string& path, const std::vector<kernels::PrintItem>& items);

/// Every value of every record of a print file, in order. ValueError when the
/// file does not exist or is empty; RuntimeError when it cannot be parsed.
std::vector<kernels::PrintItem> ReadPrintFile(const std::string& path);

/// The values of the print file content `data`; RuntimeError naming `what`
/// and the offset for anything malformed or failing its checksum.
std::vector<kernels::PrintItem> ParsePrintFile(std::string data, const std::string& what);

}  // namespace msrt::runtime
