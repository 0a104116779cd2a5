// The parameter-server context: set_ps_context / get_ps_context.
//
// One record per key (spec §4). enable_ps=True reads the cluster layout from
// the environment (spec §4.3) and writes it into the other keys; the role of
// this process lives in the hidden `_role` slot. reset_ps_context clears only
// enable_ps and the role: every other record is kept on reset.
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "context/option_spec.h"

namespace msrt::context {
namespace {

constexpr Family kFamily = Family::kParameterServer;
constexpr std::string_view kRoleSlot = "_role";
constexpr int64_t kMaxPort = 65535;
constexpr size_t kMaxPasswordLength = 1024;  // MindSpore's fixed password buffer
constexpr size_t kMaxHostLength = 255;

/// The key's own slot; appliers that write more still write it, and write
/// only it while a snapshot is being loaded.
void WriteOwn(const Value& stored, Transaction& tx, const KeyEnv& env) { tx.Write(env.family, env.key, stored); }

bool PsEnabled(const View& view) {
  Value enabled = view.Get(kFamily, "enable_ps");
  return enabled.is_bool() && enabled.as_bool();
}

/// "MS_WORKER", "MS_PSERVER", "MS_SCHED", or "" for none.
std::string StoredRole(const View& view) {
  Value role = view.Get(kFamily, kRoleSlot);
  return role.is_string() ? role.as_string() : std::string();
}

/// MS_SERVER is the newer name of MS_PSERVER.
std::string NormalizeRole(const std::string& role) { return role == "MS_SERVER" ? "MS_PSERVER" : role; }

/// Servers and schedulers never run on Ascend: retarget them to CPU (spec §5.9).
void RetargetForRole(const std::string& role, Transaction& tx) {
  if (role != "MS_PSERVER" && role != "MS_SCHED") return;
  Value target = tx.Get(Family::kRuntime, "device_target");
  if (target.is_string() && target.as_string() == "Ascend") {
    tx.Write(Family::kRuntime, "device_target", Value("CPU"));
  }
}

// ---------------------------------------------------------------------------
// Parsers.

/// A port: 1..65535 from the user; 0 is also accepted from a snapshot,
/// since enable_ps stores 0 for an unset MS_SCHED_MANAGE_PORT.
Parser ParsePort() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_int()) env.FailType("int", in);
    int64_t lowest = env.loading ? 0 : 1;
    if (in.as_int() < lowest || in.as_int() > kMaxPort) {
      env.FailValue(StrCat("must be in [", lowest, ", ", kMaxPort, "]"), in);
    }
    return in;
  };
}

/// str shorter than MindSpore's password buffer; the message never echoes it.
Parser ParsePassword() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", Value::Object(in.type_name(), "<hidden>"));
    if (in.as_string().size() >= kMaxPasswordLength) {
      env.Fail(ErrorKind::kRuntime, StrCat("the length of the argument '", env.key, "' must be less than ",
                                           kMaxPasswordLength, ", but got ", in.as_string().size(), "."));
    }
    return in;
  };
}

Parser ParseServerMode() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", in);
    if (env.loading && in.as_string().empty()) return in;
    if (in.as_string() != "PARAMETER_SERVER") {
      env.Fail(ErrorKind::kRuntime,
               StrCat("the argument '", env.key, "' only supports 'PARAMETER_SERVER', but got ", in.repr(), "."));
    }
    return in;
  };
}

Parser ParseMsRole() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", in);
    const std::string& role = in.as_string();
    bool valid = role == "MS_WORKER" || role == "MS_SERVER" || role == "MS_PSERVER" || role == "MS_SCHED" ||
                 (env.loading && role == "MS_NOT_PS");
    if (!valid) {
      env.Fail(ErrorKind::kRuntime, StrCat("the argument '", env.key,
                                           "' must be one of ['MS_WORKER', 'MS_SERVER', 'MS_PSERVER', 'MS_SCHED'], "
                                           "but got ",
                                           in.repr(), "."));
    }
    return in;
  };
}

/// "", "MS_WORKER", "MS_PSERVER" or "MS_SCHED" (hidden `_role` slot).
Parser ParseStoredRole() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", in);
    const std::string& role = in.as_string();
    if (!role.empty() && role != "MS_WORKER" && role != "MS_PSERVER" && role != "MS_SCHED") {
      env.FailValue("must be '', 'MS_WORKER', 'MS_PSERVER' or 'MS_SCHED'", in);
    }
    return in;
  };
}

