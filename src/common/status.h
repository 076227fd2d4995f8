// Errors are values: Status carries a code and a message; Result<T> carries a value or a Status.
// Exceptions are used only at startup/config time, never across module boundaries.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kv {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // bad input from a user or a peer
  kNotFound,
  kIoError,     // a system call failed
  kCorruption,  // malformed data (files, protocol)
  kClosed,      // the peer went away
  kAgain,       // try later (would block)
  kOutOfRange,
  kInternal,
  kTimedOut,  // a peer said nothing for too long
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string msg) : code_(code), msg_(std::move(msg)) {}

  static Status Ok() { return {}; }
  static Status Invalid(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status Closed(std::string m) { return {Code::kClosed, std::move(m)}; }
  static Status TimedOut(std::string m) { return {Code::kTimedOut, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  // An IoError that carries strerror(err).
  static Status FromErrno(const std::string& what, int err);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string msg_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {    // NOLINT
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kv

// Early returns for functions that return Status or Result<U>:
//   KV_TRY(DoThing());                   // returns the Status when it is an error
//   KV_TRY_ASSIGN(v, ComputeThing());    // declares v = the value, or returns the error
#define KV_TRY(expr)               \
  do {                             \
    ::kv::Status kv_try_st_ = (expr); \
    if (!kv_try_st_.ok()) return kv_try_st_; \
  } while (0)

#define KV_TRY_ASSIGN(var, expr)                 \
  auto var##_result_ = (expr);                   \
  if (!var##_result_.ok()) return var##_result_.status(); \
  auto var = std::move(*var##_result_)
