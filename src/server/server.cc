#include "server/server.h"

#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "cmd/registry.h"
#include "common/alloc_count.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "script/function_libraries.h"
#include "script/lua_engine.h"
#include "server/acl_users.h"
#include "server/client.h"
#include "server/client_eviction.h"
#include "server/cluster_host.h"
#include "server/cmds/migrate_sockets.h"
#include "server/crash.h"
#include "server/evict.h"
#include "server/failover.h"
#include "server/listener.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/process_params.h"
#include "server/repl_host.h"
#include "server/shutdown.h"
#include "server/slot_migration.h"
#include "server/tracking.h"
#include "server/watchdog.h"
#include "transport/channel.h"

namespace kv::server {

int DefaultPollGroups(unsigned cores) { return std::max(1, static_cast<int>(cores * 3 / 4)); }

// A snapshot child's pidfd on the cron's loop: readable once the child has exited.
class Server::ChildWatch : public net::FdHandler {
 public:
  ChildWatch(Server& s, net::Fd fd) : server_(s), fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }
  bool done() const { return done_; }
  void OnEvents(uint32_t) override {
    net::EventLoop& loop = server_.groups_[0]->loop();
    loop.RemoveFd(fd_.get(), this);
    // A busy script holds the lock: the child is reaped once the script is over.
    server_.WhenLocked(loop, [this, &loop] {
      done_ = true;
      server_.aof_->ReapChild();
      server_.primary_->OnChildExit(WallMs());  // a sync that waited for the child starts
      server_.EndReplicationUnit();
      // Freed after this event, with any other watch that has fired.
      loop.Post([s = &server_] {
        std::erase_if(s->child_watches_, [](const auto& w) { return w->done(); });
      });
    });
  }

 private:
  Server& server_;
  net::Fd fd_;
  bool done_ = false;
};

void Server::WatchSnapshotChild(pid_t pid) {
  int raw = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (raw < 0) return;
  groups_[0]->loop().Post([this, fd = std::make_shared<net::Fd>(raw)]() mutable {
    auto w = std::make_unique<ChildWatch>(*this, std::move(*fd));
    if (groups_[0]->loop().AddFd(w->fd(), net::EventLoop::kReadable, w.get()).ok()) {
      child_watches_.push_back(std::move(w));
    }
  });
}

Server::Server(std::unique_ptr<Config> config)
    : config_(std::move(config)), start_time_ms_(WallMs()) {
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 40; i++) run_id_ += kHex[RandomBelow(16)];
  keyspace_ = std::make_unique<store::Keyspace>(static_cast<int>(config_->GetInt("databases")));
  keyspace_->set_observer(this);
  persistence_ = std::make_unique<Persistence>(*this);
  aof_ = std::make_unique<Aof>(*this);
  repl_host_ = std::make_unique<ServerReplHost>(*this);
  primary_ = std::make_unique<repl::Primary>(*repl_host_);
  replica_ = std::make_unique<repl::Replica>(*repl_host_, *primary_);
  evictor_ = std::make_unique<Evictor>(*this);
  client_eviction_ = std::make_unique<ClientEviction>(*this);
  migrate_sockets_ = std::make_unique<MigrateSockets>();
  tracking_ = std::make_unique<Tracking>(*this);
  failover_ = std::make_unique<Failover>(*this);
  shutdown_wait_ = std::make_unique<ShutdownWait>(*this);
  cmd::RegisterDataCommands(commands_);
  RegisterServerCommands(commands_);
  acl_ = std::make_unique<AclUsers>(*this, commands_);
}

Server::~Server() { Stop(); }

