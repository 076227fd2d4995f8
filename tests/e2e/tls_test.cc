// TLS for clients, on kvstore and redis-server side by side: the same settings, certificates
// and clients (our own TLS RESP client, redis-cli --tls, redis-benchmark --tls, redis-py with
// ssl=True), and the failures a TLS deployment meets: no client certificate, a wrong CA, an
// expired certificate, plain text on the TLS port, a handshake that stalls, a new certificate
// set with CONFIG SET.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/tls_certs.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

// A client context: trusts `ca`, presents the test client certificate unless `anonymous`.
std::shared_ptr<net::TlsContext> ClientContext(const std::string& ca, bool anonymous = false,
                                               const std::string& cert = "",
                                               const std::string& key = "") {
  const TestCerts& c = Certs();
  auto ctx =
      net::TlsContext::CreateClientOnly(ca, anonymous ? "" : (cert.empty() ? c.client_cert : cert),
                                        anonymous ? "" : (key.empty() ? c.client_key : key));
  EXPECT_TRUE(ctx.ok()) << ctx.status().message();
  return ctx.ok() ? *ctx : nullptr;
}

// Runs a shell command; returns its exit status and fills `out` with its output.
int Shell(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class Tls : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    Certs();  // made before the server starts
  }
  // Starts the server with TLS on a port of its own beside the plain one, plus `extra`.
  void Start(Cmd extra = {}) {
    tls_port_ = FreePort();
    Cmd args = TlsServerArgs(tls_port_);
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<ServerProcess>(GetParam(), args);
  }
  std::unique_ptr<RespClient> Connect(std::shared_ptr<net::TlsContext> ctx,
                                      std::string* error = nullptr) {
    std::string e;
    auto c = RespClient::ConnectTls(tls_port_, std::move(ctx), error ? error : &e);
    if (!error) EXPECT_NE(c, nullptr) << e;
    return c;
  }
  std::string CliFlags(bool with_cert = true) const {
    const TestCerts& c = Certs();
    std::string f = "--tls --cacert " + c.ca_cert;
    if (with_cert) f += " --cert " + c.client_cert + " --key " + c.client_key;
    return f + " -p " + std::to_string(tls_port_);
  }

  int tls_port_ = 0;
  std::unique_ptr<ServerProcess> server_;
};

TEST_P(Tls, CommandsOverTlsAnswerAsOverTcp) {
  Start();
  auto t = Connect(ClientContext(Certs().ca_cert));
  ASSERT_NE(t, nullptr);
  RespClient plain(server_->port());
  EXPECT_EQ(t->tls()->PeerSubject(), "/O=kvstore test/CN=kvstore server");
  EXPECT_EQ(t->tls()->Version(), "TLSv1.3");
  EXPECT_EQ(t->Call({"SET", "k", "v"}).str, "OK");
  EXPECT_EQ(plain.Call({"GET", "k"}).str, "v");
  // A pipeline bigger than a TLS record, and a value bigger than several.
  std::string pipeline;
  for (int i = 0; i < 2000; i++) pipeline += RespClient::Encode({"INCR", "n"});
  t->SendRaw(pipeline);
  for (int i = 1; i <= 2000; i++) ASSERT_EQ(t->Read().integer, i);
  std::string big(3 << 20, 'x');
  EXPECT_EQ(t->Call({"SET", "big", big}).str, "OK");
  EXPECT_EQ(t->Call({"GET", "big"}).str, big);
  EXPECT_EQ(t->Call({"HELLO", "3"}).type, '%');
  // Pub/sub pushes cross TLS as well.
  auto sub = Connect(ClientContext(Certs().ca_cert));
  ASSERT_EQ(sub->Call({"SUBSCRIBE", "ch"}).elems.size(), 3u);
  EXPECT_EQ(plain.Call({"PUBLISH", "ch", "hello"}).integer, 1);
  EXPECT_EQ(sub->Read().elems.at(2).str, "hello");
  EXPECT_EQ(t->Call({"QUIT"}).str, "OK");
  EXPECT_TRUE(t->WaitClosed(10000));
}

TEST_P(Tls, RedisCliAndBenchmarkWithTls) {
  Start();
  std::string out;
  ASSERT_EQ(Shell("redis-cli " + CliFlags() + " SET greeting hello", &out), 0) << out;
  out.clear();
  ASSERT_EQ(Shell("redis-cli " + CliFlags() + " GET greeting", &out), 0) << out;
  EXPECT_EQ(out, "hello\n");
  out.clear();
  EXPECT_EQ(Shell("redis-benchmark " + CliFlags() + " -q -n 2000 -c 4 -P 4 -t set,get", &out), 0)
      << out;
  EXPECT_NE(out.find("SET:"), std::string::npos) << out;
  EXPECT_NE(out.find("GET:"), std::string::npos) << out;
}

