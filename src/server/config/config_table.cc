// Redis 7.0's configuration parameters with their defaults. Those kvstore acts on are wired
// up in server.cc; the rest tune Redis' internal encodings or features kvstore does not have
// and are accepted and reported back unchanged.
#include <algorithm>
#include <climits>

#include "server/config/config.h"

namespace kv::server {
namespace {

ParamSpec B(std::string n, bool def) {
  return {.name = std::move(n), .type = ParamType::kBool, .default_value = def ? "yes" : "no"};
}
ParamSpec I(std::string n, int64_t def, int64_t min, int64_t max) {
  return {.name = std::move(n),
          .type = ParamType::kInt,
          .default_value = std::to_string(def),
          .min = min,
          .max = max};
}
ParamSpec M(std::string n, int64_t def, int64_t min = 0, int64_t max = LLONG_MAX) {
  return {.name = std::move(n),
          .type = ParamType::kMemory,
          .default_value = std::to_string(def),
          .min = min,
          .max = max};
}
ParamSpec S(std::string n, std::string def, bool sensitive = false) {
  return {.name = std::move(n),
          .type = ParamType::kString,
          .default_value = std::move(def),
          .sensitive = sensitive};
}
ParamSpec E(std::string n, std::string def, std::vector<std::string> values) {
  return {.name = std::move(n),
          .type = ParamType::kEnum,
          .default_value = std::move(def),
          .enum_values = std::move(values)};
}
ParamSpec Multi(std::string n, std::string def) {
  return {.name = std::move(n), .type = ParamType::kMultiArg, .default_value = std::move(def)};
}
// Settable only at startup, as in Redis 7.0.
const char* const kImmutable[] = {"aclfile",
                                  "always-show-logo",
                                  "aof_rewrite_cpulist",
                                  "appenddirname",
                                  "appendfilename",
                                  "bgsave_cpulist",
                                  "bio_cpulist",
                                  "cluster-config-file",
                                  "cluster-enabled",
                                  "cluster-port",
                                  "daemonize",
                                  "databases",
                                  "disable-thp",
                                  "enable-debug-command",
                                  "enable-module-command",
                                  "io-threads",
                                  "io-threads-do-reads",
                                  "logfile",
                                  "pidfile",
                                  "rdbchecksum",
                                  "replicaof",
                                  "server_cpulist",
                                  "set-proc-title",
                                  "socket-mark-id",
                                  "supervised",
                                  "syslog-enabled",
                                  "syslog-facility",
                                  "syslog-ident",
                                  "tcp-backlog",
                                  "unixsocket",
                                  "unixsocketperm"};
// Refused by CONFIG SET unless enable-protected-configs allows it.
const char* const kProtected[] = {"dir", "dbfilename", "enable-protected-configs"};

ParamSpec Alias(ParamSpec p, std::string alias) {
  p.alias = std::move(alias);
  return p;
}
ParamSpec Hidden(ParamSpec p) {
  p.hidden = true;
  return p;
}

std::vector<ParamSpec> TableParams();

}  // namespace

std::vector<ParamSpec> DefaultParams() {
  std::vector<ParamSpec> params = TableParams();
  for (ParamSpec& p : params) {
    p.immutable =
        std::find(std::begin(kImmutable), std::end(kImmutable), p.name) != std::end(kImmutable);
    p.protected_config =
        std::find(std::begin(kProtected), std::end(kProtected), p.name) != std::end(kProtected);
    p.refused = RefusedReason(p.name);
    p.inert = InertReason(p.name);
  }
  return params;
}

namespace {
std::vector<ParamSpec> TableParams() {
  const int64_t kMax = LLONG_MAX;
  return {
      // Network and clients.
      Multi("bind", "* -::*"),
      I("port", 6379, 0, 65535),
      I("tcp-backlog", 511, 0, INT_MAX),
      I("timeout", 0, 0, INT_MAX),
      I("tcp-keepalive", 300, 0, INT_MAX),
      B("protected-mode", true),
      I("maxclients", 10000, 1, INT_MAX),
      M("client-query-buffer-limit", 1024LL * 1024 * 1024, 1024 * 1024),
      M("proto-max-bulk-len", 512LL * 1024 * 1024, 1024 * 1024),
      Multi("client-output-buffer-limit",
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
      I("io-threads", 0, 0, 128),  // 0: three per four cores, at least one (Server::Start)
      // kvstore: how long a poll group polls for more requests before it sleeps (EventLoop).
      I("io-busy-poll-us", 50, 0, 10000),
      B("io-threads-do-reads", false),
      S("unixsocket", ""),
      I("unixsocketperm", 0, 0, 0777),  // octal, as in Redis (Config::Canonical)
      I("tls-port", 0, 0, 65535),
      S("bind-source-addr", ""),
      B("set-proc-title", true),
      S("proc-title-template", "{title} {listen-addr} {server-mode}"),
      // General.
      B("daemonize", false),
      S("pidfile", ""),
      E("loglevel", "notice", {"debug", "verbose", "notice", "warning"}),
      S("logfile", ""),
      B("syslog-enabled", false),
      S("syslog-ident", "redis"),
      E("syslog-facility", "local0",
        {"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}),
      I("databases", 16, 1, INT_MAX),
      B("always-show-logo", false),
      I("hz", 10, 0, INT_MAX),
      B("dynamic-hz", true),
      E("supervised", "no", {"upstart", "systemd", "auto", "no"}),
      B("crash-log-enabled", true),
      B("crash-memcheck-enabled", true),
      // A panic exits with status 1 instead of aborting; a testing knob, hidden as in Redis.
      Hidden(B("use-exit-on-panic", false)),
      // The software watchdog's period in ms (0: off; watchdog.h); a testing knob, hidden.
      Hidden(I("watchdog-period", 0, 0, INT_MAX)),
      E("enable-debug-command", "no", {"no", "yes", "local"}),
      E("enable-protected-configs", "no", {"no", "yes", "local"}),
      E("enable-module-command", "no", {"no", "yes", "local"}),
      // Security.
      S("requirepass", "", /*sensitive=*/true),
      S("masterauth", "", /*sensitive=*/true),
      S("masteruser", "", /*sensitive=*/true),
      S("aclfile", ""),
      I("acllog-max-len", 128, 0, kMax),
      E("acl-pubsub-default", "resetchannels", {"allchannels", "resetchannels"}),
      // Snapshotting.
      Multi("save", "3600 1 300 100 60 10000"),
      B("stop-writes-on-bgsave-error", true),
      B("rdbcompression", true),
      B("rdbchecksum", true),
      S("dbfilename", "dump.rdb"),
      S("dir", "./"),
      B("rdb-del-sync-files", false),
      B("rdb-save-incremental-fsync", true),
      // Microseconds to sleep after each key saved (-N: 1 us, one key in N), to make a save
      // slow on purpose; a testing knob, hidden as in Redis.
      Hidden(I("rdb-key-save-delay", 0, INT_MIN, INT_MAX)),
      // The same after each key loaded.
      Hidden(I("key-load-delay", 0, INT_MIN, INT_MAX)),
      // Bytes of a snapshot loaded between a replica's progress events (its keepalives to the
      // primary, its progress log); hidden, as in Redis.
      Hidden(I("loading-process-events-interval-bytes", 2 << 20, 1024, INT_MAX)),
      E("sanitize-dump-payload", "no", {"no", "yes", "clients"}),
      // Replication.
      Alias(Multi("replicaof", ""), "slaveof"),
      Alias(B("replica-serve-stale-data", true), "slave-serve-stale-data"),
      Alias(B("replica-read-only", true), "slave-read-only"),
      B("repl-diskless-sync", true),
      I("repl-diskless-sync-delay", 5, 0, INT_MAX),
      I("repl-diskless-sync-max-replicas", 0, 0, INT_MAX),
      E("repl-diskless-load", "disabled", {"disabled", "on-empty-db", "swapdb"}),
      Alias(I("repl-ping-replica-period", 10, 1, INT_MAX), "repl-ping-slave-period"),
      I("repl-timeout", 60, 1, INT_MAX),
      B("repl-disable-tcp-nodelay", false),
      M("repl-backlog-size", 1024 * 1024, 1),
      I("repl-backlog-ttl", 3600, 0, INT_MAX),
      Alias(I("replica-priority", 100, 0, INT_MAX), "slave-priority"),
      Alias(B("replica-announced", true), "slave-announced"),
      Alias(I("min-replicas-to-write", 0, 0, INT_MAX), "min-slaves-to-write"),
      Alias(I("min-replicas-max-lag", 10, 0, INT_MAX), "min-slaves-max-lag"),
      Alias(S("replica-announce-ip", ""), "slave-announce-ip"),
      Alias(I("replica-announce-port", 0, 0, 65535), "slave-announce-port"),
      Alias(B("replica-ignore-maxmemory", true), "slave-ignore-maxmemory"),
      Alias(B("replica-lazy-flush", false), "slave-lazy-flush"),
      // Memory.
      M("maxmemory", 0),
      E("maxmemory-policy", "noeviction",
        {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
         "allkeys-lfu", "allkeys-random", "noeviction"}),
      I("maxmemory-samples", 5, 1, 64),
      I("maxmemory-eviction-tenacity", 10, 0, 100),
      M("maxmemory-clients", 0),
      I("lfu-log-factor", 10, 0, INT_MAX),
      I("lfu-decay-time", 1, 0, INT_MAX),
      B("lazyfree-lazy-eviction", false),
      B("lazyfree-lazy-expire", false),
      B("lazyfree-lazy-server-del", false),
      B("lazyfree-lazy-user-del", false),
      B("lazyfree-lazy-user-flush", false),
      I("active-expire-effort", 1, 1, 10),
      // Append only file (accepted; kvstore persists by RDB snapshots).
      B("appendonly", false),
      S("appendfilename", "appendonly.aof"),
      S("appenddirname", "appendonlydir"),
      E("appendfsync", "everysec", {"always", "everysec", "no"}),
      B("no-appendfsync-on-rewrite", false),
      I("auto-aof-rewrite-percentage", 100, 0, INT_MAX),
      M("auto-aof-rewrite-min-size", 64 * 1024 * 1024),
      B("aof-load-truncated", true),
      B("aof-use-rdb-preamble", true),
      B("aof-rewrite-incremental-fsync", true),
      B("aof-timestamp-enabled", false),
      // Scripting, cluster (accepted).
      Alias(I("busy-reply-threshold", 5000, 0, kMax), "lua-time-limit"),
      B("cluster-enabled", false),
      S("cluster-config-file", "nodes.conf"),
      I("cluster-node-timeout", 15000, 0, kMax),
      // Logs and monitoring.
      I("slowlog-log-slower-than", 10000, -1, kMax),
      I("slowlog-max-len", 128, 0, kMax),
      I("latency-monitor-threshold", 0, 0, kMax),
      B("latency-tracking", true),
      Multi("latency-tracking-info-percentiles", "50 99 99.9"),
      S("notify-keyspace-events", ""),
      // Encodings of small collections (tuned by clients; kvstore picks its own).
      Alias(M("hash-max-listpack-entries", 512), "hash-max-ziplist-entries"),
      Alias(M("hash-max-listpack-value", 64), "hash-max-ziplist-value"),
      Alias(I("list-max-listpack-size", -2, INT_MIN, INT_MAX), "list-max-ziplist-size"),
      I("list-compress-depth", 0, 0, INT_MAX),
      M("set-max-intset-entries", 512),
      Alias(M("zset-max-listpack-entries", 128), "zset-max-ziplist-entries"),
      Alias(M("zset-max-listpack-value", 64), "zset-max-ziplist-value"),
      M("hll-sparse-max-bytes", 3000),
      M("stream-node-max-bytes", 4096),
      I("stream-node-max-entries", 100, 0, kMax),
      B("activerehashing", true),
      B("activedefrag", false),
      M("active-defrag-ignore-bytes", 100 * 1024 * 1024),
      I("active-defrag-threshold-lower", 10, 0, 1000),
      I("active-defrag-threshold-upper", 100, 0, 1000),
      I("active-defrag-cycle-min", 1, 1, 99),
      I("active-defrag-cycle-max", 25, 1, 99),
      I("active-defrag-max-scan-fields", 1000, 1, kMax),
      B("jemalloc-bg-thread", true),
      Multi("oom-score-adj-values", "0 200 800"),
      E("oom-score-adj", "no", {"no", "yes", "relative", "absolute"}),
      B("disable-thp", true),
      I("tracking-table-max-keys", 1000000, 0, kMax),
      // Accepted for compatibility: cluster, TLS, CPU pinning and shutdown tuning.
      B("aof-disable-auto-gc", false),
      S("aof_rewrite_cpulist", ""),
      S("bgsave_cpulist", ""),
      S("bio_cpulist", ""),
      S("server_cpulist", ""),
      B("cluster-allow-pubsubshard-when-down", true),
      B("cluster-allow-reads-when-down", false),
      B("cluster-allow-replica-migration", true),
      I("cluster-announce-bus-port", 0, 0, 65535),
      S("cluster-announce-hostname", ""),
      S("cluster-announce-ip", ""),
      I("cluster-announce-port", 0, 0, 65535),
      I("cluster-announce-tls-port", 0, 0, 65535),
      M("cluster-link-sendbuf-limit", 0),
      I("cluster-migration-barrier", 1, 0, INT_MAX),
      I("cluster-port", 0, 0, 65535),
      E("cluster-preferred-endpoint-type", "ip", {"ip", "hostname", "unknown-endpoint"}),
      Alias(B("cluster-replica-no-failover", false), "cluster-slave-no-failover"),
      Alias(I("cluster-replica-validity-factor", 10, 0, INT_MAX), "cluster-slave-validity-factor"),
      B("cluster-require-full-coverage", true),
      S("ignore-warnings", ""),
      E("propagation-error-behavior", "ignore", {"ignore", "panic", "panic-on-replicas"}),
      B("replica-ignore-disk-write-errors", false),
      Multi("shutdown-on-sigint", "default"),  // flags: process_params.h
      Multi("shutdown-on-sigterm", "default"),
      I("shutdown-timeout", 10, 0, INT_MAX),
      I("socket-mark-id", 0, 0, UINT_MAX),
      E("tls-auth-clients", "yes", {"no", "yes", "optional"}),
      S("tls-ca-cert-dir", ""),
      S("tls-ca-cert-file", ""),
      S("tls-cert-file", ""),
      S("tls-ciphers", ""),
      S("tls-ciphersuites", ""),
      S("tls-client-cert-file", ""),
      S("tls-client-key-file", ""),
      S("tls-client-key-file-pass", "", /*sensitive=*/true),
      B("tls-cluster", false),
      S("tls-dh-params-file", ""),
      S("tls-key-file", ""),
      S("tls-key-file-pass", "", /*sensitive=*/true),
      B("tls-prefer-server-ciphers", false),
      S("tls-protocols", ""),
      B("tls-replication", false),
      I("tls-session-cache-size", 20480, 0, INT_MAX),
      I("tls-session-cache-timeout", 300, 0, INT_MAX),
      B("tls-session-caching", true),
      // kvstore's own.
      E("repl-transport", "auto", {"auto", "tcp", "rdma"}),
      // The data plane's libfabric provider ("sockets": the same channel over plain TCP).
      S("repl-rdma-provider", "auto"),
      // How the data link's threads wait for completions (transport/poll_mode.h).
      E("repl-rdma-poll-mode", "auto", {"auto", "performance", "economy"}),
      // shm links: the replica sleeps on a doorbell the primary rings
      // (transport/fabric/doorbell.h); no: the primary rings none and the replica polls.
      B("repl-rdma-doorbell", true),
  };
}

}  // namespace

}  // namespace kv::server
