// Redis 7.0 parameters that change how the server frees, saves, syncs and expires, each run on
// kvstore and on redis-server (the oracle): lazyfree-lazy-expire, lazyfree-lazy-server-del and
// replica-lazy-flush (INFO lazyfreed_objects, and the UNLINK a replica gets), rdb-del-sync-files,
// rdb-save-incremental-fsync / aof-rewrite-incremental-fsync, repl-disable-tcp-nodelay (read
// from the primary's own socket), replica-announced (INFO, and Sentinel's list of replicas),
// active-expire-effort, sanitize-dump-payload and replica-ignore-disk-write-errors.
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "persist/crc64.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

extern char** environ;

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

int64_t LazyFreed(RespClient& c) { return InfoInt(c, "memory", "lazyfreed_objects"); }

// calls= of cmdstat_<name> (0 when the command never ran).
int64_t CommandCalls(RespClient& c, const std::string& name) {
  std::string stats = c.Call({"INFO", "commandstats"}).str;
  size_t at = stats.find("cmdstat_" + name + ":calls=");
  if (at == std::string::npos) return 0;
  return std::atoll(stats.c_str() + at + name.size() + 15);
}

// A hash of `fields` fields: a hashtable past 128 of them, freed in the background when lazy.
void BigHash(RespClient& c, const std::string& key, int fields = 1000) {
  std::vector<std::string> cmd = {"HSET", key};
  for (int j = 0; j < fields; j++) {
    cmd.push_back("f" + std::to_string(j));
    cmd.push_back("v");
  }
  ASSERT_EQ(c.Call(cmd).integer, fields);
}

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

class ServerParams : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
  // Makes `replica` a replica of `primary` and waits until it is in sync.
  void Follow(RespClient& replica, ServerProcess& primary) {
    ASSERT_EQ(replica.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    RespClient p(primary.port());
    ASSERT_TRUE(InSync(p, replica));
  }
};

// ---- lazyfree-lazy-expire ---------------------------------------------------------------------

TEST_P(ServerParams, LazyExpireFreesExpiredKeysInTheBackground) {
  for (bool lazy : {false, true}) {
    ServerProcess s(GetParam(), {"--lazyfree-lazy-expire", lazy ? "yes" : "no"});
    RespClient c(s.port());
    // Active expiry.
    BigHash(c, "active");
    ASSERT_EQ(c.Call({"PEXPIRE", "active", "20"}).integer, 1);
    ASSERT_TRUE(WaitFor([&] { return c.Call({"DBSIZE"}).integer == 0; }));
    // Lazy expiry, on access, with the active one off.
    ASSERT_EQ(c.Call({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}).str, "OK");
    BigHash(c, "lazy");
    ASSERT_EQ(c.Call({"PEXPIRE", "lazy", "20"}).integer, 1);
    ASSERT_TRUE(WaitFor([&] { return c.Call({"EXISTS", "lazy"}).integer == 0; }));
    // EXPIRE with a time already past deletes at once.
    BigHash(c, "past");
    ASSERT_EQ(c.Call({"EXPIRE", "past", "-1"}).integer, 1);
    EXPECT_EQ(InfoInt(c, "stats", "expired_keys"), 2);
    if (lazy) {
      EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 3; })) << LazyFreed(c);
    } else {
      EXPECT_EQ(LazyFreed(c), 0);
    }
  }
}

