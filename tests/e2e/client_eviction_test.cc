// Client eviction (maxmemory-clients), with redis-server as the oracle: each test runs on both
// servers and expects the same outcome. A client whose query buffer, unread replies or unread
// pub/sub messages take the clients' memory past the limit is closed, counted in INFO's
// evicted_clients and logged; CLIENT NO-EVICT protects a client; lowering the limit (bytes, or a
// percentage of maxmemory) evicts the largest clients at once and only until under it, the
// client whose CONFIG SET lowered it included; the primary's link and replicas never go; CONFIG
// GET and DEBUG CLIENT-EVICTION answer as Redis does.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

// A field of the CLIENT LIST line of the client named `name`, or "" when there is none.
std::string ClientField(RespClient& c, const std::string& name, const std::string& field) {
  std::string list = c.Call({"CLIENT", "LIST"}).str;
  size_t at = list.find(" name=" + name + " ");
  if (at == std::string::npos) return "";
  size_t start = list.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = list.substr(start, list.find('\n', at) - start);
  size_t f = line.find(" " + field + "=");
  if (f == std::string::npos) return "";
  f += field.size() + 2;
  return line.substr(f, line.find(' ', f) - f);
}

int64_t ClientInt(RespClient& c, const std::string& name, const std::string& field) {
  std::string v = ClientField(c, name, field);
  return v.empty() ? -1 : std::stoll(v);
}

// How many clients CLIENT LIST shows whose name starts with `prefix`.
int CountNamed(RespClient& c, const std::string& prefix) {
  std::string list = c.Call({"CLIENT", "LIST"}).str;
  int n = 0;
  for (size_t at = list.find(" name=" + prefix); at != std::string::npos;
       at = list.find(" name=" + prefix, at + 1)) {
    n++;
  }
  return n;
}

// The start of a request whose one argument of `n` bytes never ends: it stays in the query
// buffer.
std::string PartialRequest(size_t n) {
  return "*2\r\n$" + std::to_string(n) + "\r\n" + std::string(n, 'v');
}

class ClientEviction : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    signal(SIGPIPE, SIG_IGN);  // writes to a client the server evicted
  }
  std::unique_ptr<ServerProcess> Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--enable-debug-command", "yes"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ServerProcess>(GetParam(), args);
  }
  // A connection that is never evicted, to watch the others.
  std::unique_ptr<RespClient> Control(int port) {
    auto c = std::make_unique<RespClient>(port);
    EXPECT_EQ(c->Call({"CLIENT", "SETNAME", "control"}).str, "OK");
    EXPECT_EQ(c->Call({"CLIENT", "NO-EVICT", "ON"}).str, "OK");
    return c;
  }
  std::unique_ptr<RespClient> Named(int port, const std::string& name) {
    auto c = std::make_unique<RespClient>(port);
    EXPECT_EQ(c->Call({"CLIENT", "SETNAME", name}).str, "OK");
    return c;
  }
};

TEST_P(ClientEviction, ConfigGetShowsBytesOrAPercentage) {
  auto s = Start({"--maxmemory-clients", "5%"});
  RespClient c(s->port());
  EXPECT_EQ(c.Call({"CONFIG", "GET", "maxmemory-clients"}).elems.at(1).str, "5%");
  std::vector<std::vector<std::string>> cmds = {
      {"CONFIG", "SET", "maxmemory-clients", "10mb"},
      {"CONFIG", "GET", "maxmemory-clients"},
      {"CONFIG", "SET", "maxmemory-clients", "1k"},
      {"CONFIG", "GET", "maxmemory-clients"},
      {"CONFIG", "SET", "maxmemory-clients", "100%"},
      {"CONFIG", "GET", "maxmemory-clients"},
      {"CONFIG", "SET", "maxmemory-clients", "101%"},
      {"CONFIG", "SET", "maxmemory-clients", "-1"},
      {"CONFIG", "SET", "maxmemory-clients", "x%"},
      {"CONFIG", "GET", "maxmemory-clients"},
      {"CONFIG", "SET", "maxmemory-clients", "0%"},
      {"CONFIG", "GET", "maxmemory-clients"},
      {"DEBUG", "CLIENT-EVICTION"},
  };
  std::string got;
  for (const auto& cmd : cmds) got += c.Raw(cmd);
  EXPECT_EQ(got,
            "+OK\r\n*2\r\n$17\r\nmaxmemory-clients\r\n$8\r\n10485760\r\n"
            "+OK\r\n*2\r\n$17\r\nmaxmemory-clients\r\n$4\r\n1000\r\n"
            "+OK\r\n*2\r\n$17\r\nmaxmemory-clients\r\n$4\r\n100%\r\n"
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - "
            "percentage argument must be less or equal to 100\r\n"
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - "
            "argument must be a memory or percent value\r\n"
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - "
            "argument must be a memory or percent value\r\n"
            "*2\r\n$17\r\nmaxmemory-clients\r\n$4\r\n100%\r\n"
            "+OK\r\n*2\r\n$17\r\nmaxmemory-clients\r\n$1\r\n0\r\n"
            "-ERR maxmemory-clients is disabled.\r\n");
}