// ---------------------------------------------------------------------------
// Note [PS environment]
// enable_ps=True takes the cluster layout from the environment, as
// MindSpore's PSContext does, but refuses text it cannot read instead of
// letting strtol turn it into 0. An unset or empty MS_ROLE keeps the role
// already set (e.g. by ms_role in the same call); unset counts become 0, an
// unset MS_SCHED_MANAGE_PORT becomes 0 (spec §4.2), and an unset
// MS_SCHED_HOST or MS_SCHED_PORT keeps the stored scheduler address. The
// variables are read in `parse` (so errors surface before anything is
// written) and again in `apply`.

struct PsEnvironment {
  std::string role;  // normalised; "" for none
  int64_t worker_num = 0;
  int64_t server_num = 0;
  std::optional<std::string> scheduler_host;
  std::optional<int64_t> scheduler_port;
  int64_t scheduler_manage_port = 0;
};

/// The variable's text, or nothing when it is unset or empty.
std::optional<std::string> EnvText(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  return std::string(text);
}

/// A whole non-negative decimal number no larger than `max`.
int64_t ParseEnvNumber(const char* name, const std::string& text, int64_t max, const KeyEnv& env) {
  int64_t value = -1;
  const char* begin = text.data();
  const char* end = begin + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  bool ok = ec == std::errc() && ptr == end && value >= 0 && value <= max && text[0] != '-';
  if (!ok) {
    std::string expected = max == INT64_MAX ? std::string("a non-negative integer")
                                            : StrCat("an integer in [0, ", max, "]");
    env.Fail(ErrorKind::kValue,
             StrCat("the environment variable ", name, " must be ", expected, ", but got '", text, "'."));
  }
  return value;
}

PsEnvironment ReadPsEnvironment(const View& view, const KeyEnv& env) {
  PsEnvironment out;
  std::optional<std::string> role = EnvText("MS_ROLE");
  if (!role) {
    out.role = StoredRole(view);
  } else if (*role == "MS_WORKER" || *role == "MS_PSERVER" || *role == "MS_SERVER" || *role == "MS_SCHED") {
    out.role = NormalizeRole(*role);
  } else {
    env.Fail(ErrorKind::kValue, StrCat("the environment variable MS_ROLE must be one of ['MS_WORKER', "
                                       "'MS_PSERVER', 'MS_SERVER', 'MS_SCHED'] (or unset), but got '",
                                       *role, "'."));
  }
  if (auto text = EnvText("MS_WORKER_NUM")) {
    out.worker_num = ParseEnvNumber("MS_WORKER_NUM", *text, INT64_MAX, env);
  }
  if (auto text = EnvText("MS_SERVER_NUM")) {
    out.server_num = ParseEnvNumber("MS_SERVER_NUM", *text, INT64_MAX, env);
  }
  if (auto text = EnvText("MS_SCHED_HOST")) {
    if (text->size() > kMaxHostLength) {
      env.Fail(ErrorKind::kValue, StrCat("the environment variable MS_SCHED_HOST must be at most ", kMaxHostLength,
                                         " characters long, but it has ", text->size(), "."));
    }
    out.scheduler_host = *text;
  }
  if (auto text = EnvText("MS_SCHED_PORT")) {
    out.scheduler_port = ParseEnvNumber("MS_SCHED_PORT", *text, kMaxPort, env);
  }
  if (auto text = EnvText("MS_SCHED_MANAGE_PORT")) {
    out.scheduler_manage_port = ParseEnvNumber("MS_SCHED_MANAGE_PORT", *text, kMaxPort, env);
  }
  return out;
}

Parser ParseEnablePs() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_bool()) env.FailType("bool", in);
    if (!env.loading && in.as_bool()) ReadPsEnvironment(env.view, env);  // validation only
    return in;
  };
}

void ApplyEnablePs(const Value& stored, Transaction& tx, const KeyEnv& env) {
  WriteOwn(stored, tx, env);
  if (env.loading) return;
  if (!stored.as_bool()) {
    tx.Write(kFamily, kRoleSlot, Value(""));
    return;
  }
  PsEnvironment layout = ReadPsEnvironment(tx, env);
  tx.Write(kFamily, "worker_num", Value(layout.worker_num));
  tx.Write(kFamily, "server_num", Value(layout.server_num));
  if (layout.scheduler_host) tx.Write(kFamily, "scheduler_ip", Value(*layout.scheduler_host));
  if (layout.scheduler_port) tx.Write(kFamily, "scheduler_port", Value(*layout.scheduler_port));
  tx.Write(kFamily, "scheduler_manage_port", Value(layout.scheduler_manage_port));
  tx.Write(kFamily, "server_mode", Value("PARAMETER_SERVER"));
  tx.Write(kFamily, kRoleSlot, Value(layout.role));
  RetargetForRole(layout.role, tx);
}

void ApplyMsRole(const Value& stored, Transaction& tx, const KeyEnv& env) {
  WriteOwn(stored, tx, env);
  if (env.loading) return;
  std::string role = NormalizeRole(stored.as_string());
  tx.Write(kFamily, kRoleSlot, Value(role));
  if (PsEnabled(tx)) RetargetForRole(role, tx);
}