// Redis' propagateDeletion: an expired key reaches the replica as UNLINK under
// lazyfree-lazy-expire, else as DEL; so does EXPIRE with a past time.
TEST_P(ServerParams, LazyExpirePropagatesUnlink) {
  for (bool lazy : {false, true}) {
    ServerProcess primary(GetParam(), {"--lazyfree-lazy-expire", lazy ? "yes" : "no"});
    ServerProcess replica(GetParam());
    RespClient p(primary.port()), r(replica.port());
    Follow(r, primary);
    ASSERT_EQ(p.Call({"SET", "k", "v", "PX", "20"}).str, "OK");
    ASSERT_EQ(p.Call({"SET", "k2", "v"}).str, "OK");
    ASSERT_EQ(p.Call({"EXPIRE", "k2", "-1"}).integer, 1);
    ASSERT_TRUE(WaitFor([&] { return p.Call({"DBSIZE"}).integer == 0; }));
    ASSERT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"DBSIZE"}).integer, 0);
    EXPECT_EQ(CommandCalls(r, "unlink"), lazy ? 2 : 0);
    EXPECT_EQ(CommandCalls(r, "del"), lazy ? 0 : 2);
  }
}

// ---- lazyfree-lazy-server-del -----------------------------------------------------------------

// Values the server itself replaces or deletes: RENAME's target, a SET over a value, a
// *STORE's destination, RESTORE REPLACE, a whole set SPOP takes, and SUNION's temporary set.
TEST_P(ServerParams, LazyServerDelFreesReplacedValuesInTheBackground) {
  for (bool lazy : {false, true}) {
    ServerProcess s(GetParam(), {"--lazyfree-lazy-server-del", lazy ? "yes" : "no"});
    RespClient c(s.port());
    BigHash(c, "src");
    BigHash(c, "dst");
    ASSERT_EQ(c.Call({"RENAME", "src", "dst"}).str, "OK");  // 1: the old dst
    ASSERT_EQ(c.Call({"SET", "dst", "v"}).str, "OK");       // 2: the renamed hash
    BigHash(c, "h");
    std::string payload = c.Call({"DUMP", "h"}).str;
    ASSERT_EQ(c.Call({"RESTORE", "h", "0", payload, "REPLACE"}).str, "OK");  // 3
    std::vector<std::string> sadd = {"SADD", "set"};
    for (int i = 0; i < 1000; i++) sadd.push_back("m" + std::to_string(i));
    ASSERT_EQ(c.Call(sadd).integer, 1000);
    ASSERT_EQ(c.Call({"SUNIONSTORE", "h", "set"}).integer, 1000);  // 4: the restored hash
    ASSERT_EQ(c.Call({"SUNION", "set"}).elems.size(), 1000u);      // 5: the reply's own set
    // 6 and 7: the whole set SPOP took, and the set its reply was made of.
    ASSERT_EQ(c.Call({"SPOP", "set", "1000"}).elems.size(), 1000u);
    ASSERT_EQ(c.Call({"SET", "small", "v"}).str, "OK");
    ASSERT_EQ(c.Call({"SET", "small", "w"}).str, "OK");  // too small to go to the background
    if (lazy) {
      EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 7; })) << LazyFreed(c);
    } else {
      EXPECT_EQ(LazyFreed(c), 0);
    }
    // DEL is a user's deletion: lazyfree-lazy-user-del's, not this setting's.
    BigHash(c, "d");
    ASSERT_EQ(c.Call({"DEL", "d"}).integer, 1);
    EXPECT_EQ(LazyFreed(c), lazy ? 7 : 0);
  }
}

// ---- replica-lazy-flush -----------------------------------------------------------------------

// A load from a file flushes the old dataset first (in the background under the setting); one
// from the socket into a side dataset (swapdb) frees the dataset it replaced in the background
// whatever the setting says.
TEST_P(ServerParams, ReplicaLazyFlushFreesTheOldDatasetInTheBackground) {
  for (int run = 0; run < 4; run++) {
    bool lazy = run % 2 == 1;
    const char* load = run < 2 ? "disabled" : "swapdb";
    ServerProcess primary(GetParam());
    ServerProcess replica(
        GetParam(), {"--replica-lazy-flush", lazy ? "yes" : "no", "--repl-diskless-load", load});
    RespClient p(primary.port()), r(replica.port());
    ASSERT_EQ(r.Call({"DEBUG", "POPULATE", "1000", "old"}).str, "OK");
    ASSERT_EQ(p.Call({"SET", "new", "v"}).str, "OK");
    Follow(r, primary);
    EXPECT_EQ(r.Call({"DBSIZE"}).integer, 1);
    if (lazy || run >= 2) {
      EXPECT_TRUE(WaitFor([&] { return LazyFreed(r) == 1000; })) << load << LazyFreed(r);
    } else {
      EXPECT_EQ(LazyFreed(r), 0) << load;
    }
  }
}