// The buckets Redis shows: 19 lines, from "0 - 32767" to "4294967296+", each with its memory
// and clients; a client of a little over 1 MiB sits in the bucket from 1 MiB.
TEST_P(ClientEviction, DebugClientEvictionShowsTheBuckets) {
  auto s = Start({"--maxmemory-clients", "100mb"});
  auto control = Control(s->port());
  auto big = Named(s->port(), "big");
  big->SendRaw(PartialRequest(1040000));
  ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, "big", "qbuf") >= 1040000; }));
  control->Call({"PING"});  // a round after the read: the figures are in
  std::string text = control->Call({"DEBUG", "CLIENT-EVICTION"}).str;
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  ASSERT_EQ(lines.size(), 19u) << text;
  EXPECT_EQ(lines[0].substr(0, 30), "bucket          0 -      32767") << text;
  EXPECT_EQ(lines[6].substr(0, 30), "bucket    1048576 -    2097151") << text;
  EXPECT_EQ(lines[18].substr(0, 32), "bucket 4294967296+" + std::string(12, ' ') + ": ") << text;
  std::regex line_re(R"(bucket [ 0-9]{10}( - [ 0-9]{10}|\+ {12}): tot-mem: [ 0-9]{10}, )"
                     R"(clients: \d+)");
  for (const auto& l : lines) EXPECT_TRUE(std::regex_match(l, line_re)) << l;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(lines[6], m, std::regex(R"(tot-mem: +(\d+), clients: (\d+))")));
  EXPECT_EQ(m[2].str(), "1") << text;
  EXPECT_GE(std::stoll(m[1].str()), 1040000) << text;
}

TEST_P(ClientEviction, BigQueryBufferIsEvictedAndCounted) {
  auto s = Start({"--maxmemory-clients", "1mb"});
  auto control = Control(s->port());
  auto victim = Named(s->port(), "victim");
  victim->SendRaw(PartialRequest(2000000));
  std::string got;
  EXPECT_TRUE(victim->WaitClosed(20000, &got));
  EXPECT_EQ(got, "") << "an evicted client gets no reply";
  EXPECT_TRUE(WaitFor([&] { return CountNamed(*control, "victim") == 0; }));
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
  EXPECT_NE(s->LogText().find("Evicting client: id="), std::string::npos);
  EXPECT_EQ(control->Call({"PING"}).str, "PONG");
  // A client under the limit stays; CONFIG RESETSTAT clears the count.
  auto small = Named(s->port(), "small");
  small->SendRaw(PartialRequest(300000));
  ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, "small", "qbuf") >= 300000; }));
  EXPECT_EQ(control->Call({"CONFIG", "RESETSTAT"}).str, "OK");
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 0);
  EXPECT_EQ(CountNamed(*control, "small"), 1);
}

