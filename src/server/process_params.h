// The parameters that tune the process rather than the data: oom-score-adj and
// oom-score-adj-values (oom_score.h), the forked children's CPU lists (bgsave_cpulist,
// aof_rewrite_cpulist; the threads' own are in common/cpu_affinity.h), socket-mark-id,
// crash-memcheck-enabled (crash.h) and the signals' shutdown flags.
#pragma once

#include <string>

#include "common/status.h"

namespace kv::server {

class Config;

// oom-score-adj-values' canonical text ("0 200 800"), or Redis' error for it.
Result<std::string> CanonicalOomScoreAdjValues(const std::string& values);

// shutdown-on-sigint and shutdown-on-sigterm: what a shutdown by that signal does, as the
// options of SHUTDOWN: save (even without save points), nosave (not even with them), now (no
// wait for lagging replicas), force (an error saving does not keep the server up); "default"
// for none of them.
struct ShutdownFlags {
  bool save = false, nosave = false, now = false, force = false;
};
// The canonical text ("default", or the flags in that order), or Redis' error.
Result<std::string> CanonicalShutdownFlags(const std::string& value);
// The flags of a canonical value.
ShutdownFlags ParseShutdownFlags(const std::string& value);

// Registers the apply callbacks of oom-score-adj and oom-score-adj-values (the score for the
// role the server has now: a replica while replicaof names a primary) and of
// crash-memcheck-enabled.
void WireProcessParams(Config& config);
// The server became a primary or a replica: its score follows. Keyspace lock held.
void ApplyOomScoreForRole(const Config& config);
// In a forked child, first thing: the background child's score, and bgsave_cpulist (a
// snapshot, to disk or to replicas) or aof_rewrite_cpulist (`aof_rewrite`).
void EnterChildProcess(const Config& config, bool aof_rewrite);
// socket-mark-id on a listening TCP socket (accepted connections inherit it); 0 marks nothing.
// Failures (no CAP_NET_ADMIN) are ignored, as in Redis.
void MarkListeningSocket(int fd, const Config& config);

}  // namespace kv::server