void Server::WireConfig() {
  Config& c = *config_;
  WireProcessParams(c);
  auto int_atomic = [&](const char* name, std::atomic<int64_t>* target) {
    c.OnApply(name, [target](const std::string& v) {
      *target = ParseInt64(v).value_or(0);
      return Status::Ok();
    });
  };
  // The longest bulk a client may send is also the largest single allocation a script may make.
  c.OnApply("proto-max-bulk-len", [this](const std::string& v) {
    max_bulk_len_ = ParseInt64(v).value_or(0);
    script::SetMaxAllocation(static_cast<size_t>(max_bulk_len_.load()));
    return Status::Ok();
  });
  // CONFIG SET port and bind listen anew at once, as Redis 7.0 does (startup binds later).
  c.OnApply("port", [this](const std::string& v) {
    if (!listening_) return Status::Ok();
    return Rebind(static_cast<int>(ParseInt64(v).value_or(0)), config_->GetString("bind"));
  });
  c.OnApply("bind", [this](const std::string& v) {
    if (!listening_) return Status::Ok();
    return Rebind(port_, v);
  });
  int_atomic("hll-sparse-max-bytes", &hll_sparse_max_bytes_);
  int_atomic("client-query-buffer-limit", &query_buf_limit_);
  int_atomic("maxclients", &maxclients_);
  int_atomic("tcp-keepalive", &tcp_keepalive_s_);
  auto int_field = [&](const char* name, int64_t* target) {
    c.OnApply(name, [target](const std::string& v) {
      *target = ParseInt64(v).value_or(0);
      return Status::Ok();
    });
  };
  int_field("slowlog-log-slower-than", &slowlog_slower_than_us_);
  int_field("slowlog-max-len", &slowlog_max_len_);
  int_field("latency-monitor-threshold", &latency_threshold_ms_);
  c.OnApply("latency-tracking", [this](const std::string& v) {
    latency_tracking_ = v == "yes";
    return Status::Ok();
  });
  // The value is canonical (Config checked every percentile), so each word parses.
  c.OnApply("latency-tracking-info-percentiles", [this](const std::string& v) {
    latency_percentiles_.clear();
    for (const std::string& w : SplitArgs(v).value_or(std::vector<std::string>{})) {
      latency_percentiles_.push_back(ParseDouble(w).value_or(0));
    }
    return Status::Ok();
  });
  int_field("min-replicas-to-write", &min_replicas_to_write_);
  int_field("busy-reply-threshold", &busy_reply_threshold_ms_);
  c.OnApply("crash-log-enabled", [](const std::string& v) {
    SetCrashLogEnabled(v == "yes");
    return Status::Ok();
  });
  c.OnApply("use-exit-on-panic", [](const std::string& v) {
    SetUseExitOnPanic(v == "yes");
    return Status::Ok();
  });
  c.OnApply("watchdog-period", [](const std::string& v) {
    ApplyWatchdogPeriod(static_cast<int>(ParseInt64(v).value_or(0)));
    return Status::Ok();
  });
  WireTlsConfig(c);  // tls_setup.cc
  WireAclConfig(c);  // acl_users.cc
  c.OnApply("requirepass", [this](const std::string& v) {
    acl_->SetDefaultPassword(v);  // sets auth_required_
    return Status::Ok();
  });
  auto limit = [&](const char* name, auto* field) {
    c.OnApply(name, [field](const std::string& v) {
      *field = static_cast<std::remove_reference_t<decltype(*field)>>(ParseInt64(v).value_or(0));
      return Status::Ok();
    });
  };
  store::EncodingLimits& lim = keyspace_->limits();
  limit("hash-max-listpack-entries", &lim.hash_max_listpack_entries);
  limit("hash-max-listpack-value", &lim.hash_max_listpack_value);
  limit("set-max-intset-entries", &lim.set_max_intset_entries);
  limit("zset-max-listpack-entries", &lim.zset_max_listpack_entries);
  limit("zset-max-listpack-value", &lim.zset_max_listpack_value);
  limit("list-max-listpack-size", &lim.list_max_listpack_size);
  limit("list-compress-depth", &lim.list_compress_depth);
  limit("stream-node-max-entries", &lim.stream_node_max_entries);
  c.OnApply("stream-node-max-bytes", [&lim](const std::string& v) {
    lim.stream_node_max_bytes = static_cast<size_t>(ParseMemory(v).value_or(0));
    return Status::Ok();
  });
  c.OnApply("client-output-buffer-limit", [this](const std::string& v) {
    auto words = SplitArgs(v).value_or(std::vector<std::string>{});
    for (size_t i = 0; i + 3 < words.size(); i += 4) {
      net::OutputLimit l{static_cast<size_t>(ParseMemory(words[i + 1]).value_or(0)),
                         static_cast<size_t>(ParseMemory(words[i + 2]).value_or(0)),
                         ParseInt64(words[i + 3]).value_or(0)};
      if (words[i] == "normal") {
        normal_limits_.Store(l);
      } else if (words[i] == "pubsub") {
        pubsub_limits_.Store(l);
      } else if (words[i] == "slave" || words[i] == "replica") {
        replica_limits_ = l;
      }
    }
    return Status::Ok();
  });
  c.OnApply("repl-backlog-size", [this](const std::string& v) {
    // As Redis: a backlog is never under 16 KB, and CONFIG GET says what it is.
    constexpr int64_t kMinBacklog = 16 * 1024;
    int64_t size = std::max(ParseInt64(v).value_or(1 << 20), kMinBacklog);
    // (Redis' startup keeps a smaller value from the config file in CONFIG GET.)
    if (listening_ && std::to_string(size) != v) {
      config_->SetInternal("repl-backlog-size", std::to_string(size));
    }
    primary_->ResizeBacklog(static_cast<size_t>(size));
    return Status::Ok();
  });
  c.OnApply("dir", [](const std::string& v) {
    if (chdir(v.c_str()) != 0) return Status::FromErrno("chdir " + v, errno);
    return Status::Ok();
  });
  c.OnApply("proc-title-template", [this](const std::string&) {
    UpdateProcTitle();
    return Status::Ok();
  });
  c.OnApply("protected-mode", [this](const std::string& v) {
    protected_mode_ = v == "yes";
    return Status::Ok();
  });
  c.OnApply("io-busy-poll-us", [this](const std::string& v) {
    busy_poll_us_ = static_cast<int>(ParseInt64(v).value_or(0));
    for (auto& g : groups_) g->loop().SetBusyPollUs(busy_poll_us_);
    return Status::Ok();
  });
  c.OnApply("hz", [this](const std::string& v) {
    hz_ = std::clamp<int>(static_cast<int>(ParseInt64(v).value_or(10)), 1, 500);
    return Status::Ok();
  });
  c.OnApply("loglevel", [](const std::string& v) {
    LogLevel l = v == "debug" ? LogLevel::kDebug
                 : v == "verbose" ? LogLevel::kVerbose
                 : v == "warning" ? LogLevel::kWarning : LogLevel::kNotice;
    SetLogLevel(l);
    return Status::Ok();
  });
  auto lfu = [this](const std::string&) {
    std::string policy = config_->GetString("maxmemory-policy");
    keyspace_->set_lfu(policy.find("lfu") != std::string::npos,
                       static_cast<int>(config_->GetInt("lfu-log-factor")),
                       static_cast<int>(config_->GetInt("lfu-decay-time")));
    return Status::Ok();
  };
  c.OnApply("maxmemory-policy", [this, lfu](const std::string& v) {
    evictor_->set_policy(ParseEvictPolicy(v));
    return lfu(v);
  });
  c.OnApply("maxmemory", [this](const std::string& v) {
    uint64_t limit = std::stoull(v);
    evictor_->set_maxmemory(limit);
    ApplyClientEviction();  // maxmemory-clients may be a percentage of it
    if (limit == 0 || !listening_) return Status::Ok();
    // CONFIG SET lowering it: as Redis, a warning when usage is already past it, and the
    // evictions start once the command is done rather than at the next write.
    if (size_t used = evictor_->UsedForEviction(); used > limit) {
      LOG_WARNING(
          "WARNING: the new maxmemory value set via CONFIG SET (%llu) is smaller than "
          "the current memory usage (%zu). This will result in key eviction and/or the "
          "inability to accept new write commands depending on the maxmemory-policy.",
          static_cast<unsigned long long>(limit), used);
    }
    // Redis starts its eviction timer, which runs before the next command is read: here, once
    // the command (EXEC's whole transaction) is done, or on the timer outside a command.
    if (current_client_) {
      evict_after_command_ = true;
    } else {
      evictor_->StartTimer();
    }
    return Status::Ok();
  });
  c.OnApply("maxmemory-clients", [this](const std::string&) {
    ApplyClientEviction();
    return Status::Ok();
  });
  c.OnApply("maxmemory-samples", [this](const std::string& v) {
    evictor_->set_samples(std::stoi(v));
    return Status::Ok();
  });
  auto lazy_setting = [this](bool store::LazyFreeSettings::*field) {
    return [this, field](const std::string& v) {
      keyspace_->lazy_free_settings().*field = v == "yes";
      return Status::Ok();
    };
  };
  // The AOF: turned on and off at runtime as Redis' updateAppendonly does; at startup
  // LoadAtStartup reads the settings.
  c.OnApply("appendonly", [this](const std::string& v) {
    if (!listening_) return Status::Ok();
    if (v == "no" && aof_->enabled()) aof_->Stop();
    if (v == "yes" && !aof_->enabled()) return aof_->Start();
    return Status::Ok();
  });
  for (const char* name : {"appendfsync", "no-appendfsync-on-rewrite", "aof-timestamp-enabled"}) {
    c.OnApply(name, [this](const std::string&) {
      aof_->ApplySettings();
      return Status::Ok();
    });
  }
  c.OnApply("aof-disable-auto-gc", [this](const std::string& v) {
    if (listening_ && v == "no") aof_->DeleteHistory();
    return Status::Ok();
  });
  c.OnApply("lazyfree-lazy-user-del", lazy_setting(&store::LazyFreeSettings::user_del));
  c.OnApply("lazyfree-lazy-user-flush", lazy_setting(&store::LazyFreeSettings::user_flush));
  c.OnApply("lazyfree-lazy-eviction", lazy_setting(&store::LazyFreeSettings::eviction));
  c.OnApply("lazyfree-lazy-expire", lazy_setting(&store::LazyFreeSettings::expire));
  c.OnApply("lazyfree-lazy-server-del", lazy_setting(&store::LazyFreeSettings::server_del));
  c.OnApply("replica-ignore-maxmemory", [this](const std::string& v) {
    evictor_->set_ignore_on_replica(v == "yes");
    return Status::Ok();
  });
  c.OnApply("maxmemory-eviction-tenacity", [this](const std::string& v) {
    evictor_->set_tenacity(std::stoi(v));
    return Status::Ok();
  });
  // As Redis checks an announced hostname (it travels in PING extensions and CLUSTER SLOTS).
  c.OnApply("cluster-announce-hostname", [this](const std::string& v) {
    if (v.size() >= 256) return Status::Invalid("Hostnames must be less than 256 characters");
    for (char ch : v) {
      if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') {
        return Status::Invalid(
            "Hostnames may only contain alphanumeric characters, hyphens or dots");
      }
    }
    if (cluster_) cluster_->AnnouncedChanged();
    return Status::Ok();
  });
  for (const char* name : {"cluster-announce-ip", "cluster-announce-port",
                           "cluster-announce-tls-port", "cluster-announce-bus-port"}) {
    c.OnApply(name, [this](const std::string&) {
      if (cluster_) cluster_->AnnouncedChanged();
      return Status::Ok();
    });
  }
  c.OnApply("lfu-log-factor", lfu);
  c.OnApply("lfu-decay-time", lfu);
  c.OnApply("notify-keyspace-events", [this](const std::string& v) {
    int flags = 0;
    for (char ch : v) {
      switch (ch) {
        case 'A': flags |= cmd::kNotifyGeneric | cmd::kNotifyString | cmd::kNotifyList |
                           cmd::kNotifySet | cmd::kNotifyHash | cmd::kNotifyZset |
                           cmd::kNotifyExpired | cmd::kNotifyEvicted | cmd::kNotifyStream |
                           cmd::kNotifyModule; break;
        case 'g': flags |= cmd::kNotifyGeneric; break;
        case '$': flags |= cmd::kNotifyString; break;
        case 'l': flags |= cmd::kNotifyList; break;
        case 's': flags |= cmd::kNotifySet; break;
        case 'h': flags |= cmd::kNotifyHash; break;
        case 'z': flags |= cmd::kNotifyZset; break;
        case 'x': flags |= cmd::kNotifyExpired; break;
        case 'e': flags |= cmd::kNotifyEvicted; break;
        case 'K': flags |= cmd::kNotifyKeyspace; break;
        case 'E': flags |= cmd::kNotifyKeyevent; break;
        case 't': flags |= cmd::kNotifyStream; break;
        case 'm': flags |= cmd::kNotifyKeyMiss; break;
        case 'd': flags |= cmd::kNotifyModule; break;
        case 'n': flags |= cmd::kNotifyNew; break;
        default: return Status::Invalid("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
      }
    }
    notify_flags_ = flags;
    return Status::Ok();
  });
}

