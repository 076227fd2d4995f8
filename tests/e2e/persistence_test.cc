// End-to-end tests of snapshots: RDB files written by kvstore and loaded by Debian's redis-server
// and the other way round, DUMP/RESTORE payloads in both directions, BGSAVE while writes go on,
// save points, saving at shutdown, DEBUG RELOAD, MISCONF, and refusing to start on a corrupt file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "tests/support/dataset.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

class PersistenceInterop : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// kvstore writes, Redis loads; Redis writes, kvstore loads; with rdbcompression yes and no.
TEST_P(PersistenceInterop, BothDirectionsGiveIdenticalDatasets) {
  std::string compression = GetParam();
  for (Kind writer : {Kind::kKvstore, Kind::kRedis}) {
    Kind reader = writer == Kind::kKvstore ? Kind::kRedis : Kind::kKvstore;
    SCOPED_TRACE(writer == Kind::kKvstore ? "kvstore -> redis" : "redis -> kvstore");
    ServerProcess w(writer, {"--rdbcompression", compression});
    RespClient wc(w.port());
    PopulateAllTypes(wc, /*big=*/compression == "yes");
    Snapshot before = Capture(wc);
    ASSERT_EQ(wc.Call({"SAVE"}).str, "OK");
    ServerProcess r(reader, {"--dir", w.dir()});
    RespClient rc(r.port());
    WaitLoaded(rc);
    Snapshot after = Capture(rc);
    EXPECT_EQ(after.digest, before.digest);
    EXPECT_EQ(after.shape, before.shape);
  }
}

INSTANTIATE_TEST_SUITE_P(Compression, PersistenceInterop, ::testing::Values("yes", "no"));

// FLUSHALL with save points set saves the empty dataset at once (Redis' flushAllDataAndResetRDB):
// the file on disk is empty too, and no change is pending. Without save points nothing is saved.
TEST(PersistenceFlushAll, SavesTheEmptyDatasetWhenSavePointsAreSet) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    for (bool save_points : {true, false}) {
      ServerProcess s(kind, save_points ? Cmd{"--save", "3600 1"} : Cmd{});
      RespClient c(s.port());
      c.Call({"SET", "a", "1"});
      c.Call({"SET", "b", "1"});
      std::string rdb = s.dir() + "/dump.rdb";
      std::filesystem::remove(rdb);
      ASSERT_EQ(c.Call({"FLUSHALL"}).str, "OK");
      std::string changes = InfoField(c, "persistence", "rdb_changes_since_last_save");
      if (save_points) {
        EXPECT_EQ(changes, "0") << (kind == Kind::kRedis ? "redis" : "kvstore");
        EXPECT_TRUE(std::filesystem::exists(rdb));
        ASSERT_EQ(c.Call({"SET", "c", "1"}).str, "OK");
        ASSERT_EQ(c.Call({"DEBUG", "RELOAD", "NOSAVE"}).str, "OK");  // the file FLUSHALL wrote
        EXPECT_EQ(c.Call({"DBSIZE"}).integer, 0);
      } else {
        EXPECT_NE(changes, "0");
        EXPECT_FALSE(std::filesystem::exists(rdb));
      }
    }
  }
}