/// The role in force: the stored one while PS mode is on, else MS_NOT_PS.
Value ReadMsRole(const View& view, const KeyEnv&) {
  std::string role = StoredRole(view);
  if (!PsEnabled(view) || role.empty()) return Value("MS_NOT_PS");
  return Value(role);
}

}  // namespace

const FamilyTable& ParameterServerTable() {
  static const FamilyTable table{
      .family = kFamily,
      .set_function = "context.set_ps_context",
      .get_function = "context.get_ps_context",
      .options =
          {
              {.name = "enable_ps",
               .type = "bool",
               .default_value = false,
               .parse = ParseEnablePs(),
               .affects_compile = true,
               .in_summary = true,
               .order = 0,  // before the other keys, so values given in the call beat the env
               .apply = ApplyEnablePs,
               .doc = "Turn parameter-server training on. Enabling it reads MS_ROLE, "
                      "MS_WORKER_NUM, MS_SERVER_NUM, MS_SCHED_HOST, MS_SCHED_PORT and "
                      "MS_SCHED_MANAGE_PORT into the keys below."},
              {.name = "_role",
               .type = "str",
               .default_value = "",
               .parse = ParseStoredRole(),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Role of this process (MS_WORKER, MS_PSERVER, MS_SCHED, or \"\" for "
                      "none); cleared by enable_ps=False and by a reset."},
              {.name = "ms_role",
               .type = "str",
               .default_value = "MS_NOT_PS",
               .parse = ParseMsRole(),
               .kept_on_reset = true,
               .order = -1,  // before enable_ps, which keeps it when MS_ROLE is unset
               .apply = ApplyMsRole,
               .read = ReadMsRole,
               .doc = "Role of this process: MS_WORKER, MS_SERVER (same as MS_PSERVER) or "
                      "MS_SCHED. Reads the role in force, MS_NOT_PS while PS mode is off."},
              {.name = "config_file_path",
               .type = "str",
               .default_value = "",
               .parse = ParsePath(),
               .kept_on_reset = true,
               .doc = "Configuration file that servers use to recover after a failure."},
              {.name = "worker_num",
               .type = "int",
               .default_value = 0,
               .parse = ParseIntRange(0, INT64_MAX, /*allow_bool=*/false),
               .kept_on_reset = true,
               .doc = "Number of worker processes; enable_ps=True takes it from MS_WORKER_NUM."},
              {.name = "server_num",
               .type = "int",
               .default_value = 0,
               .parse = ParseIntRange(0, INT64_MAX, /*allow_bool=*/false),
               .kept_on_reset = true,
               .doc = "Number of server processes; enable_ps=True takes it from MS_SERVER_NUM."},
              {.name = "scheduler_ip",
               .type = "str",
               .default_value = "0.0.0.0",
               .parse = ParseString(),
               .kept_on_reset = true,
               .doc = "Address of the scheduler; enable_ps=True takes it from MS_SCHED_HOST."},
              {.name = "scheduler_port",
               .type = "int",
               .default_value = 6667,
               .parse = ParsePort(),
               .kept_on_reset = true,
               .doc = "Port of the scheduler; enable_ps=True takes it from MS_SCHED_PORT."},
              {.name = "scheduler_manage_port",
               .type = "int",
               .default_value = 11202,
               .parse = ParsePort(),
               .kept_on_reset = true,
               .doc = "Port on which the scheduler takes scale-in and scale-out requests; "
                      "enable_ps=True takes it from MS_SCHED_MANAGE_PORT (0 when unset)."},
              {.name = "server_mode",
               .type = "str",
               .default_value = "",
               .parse = ParseServerMode(),
               .kept_on_reset = true,
               .doc = "Kind of server; only PARAMETER_SERVER is supported, and enable_ps=True "
                      "sets it."},
              {.name = "enable_ssl",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .kept_on_reset = true,
               .doc = "Encrypt traffic between parameter-server processes with TLS."},
              {.name = "client_password",
               .type = "str",
               .default_value = "",
               .parse = ParsePassword(),
               .kept_on_reset = true,
               .doc = "Password that unlocks the private key of the client certificate (fewer "
                      "than 1024 characters)."},
              {.name = "server_password",
               .type = "str",
               .default_value = "",
               .parse = ParsePassword(),
               .kept_on_reset = true,
               .doc = "Password that unlocks the private key of the server certificate (fewer "
                      "than 1024 characters)."},
          },
      .unknown_key =
          [](Profile, bool is_set, std::string_view key) {
            return StrCat(is_set ? "Set" : "Get", " PS context keyword ", key, " is not recognized!");
          },
  };
  return table;
}

}  // namespace msrt::context