TEST_P(ClientEviction, NoEvictProtectsAClient) {
  auto s = Start({"--maxmemory-clients", "1mb"});
  auto control = Control(s->port());
  auto kept = Named(s->port(), "kept");
  EXPECT_EQ(kept->Call({"CLIENT", "NO-EVICT", "ON"}).str, "OK");
  kept->SendRaw(PartialRequest(2000000));
  ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, "kept", "qbuf") >= 2000000; }));
  control->Call({"PING"});
  EXPECT_GT(ClientInt(*control, "kept", "tot-mem"), 1 << 20);
  EXPECT_NE(ClientField(*control, "kept", "flags").find('e'), std::string::npos);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 0);
  // Finishing the request answers it: the client was never cut off.
  kept->SendRaw("\r\n$1\r\nx\r\n");
  EXPECT_TRUE(kept->Read().is_error());  // "vvv..." is no command
  EXPECT_EQ(kept->Call({"PING"}).str, "PONG");
}

// A client that sends requests and never reads the replies: its unsent output grows until it
// passes the limit, and it is closed long before the server holds all it asked for.
TEST_P(ClientEviction, ClientThatDoesNotReadItsRepliesIsEvicted) {
  auto s = Start({"--maxmemory-clients", "2mb"});
  auto control = Control(s->port());
  EXPECT_EQ(control->Call({"SETRANGE", "k", "200000", "v"}).integer, 200001);
  auto reader = Named(s->port(), "reader");
  std::string gets;
  for (int i = 0; i < 500; i++) gets += RespClient::Encode({"GET", "k"});  // 100 MB of replies
  reader->SendRaw(gets);
  EXPECT_TRUE(WaitFor([&] { return CountNamed(*control, "reader") == 0; }));
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
  std::string got;
  EXPECT_TRUE(reader->WaitClosed(20000, &got));
  EXPECT_LT(got.size(), 50u * 1000 * 1000) << "closed before most of the replies were made";
}

// A subscriber that does not read the messages it is sent (the pub/sub output limit is off, so
// that only eviction closes it); the publisher stays.
TEST_P(ClientEviction, SubscriberThatDoesNotReadIsEvicted) {
  auto s = Start({"--maxmemory-clients", "2mb", "--client-output-buffer-limit", "pubsub 0 0 0"});
  auto control = Control(s->port());
  auto sub = Named(s->port(), "sub");
  ASSERT_EQ(sub->Call({"SUBSCRIBE", "ch"}).elems.size(), 3u);
  auto publisher = Named(s->port(), "pub");
  std::string message(100000, 'm');
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; i++) {
    publisher->Call({"PUBLISH", "ch", message});
    if (i % 20 == 19) gone = CountNamed(*control, "sub") == 0;
  }
  EXPECT_TRUE(WaitFor([&] { return CountNamed(*control, "sub") == 0; }));
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
  EXPECT_EQ(publisher->Call({"PING"}).str, "PONG");
  EXPECT_TRUE(sub->WaitClosed(20000));
}

// Lowering the limit evicts at once, the largest clients first and only until the rest fits:
// three clients of about 1 MB each, 2.5 MB allowed: one goes.
TEST_P(ClientEviction, LoweringTheLimitEvictsOnlyUntilUnderIt) {
  auto s = Start();
  auto control = Control(s->port());
  std::vector<std::unique_ptr<RespClient>> clients;
  for (int i = 0; i < 3; i++) {
    clients.push_back(Named(s->port(), "cl" + std::to_string(i)));
    clients.back()->SendRaw(PartialRequest(1000000));
  }
  for (int i = 0; i < 3; i++) {
    std::string name = "cl" + std::to_string(i);
    ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, name, "qbuf") >= 1000000; })) << name;
  }
  EXPECT_EQ(control->Call({"CONFIG", "SET", "maxmemory-clients", "2500000"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return CountNamed(*control, "cl") == 2; }));
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
  control->Call({"PING"});
  EXPECT_EQ(CountNamed(*control, "cl"), 2);
}