TEST_P(Tls, RedisPyWithSsl) {
  Start({"--tls-auth-clients", "optional"});
  std::string out;
  std::string script =
      "import redis; r = redis.Redis(host='127.0.0.1', port=" + std::to_string(tls_port_) +
      ", ssl=True, ssl_ca_certs='" + Certs().ca_cert +
      "'); r.set('py', 'yes'); print(r.get('py').decode(), r.ping())";
  ASSERT_EQ(Shell("/usr/bin/python3 -c \"" + script + "\"", &out), 0) << out;
  EXPECT_EQ(out, "yes True\n");
}

TEST_P(Tls, ClientCertificatesAsTlsAuthClientsSays) {
  Start();  // tls-auth-clients yes, the default
  std::string error;
  EXPECT_NE(Connect(ClientContext(Certs().ca_cert)), nullptr);
  // Without a certificate: refused (TLS 1.3 reports it on the first read).
  auto anon = Connect(ClientContext(Certs().ca_cert, /*anonymous=*/true), &error);
  if (anon) EXPECT_EQ(anon->Call({"PING"}).type, 0) << "served without a client certificate";
  // An expired client certificate: refused too.
  auto expired = Connect(
      ClientContext(Certs().ca_cert, false, Certs().expired_cert, Certs().expired_key), &error);
  if (expired) EXPECT_EQ(expired->Call({"PING"}).type, 0) << "served an expired certificate";
  RespClient plain(server_->port());
  EXPECT_EQ(plain.Call({"CONFIG", "SET", "tls-auth-clients", "optional"}).str, "OK");
  anon = Connect(ClientContext(Certs().ca_cert, true));
  ASSERT_NE(anon, nullptr);
  EXPECT_EQ(anon->Call({"PING"}).str, "PONG");
  EXPECT_EQ(plain.Call({"CONFIG", "SET", "tls-auth-clients", "no"}).str, "OK");
  auto any =
      Connect(ClientContext(Certs().ca_cert, false, Certs().expired_cert, Certs().expired_key));
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->Call({"PING"}).str, "PONG");
  EXPECT_EQ(plain.Call({"CONFIG", "GET", "tls-auth-clients"}).elems.at(1).str, "no");
  EXPECT_TRUE(plain.Call({"CONFIG", "SET", "tls-auth-clients", "maybe"}).is_error());
}

TEST_P(Tls, AClientThatTrustsAnotherCaRefusesTheServer) {
  Start();
  std::string error;
  EXPECT_EQ(Connect(ClientContext(Certs().other_ca_cert), &error), nullptr);
  EXPECT_NE(error.find("certificate verify failed"), std::string::npos) << error;
  RespClient plain(server_->port());
  EXPECT_EQ(plain.Call({"PING"}).str, "PONG");
}

TEST_P(Tls, PlainTextOnTheTlsPortIsClosedAndOthersAreServed) {
  Start();
  RespClient wrong(tls_port_);
  wrong.SendRaw("PING\r\n*1\r\n$4\r\nPING\r\n");
  std::string got;
  EXPECT_TRUE(wrong.WaitClosed(10000, &got));
  EXPECT_EQ(got.find("PONG"), std::string::npos) << got;
  auto t = Connect(ClientContext(Certs().ca_cert));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Call({"PING"}).str, "PONG");
  EXPECT_TRUE(WaitFor([&] {
    return server_->LogText().find("Error accepting a client connection") != std::string::npos;
  })) << server_->LogText();
}

