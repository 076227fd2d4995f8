// End-to-end tests of replication over the RDMA data plane around its edges: shm regions of
// dead processes, a primary without doorbells, a mixed tree with a redis-server replica on TCP,
// loading the fabric providers, fallback to TCP, `repl-transport auto`, and hostile data-link
// requests.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/strutil.h"
#include "repl/datalink/data_link.h"
#include "tests/e2e/replication_rdma_util.h"
#include "tests/support/background_writes.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"
#include "transport/channel.h"
#include "transport/test_providers.h"
#include "transport/wire.h"

namespace kv::test {
namespace {

using namespace rdma_repl;

// Regions that a killed process left in /dev/shm (as its shm endpoints name them) are removed
// by the next process that opens an shm endpoint: its own pid's (which would make fi_enable
// fail) and those of processes gone for over a minute; a live process's are kept.
TEST(RdmaReplicationShm, RegionsOfDeadProcessesAreRemoved) {
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 100);
  ServerProcess replica(Kind::kKvstore,
                        {"--repl-transport", "rdma", "--repl-rdma-provider", "shm"});
  RespClient r(replica.port());
  // Regions an hour old: one of a process that is gone, one named after the replica (left by
  // an earlier process with its pid: only the replica removes that one, as no other process
  // may take a live pid's region), one of this live process.
  std::string stale = "/dev/shm/" + std::to_string(dead) + ":7:7";
  std::string reused = "/dev/shm/" + std::to_string(replica.pid()) + ":7:7";
  std::string live = "/dev/shm/" + std::to_string(getpid()) + ":7:7";
  for (const std::string& path : {stale, reused, live}) {
    int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0) << path;
    close(fd);
    timeval old[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
    ASSERT_EQ(utimes(path.c_str(), old), 0);
  }
  // Its first shm endpoint comes with the data link.
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_TRUE(InSync(p, r)) << replica.LogText();
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma");
  // Any process's first shm endpoint may have removed the dead one (tests run in parallel).
  EXPECT_NE(access(stale.c_str(), F_OK), 0) << "the dead process's region is still there";
  EXPECT_NE(access(reused.c_str(), F_OK), 0) << "the region named after the replica is there";
  EXPECT_EQ(access(live.c_str(), F_OK), 0) << "a live process's region was removed";
  unlink(live.c_str());
  EXPECT_NE(replica.LogText().find("shared-memory region(s)"), std::string::npos)
      << replica.LogText();
}

// A primary with repl-rdma-doorbell no rings no doorbell (as one from before doorbells): the
// shm replica polls its end of the link instead of sleeping on it, and the sync and the stream
// go on as ever.
TEST(RdmaReplicationShm, WithoutDoorbellsTheReplicaPolls) {
  ServerProcess primary(Kind::kKvstore,
                        {"--repl-diskless-sync-delay", "0", "--repl-rdma-doorbell", "no"});
  RespClient p(primary.port());
  Populate(p, 5000);
  BackgroundWrites writer(primary.port(), Writes);
  ServerProcess replica(Kind::kKvstore, RdmaReplica(primary, "shm"));
  RespClient r(replica.port());
  ASSERT_TRUE(LinkUp(r)) << replica.LogText();
  ExpectCaughtUp(writer, p, r, replica);
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma");
  EXPECT_EQ(InfoField(r, "replication", "rdma_link_errors"), "0");
  std::string log = replica.LogText();
  EXPECT_NE(log.find("polling: no wait fd"), std::string::npos) << log;
  // Pipelined writes after the sync arrive too.
  for (int i = 0; i < 32; i++) p.Send({"APPEND", "tail", std::to_string(i) + ","});
  for (int i = 0; i < 32; i++) ASSERT_FALSE(p.Read().is_error());
  ASSERT_TRUE(InSync(p, r)) << replica.LogText();
  EXPECT_EQ(r.Call({"GET", "tail"}).str, p.Call({"GET", "tail"}).str);
}

// One kvstore primary, a kvstore replica over RDMA and a redis-server replica over TCP at once.
class RdmaReplicationMixed : public ::testing::TestWithParam<std::string> {};

TEST_P(RdmaReplicationMixed, KvstoreOverRdmaAndRedisOverTcp) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 10000);
  Cmd kv_args = RdmaReplica(primary, GetParam());
  kv_args.insert(kv_args.end(), {"--repl-rdma-poll-mode", "economy"});
  ServerProcess kv(Kind::kKvstore, kv_args);
  ServerProcess redis(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient k(kv.port()), rr(redis.port());
  for (int i = 0; i < 50; i++) Writes(p, i);
  ASSERT_TRUE(InSync(p, k)) << primary.LogText() << kv.LogText();
  ASSERT_TRUE(InSync(p, rr)) << primary.LogText() << redis.LogText();
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(rr.Call({"DEBUG", "DIGEST"}).str, digest);
  std::string info = p.Call({"INFO", "replication"}).str;
  EXPECT_NE(info.find("transport=rdma"), std::string::npos) << info;
  EXPECT_NE(info.find("transport=tcp"), std::string::npos) << info;
  EXPECT_NE(info.find("poll=auto"), std::string::npos) << info;  // the primary's default
  EXPECT_EQ(InfoField(k, "replication", "rdma_poll_mode"), "economy");
  EXPECT_EQ(InfoField(rr, "replication", "rdma_poll_mode"), "");  // Redis has no such field
  EXPECT_TRUE(k.Call({"CONFIG", "SET", "repl-rdma-poll-mode", "spin"}).is_error());
}