// LZF-compressed values are Redis' bytes: the same compressor decisions (what compresses,
// each literal run and back reference), so DUMP payloads of strings and of a compressed list's
// nodes are identical on both servers, as are DEBUG OBJECT's serializedlength figures.
TEST(PersistenceInteropDump, CompressedPayloadsAreRedisBytes) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore, {"--list-compress-depth", "1"});
  ServerProcess redis(Kind::kRedis, {"--list-compress-depth", "1"});
  RespClient k(kv.port()), r(redis.port());
  std::string words;
  std::mt19937 rng(7);
  const char* vocab[] = {"alpha", "beta", "gamma", "delta", "kv", "store", " ", "\n", "0123"};
  while (words.size() < 30000) words += vocab[rng() % 9];
  std::string noisy;  // mostly literals, some short repeats
  while (noisy.size() < 5000) noisy += static_cast<char>('a' + rng() % 26);
  noisy += noisy.substr(100, 300) + noisy.substr(4000, 900);
  const std::vector<std::string> strings = {std::string(21, 'a'),      std::string(300, 'a'),
                                            std::string(70000, 'z'),   words,
                                            words.substr(0, 25),       noisy,
                                            "abcabcabcabcabcabcabcabc"};
  for (size_t i = 0; i < strings.size(); i++) {
    for (RespClient* c : {&k, &r}) ASSERT_EQ(c->Call({"SET", "s", strings[i]}).str, "OK");
    EXPECT_EQ(k.Call({"DUMP", "s"}).str, r.Call({"DUMP", "s"}).str) << "string " << i;
  }
  // Three nodes of 8 KiB: the middle one is compressed.
  for (int i = 0; i < 3 * 60; i++) {
    std::string item = words.substr(static_cast<size_t>(i) * 100, 130);
    for (RespClient* c : {&k, &r}) c->Call({"RPUSH", "list", item});
  }
  EXPECT_EQ(k.Call({"DUMP", "list"}).str, r.Call({"DUMP", "list"}).str);
}

TEST(PersistenceInteropDump, PayloadsMoveBothWays) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore), redis(Kind::kRedis);
  RespClient k(kv.port()), r(redis.port());
  PopulateAllTypes(k, false);
  PopulateAllTypes(r, false);
  for (int db : {0, 3, 15}) {
    for (RespClient* c : {&k, &r}) c->Call({"SELECT", std::to_string(db)});
    Reply keys = k.Call({"KEYS", "*"});
    ASSERT_GT(keys.elems.size(), 10u);
    for (const auto& key : keys.elems) {
      for (auto [from, to] : {std::pair{&k, &r}, std::pair{&r, &k}}) {
        Reply payload = from->Call({"DUMP", key.str});
        ASSERT_EQ(payload.type, '$') << key.str;
        // The digest covers the TTL too: restore with the same one.
        int64_t pttl = from->Call({"PTTL", key.str}).integer;
        std::string ttl = std::to_string(pttl > 0 ? pttl + 60000 : 0);
        Reply res = to->Call({"RESTORE", key.str + ":copy", ttl, payload.str});
        ASSERT_EQ(res.str, "OK") << key.str << " " << res.str;
        EXPECT_EQ(to->Call({"DEBUG", "DIGEST-VALUE", key.str + ":copy"}).raw,
                  from->Call({"DEBUG", "DIGEST-VALUE", key.str}).raw)
            << key.str;
        EXPECT_EQ(to->Call({"OBJECT", "ENCODING", key.str + ":copy"}).str,
                  from->Call({"OBJECT", "ENCODING", key.str}).str)
            << key.str;
        to->Call({"DEL", key.str + ":copy"});
      }
    }
  }
}

// RESTORE's error replies are Redis' own.
TEST(PersistenceInteropDump, RestoreErrorsMatchRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore), redis(Kind::kRedis);
  RespClient k(kv.port()), r(redis.port());
  for (RespClient* c : {&k, &r}) {
    c->Call({"SET", "src", "value"});
    c->Call({"SET", "exists", "x"});
  }
  std::string good = k.Call({"DUMP", "src"}).str;
  std::string bad_crc = good;
  bad_crc[bad_crc.size() - 1] ^= 1;
  std::vector<Cmd> cmds = {
      {"RESTORE", "k1", "0", good},
      {"RESTORE", "exists", "0", good},
      {"RESTORE", "exists", "0", good, "REPLACE"},
      {"RESTORE", "k2", "0", bad_crc},
      {"RESTORE", "k3", "-1", good},
      {"RESTORE", "k4", "abc", good},
      {"RESTORE", "k5", "0", good, "IDLETIME", "-1"},
      {"RESTORE", "k6", "0", good, "FREQ", "256"},
      {"RESTORE", "k7", "0", good, "IDLETIME", "10", "FREQ", "5"},
      {"RESTORE", "k8", "0", good, "BOGUS"},
      {"RESTORE", "k9", "1", good, "ABSTTL"},
      {"EXISTS", "k9"},
      {"RESTORE", "k10", "100000", good},
      {"RESTORE", "k11", "0", "short"},
      {"DUMP", "missing"},
      {"GET", "k1"},
  };
  for (const Cmd& cmd : cmds) {
    EXPECT_EQ(k.Call(cmd).raw, r.Call(cmd).raw) << cmd[0] << " " << cmd[1];
  }
  EXPECT_GT(k.Call({"PTTL", "k10"}).integer, 90000);
}

