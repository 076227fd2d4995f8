// A replica on a raw socket, for tests of what a primary propagates: it sends SYNC, skips the
// snapshot and parses the command stream that follows.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/resp_client.h"

namespace kv::test {

class StreamReader {
 public:
  explicit StreamReader(int port) : c_(port) { c_.SendRaw("SYNC\r\n"); }

  // The next command of the stream but PING and REPLCONF (unless `keepalives`); empty on
  // timeout or a bad stream.
  std::vector<std::string> Next(bool keepalives = false) {
    for (;;) {
      std::vector<std::string> cmd;
      std::string line;
      if (!Line(&line)) return {};
      // The newlines a primary sends while it prepares the snapshot. No status line: SYNC gets
      // no +FULLRESYNC (Redis 7.0 sends none; redis-cli --replica expects the payload).
      line.erase(0, line.find_first_not_of('\n'));
      if (line.empty()) continue;
      if (line[0] == '$') {  // the snapshot: $<len> or $EOF:<40-byte mark>
        if (!SkipSnapshot(line)) return {};
        continue;
      }
      if (line[0] != '*') return {};
      int n = std::stoi(line.substr(1));
      for (int i = 0; i < n; i++) {
        if (!Line(&line) || line.empty() || line[0] != '$') return {};
        size_t len = std::stoul(line.substr(1));
        if (!Bytes(len + 2)) return {};
        cmd.push_back(buf_.substr(pos_, len));
        pos_ += len + 2;
      }
      std::string name = cmd.empty() ? "" : cmd[0];
      std::transform(name.begin(), name.end(), name.begin(), ::toupper);
      if (keepalives || (name != "PING" && name != "REPLCONF")) return cmd;
    }
  }

 private:
  bool Fill() {
    pollfd p{c_.fd(), POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0) return false;
    char tmp[65536];
    ssize_t n = recv(c_.fd(), tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf_.erase(0, pos_);
    pos_ = 0;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  bool Bytes(size_t n) {
    while (buf_.size() - pos_ < n) {
      if (!Fill()) return false;
    }
    return true;
  }
  bool Line(std::string* out) {
    size_t at;
    while ((at = buf_.find("\r\n", pos_)) == std::string::npos) {
      if (!Fill()) return false;
    }
    *out = buf_.substr(pos_, at - pos_);
    pos_ = at + 2;
    return true;
  }
  bool SkipSnapshot(const std::string& line) {
    if (line.rfind("$EOF:", 0) == 0) {
      std::string mark = line.substr(5);
      size_t at;
      while ((at = buf_.find(mark, pos_)) == std::string::npos) {
        if (!Fill()) return false;
      }
      pos_ = at + mark.size();
      return true;
    }
    size_t len = std::stoul(line.substr(1));
    if (!Bytes(len)) return false;
    pos_ += len;
    return true;
  }

  RespClient c_;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace kv::test
