// oom-score-adj and oom-score-adj-values: the process' /proc/self/oom_score_adj by its role, as
// Redis' setOOMScoreAdj sets it. The values are for a primary, a replica and a background child
// (BGSAVE, a replication snapshot, an AOF rewrite); "relative" (and "yes") adds them to the
// score the process had before kvstore first changed it, "absolute" writes them as they are,
// clamped to -1000..1000; "no" puts back that first score if kvstore had changed it.
#pragma once

#include <string>

#include "common/status.h"

namespace kv::server {

enum class OomClass { kPrimary = 0, kReplica = 1, kBackgroundChild = 2 };

// The three values of oom-score-adj-values, each -2000..2000, or Redis' error for them.
Status ValidateOomScoreAdjValues(const std::string& values);

// Applies `mode` (oom-score-adj) and `values` for `cls`. Logs and fails when
// /proc/self/oom_score_adj cannot be read or written. Keyspace lock held (or in a child).
Status SetOomScoreAdj(const std::string& mode, const std::string& values, OomClass cls);

}  // namespace kv::server