// ---- rdb-del-sync-files -----------------------------------------------------------------------

// Without persistence (save "", appendonly no) a replica deletes the file its disk-based load
// read, and a primary the file its disk-based sync saved, once no replica needs it.
TEST_P(ServerParams, RdbDelSyncFilesRemovesTheFilesOfASync) {
  for (bool del : {false, true}) {
    const char* v = del ? "yes" : "no";
    ServerProcess primary(GetParam(), {"--repl-diskless-sync", "no", "--rdb-del-sync-files", v});
    ServerProcess replica(GetParam(),
                          {"--repl-diskless-load", "disabled", "--rdb-del-sync-files", v});
    RespClient p(primary.port()), r(replica.port());
    ASSERT_EQ(p.Call({"SET", "k", "v"}).str, "OK");
    Follow(r, primary);
    EXPECT_EQ(r.Call({"GET", "k"}).str, "v");
    std::string pfile = primary.dir() + "/dump.rdb", rfile = replica.dir() + "/dump.rdb";
    if (del) {
      EXPECT_TRUE(WaitFor([&] { return !FileExists(rfile); })) << "replica kept " << rfile;
      EXPECT_TRUE(WaitFor([&] { return !FileExists(pfile); })) << "primary kept " << pfile;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // two replication crons
      EXPECT_TRUE(FileExists(rfile));
      EXPECT_TRUE(FileExists(pfile));
    }
  }
}

// With persistence configured the files stay whatever the setting says.
TEST_P(ServerParams, RdbDelSyncFilesKeepsThemWithPersistence) {
  ServerProcess primary(GetParam(), {"--repl-diskless-sync", "no", "--rdb-del-sync-files", "yes",
                                     "--save", "3600 1"});
  ServerProcess replica(GetParam(), {"--rdb-del-sync-files", "yes", "--save", "3600 1"});
  RespClient p(primary.port()), r(replica.port());
  Follow(r, primary);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(FileExists(replica.dir() + "/dump.rdb"));
  EXPECT_TRUE(FileExists(primary.dir() + "/dump.rdb"));
}

// ---- rdb-save-incremental-fsync, aof-rewrite-incremental-fsync --------------------------------

// Both settable either way; saves and rewrites of a few MB (past the 4 MB sync mark) work.
TEST_P(ServerParams, IncrementalFsyncSettingsSaveAndRewrite) {
  for (const char* v : {"no", "yes"}) {
    ServerProcess s(GetParam(), {"--rdb-save-incremental-fsync", v,
                                 "--aof-rewrite-incremental-fsync", v, "--rdbcompression", "no"});
    RespClient c(s.port(), 30000);
    EXPECT_EQ(c.Call({"CONFIG", "GET", "rdb-save-incremental-fsync"}).elems.at(1).str, v);
    EXPECT_EQ(c.Call({"CONFIG", "GET", "aof-rewrite-incremental-fsync"}).elems.at(1).str, v);
    ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "10000", "key", "1000"}).str, "OK");  // ~10 MB
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    ASSERT_EQ(c.Call({"CONFIG", "SET", "appendonly", "yes"}).str, "OK");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0" &&
             InfoField(c, "persistence", "aof_rewrite_scheduled") == "0";
    }));
    EXPECT_EQ(InfoField(c, "persistence", "aof_last_bgrewrite_status"), "ok");
    ASSERT_TRUE(s.Restart());
    RespClient c2(s.port(), 30000);
    EXPECT_EQ(c2.Call({"DBSIZE"}).integer, 10000);
    EXPECT_EQ(c2.Call({"CONFIG", "SET", "rdb-save-incremental-fsync", "yes"}).str, "OK");
    EXPECT_EQ(c2.Call({"CONFIG", "SET", "aof-rewrite-incremental-fsync", "no"}).str, "OK");
  }
}