// RESTORE IDLETIME sets the idle time OBJECT IDLETIME shows; FREQ the counter OBJECT FREQ shows
// under an LFU maxmemory-policy (and only then, as in Redis).
TEST(PersistenceInteropDump, RestoreSetsIdleTimeAndFrequency) {
  ServerProcess kv(Kind::kKvstore);
  RespClient c(kv.port());
  c.Call({"SET", "src", "v"});
  std::string payload = c.Call({"DUMP", "src"}).str;
  ASSERT_EQ(c.Call({"RESTORE", "idle", "0", payload, "IDLETIME", "1000"}).str, "OK");
  EXPECT_GE(c.Call({"OBJECT", "IDLETIME", "idle"}).integer, 1000);
  ASSERT_EQ(c.Call({"RESTORE", "nofreq", "0", payload, "FREQ", "100"}).str, "OK");
  EXPECT_TRUE(c.Call({"OBJECT", "FREQ", "nofreq"}).is_error());
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}).str, "OK");
  ASSERT_EQ(c.Call({"RESTORE", "freq", "0", payload, "FREQ", "100"}).str, "OK");
  EXPECT_EQ(c.Call({"OBJECT", "FREQ", "freq"}).integer, 100);
  EXPECT_TRUE(c.Call({"OBJECT", "IDLETIME", "freq"}).is_error());
}

// The RDB's IDLE and FREQ records: under an LRU policy a snapshot keeps each key's idle time,
// under an LFU one its counter, and the other server reads them (both directions).
TEST(PersistenceInteropDump, IdleAndFreqRecordsMoveBothWays) {
  for (Kind writer : {Kind::kKvstore, Kind::kRedis}) {
    Kind reader = writer == Kind::kKvstore ? Kind::kRedis : Kind::kKvstore;
    SCOPED_TRACE(writer == Kind::kKvstore ? "kvstore -> redis" : "redis -> kvstore");
    for (const char* policy : {"allkeys-lru", "allkeys-lfu"}) {
      SCOPED_TRACE(policy);
      const bool lfu = std::string(policy) == "allkeys-lfu";
      ServerProcess w(writer, {"--maxmemory-policy", policy});
      RespClient wc(w.port());
      wc.Call({"SET", "src", "v"});
      std::string payload = wc.Call({"DUMP", "src"}).str;
      ASSERT_EQ(
          wc.Call({"RESTORE", "k", "0", payload, lfu ? "FREQ" : "IDLETIME", lfu ? "100" : "5000"})
              .str,
          "OK");
      ASSERT_EQ(wc.Call({"SAVE"}).str, "OK");
      ServerProcess r(reader, {"--dir", w.dir(), "--maxmemory-policy", policy});
      RespClient rc(r.port());
      WaitLoaded(rc);
      if (lfu) {
        EXPECT_EQ(rc.Call({"OBJECT", "FREQ", "k"}).integer, 100);
      } else {
        EXPECT_GE(rc.Call({"OBJECT", "IDLETIME", "k"}).integer, 5000);
      }
    }
  }
}

