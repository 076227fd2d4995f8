// Certificates for the TLS tests, made once per test process with the openssl tool (as Redis'
// utils/gen-test-certs.sh makes its own): a CA, a server and a client certificate it signed
// (for 127.0.0.1 and localhost), a second server certificate, an expired one, the server key
// under a passphrase, an unrelated CA, and DH parameters.
#pragma once

#include <string>
#include <vector>

namespace kv::test {

struct TestCerts {
  std::string dir;
  std::string ca_cert, ca_key;
  std::string server_cert, server_key;
  std::string server2_cert, server2_key;  // CN "kvstore server 2"
  std::string client_cert, client_key;
  std::string expired_cert, expired_key;  // signed by the CA, past its notAfter
  std::string server_key_encrypted;       // server_key under kKeyPassphrase
  std::string other_ca_cert;              // a CA that signed none of them
  std::string dh_params;
  static constexpr const char* kKeyPassphrase = "kvstore-pass";
};

// Aborts the test process when the openssl tool fails (the setup step installs it).
const TestCerts& Certs();

// A server's TLS settings as command-line options: tls-port, the server certificate and key,
// the CA (for tls-auth-clients).
std::vector<std::string> TlsServerArgs(int tls_port);

}  // namespace kv::test