Status Server::Start() {
  WireConfig();
  // `user` directives are checked as Redis checks them reading its config file, and loaded
  // (or the ACL file) once requirepass has set the default user.
  if (Status users = CheckUserDirectives(); !users.ok()) return users;
  Status s = config_->ApplyAll();
  if (!s.ok()) return s;
  for (const auto& [from, to] : config_->renames()) {
    if (!commands_.Rename(from, to)) {
      return Status::Invalid("rename-command: no such command '" + from + "'");
    }
  }
  s = acl_->LoadAtStartup(config_->users(), config_->GetString("aclfile"));
  if (!s.ok()) return s;
  keyspace_->TickClock(WallMs());
  int64_t threads = config_->GetInt("io-threads");
  if (threads <= 0) threads = DefaultPollGroups(std::thread::hardware_concurrency());
  for (int i = 0; i < threads; i++) {
    groups_.push_back(std::make_unique<PollGroup>(*this, i));
    groups_.back()->loop().SetBusyPollUs(busy_poll_us_);
  }
  // Redis shows its logo when asked to, or when it logs to a terminal, before it loads its data:
  // harnesses wait for the logo's PID line, then for the server to answer or to exit (a start
  // refused over a bad AOF or RDB must not look like a server that never started).
  ShowStartupBanner(config_->GetBool("always-show-logo") ||
                        (config_->GetString("logfile").empty() && isatty(STDOUT_FILENO)),
                    static_cast<int>(config_->GetInt("port")));
  LOG_NOTICE("Server initialized: %zu poll group(s), %d databases", groups_.size(),
             keyspace_->num_dbs());
  // As Redis, the server listens while it loads: clients get -LOADING (INFO shows the
  // progress) until the data is in.
  s = StartListeners();
  if (!s.ok()) return s;
  if (config_->GetBool("cluster-enabled")) {
    s = StartCluster();
    if (!s.ok()) return s;
  }
  startup_loading_ = true;
  for (auto& g : groups_) {
    g->StartThread();
    g->StartClientsCron();
  }
  groups_[0]->loop().Post([this] {
    WatchdogSchedule(static_cast<int>(1000 / hz_));  // the watchdog knows the cron's thread
    groups_[0]->loop().AddTimer(1000 / hz_, [this] { return Cron(); });
  });
  std::unique_lock lock(mu_);
  load_lock_ = &lock;
  s = LoadAtStartup();
  load_lock_ = nullptr;
  if (s.ok() && cluster_) s = cluster_->VerifyWithData();
  if (!s.ok()) {
    startup_loading_ = false;
    lock.unlock();
    Stop();
    return s;
  }
  if (shutdown_requested_) {  // a signal during the load: WaitForShutdown ends the process
    startup_loading_ = false;
    return Status::Ok();
  }
  listening_ = true;
  UpdateProcTitle();
  // A primary restarted from a snapshot that recorded its history keeps it as the secondary ID,
  // so its replicas resync partially (Redis does the same).
  // A cluster replica (by its nodes file) follows its primary as a `replicaof` would.
  bool cluster_replica = cluster_ && cluster_->myself_is_replica();
  if (const auto& h = persistence_->startup_history();
      h && h->offset >= 0 && config_->GetString("replicaof").empty() && !cluster_replica) {
    primary_->SetHistory(h->replid, h->offset);
    primary_->Promote();
    FeedExpiredAtLoad();
  }
  persistence_->TakeStartupExpired();  // unless fed above: no replica can continue from here
  // After the listeners: the link announces our port.
  if (auto words = SplitArgs(config_->GetString("replicaof")); words && words->size() == 2) {
    auto port = ParseInt64((*words)[1]);
    if (!port) return Status::Invalid("replicaof: invalid port '" + (*words)[1] + "'");
    // A snapshot that recorded its replication history lets the restart resync partially.
    if (const auto& h = persistence_->startup_history(); h && h->offset >= 0) {
      primary_->SetHistory(h->replid, h->offset);
      replica_->set_stream_db(h->stream_db);
    }
    replica_->Follow((*words)[0], static_cast<int>(*port));
  } else if (cluster_replica) {
    if (const auto& h = persistence_->startup_history(); h && h->offset >= 0) {
      primary_->SetHistory(h->replid, h->offset);
      replica_->set_stream_db(h->stream_db);
    }
    cluster_->StartReplication();
  }
  startup_loading_ = false;
  lock.unlock();
  if (config_->GetString("repl-transport") != "tcp") {
    // The first data link, on either side, would otherwise wait for the fabric library's
    // start-up in the middle of a handshake (on a primary: on a poll group's thread, holding
    // the keyspace lock). At normal priority: a link set up meanwhile waits for this thread
    // to finish (libfabric initializes under its own lock).
    fabric_loader_ = std::thread([] {
      transport::PrepareFabric();
      // Its providers may put their own crash handlers over ours (which call theirs).
      if (CrashLogEnabled()) SetCrashLogEnabled(true);
    });
  }
  if (port_ != 0) LOG_NOTICE("Ready to accept connections tcp on port %d", port_);
  if (tls_port_ != 0) LOG_NOTICE("Ready to accept connections tls on port %d", tls_port_);
  if (!unix_socket_path_.empty()) {
    LOG_NOTICE("The server is now ready to accept connections at %s", unix_socket_path_.c_str());
  }
  return Status::Ok();
}