// A snapshot started by BGSAVE holds the dataset as it was at the fork, whatever is written
// while the child runs; the server keeps serving meanwhile.
TEST(Persistence, BgsaveSnapshotsThePointOfTheFork) {
  ServerProcess kv(Kind::kKvstore);
  RespClient c(kv.port());
  Cmd mset = {"MSET"};
  for (int i = 0; i < 20000; i++) {
    mset.push_back("key:" + std::to_string(i));
    mset.push_back(std::string(100, static_cast<char>('a' + i % 26)));
  }
  ASSERT_EQ(c.Call(mset).str, "OK");
  std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
  int64_t before = c.Call({"LASTSAVE"}).integer;
  ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
  // Writes while the child runs: not in the snapshot.
  for (int i = 0; i < 200; i++) c.Call({"SET", "after:" + std::to_string(i), "x"});
  c.Call({"DEL", "key:1"});
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "rdb_bgsave_in_progress") == "0"; }));
  EXPECT_EQ(InfoField(c, "persistence", "rdb_last_bgsave_status"), "ok");
  EXPECT_GE(c.Call({"LASTSAVE"}).integer, before);
  EXPECT_EQ(InfoField(c, "stats", "total_forks"), "1");
  // Changes made during the save still count as unsaved.
  EXPECT_EQ(InfoField(c, "persistence", "rdb_changes_since_last_save"), "201");
  ServerProcess again(Kind::kKvstore, {"--dir", kv.dir()});
  RespClient c2(again.port());
  EXPECT_EQ(c2.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(InfoField(c2, "persistence", "rdb_last_load_keys_loaded"), "20000");
}

// While a BGSAVE child runs, SAVE and BGSAVE are refused, BGSAVE SCHEDULE too: Redis schedules
// only behind a child of another kind (an AOF rewrite), never behind an RDB one. redis-server
// is held to the same.
TEST(Persistence, BgsaveRepliesAndSchedule) {
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(kind == Kind::kKvstore ? "kvstore" : "redis");
    ServerProcess server(kind);
    RespClient c(server.port());
    EXPECT_EQ(c.Call({"BGSAVE", "NOW"}).str, "ERR syntax error");
    ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "1000"}).str, "OK");
    ASSERT_EQ(c.Call({"CONFIG", "SET", "rdb-key-save-delay", "1000"}).str, "OK");  // ~1 s
    ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
    EXPECT_EQ(c.Call({"BGSAVE"}).str, "ERR Background save already in progress");
    EXPECT_EQ(c.Call({"BGSAVE", "SCHEDULE"}).str, "ERR Background save already in progress");
    EXPECT_EQ(c.Call({"SAVE"}).str, "ERR Background save already in progress");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "persistence", "rdb_bgsave_in_progress") == "0";
    }));
    EXPECT_EQ(InfoField(c, "persistence", "rdb_last_bgsave_status"), "ok");
    EXPECT_EQ(c.Call({"BGSAVE", "SCHEDULE"}).str, "Background saving started");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "persistence", "rdb_bgsave_in_progress") == "0";
    }));
  }
}

TEST(Persistence, SavePointsTriggerBackgroundSaves) {
  ServerProcess kv(Kind::kKvstore, {"--save", "1 2"});
  RespClient c(kv.port());
  c.Call({"SET", "a", "1"});
  c.Call({"SET", "b", "2"});
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "rdb_saves") == "1"; }, 8000));
  EXPECT_EQ(InfoField(c, "persistence", "rdb_changes_since_last_save"), "0");
  EXPECT_TRUE(kv.LogText().find("2 changes in 1 seconds. Saving...") != std::string::npos);
  EXPECT_FALSE(ReadFile(kv.dir() + "/dump.rdb").empty());
}

