// The JSON file named by the `env_config_path` context key: settings of the
// running-data recorder (RDR) and of memory reuse.
//
//   {"rdr": {"enable": true, "mode": 1, "path": "/abs/dir"},
//    "sys": {"mem_Reuse": true}}
//
// Every section and key is optional; anything else is an error.
#pragma once

#include <string>
#include <string_view>

namespace msrt::context {

/// The validated content of an env_config_path file.
struct EnvConfig {
  bool rdr_enable = false;  // record key runtime data and save it on failure
  int rdr_mode = 1;         // 1: save on failure only; 2: on failure and at normal exit
  std::string rdr_path;     // absolute directory for the recorder's files ("" = default)
  bool mem_reuse = true;    // memory reuse on/off
};

/// Validates `json_text` (the content of `file_for_messages`). Raises
/// msrt::ValueError naming the file, the key, what was expected and what was
/// given. Never crashes on any input bytes.
EnvConfig ParseEnvConfigJson(std::string_view json_text, std::string_view file_for_messages);

/// Reads and validates the file at `path`; a missing, unreadable or invalid
/// file raises msrt::ValueError.
EnvConfig LoadEnvConfigFile(const std::string& path);

}  // namespace msrt::context