Status Server::StartCluster() {
  if (!config_->GetString("replicaof").empty()) {
    return Status::Invalid("replicaof directive not allowed in cluster mode");
  }
  keyspace_->EnableSlotIndex();
  cluster_host_ = std::make_unique<ServerClusterHost>(*this);
  auto c = cluster::Cluster::Create(*cluster_host_);
  if (!c.ok()) return c.status();
  cluster_ = std::move(*c);
  slot_migrations_ = std::make_unique<SlotMigrations>(*this);
  return cluster_->Start();
}

Status Server::LoadAtStartup() {
  // With appendonly on, the AOF is the dataset and the RDB is not read (as in Redis).
  bool aof_used = false;
  Status s = aof_->LoadAtStartup(&aof_used);
  if (!s.ok() || shutdown_requested_) return s;
  if (!aof_used) {
    s = persistence_->LoadAtStartup();
    if (!s.ok() || shutdown_requested_) return s;
  }
  return aof_->OpenOnStart();
}

void Server::YieldWhileLoading() {
  if (load_lock_ == nullptr) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec zero{0, 0};
  if (int sig = sigtimedwait(&set, nullptr, &zero); sig == SIGINT || sig == SIGTERM) {
    LOG_WARNING("Received shutdown signal during loading, scheduling shutdown.");
    shutdown_requested_ = true;  // the load stops; nothing is saved
    return;
  }
  int64_t now = MonoMs();
  if (now - last_load_yield_ms_ < 10) return;
  last_load_yield_ms_ = now;
  load_lock_->unlock();
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  load_lock_->lock();
}