// ---- repl-disable-tcp-nodelay -----------------------------------------------------------------

// TCP_NODELAY of each connection the server at `pid` accepted on `port`, read from a copy of
// its socket (pidfd_getfd: the test started the server, so it may).
std::vector<int> AcceptedNoDelay(pid_t pid, int port) {
  std::vector<int> out;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return out;
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  while (dirent* ent = d ? readdir(d) : nullptr) {
    int target = std::atoi(ent->d_name);
    if (ent->d_name[0] == '.') continue;
    int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, target, 0));
    if (fd < 0) continue;
    sockaddr_in local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    int nodelay = -1;
    socklen_t nl = sizeof nodelay;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) == 0 &&
        local.sin_family == AF_INET && ntohs(local.sin_port) == port &&
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) == 0 &&
        getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &nl) == 0) {
      out.push_back(nodelay != 0 ? 1 : 0);
    }
    close(fd);
  }
  if (d) closedir(d);
  close(pidfd);
  return out;
}

TEST_P(ServerParams, ReplDisableTcpNodelayTurnsItOffForReplicas) {
  for (bool off : {false, true}) {
    ServerProcess primary(GetParam(), {"--repl-disable-tcp-nodelay", off ? "yes" : "no"});
    ServerProcess replica(GetParam());
    RespClient p(primary.port()), r(replica.port());
    Follow(r, primary);
    std::vector<int> flags = AcceptedNoDelay(primary.pid(), primary.port());
    ASSERT_GE(flags.size(), 2u) << "the test's client and the replica";
    int without = static_cast<int>(std::count(flags.begin(), flags.end(), 0));
    EXPECT_EQ(without, off ? 1 : 0) << "connections without TCP_NODELAY";
  }
}

// ---- replica-announced ------------------------------------------------------------------------

TEST_P(ServerParams, ReplicaAnnouncedInInfo) {
  ServerProcess primary(GetParam());
  ServerProcess replica(GetParam(), {"--replica-announced", "no"});
  RespClient p(primary.port()), r(replica.port());
  Follow(r, primary);
  EXPECT_EQ(InfoField(r, "replication", "replica_announced"), "0");
  ASSERT_EQ(r.Call({"CONFIG", "SET", "replica-announced", "yes"}).str, "OK");
  EXPECT_EQ(InfoField(r, "replication", "replica_announced"), "1");
}

// Sentinel monitors every replica but lists only the announced ones (SENTINEL REPLICAS).
TEST_P(ServerParams, SentinelListsOnlyAnnouncedReplicas) {
  ServerProcess primary(GetParam());
  ServerProcess shown(GetParam());
  ServerProcess hidden(GetParam(), {"--replica-announced", "no"});
  RespClient p(primary.port()), rs(shown.port()), rh(hidden.port());
  Follow(rs, primary);
  Follow(rh, primary);
  // A Sentinel (it logs no "Ready to accept connections": started here, not as a ServerProcess).
  char tmpl[] = "/tmp/kvstore-sentinel-conf-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string conf = dir + "/sentinel.conf", log = dir + "/sentinel.log";
  int port = FreePort();
  std::ofstream(conf) << "port " << port << "\ndir " << dir << "\nlogfile " << log
                      << "\nsentinel monitor kv 127.0.0.1 " << primary.port() << " 1\n";
  std::vector<std::string> args = {"/usr/bin/redis-server", conf, "--sentinel"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  struct Reaper {
    pid_t pid;
    std::string dir;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      [[maybe_unused]] int rc = system(("rm -rf '" + dir + "'").c_str());
    }
  } reaper{pid, dir};
  ASSERT_TRUE(WaitFor([&] { return net::ConnectTcp("127.0.0.1", port, 200).ok(); }));
  RespClient s(port);
  auto listed = [&] {
    std::vector<std::string> ports;
    for (const Reply& r : s.Call({"SENTINEL", "REPLICAS", "kv"}).elems) {
      for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
        if (r.elems[i].str == "port") ports.push_back(r.elems[i + 1].str);
      }
    }
    return ports;
  };
  // The hidden replica is known (it was in the primary's INFO) once its own INFO said 0.
  EXPECT_TRUE(WaitFor([&] {
    std::vector<std::string> ports = listed();
    return ports == std::vector<std::string>{std::to_string(shown.port())} &&
           ReadFile(log).find("+slave slave 127.0.0.1:" + std::to_string(hidden.port())) !=
               std::string::npos;
  })) << ReadFile(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // its INFO is refreshed
  EXPECT_EQ(listed(), std::vector<std::string>{std::to_string(shown.port())});
}