TEST_P(Tls, ANewCertificateServesTheNextConnection) {
  Start();
  RespClient plain(server_->port());
  auto before = Connect(ClientContext(Certs().ca_cert));
  ASSERT_NE(before, nullptr);
  // Both files at once: the context is built once, from the pair.
  EXPECT_EQ(plain
                .Call({"CONFIG", "SET", "tls-cert-file", Certs().server2_cert, "tls-key-file",
                       Certs().server2_key})
                .str,
            "OK");
  auto after = Connect(ClientContext(Certs().ca_cert));
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->tls()->PeerSubject(), "/O=kvstore test/CN=kvstore server 2");
  EXPECT_EQ(before->Call({"PING"}).str, "PONG");  // the live connection keeps its session
  // A certificate that does not load changes nothing, with Redis' error.
  Reply bad = plain.Call({"CONFIG", "SET", "tls-cert-file", "/nonexistent.crt"});
  EXPECT_EQ(bad.str,
            "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to "
            "update TLS configuration. Check server logs.");
  EXPECT_EQ(plain.Call({"CONFIG", "GET", "tls-cert-file"}).elems.at(1).str, Certs().server2_cert);
  auto still = Connect(ClientContext(Certs().ca_cert));
  ASSERT_NE(still, nullptr);
  EXPECT_EQ(still->tls()->PeerSubject(), "/O=kvstore test/CN=kvstore server 2");
  // A certificate and a key that do not match: refused as well.
  bad = plain.Call({"CONFIG", "SET", "tls-key-file", Certs().server_key});
  EXPECT_TRUE(bad.is_error()) << bad.raw;
}

// CONFIG SET bind moves tls-port to the new addresses too; the same addresses again, or ones
// that cannot be bound, leave it listening.
TEST_P(Tls, TheTlsPortFollowsBind) {
  Start();
  RespClient plain(server_->port());
  auto ctx = ClientContext(Certs().ca_cert);
  for (const char* bind : {"127.0.0.1", "127.0.0.1", "192.0.2.1", "127.0.0.1 -::1"}) {
    Reply r = plain.Call({"CONFIG", "SET", "bind", bind});
    if (std::string(bind) == "192.0.2.1") {
      EXPECT_TRUE(r.is_error()) << r.raw;  // not an address of this machine
    } else {
      EXPECT_EQ(r.str, "OK") << bind;
    }
    auto t = Connect(ctx);
    ASSERT_NE(t, nullptr) << "after bind " << bind;
    EXPECT_EQ(t->Call({"PING"}).str, "PONG") << "after bind " << bind;
  }
}

// CONFIG SET tls-port moves TLS to a new port at once, turns it on where it was off (the
// context built then), refuses a port that cannot be bound, and 0 closes it: as Redis 7.0.
TEST_P(Tls, TlsPortIsSetAtRunTime) {
  const TestCerts& c = Certs();
  server_ = std::make_unique<ServerProcess>(
      GetParam(), Cmd{"--tls-cert-file", c.server_cert, "--tls-key-file", c.server_key,
                      "--tls-ca-cert-file", c.ca_cert});
  RespClient plain(server_->port());
  auto ctx = ClientContext(c.ca_cert);
  for (int round = 0; round < 2; round++) {  // off to on, then to another port
    tls_port_ = FreePort();
    ASSERT_EQ(plain.Call({"CONFIG", "SET", "tls-port", std::to_string(tls_port_)}).str, "OK");
    auto t = Connect(ctx);
    ASSERT_NE(t, nullptr) << "round " << round;
    EXPECT_EQ(t->Call({"PING"}).str, "PONG");
    EXPECT_EQ(plain.Call({"CONFIG", "GET", "tls-port"}).elems.at(1).str,
              std::to_string(tls_port_));
  }
  // A port another socket holds (the plain port): refused, and TLS stays where it was.
  Reply r = plain.Call({"CONFIG", "SET", "tls-port", std::to_string(server_->port())});
  EXPECT_EQ(r.raw,
            "-ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen "
            "on this port. Check server logs.\r\n");
  EXPECT_EQ(plain.Call({"CONFIG", "GET", "tls-port"}).elems.at(1).str, std::to_string(tls_port_));
  auto still = Connect(ctx);
  ASSERT_NE(still, nullptr);
  EXPECT_EQ(still->Call({"PING"}).str, "PONG");
  // 0: no TLS port; the connections made before stay.
  ASSERT_EQ(plain.Call({"CONFIG", "SET", "tls-port", "0"}).str, "OK");
  std::string error;
  EXPECT_EQ(Connect(ctx, &error), nullptr);
  EXPECT_EQ(still->Call({"PING"}).str, "PONG");
}