void Server::FeedExpiredAtLoad() {
  const char* del = config_->GetBool("lazyfree-lazy-expire") ? "UNLINK" : "DEL";
  repl::Feed& feed = primary_->feed();
  for (const auto& [db, key] : persistence_->TakeStartupExpired()) {
    std::string_view argv[2] = {del, key};
    feed.Add(db, std::span<const std::string_view>(argv), /*to_replicas=*/true, /*to_aof=*/false);
    feed.EndUnit();
  }
}

void Server::RegisterClient(Client* c) { clients_[c->id()] = c; }

void Server::UnregisterClient(Client* c) {
  if (clients_.erase(c->id())) stats_.connected_clients--;
  if (slot_migrations_) slot_migrations_->OnClientClosed(c->id());
  UnsubscribeAll(*c);
  EndTransaction(*c);
  UnblockClient(*c);
  ForgetHeld(*c);  // CLIENT PAUSE: the next held client's turn if it was this one's
  std::erase(monitors_, c);
  tracking_->Disable(*c);
  if (current_client_ == c) current_client_ = nullptr;
  primary_->OnClientClosed(c);
  replica_->OnClientClosed(c->id(), c->session().db);
}

void Server::AddMonitor(Client* c) {
  c->set_flag(Client::kMonitor, true);
  monitors_.push_back(c);
}