// The limit set from CLIENT LIST's figures keeps exactly the clients it was computed for (the
// suite's "evict clients only until below limit"): the asking client's tot-mem there counts the
// command it runs (argv-mem, a pointer each argument), which is gone once it ran.
TEST_P(ClientEviction, ALimitFromTheClientListKeepsTheClientsItCounts) {
  auto s = Start();
  auto control = Control(s->port());
  EXPECT_EQ(ClientInt(*control, "control", "argv-mem"), 10);  // "client" "list"
  std::vector<std::unique_ptr<RespClient>> clients;
  int64_t biggest = 0;
  for (int i = 0; i < 4; i++) {
    std::string name = "cl" + std::to_string(i);
    clients.push_back(Named(s->port(), name));
    clients.back()->SendRaw(PartialRequest(1000000));
    ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, name, "qbuf") >= 1000000; })) << name;
    biggest = std::max(biggest, ClientInt(*control, name, "tot-mem"));
  }
  int64_t limit = biggest * 2 + ClientInt(*control, "control", "tot-mem");
  EXPECT_EQ(control->Call({"CONFIG", "SET", "maxmemory-clients", std::to_string(limit)}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return CountNamed(*control, "cl") == 2; }));
  control->Call({"PING"});
  EXPECT_EQ(CountNamed(*control, "cl"), 2);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 2);
}

// A percentage of maxmemory: nothing is evicted while maxmemory is 0; setting maxmemory makes
// the limit real, and the client past it goes at once.
TEST_P(ClientEviction, PercentageOfMaxmemory) {
  auto s = Start({"--maxmemory-clients", "10%"});
  auto control = Control(s->port());
  auto big = Named(s->port(), "big");
  big->SendRaw(PartialRequest(2000000));
  ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, "big", "qbuf") >= 2000000; }));
  control->Call({"PING"});
  EXPECT_EQ(CountNamed(*control, "big"), 1);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 0);
  EXPECT_EQ(control->Call({"CONFIG", "SET", "maxmemory", "10mb"}).str, "OK");  // 1 MB for clients
  EXPECT_TRUE(big->WaitClosed(20000));
  EXPECT_EQ(CountNamed(*control, "big"), 0);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
}

// The client whose CONFIG SET brings the limit under its own memory (20 MB of replies it has
// not read, more than the sockets take) is evicted too, as Redis evicts it after the command.
TEST_P(ClientEviction, ClientThatLowersTheLimitMayEvictItself) {
  auto s = Start();
  auto control = Control(s->port());
  EXPECT_EQ(control->Call({"SETRANGE", "k", "1000000", "v"}).integer, 1000001);
  auto self = Named(s->port(), "self");
  std::string pipeline;
  for (int i = 0; i < 20; i++) pipeline += RespClient::Encode({"GET", "k"});
  pipeline += RespClient::Encode({"CONFIG", "SET", "maxmemory-clients", "1mb"});
  self->SendRaw(pipeline);
  EXPECT_TRUE(WaitFor([&] { return CountNamed(*control, "self") == 0; }));
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
  EXPECT_EQ(control->Call({"CONFIG", "GET", "maxmemory-clients"}).elems.at(1).str, "1048576");
  EXPECT_TRUE(self->WaitClosed(20000));
}

// Replicas and the primary's link are never evicted: a stopped replica's pending stream on the
// primary and the primary's big writes in the replica's query buffer pass the limit on either
// side, and the link stays up.
TEST_P(ClientEviction, ReplicasAndThePrimaryLinkAreNeverEvicted) {
  auto primary = Start({"--maxmemory-clients", "1mb"});
  auto replica = Start({"--maxmemory-clients", "1mb", "--replicaof",
                        "127.0.0.1 " + std::to_string(primary->port())});
  RespClient p(primary->port()), r(replica->port());
  EXPECT_EQ(p.Call({"CLIENT", "NO-EVICT", "ON"}).str, "OK");  // its own big writes
  ASSERT_TRUE(InSync(p, r));
  kill(replica->pid(), SIGSTOP);
  std::string value(1000000, 'x');
  for (int i = 0; i < 8; i++) p.Call({"SET", "k" + std::to_string(i), value});
  kill(replica->pid(), SIGCONT);
  ASSERT_TRUE(InSync(p, r));
  for (int i = 0; i < 4; i++) p.Call({"SET", "big" + std::to_string(i), std::string(3000000, 'y')});
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(InfoInt(p, "replication", "connected_slaves"), 1);
  EXPECT_EQ(InfoInt(p, "stats", "evicted_clients"), 0);
  EXPECT_EQ(InfoInt(r, "stats", "evicted_clients"), 0);
  EXPECT_EQ(r.Call({"STRLEN", "big3"}).integer, 3000000);
}