// ---- active-expire-effort ---------------------------------------------------------------------

TEST_P(ServerParams, ActiveExpireEffortTakesOneToTen) {
  ServerProcess s(GetParam(), {"--active-expire-effort", "10"});
  RespClient c(s.port());
  EXPECT_EQ(c.Call({"CONFIG", "GET", "active-expire-effort"}).elems.at(1).str, "10");
  EXPECT_EQ(c.Call({"CONFIG", "SET", "active-expire-effort", "1"}).str, "OK");
  Reply bad = c.Call({"CONFIG", "SET", "active-expire-effort", "11"});
  EXPECT_TRUE(bad.is_error());
  EXPECT_EQ(bad.str,
            "ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - "
            "argument must be between 1 and 10 inclusive");
  // At the highest effort the cron still expires everything.
  ASSERT_EQ(c.Call({"CONFIG", "SET", "active-expire-effort", "10"}).str, "OK");
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "5000"}).str, "OK");
  for (int j = 0; j < 5000; j++) c.Call({"PEXPIRE", "key:" + std::to_string(j), "10"});
  EXPECT_TRUE(WaitFor([&] { return c.Call({"DBSIZE"}).integer == 0; }));
  EXPECT_EQ(InfoInt(c, "stats", "expired_keys"), 5000);
}

// ---- sanitize-dump-payload --------------------------------------------------------------------

// A DUMP payload of a small hash (a listpack) with an entry's encoding corrupted and the
// checksum made right again: only a deep check of the listpack finds it.
std::string CorruptListpackPayload(RespClient& c) {
  EXPECT_EQ(c.Call({"HSET", "h", "field", "value"}).integer, 1);
  std::string payload = c.Call({"DUMP", "h"}).str;
  // type, the listpack's length, its 6-byte header, then the first entry's encoding byte
  // (0x85: a 5-byte string); claim 0x8f, a 15-byte string running past the listpack.
  size_t at = payload.find(std::string("\x85") + "field");
  EXPECT_NE(at, std::string::npos);
  payload[at] = '\x8f';
  uint64_t crc = persist::Crc64(0, payload.data(), payload.size() - 8);
  for (int i = 0; i < 8; i++) payload[payload.size() - 8 + i] = static_cast<char>(crc >> (8 * i));
  return payload;
}

