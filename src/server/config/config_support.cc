// Which of Redis 7.0's parameters kvstore does not act on, and what it does with them. No
// setting is silent: a parameter is either read by the code (most of the table), refused when
// set to anything but its default (the feature is missing, and accepting it would promise what
// is not there), or inert, with the reason any value of it already holds for kvstore.
// config_support_test.cc checks that every parameter of the table is one of the three.
#include <map>
#include <string>

#include "server/config/config.h"

namespace kv::server {
namespace {

constexpr const char* kNoClientEviction =
    "client eviction (maxmemory-clients) is not implemented yet: only keys are evicted";
constexpr const char* kNoTls = "kvstore has no TLS support yet";
constexpr const char* kNoCluster = "kvstore has no cluster mode";
constexpr const char* kNoLazyFree =
    "kvstore frees expired keys, overwritten values and a replica's old dataset synchronously; "
    "background freeing covers UNLINK, FLUSHALL/FLUSHDB ASYNC and lazyfree-lazy-user-del, "
    "-user-flush and -eviction";
constexpr const char* kNoDefrag =
    "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
    "modified Jemalloc like the one shipped by default with the Redis source distribution";

const std::map<std::string, std::string>& Refused() {
  static const std::map<std::string, std::string> m = {
      {"maxmemory-clients", kNoClientEviction},
      {"lazyfree-lazy-expire", kNoLazyFree},
      {"lazyfree-lazy-server-del", kNoLazyFree},
      {"replica-lazy-flush", kNoLazyFree},
      {"tls-port", kNoTls},
      {"tls-auth-clients", kNoTls},
      {"tls-ca-cert-dir", kNoTls},
      {"tls-ca-cert-file", kNoTls},
      {"tls-cert-file", kNoTls},
      {"tls-ciphers", kNoTls},
      {"tls-ciphersuites", kNoTls},
      {"tls-client-cert-file", kNoTls},
      {"tls-client-key-file", kNoTls},
      {"tls-client-key-file-pass", kNoTls},
      {"tls-cluster", kNoTls},
      {"tls-dh-params-file", kNoTls},
      {"tls-key-file", kNoTls},
      {"tls-key-file-pass", kNoTls},
      {"tls-prefer-server-ciphers", kNoTls},
      {"tls-protocols", kNoTls},
      {"tls-replication", kNoTls},
      {"tls-session-cache-size", kNoTls},
      {"tls-session-cache-timeout", kNoTls},
      {"tls-session-caching", kNoTls},
      {"cluster-enabled", kNoCluster},
      {"cluster-config-file", kNoCluster},
      {"cluster-node-timeout", kNoCluster},
      {"cluster-allow-pubsubshard-when-down", kNoCluster},
      {"cluster-allow-reads-when-down", kNoCluster},
      {"cluster-allow-replica-migration", kNoCluster},
      {"cluster-announce-bus-port", kNoCluster},
      {"cluster-announce-hostname", kNoCluster},
      {"cluster-announce-ip", kNoCluster},
      {"cluster-announce-port", kNoCluster},
      {"cluster-announce-tls-port", kNoCluster},
      {"cluster-link-sendbuf-limit", kNoCluster},
      {"cluster-migration-barrier", kNoCluster},
      {"cluster-port", kNoCluster},
      {"cluster-preferred-endpoint-type", kNoCluster},
      {"cluster-replica-no-failover", kNoCluster},
      {"cluster-replica-validity-factor", kNoCluster},
      {"cluster-require-full-coverage", kNoCluster},
      {"activedefrag", kNoDefrag},
      {"active-defrag-ignore-bytes", kNoDefrag},
      {"active-defrag-threshold-lower", kNoDefrag},
      {"active-defrag-threshold-upper", kNoDefrag},
      {"active-defrag-cycle-min", kNoDefrag},
      {"active-defrag-cycle-max", kNoDefrag},
      {"active-defrag-max-scan-fields", kNoDefrag},
      {"syslog-enabled", "kvstore logs to its logfile or standard output, not to syslog"},
      {"syslog-ident", "kvstore logs to its logfile or standard output, not to syslog"},
      {"syslog-facility", "kvstore logs to its logfile or standard output, not to syslog"},
      {"crash-memcheck-enabled", "kvstore has no memory check after a crash"},
      {"aclfile", "ACLs are not implemented yet (requirepass is)"},
      {"acllog-max-len", "ACLs are not implemented yet (requirepass is)"},
      {"acl-pubsub-default", "ACLs are not implemented yet (requirepass is)"},
      {"rdb-del-sync-files", "kvstore keeps the RDB files a replication sync wrote"},
      {"rdb-save-incremental-fsync", "kvstore fsyncs a snapshot once, when it is complete"},
      {"aof-rewrite-incremental-fsync",
       "kvstore fsyncs a rewritten AOF base once, when it is complete"},
      {"sanitize-dump-payload", "kvstore validates every payload it loads the same way"},
      {"repl-disable-tcp-nodelay", "kvstore's replication sockets always use TCP_NODELAY"},
      {"replica-announced", "every replica is announced"},
      {"active-expire-effort", "kvstore's active expiry runs at one fixed effort"},
      {"latency-tracking", "per-command latency percentiles are not tracked yet"},
      {"latency-tracking-info-percentiles", "per-command latency percentiles are not tracked yet"},
      {"list-compress-depth", "kvstore does not compress list nodes"},
      {"oom-score-adj", "kvstore does not adjust its OOM score"},
      {"oom-score-adj-values", "kvstore does not adjust its OOM score"},
      {"tracking-table-max-keys", "client-side caching (CLIENT TRACKING) is not implemented"},
      {"bgsave_cpulist", "kvstore does not pin its threads to CPUs"},
      {"aof_rewrite_cpulist", "kvstore does not pin its threads to CPUs"},
      {"bio_cpulist", "kvstore does not pin its threads to CPUs"},
      {"server_cpulist", "kvstore does not pin its threads to CPUs"},
      {"replica-ignore-disk-write-errors", "a replica's save errors are handled as a primary's"},
      {"shutdown-on-sigint", "SIGINT shuts down as SHUTDOWN does, saving if save points are set"},
      {"shutdown-on-sigterm", "SIGTERM shuts down as SHUTDOWN does, saving if save points are set"},
      {"shutdown-timeout", "a shutdown does not wait for replicas to catch up yet"},
      {"socket-mark-id", "kvstore does not mark its sockets"},
  };
  return m;
}

// Accepted with any value: what each says already holds, or concerns what kvstore does not have
// in a way no client can tell apart.
const std::map<std::string, std::string>& Inert() {
  static const std::map<std::string, std::string> m = {
      {"io-threads-do-reads", "kvstore's IO threads always read and parse their requests"},
      {"dynamic-hz", "kvstore's cron runs at hz whatever the number of clients"},
      {"jemalloc-bg-thread", "kvstore uses glibc's allocator, which has no background thread"},
      {"ignore-warnings", "kvstore has no startup warnings to silence"},
  };
  return m;
}

}  // namespace

const std::string* RefusedReason(const std::string& name) {
  auto it = Refused().find(name);
  return it == Refused().end() ? nullptr : &it->second;
}

const std::string* InertReason(const std::string& name) {
  auto it = Inert().find(name);
  return it == Inert().end() ? nullptr : &it->second;
}

}  // namespace kv::server