INSTANTIATE_TEST_SUITE_P(Providers, RdmaReplicationMixed,
                         ::testing::ValuesIn(transport::test::WithVerbs({"tcp"}, {"verbs"})),
                         transport::test::ConfigNamer());

// True when libfabric's verbs provider opens here (an RDMA NIC, or Soft-RoCE).
bool VerbsOpensHere() {
  transport::ChannelOptions o;
  o.provider = "verbs";
  auto r = transport::CreateReceiver(o, 0);
  return r.ok() && (*r)->LocalBlob().ok();
}

// A provider that cannot work here (verbs: no RDMA device) keeps failing: after three attempts
// the replica falls back to TCP, says so, and syncs.
// A server that may use the data plane (repl-transport auto or rdma) loads the fabric
// providers after startup, not in its first handshake; one configured for TCP never does.
TEST(RdmaReplicationSetup, FabricProvidersLoadAtStartupUnlessTcp) {
  ServerProcess rdma(Kind::kKvstore, {"--loglevel", "debug"});
  EXPECT_TRUE(WaitFor([&] {
    return rdma.LogText().find("fabric providers loaded") != std::string::npos;
  })) << rdma.LogText();
  ServerProcess tcp(Kind::kKvstore, {"--loglevel", "debug", "--repl-transport", "tcp"});
  RespClient c(tcp.port());
  EXPECT_EQ(c.Call({"PING"}).str, "PONG");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(tcp.LogText().find("fabric providers loaded"), std::string::npos) << tcp.LogText();
}

TEST(RdmaReplicationFallback, UnusableProviderFallsBackToTcp) {
  if (VerbsOpensHere()) GTEST_SKIP() << "verbs works on this machine";
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 1000);
  ServerProcess replica(Kind::kKvstore, RdmaReplica(primary, "verbs"));
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "tcp");
  EXPECT_EQ(InfoField(r, "replication", "rdma_fallbacks"), "1");
  EXPECT_NE(replica.LogText().find("falling back to TCP"), std::string::npos);
}

// A primary with 1000 keys and a replica following it under the default `repl-transport auto`;
// `check` runs once the replica is in sync.
void WithAutoReplica(
    const std::function<void(ServerProcess& replica, RespClient& p, RespClient& r)>& check) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 1000);
  ServerProcess replica(Kind::kKvstore,
                        {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p, r)) << replica.LogText();
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  check(replica, p, r);
}

// Under the default `repl-transport auto`, a machine without an RDMA NIC (no verbs provider)
// replicates over TCP from the first attempt: no failed link attempt, no fallback (which came
// after three failed links, a second apart).
TEST(RdmaReplicationFallback, AutoWithoutAnRdmaNicUsesTcpAtOnce) {
  if (VerbsOpensHere()) GTEST_SKIP() << "this machine has an RDMA NIC: auto uses it";
  WithAutoReplica([](ServerProcess& replica, RespClient&, RespClient& r) {
    EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "tcp");
    EXPECT_EQ(InfoField(r, "replication", "rdma_link_errors"), "0");
    EXPECT_EQ(InfoField(r, "replication", "rdma_fallbacks"), "0");
    EXPECT_EQ(replica.LogText().find("Replication link to"), std::string::npos)
        << replica.LogText();
    EXPECT_NE(replica.LogText().find("No RDMA data plane here"), std::string::npos)
        << replica.LogText();
  });
}

// Under the default `repl-transport auto`, a machine whose verbs provider opens (an RDMA NIC, or
// Soft-RoCE in tests/softroce/) replicates over the data link, and says which provider it uses.
TEST(RdmaReplicationAuto, AutoUsesVerbsWhereItOpens) {
  if (!VerbsOpensHere()) GTEST_SKIP() << "no RDMA device here (verbs does not open)";
  WithAutoReplica([](ServerProcess& replica, RespClient&, RespClient& r) {
    EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma") << replica.LogText();
    EXPECT_EQ(InfoField(r, "replication", "master_link_data_plane"), "fabric/verbs");
    EXPECT_EQ(InfoField(r, "replication", "rdma_fallbacks"), "0");
  });
}

