// The append-only file end to end: directories written by kvstore load in redis-server and the
// other way round (identical DEBUG DIGEST), kill -9 under each appendfsync policy, torn tails
// and corruption, rewrites while writes run, a failing rewrite, runtime `appendonly yes`, and a
// replica's own AOF.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/dataset.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
namespace fs = std::filesystem;

const char* Name(Kind k) { return k == Kind::kKvstore ? "kvstore" : "redis-server"; }

void WaitRewriteDone(RespClient& c) {
  ASSERT_TRUE(WaitFor(
      [&] {
        return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0" &&
               InfoField(c, "persistence", "aof_rewrite_scheduled") == "0";
      },
      30000));
}

std::string Dir(const ServerProcess& s) { return s.dir() + "/appendonlydir"; }

// The files of an AOF directory, by name, with their bytes.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) {
    out[f.path().filename().string()] = ReadFile(f.path().string());
  }
  return out;
}

std::string LastIncr(const std::string& dir) {
  std::string last;
  for (const auto& [name, bytes] : Files(dir)) {
    if (name.find(".incr.aof") != std::string::npos && name > last) last = name;
  }
  return dir + "/" + last;
}

void Append(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f << bytes;
}

class AofInterop : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// Each server writes an AOF (a base from a rewrite, then an increment with more changes, in
// the RDB-preamble or command form of the parameter), the other loads the directory.
TEST_P(AofInterop, DirectoriesLoadInTheOtherServerWithIdenticalDatasets) {
  std::string preamble = GetParam();
  for (Kind writer : {Kind::kKvstore, Kind::kRedis}) {
    Kind reader = writer == Kind::kKvstore ? Kind::kRedis : Kind::kKvstore;
    SCOPED_TRACE(std::string(Name(writer)) + " -> " + Name(reader));
    ServerProcess w(writer, {"--appendonly", "yes", "--aof-use-rdb-preamble", preamble});
    RespClient wc(w.port());
    PopulateAllTypes(wc, false);
    ASSERT_FALSE(wc.Call({"BGREWRITEAOF"}).is_error());
    WaitRewriteDone(wc);
    // The increment: overwrites, deletions, expiries, a transaction, several dbs.
    for (const std::vector<std::string>& cmd :
         std::vector<std::vector<std::string>>{{"SET", "db0:str", "changed"},
                                               {"DEL", "db0:int"},
                                               {"INCRBY", "counter", "41"},
                                               {"LPUSH", "db0:list5", "front"},
                                               {"EXPIRE", "db0:str", "5000"},
                                               {"SET", "px", "v", "PX", "900000"},
                                               {"HDEL", "db0:hash700", "field-2"},
                                               {"ZINCRBY", "db0:zset5", "2.5", "member-1"},
                                               {"SELECT", "3"},
                                               {"SADD", "db3:sset5", "new"},
                                               {"MULTI"},
                                               {"INCR", "counter"},
                                               {"RPUSH", "txlist", "a", "b"},
                                               {"EXEC"},
                                               {"SELECT", "0"}}) {
      ASSERT_FALSE(wc.Call(cmd).is_error()) << cmd[0];
    }
    Snapshot before = Capture(wc);
    ASSERT_EQ(w.Stop(), 0);
    std::string manifest = ReadFile(Dir(w) + "/appendonly.aof.manifest");
    EXPECT_NE(manifest.find(preamble == std::string("yes") ? ".base.rdb" : ".base.aof"),
              std::string::npos)
        << manifest;
    ServerProcess r(reader, {"--dir", w.dir(), "--appendonly", "yes"});
    RespClient rc(r.port());
    WaitLoaded(rc);
    Snapshot after = Capture(rc);
    EXPECT_EQ(after.digest, before.digest);
    EXPECT_EQ(after.shape, before.shape);
  }
}

INSTANTIATE_TEST_SUITE_P(Preamble, AofInterop, ::testing::Values("yes", "no"));