TEST_P(Tls, ProtocolsPassphrasesAndDhParams) {
  const TestCerts& c = Certs();
  Start({"--tls-protocols", "TLSv1.2", "--tls-key-file", c.server_key_encrypted,
         "--tls-key-file-pass", TestCerts::kKeyPassphrase, "--tls-dh-params-file", c.dh_params,
         "--tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256", "--tls-prefer-server-ciphers", "yes"});
  auto t = Connect(ClientContext(c.ca_cert));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tls()->Version(), "TLSv1.2");
  EXPECT_EQ(t->Call({"PING"}).str, "PONG");
  RespClient plain(server_->port());
  EXPECT_TRUE(plain.Call({"CONFIG", "SET", "tls-protocols", "TLSv9"}).is_error());
  EXPECT_TRUE(plain.Call({"CONFIG", "SET", "tls-key-file-pass", "wrong"}).is_error());
  EXPECT_EQ(plain.Call({"CONFIG", "SET", "tls-protocols", "TLSv1.3"}).str, "OK");
  t = Connect(ClientContext(c.ca_cert));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tls()->Version(), "TLSv1.3");
}

INSTANTIATE_TEST_SUITE_P(Servers, Tls, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

// kvstore as the replica of a redis-server primary over TLS (tls-replication): full syncs
// diskless and from disk, loaded from the socket or from a file, the stream, and a partial
// resync after the link is cut.
TEST(TlsReplication, KvstoreReplicaOfATlsRedisPrimary) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  const TestCerts& c = Certs();
  struct Case {
    const char* diskless_sync;
    const char* diskless_load;
  };
  for (Case k : {Case{"yes", "swapdb"}, Case{"no", "disabled"}}) {
    SCOPED_TRACE(std::string("repl-diskless-sync ") + k.diskless_sync + ", load " +
                 k.diskless_load);
    int tls_port = FreePort();
    Cmd pargs = TlsServerArgs(tls_port);
    pargs.insert(pargs.end(),
                 {"--repl-diskless-sync", k.diskless_sync, "--repl-diskless-sync-delay", "0"});
    ServerProcess primary(Kind::kRedis, pargs);
    RespClient p(primary.port());
    for (int i = 0; i < 2000; i++) p.Call({"SET", "k" + std::to_string(i), std::string(100, 'v')});
    int replica_tls_port = FreePort();
    ServerProcess replica(
        Kind::kKvstore,
        {"--tls-replication", "yes", "--tls-port", std::to_string(replica_tls_port),
         "--tls-cert-file", c.client_cert, "--tls-key-file", c.client_key, "--tls-ca-cert-file",
         c.ca_cert, "--repl-diskless-load", k.diskless_load, "--replicaof",
         "127.0.0.1 " + std::to_string(tls_port)});
    RespClient r(replica.port());
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    // Listed under its TLS port, as a Redis replica over TLS announces itself.
    std::string slave0 = InfoField(p, "replication", "slave0");
    EXPECT_NE(slave0.find(",port=" + std::to_string(replica_tls_port) + ","), std::string::npos)
        << slave0;
    EXPECT_EQ(r.Call({"DBSIZE"}).integer, 2000);
    for (int i = 0; i < 100; i++) p.Call({"INCR", "counter"});
    ASSERT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"GET", "counter"}).str, "100");
    // The link cut: the replica continues where it was (+CONTINUE), over TLS again.
    p.Call({"CLIENT", "KILL", "TYPE", "replica"});
    p.Call({"SET", "after", "cut"});
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    EXPECT_EQ(r.Call({"GET", "after"}).str, "cut");
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
    EXPECT_NE(replica.LogText().find("Master accepted a Partial Resynchronization"),
              std::string::npos);
  }
}

// Replicas of a kvstore primary over TLS (its tls-port), kvstore and redis-server, with full
// syncs diskless and from disk: the snapshot child writes into a pipe the replica's connection
// sends on through its TLS session, then the stream and a partial resync follow.
TEST(TlsReplication, ReplicasOfAKvstorePrimaryOverTls) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  const TestCerts& c = Certs();
  for (const char* diskless : {"yes", "no"}) {
    SCOPED_TRACE(std::string("repl-diskless-sync ") + diskless);
    int tls_port = FreePort();
    Cmd pargs = TlsServerArgs(tls_port);
    pargs.insert(pargs.end(), {"--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0",
                               "--rdbcompression", "no"});
    ServerProcess primary(Kind::kKvstore, pargs);
    RespClient p(primary.port());
    // Several megabytes: the relay's pipe fills and empties many times.
    std::string value(1000, 'x');
    for (int i = 0; i < 5000; i++) p.Call({"SET", "k" + std::to_string(i), value});
    for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
      SCOPED_TRACE(kind == Kind::kKvstore ? "kvstore replica" : "redis-server replica");
      ServerProcess replica(kind, {"--tls-replication", "yes", "--tls-cert-file", c.client_cert,
                                   "--tls-key-file", c.client_key, "--tls-ca-cert-file", c.ca_cert,
                                   "--replicaof", "127.0.0.1 " + std::to_string(tls_port)});
      RespClient r(replica.port());
      ASSERT_TRUE(InSync(p, r)) << replica.LogText() << primary.LogText();
      EXPECT_EQ(r.Call({"DBSIZE"}).integer, p.Call({"DBSIZE"}).integer);
      p.Call({"INCR", "counter"});
      ASSERT_TRUE(InSync(p, r));
      EXPECT_EQ(r.Call({"GET", "counter"}).str, p.Call({"GET", "counter"}).str);
      p.Call({"CLIENT", "KILL", "TYPE", "replica"});
      p.Call({"SET", "after", "cut"});
      ASSERT_TRUE(InSync(p, r)) << replica.LogText();
      EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
    }
  }
}

