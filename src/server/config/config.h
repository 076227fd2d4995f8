// The server's configuration parameters: Redis 7.0's names, types, defaults and CONFIG GET/SET
// behaviour. Every parameter is kept as its canonical text; typed getters parse it. Parameters
// that only tune Redis' internal encodings are accepted and reported back unchanged, so tools
// that set them keep working. Parameters that kvstore acts on register an apply callback.
//
// Threading: the server reads and writes the config under its keyspace lock; values the IO
// threads need without the lock are mirrored into atomics by apply callbacks (see Server).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/config_parser.h"
#include "common/status.h"

namespace kv::server {

enum class ParamType { kBool, kInt, kMemory, kString, kEnum, kMultiArg };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kString;
  std::string default_value;
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  std::vector<std::string> enum_values;  // kEnum
  bool immutable = false;                // only settable at startup
  bool sensitive = false;                // a credential: CONFIG SET's value is redacted
  bool protected_config = false;         // CONFIG SET only when enable-protected-configs allows
  std::string alias;                     // e.g. "slaveof" for "replicaof"
  bool hidden = false;                   // CONFIG GET shows it by exact name only (a test knob)
  // Not acted on (config_support.cc): a value other than the default is refused with
  // `*refused`; or any value is accepted because of `*inert`. Null for what the code reads.
  const std::string* refused = nullptr;
  const std::string* inert = nullptr;
};

// config_support.cc: why kvstore refuses a parameter's non-default values, or accepts any.
const std::string* RefusedReason(const std::string& name);
const std::string* InertReason(const std::string& name);

class Config {
 public:
  using ApplyFn = std::function<Status(const std::string& value)>;

  Config();

  // Loads directives from a config file and command line (startup): immutable params allowed.
  Status Load(const std::vector<ConfigDirective>& directives);
  // CONFIG SET of several name/value pairs, atomically: all or none are applied. `local`: the
  // client is on a local connection (enable-protected-configs local allows it protected ones).
  Status SetMany(const std::vector<std::pair<std::string, std::string>>& pairs, bool local = true);
  // Whether a yes|no|local parameter (enable-debug-command, enable-protected-configs,
  // enable-module-command) allows a client on a local connection (`local`) or not.
  bool Allows(const std::string& name, bool local) const {
    const std::string& v = GetString(name);
    return v == "yes" || (v == "local" && local);
  }
  // CONFIG GET with glob patterns; returns (name, value) pairs, each parameter once.
  std::vector<std::pair<std::string, std::string>> Get(
      const std::vector<std::string>& patterns) const;

  // True for a parameter whose value must not be shown (passwords): CONFIG SET's value is
  // redacted in MONITOR and SLOWLOG, as Redis does. Unknown names are not sensitive.
  bool IsSensitive(const std::string& name) const {
    const Param* p = Find(name);
    return p && p->spec.sensitive;
  }
  // Sets a parameter's value from the server's own state, as Redis' CONFIG GET reflects it (the
  // primary REPLICAOF names is `replicaof`): no immutability check, no apply callback. `value`
  // must be canonical.
  void SetInternal(const std::string& name, std::string value) {
    Find(name)->value = std::move(value);
  }
  // Typed access to current values (name must exist).
  std::string GetString(const std::string& name) const;
  int64_t GetInt(const std::string& name) const;
  bool GetBool(const std::string& name) const;

  // Registers what to do when `name` changes (also run once by ApplyAll at startup).
  void OnApply(const std::string& name, ApplyFn fn);
  // Registers `fn` for parameters that take effect together (TLS: a certificate and its key):
  // a CONFIG SET of several of them runs it once, after all their values are in place, and
  // undoes them all if it fails; ApplyAll runs it once, after the single parameters.
  void OnApplyGroup(const std::vector<std::string>& names, std::function<Status()> fn);
  Status ApplyAll();

  // CONFIG REWRITE: rewrites `path` keeping its comments and unknown lines, updating or
  // appending every parameter whose value differs from its default (every parameter with
  // `force_all`, DEBUG CONFIG-REWRITE-FORCE-ALL).
  Status Rewrite(const std::string& path, bool force_all = false) const;

  // rename-command directives collected at startup: (from, to).
  const std::vector<std::pair<std::string, std::string>>& renames() const { return renames_; }
  // `user` directives collected at startup, for the ACL users to load (acl_users.h).
  const std::vector<ConfigDirective>& users() const { return users_; }
  // What CONFIG REWRITE writes for `user`: a line each ("user <name> <rules>"), replacing the
  // file's `user` lines; none removes them.
  void OnRewriteUsers(std::function<std::vector<std::string>()> fn) { user_lines_ = std::move(fn); }
  // A startup error about directive `d`, in Redis' "*** FATAL CONFIG FILE ERROR ***" form.
  static Status DirectiveError(const ConfigDirective& d, const std::string& why);
  const std::string& config_file() const { return config_file_; }
  void set_config_file(std::string p) { config_file_ = std::move(p); }

 private:
  struct Param {
    ParamSpec spec;
    std::string value;
    ApplyFn apply;
    int group = -1;  // index in groups_ (OnApplyGroup)
  };
  Param* Find(const std::string& name);
  const Param* Find(const std::string& name) const;
  // Validates and canonicalises a value; returns the canonical text or an error message.
  Result<std::string> Canonical(const Param& p, const std::vector<std::string>& args) const;
  Status SetOne(Param& p, const std::vector<std::string>& args, bool startup);

  std::map<std::string, Param> params_;
  std::map<std::string, std::string> aliases_;  // alias -> name
  std::vector<std::pair<std::string, std::string>> renames_;
  std::vector<ConfigDirective> users_;
  std::function<std::vector<std::string>()> user_lines_;
  std::vector<std::function<Status()>> groups_;
  std::string config_file_;
};

// The parameter table (config_table.cc).
std::vector<ParamSpec> DefaultParams();

}  // namespace kv::server