// A redis-server primary does not know the extension: the kvstore replica stays on TCP.
TEST(RdmaReplicationFallback, RedisPrimaryIgnoresTheCapability) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(Kind::kRedis, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 1000);
  ServerProcess replica(Kind::kKvstore, RdmaReplica(primary, "tcp"));
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "tcp");
  EXPECT_NE(replica.LogText().find("does not offer the RDMA data plane"), std::string::npos);
}

// Hostile data-link requests are refused and leave the primary serving.
TEST(RdmaReplicationHostile, BadSetupRequestsAreRefused) {
  ServerProcess primary(Kind::kKvstore);
  RespClient p(primary.port()), bad(primary.port());
  p.Call({"SET", "k", "v"});
  EXPECT_TRUE(bad.Call({"REPLCONF", "rdma", "tcp", "zz-not-hex"}).is_error());
  EXPECT_TRUE(bad.Call({"REPLCONF", "rdma", "tcp", "00112233"}).is_error());  // not a blob
  EXPECT_TRUE(bad.Call({"REPLCONF", "rdma", "tcp"}).is_error());
  EXPECT_TRUE(bad.Call({"REPLCONF", "rdma", "no-such-provider", "00"}).is_error());
  EXPECT_EQ(p.Call({"GET", "k"}).str, "v");
  EXPECT_TRUE(primary.Alive());
}

// A replica whose data-link setup lies, with a real receiver behind it: a ring geometry that
// cannot exist, or a key that does not open the ring. The primary refuses the link (geometry)
// or fails on the first write (key), closes that replica's connection, and goes on serving:
// its data is intact and an honest RDMA replica syncs afterwards.
TEST(RdmaReplicationHostile, WrongRingGeometryOrKeyIsRefused) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 2000);
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  struct Lie {
    const char* field;
    std::function<std::string(const std::string&)> value;
    const char* logged;
  };
  const Lie lies[] = {
      {"slots", [](const std::string&) { return std::string("0"); }, "impossible ring geometry"},
      {"slot_size", [](const std::string&) { return std::to_string(1ull << 40); },
       "impossible ring geometry"},
      {"slot_stride", [](const std::string&) { return std::string("1"); },
       "impossible ring geometry"},
      {"ring_key", [](const std::string& k) { return std::to_string(std::stoull(k) ^ 0x5a5a); },
       "Replication data link"},
  };
  for (const Lie& lie : lies) {
    SCOPED_TRACE(lie.field);
    transport::ChannelOptions opts = repl::DataLinkOptions("tcp");
    opts.connect_timeout_ms = 2000;  // the primary never connects where it refused the ring
    auto receiver = transport::CreateReceiver(opts, 0);
    ASSERT_TRUE(receiver.ok()) << receiver.status().ToString();
    auto blob = (*receiver)->LocalBlob();
    ASSERT_TRUE(blob.ok());
    auto fields = transport::Blob::Decode(*blob);
    ASSERT_TRUE(fields.ok());
    fields->Set(lie.field, lie.value(*fields->Get(lie.field)));

    RespClient bad(primary.port());
    ASSERT_EQ(bad.Call({"REPLCONF", "capa", "rdma"}).str, "OK");
    Reply rdma = bad.Call({"REPLCONF", "rdma", "tcp", HexEncode(fields->Encode())});
    ASSERT_EQ(rdma.str.rfind("RDMA ", 0), 0u) << rdma.raw;
    std::string peer;
    ASSERT_TRUE(HexDecode(rdma.str.substr(5), &peer));
    // The receiver connects (it fails where the primary refused) and keeps progressing, as a
    // replica would, while the primary tries to send the snapshot.
    std::atomic<bool> done{false};
    std::thread rx([&] {
      if (!(*receiver)->Connect(peer).ok()) return;
      while (!done && (*receiver)->status().ok()) (void)(*receiver)->Wait(10);
    });
    bad.Send({"PSYNC", "?", "-1"});
    bool closed = bad.WaitClosed(30000);
    done = true;
    rx.join();
    EXPECT_TRUE(closed) << "the primary kept a replica whose data link cannot work";
    EXPECT_TRUE(WaitFor([&] { return primary.LogText().find(lie.logged) != std::string::npos; }))
        << primary.LogText();
    EXPECT_TRUE(primary.Alive());
    EXPECT_EQ(p.Call({"DEBUG", "DIGEST"}).str, digest);
  }
  ServerProcess replica(Kind::kKvstore, RdmaReplica(primary, "tcp"));
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma");
}

}  // namespace
}  // namespace kv::test