void Server::RemoveMonitor(Client* c) {
  c->set_flag(Client::kMonitor, false);
  std::erase(monitors_, c);
}

int64_t Server::Cron() {
  // A busy script holds the lock: no cron runs until its end (as in Redis), and this loop goes
  // on answering its clients meanwhile.
  std::unique_lock lock(mu_, std::defer_lock);
  if (!LockUnlessBusy(lock)) return int64_t{10};
  int64_t period_ms = 1000 / hz_;
  if (shutdown_requested_) return period_ms;      // saved and exiting: nothing more goes out
  WatchdogSchedule(static_cast<int>(period_ms));  // re-armed even when paused, as in Redis
  if (debug_state_.pause_cron) return period_ms;  // DEBUG PAUSE-CRON
  // The data is not all in yet (at startup, or a replica's load into the live dataset, which
  // lets the lock go now and then): nothing that would change or save it runs, as in Redis;
  // a shutdown (SIGTERM) goes on, and stops the load.
  if (startup_loading_) return period_ms;
  if (replica_->loading_in_place()) {
    shutdown_wait_->Cron(WallMs());
    return period_ms;
  }
  int64_t now = WallMs();
  keyspace_->TickClock(now);
  EndPauseIfDue();  // CLIENT PAUSE's timer ends it; this catches a wall clock that jumped
  // A replica leaves expiry to its primary (keys are hidden, not deleted, when their TTL
  // passes), except for the keys its own clients wrote with a TTL (a writable replica).
  if (active_expire_ && !replica_->is_replica()) {
    int effort = static_cast<int>(config_->GetInt("active-expire-effort"));
    store::ExpireCycleStats st = keyspace_->ActiveExpireCycle(
        period_ms * 1000 * store::Keyspace::ExpireCyclePercent(effort) / 100, now, effort);
    RecordLatencyIfNeeded("expire-cycle", st.elapsed_us / 1000);
  } else if (active_expire_) {
    TrackLocalWrites();
    keyspace_->ExpireLocalKeys(now, kLocalExpireVisits);
  }
  if (cluster_ && !blocked_.empty()) RedirectBlockedClients();
  // Expired streams end their XREADGROUP waiters' waits (-UNBLOCKED), as after a command.
  if (!ready_keys_.empty()) ServeReadyKeys();
  if (config_->GetBool("activerehashing")) keyspace_->Cron(1000);
  child_info_.Drain();  // the running child's report of the last second
  persistence_->Cron(now);
  aof_->Cron(now);
  primary_->Cron(now);
  primary_->SendRequestedAcks(clients_paused());  // a WAIT that came while writes were paused
  replica_->Cron(now);
  failover_->Cron(now);
  shutdown_wait_->Cron(now);
  if (shutdown_requested_) return period_ms;  // finished waiting for the replicas: exiting
  migrate_sockets_->CloseIdle(now / 1000);
  // Also here, so that a tracking-table-max-keys lowered by CONFIG SET applies to an idle server.
  tracking_->LimitUsedSlots();
  EndReplicationUnit();
  // Instantaneous metrics.
  int i = stats_.sample_idx++ % ServerStats::kSamples;
  stats_.sample_time[i] = MonoMs();
  stats_.sample_cmds[i] = stats_.total_commands;
  stats_.sample_in[i] = stats_.net_input_bytes.Load();
  stats_.sample_out[i] = stats_.net_output_bytes.Load();
  // Idle client timeout, checked by each group for its own clients.
  int64_t timeout_s = config_->GetInt("timeout");
  if (timeout_s > 0) {
    int64_t cutoff = MonoMs() - timeout_s * 1000;
    for (auto& [id, c] : clients_) {
      if (c->last_interaction_ms() < cutoff && !(c->flags() & (Client::kMonitor | Client::kReplica)))
        c->RequestClose();
    }
  }
  // A TLS handshake that stalls ends after kTlsHandshakeTimeoutMs, whatever `timeout` says.
  for (auto& [id, c] : clients_) {
    if (c->tls() && c->TlsHandshakeOverdue(MonoMs(), kTlsHandshakeTimeoutMs)) {
      LOG_WARNING("Error accepting a client connection: TLS handshake timed out (addr=%s)",
                  c->peer().c_str());
      c->RequestClose();
    }
  }
  return period_ms;
}

