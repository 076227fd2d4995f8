// RESP reply writer for RESP2 and RESP3. Appends to a caller-owned string; the protocol version
// decides how nulls, maps, sets, doubles, booleans and pushes are framed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace kv::resp {

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string* out, int proto = 2) : out_(out), proto_(proto) {}

  int proto() const { return proto_; }
  void set_proto(int proto) { proto_ = proto; }
  std::string* buffer() { return out_; }
  // Number of error replies written, for INFO's total_error_replies.
  uint64_t errors() const { return errors_; }
  // The errors written since the last MarkErrorsCounted: INFO counts each error once, for the
  // command that wrote it, though EXEC's commands write to EXEC's writer.
  uint64_t uncounted_errors() const { return errors_ - counted_errors_; }
  void MarkErrorsCounted() { counted_errors_ = errors_; }
  // The error just written was counted where it arose (a script's redis.call error that the
  // script returns or raises: Redis' ERR_REPLY_FLAG_NO_STATS_UPDATE). The command still failed:
  // TakeCountedFailure says so once.
  void MarkLastErrorCounted() {
    if (counted_errors_ < errors_) counted_errors_++;
    counted_failure_ = true;
  }
  bool TakeCountedFailure() { return std::exchange(counted_failure_, false); }
  // The code of the last error written ("ERR", "WRONGTYPE", ...), for INFO errorstats.
  std::string_view last_error_code() const { return {code_, code_len_}; }
  // The last error's text as written ("-ERR ..." without the CRLF), while the buffer holds it.
  std::string_view last_error() const {
    if (errors_ == 0 || error_at_ + error_len_ > out_->size()) return {};
    return std::string_view(*out_).substr(error_at_, error_len_);
  }

  void Ok() { Raw("+OK\r\n"); }
  void Simple(std::string_view s);
  // An error reply. A message starting with '-' carries its own code ("-WRONGTYPE ...");
  // otherwise "-ERR " is prepended, as Redis' addReplyError does.
  void Error(std::string_view msg);
  void Int(int64_t v);
  void Bulk(std::string_view s);
  void Null();       // RESP2 $-1, RESP3 _
  void NullArray();  // RESP2 *-1, RESP3 _
  void Array(size_t n);
  void Map(size_t n);   // n key/value pairs: RESP2 *2n, RESP3 %n
  void Set(size_t n);   // RESP2 *n, RESP3 ~n
  void Push(size_t n);  // RESP2 *n, RESP3 >n
  void Double(double d);
  void Bool(bool b);
  // Verbatim string (RESP3 "=", RESP2 bulk); fmt is three letters such as "txt".
  void Verbatim(std::string_view s, std::string_view fmt = "txt");
  void EmptyArray() { Raw("*0\r\n"); }
  void Raw(std::string_view s) { out_->append(s); }

 private:
  void Header(char type, int64_t n);

  std::string* out_;
  int proto_;
  uint64_t errors_ = 0;
  uint64_t counted_errors_ = 0;
  bool counted_failure_ = false;
  char code_[32];
  size_t code_len_ = 0;
  size_t error_at_ = 0, error_len_ = 0;
};

}  // namespace kv::resp