TEST(Persistence, ShutdownSavesWhenConfiguredAndNosaveDoesNot) {
  ServerProcess kv(Kind::kKvstore, {"--save", "3600 1"});
  {
    RespClient c(kv.port());
    c.Call({"SET", "kept", "1"});
  }
  EXPECT_EQ(kv.Stop(), 0);  // SIGTERM: a final save
  ServerProcess again(Kind::kKvstore, {"--dir", kv.dir(), "--save", "3600 1"});
  RespClient c(again.port());
  EXPECT_EQ(c.Call({"GET", "kept"}).str, "1");
  c.Call({"SET", "lost", "1"});
  c.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(c.WaitClosed(5000));
  ServerProcess third(Kind::kKvstore, {"--dir", kv.dir()});
  RespClient c3(third.port());
  EXPECT_EQ(c3.Call({"EXISTS", "lost"}).integer, 0);
  EXPECT_EQ(c3.Call({"EXISTS", "kept"}).integer, 1);
  // SHUTDOWN SAVE saves even without save points.
  c3.Call({"SET", "saved-by-shutdown", "1"});
  c3.Send({"SHUTDOWN", "SAVE"});
  EXPECT_TRUE(c3.WaitClosed(5000));
  ServerProcess fourth(Kind::kKvstore, {"--dir", kv.dir()});
  RespClient c4(fourth.port());
  EXPECT_EQ(c4.Call({"EXISTS", "saved-by-shutdown"}).integer, 1);
}

TEST(Persistence, DebugReloadKeepsTheDataset) {
  ServerProcess kv(Kind::kKvstore);
  RespClient c(kv.port());
  PopulateAllTypes(c, false);
  Snapshot before = Capture(c);
  ASSERT_EQ(c.Call({"DEBUG", "RELOAD"}).str, "OK");
  Snapshot after = Capture(c);
  EXPECT_EQ(after.digest, before.digest);
  EXPECT_EQ(after.shape, before.shape);
  c.Call({"SET", "only-in-memory", "1"});
  ASSERT_EQ(c.Call({"DEBUG", "RELOAD", "NOSAVE"}).str, "OK");
  EXPECT_EQ(c.Call({"EXISTS", "only-in-memory"}).integer, 0);
  EXPECT_TRUE(c.Call({"DEBUG", "RELOAD", "BOGUS"}).is_error());
}

// A background save that fails (its directory vanished) with save points configured stops
// writes with MISCONF until a save succeeds again.
TEST(Persistence, FailedBgsaveStopsWritesWithMisconf) {
  ServerProcess kv(Kind::kKvstore, {"--save", "3600 1", "--enable-protected-configs", "yes"});
  RespClient c(kv.port());
  std::string dir = kv.dir() + "/sub";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "dir", dir}).str, "OK");
  ASSERT_EQ(rmdir(dir.c_str()), 0);
  c.Call({"SET", "a", "1"});
  ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "rdb_last_bgsave_status") == "err"; }));
  Reply r = c.Call({"SET", "b", "2"});
  EXPECT_EQ(r.str.rfind("MISCONF ", 0), 0u) << r.str;
  EXPECT_TRUE(c.Call({"PING"}).is_error());
  EXPECT_EQ(c.Call({"GET", "a"}).str, "1");  // reads still work
  ASSERT_EQ(c.Call({"CONFIG", "SET", "stop-writes-on-bgsave-error", "no"}).str, "OK");
  EXPECT_EQ(c.Call({"SET", "b", "2"}).str, "OK");
  EXPECT_EQ(c.Call({"SHUTDOWN", "NOSAVE"}).type, 0);
}