// The write path's file is what redis-server writes for the same commands: SELECT, then the
// commands in the form replication propagates (SET EX as SET PXAT, EXPIRE as PEXPIREAT).
TEST(Aof, IncrementHasRedisBytesForTheSameCommands) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::map<Kind, std::string> incr;
  for (Kind k : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess s(k, {"--appendonly", "yes", "--appendfsync", "always"});
    RespClient c(s.port());
    c.Call({"SET", "a", "1"});
    c.Call({"SELECT", "2"});
    c.Call({"RPUSH", "l", "x", "y"});
    c.Call({"SET", "t", "v", "PXAT", "99999999999999"});
    c.Call({"PEXPIREAT", "l", "99999999999998"});
    c.Call({"MULTI"});
    c.Call({"INCR", "n"});
    c.Call({"SELECT", "0"});
    c.Call({"DEL", "a"});
    c.Call({"EXEC"});
    c.Call({"SET", "nothing-changes", "v", "NX"});
    c.Call({"SET", "nothing-changes", "v", "NX"});
    incr[k] = ReadFile(LastIncr(Dir(s)));
  }
  EXPECT_EQ(incr[Kind::kKvstore], incr[Kind::kRedis]);
}

// kill -9 right after the replies: under always and everysec every acknowledged INCR is in the
// file (the process dies, the kernel keeps what was written); the everysec window is measured
// against an OS crash's worst case by the fsync age INFO reports.
TEST(Aof, KillNineLosesNoAcknowledgedWrite) {
  for (const char* policy : {"always", "everysec", "no"}) {
    SCOPED_TRACE(policy);
    ServerProcess s(Kind::kKvstore, {"--appendonly", "yes", "--appendfsync", policy});
    std::atomic<int64_t> acked{0};
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      RespClient c(s.port());
      while (!stop) {
        Reply r = c.Call({"INCR", "counter"});
        if (r.type != ':') break;  // the server is gone
        acked = r.integer;
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    kill(s.pid(), SIGKILL);
    stop = true;
    writer.join();
    s.Stop();
    ASSERT_GT(acked.load(), 100);
    ServerProcess again(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
    RespClient c(again.port());
    int64_t restored = std::stoll(c.Call({"GET", "counter"}).str);
    // The one INCR in flight at the kill may have made it too.
    EXPECT_GE(restored, acked.load());
    EXPECT_LE(restored, acked.load() + 1);
  }
}

// A torn last command is cut off (aof-load-truncated yes, the default) or refuses the start
// (no); a corrupt middle always refuses it, names the offset and leaves the file untouched.
TEST(Aof, TornTailAndCorruptMiddle) {
  ServerProcess s(Kind::kKvstore, {"--appendonly", "yes"});
  {
    RespClient c(s.port());
    for (int i = 0; i < 50; i++) c.Call({"SET", "k" + std::to_string(i), "v"});
  }
  ASSERT_EQ(s.Stop(), 0);
  std::string incr = LastIncr(Dir(s));
  std::string whole = ReadFile(incr);
  Append(incr, "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$5\r\nab");  // torn in its last argument
  std::string log =
      ExpectRefusesToStart(s.dir(), {"--appendonly", "yes", "--aof-load-truncated", "no"});
  EXPECT_NE(log.find("Unexpected end of file reading the append only file"), std::string::npos)
      << log;
  {
    ServerProcess loaded(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
    RespClient c(loaded.port());
    EXPECT_EQ(c.Call({"DBSIZE"}).integer, 50);
    EXPECT_NE(loaded.LogText().find("!!! Truncating the AOF appendonly.aof.1.incr.aof at offset " +
                                    std::to_string(whole.size())),
              std::string::npos)
        << loaded.LogText();
    EXPECT_EQ(ReadFile(incr).substr(0, whole.size()), whole);
  }
  // An unfinished transaction at the end goes as a whole.
  std::string before_multi = ReadFile(incr);
  Append(incr, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$2\r\ntx\r\n$1\r\n1\r\n");
  {
    ServerProcess loaded(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
    RespClient c(loaded.port());
    EXPECT_EQ(c.Call({"EXISTS", "tx"}).integer, 0);
    EXPECT_NE(loaded.LogText().find("Revert incomplete MULTI/EXEC transaction"), std::string::npos);
  }
  EXPECT_EQ(ReadFile(incr).substr(0, before_multi.size()), before_multi);
  // Garbage in the middle.
  std::string good = ReadFile(incr);
  size_t middle = good.find("*3\r\n$3\r\nSET\r\n$3\r\nk25");
  ASSERT_NE(middle, std::string::npos);
  std::string bad = good;
  bad.replace(middle, 1, "?");
  {
    std::ofstream f(incr, std::ios::binary | std::ios::trunc);
    f << bad;
  }
  log = ExpectRefusesToStart(s.dir(), {"--appendonly", "yes"});
  EXPECT_NE(log.find("The append only file appendonly.aof.1.incr.aof has a bad format: "
                     "expected '*' at offset " +
                     std::to_string(middle) + "\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Bad file format reading the append only file appendonly.aof.1.incr.aof: "),
            std::string::npos)
      << log;
  EXPECT_EQ(ReadFile(incr), bad);  // never rewritten
}

// Rewrites while clients write: nothing is lost or doubled, the manifest moves to new files and
// the history is removed.
TEST(Aof, RewriteWhileWritesRun) {
  ServerProcess s(Kind::kKvstore, {"--appendonly", "yes", "--rdb-key-save-delay", "20"});
  RespClient c(s.port());
  for (int i = 0; i < 2000; i++) c.Call({"SET", "pre" + std::to_string(i), std::to_string(i)});
  std::atomic<bool> stop{false};
  std::atomic<int64_t> acked{0};
  std::thread writer([&] {
    RespClient w(s.port());
    while (!stop) {
      Reply r = w.Call({"INCR", "counter"});
      ASSERT_EQ(r.type, ':');
      w.Call({"RPUSH", "log", std::to_string(r.integer)});
      acked = r.integer;
    }
  });
  for (int round = 0; round < 3; round++) {
    ASSERT_EQ(c.Call({"BGREWRITEAOF"}).str, "Background append only file rewriting started");
    EXPECT_EQ(c.Call({"BGREWRITEAOF"}).str,
              "ERR Background append only file rewriting already in progress");
    WaitRewriteDone(c);
    EXPECT_EQ(InfoField(c, "persistence", "aof_last_bgrewrite_status"), "ok");
  }
  stop = true;
  writer.join();
  EXPECT_GT(acked.load(), 10);
  EXPECT_EQ(c.Call({"LLEN", "log"}).integer, acked.load());
  std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
  std::string manifest = ReadFile(Dir(s) + "/appendonly.aof.manifest");
  EXPECT_EQ(manifest,
            "file appendonly.aof.4.base.rdb seq 4 type b\nfile appendonly.aof.4.incr.aof seq 4 "
            "type i\n");
  EXPECT_TRUE(WaitFor([&] { return Files(Dir(s)).size() == 3; })) << "history files remain";
  ASSERT_EQ(s.Stop(), 0);
  ServerProcess again(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
}

// A rewrite that cannot write its file (the file-size limit stands in for a full disk) fails;
// the old base and increments stay valid and complete, and writes go on.
TEST(Aof, FailedRewriteLeavesTheOldFilesValid) {
  // The server starts under a 1 MB limit on the files it writes (inherited across fork and
  // exec): its increment stays far below it, a rewrite's base (a 2 MB string) cannot.
  rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit lim{1 << 20, old.rlim_max};
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  auto s = std::make_unique<ServerProcess>(
      Kind::kKvstore,
      std::vector<std::string>{"--appendonly", "yes", "--aof-use-rdb-preamble", "no"});
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  RespClient c(s->port());
  c.Call({"SETRANGE", "big", "2000000", "x"});
  c.Call({"SET", "before", "1"});
  ASSERT_EQ(c.Call({"BGREWRITEAOF"}).str, "Background append only file rewriting started");
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0" &&
           InfoField(c, "persistence", "aof_last_bgrewrite_status") == "err";
  }));
  EXPECT_EQ(InfoField(c, "persistence", "aof_rewrites_consecutive_failures"), "1");
  EXPECT_EQ(c.Call({"SET", "after-failure", "2"}).str, "OK");
  std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
  // The old base and both increments (the one opened for the rewrite stays) are listed.
  std::string manifest = ReadFile(Dir(*s) + "/appendonly.aof.manifest");
  EXPECT_EQ(manifest,
            "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 "
            "type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n");
  ASSERT_EQ(s->Stop(), 0);
  ServerProcess again(Kind::kKvstore, {"--dir", s->dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(a.Call({"GET", "after-failure"}).str, "2");
  EXPECT_EQ(a.Call({"STRLEN", "big"}).integer, 2000001);
}

// CONFIG SET appendonly yes starts with a rewrite (the AOF exists once it is done), writes
// meanwhile are kept, and the next start loads it; appendonly no stops writing.
TEST(Aof, TurnedOnAndOffAtRuntime) {
  ServerProcess s(Kind::kKvstore, {"--rdb-key-save-delay", "200"});
  RespClient c(s.port());
  for (int i = 0; i < 100; i++) c.Call({"SET", "k" + std::to_string(i), "v"});
  ASSERT_EQ(c.Call({"CONFIG", "SET", "appendonly", "yes"}).str, "OK");
  EXPECT_EQ(InfoField(c, "persistence", "aof_enabled"), "1");
  EXPECT_EQ(InfoField(c, "persistence", "aof_rewrite_in_progress"), "1");
  c.Call({"SET", "during", "1"});  // while the first base is written
  WaitRewriteDone(c);
  c.Call({"SET", "after", "2"});
  std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(ReadFile(Dir(s) + "/appendonly.aof.manifest"),
            "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 "
            "type i\n");
  ASSERT_EQ(c.Call({"CONFIG", "SET", "appendonly", "no"}).str, "OK");
  EXPECT_EQ(InfoField(c, "persistence", "aof_enabled"), "0");
  c.Call({"SET", "not-in-aof", "3"});
  ASSERT_EQ(s.Stop(), 0);
  ServerProcess again(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(a.Call({"EXISTS", "not-in-aof"}).integer, 0);
}

// A replica with appendonly yes writes its own AOF from the stream (its snapshot as the base,
// then the commands): restarted alone from it, it has the primary's dataset.
TEST(Aof, ReplicaWritesItsOwnAof) {
  ServerProcess primary(Kind::kKvstore);
  RespClient p(primary.port());
  for (int i = 0; i < 100; i++) p.Call({"SET", "pre" + std::to_string(i), "v"});
  ServerProcess replica(Kind::kKvstore, {"--appendonly", "yes", "--replicaof", "127.0.0.1",
                                         std::to_string(primary.port())});
  RespClient r(replica.port());
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; }));
  p.Call({"RPUSH", "l", "a", "b"});
  p.Call({"SELECT", "4"});
  p.Call({"SET", "x", "y", "EX", "1000"});
  p.Call({"MULTI"});
  p.Call({"INCR", "n"});
  p.Call({"INCR", "n"});
  p.Call({"EXEC"});
  p.Call({"SELECT", "0"});
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  ASSERT_TRUE(WaitFor([&] { return r.Call({"DEBUG", "DIGEST"}).str == digest; }));
  WaitRewriteDone(r);
  ASSERT_EQ(replica.Stop(), 0);
  ServerProcess alone(Kind::kKvstore, {"--dir", replica.dir(), "--appendonly", "yes"});
  RespClient a(alone.port());
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
}

// One child at a time, with Redis' replies: BGSAVE during a rewrite is refused or scheduled,
// BGREWRITEAOF during a BGSAVE is scheduled; each runs once the other is done. Both servers.
TEST(Aof, RewriteAndBgsaveTakeTurns) {
  for (Kind k : {Kind::kKvstore, Kind::kRedis}) {
    if (k == Kind::kRedis && !HaveRedisServer()) continue;
    SCOPED_TRACE(Name(k));
    ServerProcess s(k, {"--appendonly", "yes", "--rdb-key-save-delay", "1000"});
    RespClient c(s.port());
    WaitRewriteDone(c);
    for (int i = 0; i < 300; i++) c.Call({"SET", "k" + std::to_string(i), "v"});
    ASSERT_EQ(c.Call({"BGREWRITEAOF"}).str, "Background append only file rewriting started");
    EXPECT_EQ(c.Call({"BGSAVE"}).str,
              "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
              "SCHEDULE in order to schedule a BGSAVE whenever possible.");
    EXPECT_EQ(c.Call({"BGSAVE", "SCHEDULE"}).str, "Background saving scheduled");
    WaitRewriteDone(c);
    ASSERT_TRUE(WaitFor(
        [&] {
          return InfoField(c, "persistence", "rdb_saves") == "1" &&
                 InfoField(c, "persistence", "rdb_bgsave_in_progress") == "0";
        },
        20000));
    EXPECT_EQ(InfoField(c, "persistence", "rdb_last_bgsave_status"), "ok");
    ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
    EXPECT_EQ(c.Call({"BGREWRITEAOF"}).str, "Background append only file rewriting scheduled");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "aof_rewrites") == "2"; }, 20000));
    WaitRewriteDone(c);
    EXPECT_EQ(InfoField(c, "persistence", "aof_last_bgrewrite_status"), "ok");
  }
}

