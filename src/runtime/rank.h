// This process's rank, and the per-rank place of the files instruments write.
#pragma once

#include <cstdint>
#include <filesystem>

namespace msrt::runtime {

/// The rank of this process in its cluster after msrt.communication.init(),
/// else the auto-parallel context's global_rank when set to a non-zero rank,
/// else the RANK_ID environment variable when it holds a non-negative
/// integer, else 0.
int64_t RankId();

/// Whether this process is one rank of a multi-process job: between
/// msrt.communication.init() and release(), or when RANK_ID or a non-zero
/// global_rank names its rank.
bool InDistributedJob();

/// Note [Per-rank places]
/// Every file a rank writes of its own (IR files of save_graphs, the
/// print_file_path file, ModelCheckpoint's and the summary's folders) goes
/// under `<base>/rank_<id>` in a distributed job, MindSpore's layout, so
/// that ranks on one host never write the same file; a single process
/// writes at `base` itself. (Kernel dumps, the graph cache and the recorder
/// use rank_<id> even in a single process, as MindSpore's dump does; the
/// profiler suffixes its file names with the rank.)
std::filesystem::path RankPlace(const std::filesystem::path& base);

}  // namespace msrt::runtime