// A save that dies half way (the child killed with SIGKILL, as a crash would) leaves the previous
// dump.rdb untouched and no temp file behind.
TEST(Persistence, CrashMidSaveLeavesThePreviousFileIntact) {
  ServerProcess kv(Kind::kKvstore);
  RespClient c(kv.port());
  std::mt19937_64 rng(5);
  for (int batch = 0; batch < 150; batch++) {
    Cmd mset = {"MSET"};
    for (int i = 0; i < 1000; i++) {
      mset.push_back("k:" + std::to_string(batch) + ":" + std::to_string(i));
      mset.push_back(RandomBytes(rng, 1000));
    }
    ASSERT_EQ(c.Call(mset).str, "OK");
  }
  ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
  std::string path = kv.dir() + "/dump.rdb";
  std::string good = ReadFile(path);
  c.Call({"SET", "changed", "1"});
  ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
  // The child writes temp-<pid>.rdb; kill it while it does.
  pid_t child = -1;
  for (int i = 0; i < 5000 && child < 0; i++) {
    for (const auto& f : std::filesystem::directory_iterator(kv.dir())) {
      std::string name = f.path().filename();
      if (name.rfind("temp-", 0) == 0) child = std::stoi(name.substr(5));
    }
    if (child < 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_GT(child, 0) << "no temp file seen";
  bool killed = kill(child, SIGKILL) == 0;
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "rdb_bgsave_in_progress") == "0"; }));
  if (!killed || InfoField(c, "persistence", "rdb_last_bgsave_status") == "ok") {
    GTEST_SKIP() << "the child finished before it could be killed";
  }
  EXPECT_EQ(ReadFile(path), good);
  for (const auto& f : std::filesystem::directory_iterator(kv.dir())) {
    EXPECT_NE(f.path().filename().string().rfind("temp-", 0), 0u) << f.path();
  }
  EXPECT_NE(kv.LogText().find("terminated by signal 9"), std::string::npos);
}

TEST(Persistence, CorruptFileRefusesToStartAndIsLeftAlone) {
  ServerProcess kv(Kind::kKvstore);
  {
    RespClient c(kv.port());
    PopulateAllTypes(c, false);
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
  }
  std::string path = kv.dir() + "/dump.rdb";
  std::string good = ReadFile(path);
  std::mt19937_64 rng(9);
  struct Case {
    std::string name, data, expect;
  };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x55;
  std::string bad_crc = good;
  bad_crc[good.size() - 1] ^= 1;
  std::string bad_len = good.substr(0, 9) + std::string("\xfe\x00\xfb\x81", 4) +
                        std::string(8, '\x7f');  // RESIZEDB with an absurd 64-bit length...
  // In Redis' words, which tools wait for: "Internal error in RDB reading offset N -> ...", "CRC
  // error" for a bad checksum, and "Terminating server after rdb file reading failure." last.
  std::vector<Case> cases = {
      {"truncated", good.substr(0, good.size() / 3), "Internal error in RDB reading offset"},
      {"flipped", flipped, "Internal error in RDB reading offset"},
      {"checksum", bad_crc, "RDB CRC error"},
      {"signature", "NOTANRDBFILE" + good.substr(12), "signature"},
      {"version", "REDIS0099" + good.substr(9), "version"},
      {"absurd-length", bad_len, "Internal error in RDB reading offset"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    WriteFile(path, c.data);
    std::string log = ExpectRefusesToStart(kv.dir());
    EXPECT_NE(log.find(c.expect), std::string::npos) << log;
    std::string last = log.substr(log.rfind('\n', log.size() - 2) + 1);
    EXPECT_NE(last.find("Terminating server after rdb file reading failure."), std::string::npos)
        << log;
    EXPECT_EQ(ReadFile(path), c.data);  // never overwritten
    if (c.name == "checksum" && HaveRedisServer()) {
      // The oracle's log has the same words for it.
      std::string theirs = ExpectRefusesToStart(kv.dir(), {}, /*redis=*/true);
      EXPECT_NE(theirs.find("Internal error in RDB reading offset"), std::string::npos) << theirs;
      EXPECT_NE(theirs.find("RDB CRC error"), std::string::npos) << theirs;
    }
  }
}

}  // namespace
}  // namespace kv::test