// auto-aof-rewrite-percentage: the AOF is rewritten once it has grown that much over its size
// after the last rewrite (and is over auto-aof-rewrite-min-size).
TEST(Aof, AutomaticRewriteOnGrowth) {
  ServerProcess s(Kind::kKvstore, {"--appendonly", "yes", "--auto-aof-rewrite-min-size", "100kb",
                                   "--auto-aof-rewrite-percentage", "100"});
  RespClient c(s.port());
  // Overwriting one key grows the file, not the dataset: the rewrite shrinks it to one key.
  for (int i = 0; i < 2000; i++) c.Call({"SET", "k", std::string(100, 'a' + i % 26)});
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "aof_rewrites") != "0"; }));
  WaitRewriteDone(c);
  EXPECT_NE(s.LogText().find("Starting automatic rewriting of AOF on"), std::string::npos);
  // A rewrite that started while the SETs still ran leaves the rest of them in the new
  // incremental file, which then grows past the limit again and gets rewritten in turn: the
  // file ends small either way, once no rewrite is left to run.
  EXPECT_TRUE(WaitFor([&] {
    return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0" &&
           std::stoll(InfoField(c, "persistence", "aof_current_size")) < 100 * 1024;
  }));
}

// aof-disable-auto-gc yes keeps the history files a rewrite leaves (listed as type h, in
// Redis' order); turning it off removes them. Both servers.
TEST(Aof, HistoryStaysWhileAutoGcIsOff) {
  for (Kind k : {Kind::kKvstore, Kind::kRedis}) {
    if (k == Kind::kRedis && !HaveRedisServer()) continue;
    SCOPED_TRACE(Name(k));
    ServerProcess s(k, {"--appendonly", "yes", "--aof-disable-auto-gc", "yes"});
    RespClient c(s.port());
    c.Call({"SET", "k", "v"});
    ASSERT_FALSE(c.Call({"BGREWRITEAOF"}).is_error());
    WaitRewriteDone(c);
    EXPECT_EQ(ReadFile(Dir(s) + "/appendonly.aof.manifest"),
              "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.1.incr.aof seq 1 "
              "type h\nfile appendonly.aof.1.base.rdb seq 1 type h\nfile "
              "appendonly.aof.2.incr.aof seq 2 type i\n");
    EXPECT_EQ(Files(Dir(s)).size(), 5u);
    ASSERT_EQ(c.Call({"CONFIG", "SET", "aof-disable-auto-gc", "no"}).str, "OK");
    EXPECT_EQ(ReadFile(Dir(s) + "/appendonly.aof.manifest"),
              "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 "
              "type i\n");
    EXPECT_TRUE(WaitFor([&] { return Files(Dir(s)).size() == 3; }));
  }
}