void Server::RecordLatency(const std::string& event, int64_t ms) {
  LatencyEvent& e = latency_events_[event];
  int64_t now = WallMs() / 1000;
  if (!e.history.empty() && e.history.back().time_s == now) {
    e.history.back().latency_ms = std::max(e.history.back().latency_ms, ms);
  } else {
    e.history.push_back({now, ms});
    if (e.history.size() > 160) e.history.pop_front();
  }
  e.max_ms = std::max(e.max_ms, ms);
}

void Server::RecordLatencyIfNeeded(const std::string& event, int64_t ms) {
  if (latency_threshold_ms_ > 0 && ms >= latency_threshold_ms_) RecordLatency(event, ms);
}

void Server::RecordCommandLatency(const cmd::CommandSpec& spec, int64_t dur_us) {
  if (!latency_tracking_) return;
  // Redis' updateCommandLatencyHistogram: nanoseconds, clamped to the tracked 1 ns .. 1 s.
  constexpr int64_t kMinNs = 1, kMaxNs = 1000000000;
  int64_t ns = std::clamp<int64_t>(dur_us * 1000, kMinNs, kMaxNs);
  auto it = latency_histograms_.try_emplace(&spec, kMinNs, kMaxNs, 2).first;
  it->second.Record(ns);
}

bool Server::EndReplicationUnit(bool wrap) {
  // Writes recorded before a command of the unit made this server a replica (REPLICAOF inside
  // EXEC) go to the AOF alone: a replica's stream is its primary's, as in Redis.
  if (replica_->is_replica()) primary_->feed().KeepFromReplicas();
  return primary_->feed().EndUnit(wrap);
}

void Server::OnMasterCommand(Client&, std::string_view raw) { replica_->OnMasterCommand(raw); }