TEST_P(ServerParams, SanitizeDumpPayloadRefusesACorruptListpack) {
  ServerProcess s(GetParam(), {"--sanitize-dump-payload", "yes"});
  RespClient c(s.port());
  std::string payload = CorruptListpackPayload(c);
  Reply r = c.Call({"RESTORE", "h2", "0", payload});
  EXPECT_EQ(r.raw, "-ERR Bad data format\r\n");
  EXPECT_EQ(c.Call({"EXISTS", "h2"}).integer, 0);
  for (const char* v : {"no", "clients", "yes"}) {
    EXPECT_EQ(c.Call({"CONFIG", "SET", "sanitize-dump-payload", v}).str, "OK");
    EXPECT_EQ(c.Call({"CONFIG", "GET", "sanitize-dump-payload"}).elems.at(1).str, v);
  }
  EXPECT_EQ(c.Call({"CONFIG", "SET", "sanitize-dump-payload", "always"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'sanitize-dump-payload') - "
            "argument(s) must be one of the following: no, yes, clients");
}

// kvstore checks every payload in depth whatever the setting (Redis' "no" checks only the
// listpack's header, and would take this one).
TEST(ServerParamsKvstore, PayloadsAreAlwaysSanitized) {
  ServerProcess s(Kind::kKvstore, {"--sanitize-dump-payload", "no"});
  RespClient c(s.port());
  std::string payload = CorruptListpackPayload(c);
  EXPECT_EQ(c.Call({"RESTORE", "h2", "0", payload}).raw, "-ERR Bad data format\r\n");
}

// ---- replica-ignore-disk-write-errors ---------------------------------------------------------

// The children of `pid` (its threads' children lists).
std::vector<pid_t> Children(pid_t pid) {
  std::vector<pid_t> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  while (dirent* ent = d ? readdir(d) : nullptr) {
    if (ent->d_name[0] == '.') continue;
    std::istringstream in(ReadFile(dir + "/" + ent->d_name + "/children"));
    for (pid_t c; in >> c;) out.push_back(c);
  }
  if (d) closedir(d);
  return out;
}

// Makes `replica`'s last background save fail: a slow BGSAVE whose child is killed.
void FailBgsave(ServerProcess& replica, RespClient& r) {
  ASSERT_EQ(r.Call({"CONFIG", "SET", "rdb-key-save-delay", "100000"}).str, "OK");
  ASSERT_EQ(r.Call({"DEBUG", "POPULATE", "100", "local"}).str, "OK");
  ASSERT_EQ(r.Call({"BGSAVE"}).str, "Background saving started");
  std::vector<pid_t> kids;
  ASSERT_TRUE(WaitFor([&] { return !(kids = Children(replica.pid())).empty(); }));
  for (pid_t k : kids) kill(k, SIGKILL);
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(r, "persistence", "rdb_last_bgsave_status") == "err" &&
           InfoField(r, "persistence", "rdb_bgsave_in_progress") == "0";
  }));
  ASSERT_EQ(r.Call({"CONFIG", "SET", "rdb-key-save-delay", "0"}).str, "OK");
}

// A replica that cannot persist (here its last BGSAVE failed, with save points) panics on its
// primary's next write by default; with replica-ignore-disk-write-errors yes it logs and goes on.
TEST_P(ServerParams, ReplicaDiskWriteErrors) {
  for (bool ignore : {false, true}) {
    ServerProcess primary(GetParam());
    ServerProcess replica(GetParam(),
                          {"--save", "3600 1", "--use-exit-on-panic", "yes",
                           "--replica-ignore-disk-write-errors", ignore ? "yes" : "no"});
    RespClient p(primary.port()), r(replica.port());
    Follow(r, primary);
    FailBgsave(replica, r);
    // Its own clients are refused writes, as any server's.
    EXPECT_EQ(r.Call({"SET", "x", "1"}).str.rfind("MISCONF", 0), 0u);
    ASSERT_EQ(p.Call({"SET", "from-primary", "v"}).str, "OK");
    if (ignore) {
      EXPECT_TRUE(WaitFor([&] { return r.Call({"GET", "from-primary"}).str == "v"; }));
      EXPECT_TRUE(WaitFor([&] {
        return replica.LogText().find(
                   "Replica is applying a command even though it is unable "
                   "to write to disk.") != std::string::npos;
      }));
      EXPECT_TRUE(replica.Alive());
    } else {
      EXPECT_TRUE(WaitFor([&] { return !replica.Alive(); })) << "the replica goes on";
      EXPECT_NE(replica.LogText().find("Replica was unable to write command to disk."),
                std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, ServerParams, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