// Keys the server removes on its own reach the AOF as DELs: evicted keys do not come back at
// the next start, expired ones are gone from the file's replay too.
TEST(Aof, EvictionsAndExpiriesAreInTheFile) {
  ServerProcess s(Kind::kKvstore, {"--appendonly", "yes", "--maxmemory", "4mb",
                                   "--maxmemory-policy", "allkeys-lru"});
  RespClient c(s.port());
  for (int i = 0; i < 4000; i++) c.Call({"SET", "k" + std::to_string(i), std::string(1000, 'x')});
  EXPECT_GT(std::stoll(InfoField(c, "stats", "evicted_keys")), 0);
  // No eviction from here on (any command may evict, and the key that is to expire could go
  // that way instead): the count and digest below are those of a dataset at rest.
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory", "0"}).str, "OK");
  c.Call({"SET", "short", "v", "PX", "50"});
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "stats", "expired_keys") == "1"; }));
  int64_t keys = c.Call({"DBSIZE"}).integer;
  std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
  ASSERT_EQ(s.Stop(), 0);
  EXPECT_NE(ReadFile(LastIncr(Dir(s))).find("$3\r\nDEL\r\n$5\r\nshort"), std::string::npos);
  ServerProcess again(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"DBSIZE"}).integer, keys);
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
}

