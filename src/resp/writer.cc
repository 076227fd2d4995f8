#include "resp/writer.h"

#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstring>

namespace kv::resp {

void ReplyWriter::Header(char type, int64_t n) {
  char buf[32];
  buf[0] = type;
  auto r = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n);
  *r.ptr++ = '\r';
  *r.ptr++ = '\n';
  out_->append(buf, r.ptr - buf);
}

void ReplyWriter::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Error(std::string_view msg) {
  errors_++;
  std::string_view code = "ERR";
  if (!msg.empty() && msg[0] == '-') code = msg.substr(1, msg.find(' ') - 1);
  code_len_ = std::min(code.size(), sizeof(code_));
  memcpy(code_, code.data(), code_len_);
  error_at_ = out_->size();
  if (msg.empty() || msg[0] != '-') out_->append("-ERR ");
  // Newlines would break the framing; Redis replaces them with spaces.
  size_t start = out_->size();
  out_->append(msg);
  for (size_t i = start; i < out_->size(); i++) {
    if ((*out_)[i] == '\r' || (*out_)[i] == '\n') (*out_)[i] = ' ';
  }
  error_len_ = out_->size() - error_at_;
  out_->append("\r\n");
}

void ReplyWriter::Int(int64_t v) { Header(':', v); }

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Null() { Raw(proto_ >= 3 ? "_\r\n" : "$-1\r\n"); }
void ReplyWriter::NullArray() { Raw(proto_ >= 3 ? "_\r\n" : "*-1\r\n"); }
void ReplyWriter::Array(size_t n) { Header('*', static_cast<int64_t>(n)); }
void ReplyWriter::Map(size_t n) {
  if (proto_ >= 3) Header('%', static_cast<int64_t>(n));
  else Header('*', static_cast<int64_t>(2 * n));
}
void ReplyWriter::Set(size_t n) { Header(proto_ >= 3 ? '~' : '*', static_cast<int64_t>(n)); }
void ReplyWriter::Push(size_t n) { Header(proto_ >= 3 ? '>' : '*', static_cast<int64_t>(n)); }

void ReplyWriter::Double(double d) {
  char buf[64];
  int n;
  if (std::isinf(d)) n = snprintf(buf, sizeof(buf), "%s", d > 0 ? "inf" : "-inf");
  else n = snprintf(buf, sizeof(buf), "%.17g", d);
  std::string_view s(buf, n);
  if (proto_ >= 3) {
    out_->push_back(',');
    out_->append(s);
    out_->append("\r\n");
  } else {
    Bulk(s);
  }
}

void ReplyWriter::Bool(bool b) {
  if (proto_ >= 3) Raw(b ? "#t\r\n" : "#f\r\n");
  else Raw(b ? ":1\r\n" : ":0\r\n");
}

void ReplyWriter::Verbatim(std::string_view s, std::string_view fmt) {
  if (proto_ < 3) {
    Bulk(s);
    return;
  }
  Header('=', static_cast<int64_t>(s.size() + 4));
  out_->append(fmt);
  out_->push_back(':');
  out_->append(s);
  out_->append("\r\n");
}

}  // namespace kv::resp
