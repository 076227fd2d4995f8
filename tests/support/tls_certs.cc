#include "tests/support/tls_certs.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace kv::test {

namespace {

void Run(const std::string& cmd) {
  std::string full = cmd + " >/dev/null 2>&1";
  if (system(full.c_str()) != 0) {
    fprintf(stderr, "TestCerts: failed: %s\n", cmd.c_str());
    abort();
  }
}

// A key and a certificate signed by `ca` (or self-signed when ca is empty) for `cn`.
void Make(const std::string& dir, const std::string& name, const std::string& cn,
          const std::string& ca, const std::string& days) {
  std::string key = dir + "/" + name + ".key", crt = dir + "/" + name + ".crt";
  std::string newkey = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + key;
  if (ca.empty()) {
    Run("openssl req -x509 " + newkey + " -out " + crt + " -days " + days +
        " -subj '/O=kvstore test/CN=" + cn +
        "' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign");
    return;
  }
  std::string csr = dir + "/" + name + ".csr", ext = dir + "/" + name + ".ext";
  std::ofstream(ext) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                     << "keyUsage=digitalSignature,keyEncipherment\n"
                     << "extendedKeyUsage=serverAuth,clientAuth\n";
  Run("openssl req " + newkey + " -out " + csr + " -subj '/O=kvstore test/CN=" + cn + "'");
  Run("openssl x509 -req -in " + csr + " -CA " + dir + "/" + ca + ".crt -CAkey " + dir + "/" + ca +
      ".key -CAcreateserial -days " + days + " -extfile " + ext + " -out " + crt);
}

}  // namespace

const TestCerts& Certs() {
  static const TestCerts* certs = [] {
    char tmpl[] = "/tmp/kvstore-certs-XXXXXX";
    auto* c = new TestCerts();
    c->dir = mkdtemp(tmpl);
    const std::string& d = c->dir;
    Make(d, "ca", "kvstore test CA", "", "3650");
    Make(d, "other-ca", "another CA", "", "3650");
    Make(d, "server", "kvstore server", "ca", "3650");
    Make(d, "server2", "kvstore server 2", "ca", "3650");
    Make(d, "client", "kvstore client", "ca", "3650");
    Make(d, "expired", "kvstore expired", "ca", "0");  // notAfter is now: past in a second
    Run("openssl pkey -in " + d + "/server.key -aes256 -passout pass:" + TestCerts::kKeyPassphrase +
        " -out " + d + "/server-enc.key");
    Run("openssl genpkey -genparam -algorithm DH -pkeyopt group:ffdhe2048 -out " + d + "/dh.pem");
    c->ca_cert = d + "/ca.crt";
    c->ca_key = d + "/ca.key";
    c->server_cert = d + "/server.crt";
    c->server_key = d + "/server.key";
    c->server2_cert = d + "/server2.crt";
    c->server2_key = d + "/server2.key";
    c->client_cert = d + "/client.crt";
    c->client_key = d + "/client.key";
    c->expired_cert = d + "/expired.crt";
    c->expired_key = d + "/expired.key";
    c->server_key_encrypted = d + "/server-enc.key";
    c->other_ca_cert = d + "/other-ca.crt";
    c->dh_params = d + "/dh.pem";
    atexit([] { (void)system(("rm -rf '" + Certs().dir + "'").c_str()); });
    sleep(1);  // the expired certificate's notAfter is behind us
    return c;
  }();
  return *certs;
}

std::vector<std::string> TlsServerArgs(int tls_port) {
  const TestCerts& c = Certs();
  return {
      "--tls-port", std::to_string(tls_port), "--tls-cert-file", c.server_cert, "--tls-key-file",
      c.server_key, "--tls-ca-cert-file",     c.ca_cert};
}

}  // namespace kv::test