// redis.conf lines as users write them, and the INFO fields monitoring reads.
TEST(Aof, ConfigFileAndInfo) {
  char tmpl[] = "/tmp/kvstore-aofconf-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string conf = dir + "/redis.conf";
  {
    std::ofstream f(conf);
    f << "appendonly yes\nappendfilename \"mydata.aof\"\nappenddirname \"aofdir\"\n"
         "appendfsync always\naof-timestamp-enabled yes\n";
  }
  ServerProcess s(Kind::kKvstore, {conf});
  RespClient c(s.port());
  c.Call({"SET", "k", "v"});
  EXPECT_EQ(InfoField(c, "persistence", "aof_enabled"), "1");
  EXPECT_EQ(InfoField(c, "persistence", "aof_last_write_status"), "ok");
  EXPECT_NE(InfoField(c, "persistence", "aof_current_size"), "0");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "appendfsync"}).elems[1].str, "always");
  std::string incr = ReadFile(s.dir() + "/aofdir/mydata.aof.1.incr.aof");
  EXPECT_EQ(incr.rfind("#TS:", 0), 0u) << incr;
  EXPECT_NE(incr.find("$1\r\nk\r\n$1\r\nv\r\n"), std::string::npos);
  EXPECT_TRUE(c.Call({"CONFIG", "SET", "appenddirname", "x"}).is_error());
  fs::remove_all(dir);
}

