#include "server/oom_score.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/logging.h"
#include "common/strutil.h"

namespace kv::server {
namespace {

constexpr const char* kPath = "/proc/self/oom_score_adj";

// Whether kvstore has changed the score, and the score from before (what "relative" adds to,
// and what "no" restores). Process-wide, as the score is.
bool g_adjusted = false;
int g_base = 0;

bool ParseValues(const std::string& values, int out[3]) {
  auto words = SplitArgs(values);
  if (!words || words->size() != 3) return false;
  for (int i = 0; i < 3; i++) {
    auto v = ParseInt64((*words)[i]);
    if (!v || *v < -2000 || *v > 2000) return false;
    out[i] = static_cast<int>(*v);
  }
  return true;
}

}  // namespace

Status ValidateOomScoreAdjValues(const std::string& values) {
  auto words = SplitArgs(values);
  if (!words || words->size() != 3) return Status::Invalid("wrong number of arguments");
  int v[3];
  if (!ParseValues(values, v)) {
    return Status::Invalid(
        "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
  }
  return Status::Ok();
}

Status SetOomScoreAdj(const std::string& mode, const std::string& values, OomClass cls) {
  int val;
  if (mode != "no") {
    int v[3];
    if (!ParseValues(values, v)) return Status::Invalid("invalid oom-score-adj-values");
    if (!g_adjusted) {
      char buf[64] = {};
      int fd = open(kPath, O_RDONLY);
      if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0) {
        LOG_WARNING("Unable to read oom_score_adj: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return Status::IoError("Unable to read oom_score_adj");
      }
      close(fd);
      g_adjusted = true;
      g_base = atoi(buf);
    }
    val = v[static_cast<int>(cls)];
    if (mode != "absolute") val += g_base;  // "yes" is "relative"
    val = std::clamp(val, -1000, 1000);
  } else if (g_adjusted) {
    g_adjusted = false;
    val = g_base;
  } else {
    return Status::Ok();
  }
  std::string text = std::to_string(val) + "\n";
  int fd = open(kPath, O_WRONLY);
  if (fd < 0 || write(fd, text.data(), text.size()) < 0) {
    LOG_WARNING("Unable to write oom_score_adj: %s", strerror(errno));
    if (fd >= 0) close(fd);
    return Status::IoError("Unable to write oom_score_adj");
  }
  close(fd);
  return Status::Ok();
}

}  // namespace kv::server