// A transaction's queued commands and the keys a client watches are its memory too: a MULTI
// that queues 1.5 MB goes, and so does a client that watches key after key.
TEST_P(ClientEviction, QueuedCommandsAndWatchedKeysCount) {
  auto s = Start({"--maxmemory-clients", "1mb"});
  auto control = Control(s->port());
  auto tx = Named(s->port(), "tx");
  EXPECT_EQ(tx->Call({"MULTI"}).str, "OK");
  std::string value(300000, 'v');
  int queued = 0;
  while (queued < 10 && tx->Call({"SET", "k", value}).str == "QUEUED") queued++;
  EXPECT_LT(queued, 10) << "the connection closes while queuing";
  EXPECT_GE(queued, 2) << "a queue under the limit is kept";
  EXPECT_EQ(CountNamed(*control, "tx"), 0);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);

  EXPECT_EQ(control->Call({"CONFIG", "SET", "maxmemory-clients", "200000"}).str, "OK");
  auto watcher = Named(s->port(), "watcher");
  bool closed = false;
  for (int batch = 0; batch < 200 && !closed; batch++) {
    std::string pipeline;
    for (int i = 0; i < 1000; i++) {
      pipeline += RespClient::Encode({"WATCH", "key:" + std::to_string(batch * 1000 + i)});
    }
    watcher->SendRaw(pipeline);
    for (int i = 0; i < 1000 && !closed; i++) closed = watcher->Read().type == 0;
  }
  EXPECT_TRUE(closed) << "200000 watched keys and still connected";
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 2);
}

// Two clients whose replies pass both client-output-buffer-limit and, with a third client's
// query buffer, maxmemory-clients: the output limit closes them, and nobody is evicted.
TEST_P(ClientEviction, OutputBufferLimitTakesPrecedence) {
  auto s = Start({"--maxmemory-clients", "10mb", "--client-output-buffer-limit", "normal 3mb 0 0"});
  auto control = Control(s->port());
  EXPECT_EQ(control->Call({"SETRANGE", "k", std::to_string((4 << 20) - 1), "v"}).integer, 4 << 20);
  auto qbuf = Named(s->port(), "qbuf");
  qbuf->SendRaw(PartialRequest((10 << 20) - (4 << 20) - 100000));
  ASSERT_TRUE(WaitFor([&] { return ClientInt(*control, "qbuf", "qbuf") >= (6 << 20) - 100000; }));
  auto o1 = Named(s->port(), "obuf1");
  auto o2 = Named(s->port(), "obuf2");
  o1->Send({"GET", "k"});
  o2->Send({"GET", "k"});
  EXPECT_TRUE(o1->WaitClosed(20000));
  EXPECT_TRUE(o2->WaitClosed(20000));
  control->Call({"PING"});
  EXPECT_EQ(CountNamed(*control, "obuf"), 0);
  EXPECT_EQ(CountNamed(*control, "qbuf"), 1);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 0);
}