// An old-style AOF (one appendonly.aof in the data directory, from before multi-part AOF) that
// starts with an RDB preamble and goes on with commands: both servers load the preamble and then
// its command tail, and move the file into the AOF directory. Redis' integration/aof-multi-part
// "Multi Part AOF can load data from old version redis (rdb preamble yes)".
TEST(Aof, AnOldStyleFileWithAnRdbPreambleLoads) {
  std::string rdb;
  {
    ServerProcess source(Kind::kKvstore);
    RespClient c(source.port());
    ASSERT_EQ(c.Call({"MSET", "k1", "v1", "k2", "v2"}).str, "OK");
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    rdb = ReadFile(source.dir() + "/dump.rdb");
  }
  ASSERT_EQ(rdb.rfind("REDIS", 0), 0u);
  const std::string tail = RespClient::Encode({"SET", "k3", "v3"});
  for (Kind kind : {Kind::kRedis, Kind::kKvstore}) {
    SCOPED_TRACE(kind == Kind::kRedis ? "redis" : "kvstore");
    char tmpl[] = "/tmp/kvstore-test-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::ofstream(dir + "/appendonly.aof", std::ios::binary) << rdb << tail;
    ServerProcess s(kind, {"--dir", dir, "--appendonly", "yes"});
    RespClient c(s.port());
    EXPECT_EQ(c.Raw({"MGET", "k1", "k2", "k3"}), "*3\r\n$2\r\nv1\r\n$2\r\nv2\r\n$2\r\nv3\r\n")
        << s.LogText();
    EXPECT_TRUE(std::filesystem::exists(dir + "/appendonlydir/appendonly.aof")) << s.LogText();
    EXPECT_NE(s.LogText().find("Reading the remaining AOF tail"), std::string::npos) << s.LogText();
    s.Stop();
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace kv::test