// MIGRATE connects with TLS where tls-cluster is on, as Redis does: from kvstore to a TLS
// redis-server and back, and a kvstore without tls-cluster cannot reach a TLS port.
TEST(TlsMigrate, MigrateOverTlsBothWaysWithTlsCluster) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  int k_tls = FreePort(), r_tls = FreePort();
  Cmd kargs = TlsServerArgs(k_tls), rargs = TlsServerArgs(r_tls);
  kargs.insert(kargs.end(), {"--tls-cluster", "yes"});
  rargs.insert(rargs.end(), {"--tls-cluster", "yes"});
  ServerProcess kv(Kind::kKvstore, kargs), redis(Kind::kRedis, rargs);
  RespClient k(kv.port()), r(redis.port());
  ASSERT_EQ(k.Call({"SET", "from-kvstore", "v1"}).str, "OK");
  EXPECT_EQ(
      k.Call({"MIGRATE", "127.0.0.1", std::to_string(r_tls), "from-kvstore", "0", "5000"}).str,
      "OK");
  EXPECT_EQ(r.Call({"GET", "from-kvstore"}).str, "v1");
  ASSERT_EQ(r.Call({"SET", "from-redis", "v2"}).str, "OK");
  EXPECT_EQ(r.Call({"MIGRATE", "127.0.0.1", std::to_string(k_tls), "from-redis", "0", "5000"}).str,
            "OK");
  EXPECT_EQ(k.Call({"GET", "from-redis"}).str, "v2");
  // Without tls-cluster a new connection is plain, which a TLS port does not answer (the
  // cached one to 127.0.0.1 stays TLS for its 10 seconds, as in Redis: "localhost" is another).
  ASSERT_EQ(k.Call({"CONFIG", "SET", "tls-cluster", "no"}).str, "OK");
  ASSERT_EQ(k.Call({"SET", "plain", "v3"}).str, "OK");
  Reply refused = k.Call({"MIGRATE", "localhost", std::to_string(r_tls), "plain", "0", "1000"});
  EXPECT_TRUE(refused.is_error()) << refused.raw;
  EXPECT_EQ(k.Call({"GET", "plain"}).str, "v3");
}

// kvstore closes a connection whose TLS handshake stalls (10 s; Redis 7.0 keeps it until
// `timeout`, which is off by default), and serves the others meanwhile.
TEST(TlsHandshake, AStalledHandshakeIsClosedAndTheServerServesOthers) {
  int tls_port = FreePort();
  ServerProcess server(Kind::kKvstore, TlsServerArgs(tls_port));
  RespClient stalled(tls_port);  // connects, and never sends its ClientHello
  RespClient half(tls_port);
  half.SendRaw(std::string("\x16\x03\x01\x02\x00\x01", 6));  // the start of a ClientHello
  std::string error;
  auto ctx =
      net::TlsContext::CreateClientOnly(Certs().ca_cert, Certs().client_cert, Certs().client_key);
  ASSERT_TRUE(ctx.ok());
  auto good = RespClient::ConnectTls(tls_port, *ctx, &error);
  ASSERT_NE(good, nullptr) << error;
  EXPECT_EQ(good->Call({"PING"}).str, "PONG");
  EXPECT_TRUE(stalled.WaitClosed(60000));
  EXPECT_TRUE(half.WaitClosed(60000));
  EXPECT_EQ(good->Call({"PING"}).str, "PONG");
  EXPECT_NE(server.LogText().find("TLS handshake timed out"), std::string::npos);
}

}  // namespace
}  // namespace kv::test