// Redis' unit/maxmemory "eviction due to output buffers of many MGET clients": with maxmemory
// (keys plus clients) and maxmemory-clients both set, a client whose unread replies grow is
// evicted before any key is. Here one pipeline of 150 MGETs of a 100 KB value asks for 15 MB of
// replies at once. Each reply counts in its client's memory as soon as its command ran, as in
// Redis (before, kvstore counted the batch's replies after the batch, and the MGETs within it
// evicted keys by a used_memory that held replies no client was charged with yet).
TEST_P(ClientEviction, ClientsAreEvictedBeforeKeys) {
  auto s = Start(
      {"--maxmemory", "11mb", "--maxmemory-policy", "allkeys-lru", "--maxmemory-clients", "3mb"});
  auto control = Control(s->port());
  for (int j = 0; j < 50; j++) {
    ASSERT_EQ(control->Call({"SETRANGE", std::to_string(j), "100000", "x"}).integer, 100001);
  }
  ASSERT_EQ(control->Call({"DBSIZE"}).integer, 50);
  auto reader = Named(s->port(), "mget");
  std::string pipeline;
  for (int i = 0; i < 150; i++) pipeline += RespClient::Encode({"MGET", "1"});
  reader->SendRaw(pipeline);  // the replies are never read
  ASSERT_TRUE(WaitFor(
      [&] {
        return InfoInt(*control, "stats", "evicted_clients") > 0 ||
               InfoInt(*control, "stats", "evicted_keys") > 0;
      },
      30000))
      << "neither clients nor keys were evicted";
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_clients"), 1);
  EXPECT_EQ(InfoInt(*control, "stats", "evicted_keys"), 0);
  EXPECT_EQ(control->Call({"DBSIZE"}).integer, 50);
  EXPECT_EQ(CountNamed(*control, "mget"), 0);
}

INSTANTIATE_TEST_SUITE_P(Servers, ClientEviction, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

// kvstore with several poll groups: clients on different threads report their figures and
// evict each other (the one whose memory passes the limit is not always the one that goes).
TEST(ClientEvictionThreads, ClientsOnSeveralPollGroups) {
  signal(SIGPIPE, SIG_IGN);
  ServerProcess s(Kind::kKvstore,
                  {"--io-threads", "4", "--client-output-buffer-limit", "pubsub 0 0 0"});
  RespClient control(s.port());
  ASSERT_EQ(control.Call({"CLIENT", "NO-EVICT", "ON"}).str, "OK");
  ASSERT_EQ(control.Call({"CLIENT", "SETNAME", "control"}).str, "OK");
  // Six clients of about 1 MB, dealt over the groups; 3.5 MB allowed: three go.
  std::vector<std::unique_ptr<RespClient>> clients;
  for (int i = 0; i < 6; i++) {
    clients.push_back(std::make_unique<RespClient>(s.port()));
    ASSERT_EQ(clients.back()->Call({"CLIENT", "SETNAME", "cl" + std::to_string(i)}).str, "OK");
    clients.back()->SendRaw(PartialRequest(1000000));
  }
  for (int i = 0; i < 6; i++) {
    std::string name = "cl" + std::to_string(i);
    ASSERT_TRUE(WaitFor([&] { return ClientInt(control, name, "qbuf") >= 1000000; })) << name;
  }
  ASSERT_EQ(control.Call({"CONFIG", "SET", "maxmemory-clients", "3500000"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return CountNamed(control, "cl") == 3; }));
  EXPECT_EQ(InfoInt(control, "stats", "evicted_clients"), 3);
  clients.clear();
  ASSERT_TRUE(WaitFor([&] { return CountNamed(control, "cl") == 0; }));

  // Subscribers on every group that stop reading, one publisher: each subscriber goes.
  ASSERT_EQ(control.Call({"CONFIG", "SET", "maxmemory-clients", "2mb"}).str, "OK");
  std::vector<std::unique_ptr<RespClient>> subs;
  for (int i = 0; i < 4; i++) {
    subs.push_back(std::make_unique<RespClient>(s.port()));
    ASSERT_EQ(subs.back()->Call({"CLIENT", "SETNAME", "sub" + std::to_string(i)}).str, "OK");
    ASSERT_EQ(subs.back()->Call({"SUBSCRIBE", "ch"}).elems.size(), 3u);
  }
  RespClient publisher(s.port());
  std::string message(100000, 'm');
  for (int i = 0; i < 2000 && CountNamed(control, "sub") > 0; i++) {
    publisher.Call({"PUBLISH", "ch", message});
  }
  EXPECT_TRUE(WaitFor([&] { return CountNamed(control, "sub") == 0; }));
  EXPECT_EQ(InfoInt(control, "stats", "evicted_clients"), 7);
  EXPECT_EQ(publisher.Call({"PING"}).str, "PONG");
  EXPECT_TRUE(s.Alive());
}

}  // namespace
}  // namespace kv::test