void Server::OnKeyExpired(int db, std::string_view key) {
  TouchWatchedKey(db, key, /*exists=*/false);  // the key goes right after this
  WakeBlockedOn(db, key);
  tracking_->InvalidateKey(key, nullptr);
  Notify(cmd::kNotifyExpired, "expired", key, db);
  PropagateDeletion(db, key, keyspace_->lazy_free_settings().expire);
}

void Server::OnExpiredKeyRemoved(int64_t us) { RecordLatencyIfNeeded("expire-del", us / 1000); }

size_t Server::EvictKey(int db, std::string_view key) {
  std::string k(key);  // the view may point into the entry the deletion frees
  bool lazy = keyspace_->lazy_free_settings().eviction;
  size_t before = AllocatedBytes();
  keyspace_->Delete(db, k, lazy);
  size_t after = AllocatedBytes();
  KeyModifiedBy(db, k, nullptr);  // no client changed it: BCAST's NOLOOP hides it from none
  Notify(cmd::kNotifyEvicted, "evicted", k, db);
  PropagateDeletion(db, k, lazy);
  // Each eviction is a unit of its own, also before a command: Redis sends plain DELs.
  EndReplicationUnit();
  return before > after ? before - after : 0;
}

void Server::PropagateDeletion(int db, std::string_view key, bool lazy) {
  // Replicas neither expire nor evict keys themselves: they get a DEL (UNLINK when freed
  // lazily, as Redis sends). Outside a command (the cron's active expiry, the eviction timer)
  // each is a unit of its own, as in Redis.
  // A replica's own deletions (a writable replica's expired keys) reach its AOF only, as in
  // Redis: its sub-replicas follow its primary's stream.
  std::string_view del[] = {lazy ? "UNLINK" : "DEL", key};
  primary_->feed().Add(db, del, /*to_replicas=*/!replica_->is_replica());
  if (!current_client_) EndReplicationUnit();
}

void Server::WaitForShutdown() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec tick{0, 100 * 1000 * 1000};
  while (!shutdown_requested_) {
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig != SIGINT && sig != SIGTERM) continue;
    // Without the lock, which the final save may hold for long.
    if (sig == SIGINT && shutdown_wait_->signal_pending()) {
      // A second Ctrl+C: the user does not want to wait for the replicas nor the save; the
      // save's temp file goes (the server runs in its dir), as in Redis.
      LOG_WARNING("You insist... exiting now.");
      unlink(("temp-" + std::to_string(getpid()) + ".rdb").c_str());
      _exit(1);
    }
    LOG_WARNING("Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
    // As SHUTDOWN with the signal's flags (shutdown-on-sigint, -sigterm), begun by the cron:
    // by default save points mean a final snapshot, and if it fails the server keeps running,
    // as Redis. The wait for lagging replicas (shutdown-timeout) comes before the save.
    std::lock_guard lock(mu_);
    shutdown_wait_->Schedule(ParseShutdownFlags(
        config_->GetString(sig == SIGINT ? "shutdown-on-sigint" : "shutdown-on-sigterm")));
  }
  Stop();
  LOG_WARNING("kvstore is now ready to exit, bye bye...");
}

bool Server::AnyChild() const {
  return persistence_->child_running() || primary_->child_running() || aof_->child_running();
}

Status Server::PrepareShutdown(bool save, bool nosave, bool force) {
  // As Redis: no final save of a dataset half loaded (a replica's full sync).
  if (replica_->loading_in_place()) nosave = true;
  Status st = aof_->PrepareShutdown(force);
  if (!st.ok() && !force) return st;
  st = persistence_->PrepareShutdown(save, nosave);
  if (!st.ok()) {
    LOG_WARNING(force ? "Error trying to save the DB. Exit anyway."
                      : "Error trying to save the DB, can't exit.");
  }
  return st;
}

void Server::Stop() {
  if (slot_migrations_) slot_migrations_->Stop();  // their threads take the keyspace lock
  if (cluster_) cluster_->Stop();  // its thread takes the keyspace lock: not held here
  if (replica_) replica_->Stop();  // its thread may wait for the keyspace lock: not held here
  for (auto& g : groups_) g->StopAndJoin();
  if (fabric_loader_.joinable()) fabric_loader_.join();
  listeners_.clear();
  // As Redis: the socket file goes with the server (a stale one would refuse connections).
  if (!unix_socket_path_.empty()) unlink(unix_socket_path_.c_str());
  unix_socket_path_.clear();
}

}  // namespace kv::server
