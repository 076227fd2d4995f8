#include "server/process_params.h"

#include <sys/socket.h>

#include <cstdint>

#include "common/cpu_affinity.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "server/config/config.h"
#include "server/crash.h"
#include "server/oom_score.h"

namespace kv::server {

Result<std::string> CanonicalOomScoreAdjValues(const std::string& values) {
  if (Status s = ValidateOomScoreAdjValues(values); !s.ok()) return s;
  auto words = SplitArgs(values).value_or(std::vector<std::string>{});
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += std::to_string(ParseInt64(w).value_or(0));
  }
  return out;
}

namespace {
constexpr const char* kShutdownFlagNames[] = {"save", "nosave", "now", "force"};
}  // namespace

Result<std::string> CanonicalShutdownFlags(const std::string& value) {
  auto words = SplitArgs(value).value_or(std::vector<std::string>{});
  bool set[4] = {};
  if (words.empty()) {
    return Status::Invalid(
        "argument(s) must be one of the following: default, save, nosave, now, force");
  }
  for (const std::string& w : words) {
    std::string l = ToLower(w);
    if (l == "default") continue;
    size_t i = 0;
    while (i < 4 && l != kShutdownFlagNames[i]) i++;
    if (i == 4) {
      return Status::Invalid(
          "argument(s) must be one of the following: default, save, nosave, now, force");
    }
    set[i] = true;
  }
  if (set[0] && set[1]) {
    return Status::Invalid("shutdown options SAVE and NOSAVE can't be used simultaneously");
  }
  std::string out;
  for (size_t i = 0; i < 4; i++) {
    if (set[i]) out += (out.empty() ? "" : " ") + std::string(kShutdownFlagNames[i]);
  }
  return out.empty() ? std::string("default") : out;
}

ShutdownFlags ParseShutdownFlags(const std::string& value) {
  ShutdownFlags f;
  for (const std::string& w : SplitArgs(value).value_or(std::vector<std::string>{})) {
    if (w == "save") f.save = true;
    if (w == "nosave") f.nosave = true;
    if (w == "now") f.now = true;
    if (w == "force") f.force = true;
  }
  return f;
}

namespace {
OomClass RoleClass(const Config& config) {
  return config.GetString("replicaof").empty() ? OomClass::kPrimary : OomClass::kReplica;
}
}  // namespace

void WireProcessParams(Config& config) {
  Config* c = &config;
  c->OnApply("crash-memcheck-enabled", [](const std::string& v) {
    SetCrashMemcheckEnabled(v == "yes");
    return Status::Ok();
  });
  c->OnApply("oom-score-adj", [c](const std::string& mode) {
    if (!SetOomScoreAdj(mode, c->GetString("oom-score-adj-values"), RoleClass(*c)).ok()) {
      return Status::Invalid("Failed to set current oom_score_adj. Check server logs.");
    }
    return Status::Ok();
  });
  c->OnApply("oom-score-adj-values", [c](const std::string& values) {
    auto v = SplitArgs(values).value_or(std::vector<std::string>{});
    if (v.size() == 3) {
      int64_t primary = ParseInt64(v[0]).value_or(0), replica = ParseInt64(v[1]).value_or(0),
              child = ParseInt64(v[2]).value_or(0);
      if (replica < primary || child < replica) {
        LOG_WARNING(
            "The oom-score-adj-values configuration may not work for non-privileged processes! "
            "Please consult the documentation.");
      }
    }
    if (!SetOomScoreAdj(c->GetString("oom-score-adj"), values, RoleClass(*c)).ok()) {
      return Status::Invalid(
          "Failed to apply oom-score-adj-values configuration, check server logs.");
    }
    return Status::Ok();
  });
}

void ApplyOomScoreForRole(const Config& config) {
  (void)SetOomScoreAdj(config.GetString("oom-score-adj"), config.GetString("oom-score-adj-values"),
                       RoleClass(config));
}

void EnterChildProcess(const Config& config, bool aof_rewrite) {
  (void)SetOomScoreAdj(config.GetString("oom-score-adj"), config.GetString("oom-score-adj-values"),
                       OomClass::kBackgroundChild);
  PinThisThread(config.GetString(aof_rewrite ? "aof_rewrite_cpulist" : "bgsave_cpulist"));
}

void MarkListeningSocket(int fd, const Config& config) {
  auto mark = static_cast<uint32_t>(config.GetInt("socket-mark-id"));
  if (mark == 0) return;
  (void)setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
}

}  // namespace kv::server
