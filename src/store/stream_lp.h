// Redis' listpack, byte for byte, as a growable buffer: the node format of Redis' streams, which
// kvstore keeps as is so a stream's nodes go into and come out of an RDB file unchanged and take
// the memory they take in Redis. Layout: total bytes (u32 LE), element count (u16 LE, 65535 once
// unknown), the entries, 0xFF. An entry is an encoding byte (small integers and short string
// lengths inline), its data, and its size again as a backlen varint so it can be walked back.
// Strings that are canonical integers are stored as integers, as lpAppend stores them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kv::store {

class StreamListpack {
 public:
  static constexpr size_t kHeaderSize = 6;
  static constexpr size_t kNone = SIZE_MAX;

  // An element: an integer, or a string (view into the listpack).
  struct Elem {
    bool is_int = false;
    int64_t ival = 0;
    std::string_view sval;
    // The element as text: the string, or the integer formatted into `buf` (21 bytes).
    std::string_view Text(char* buf) const;
  };

  StreamListpack() = default;
  ~StreamListpack();
  StreamListpack(StreamListpack&& o) noexcept;
  StreamListpack& operator=(StreamListpack&& o) noexcept;
  StreamListpack(const StreamListpack&) = delete;
  StreamListpack& operator=(const StreamListpack&) = delete;

  // An empty listpack with room for `capacity` bytes (Redis' lpNew(capacity)).
  static StreamListpack New(size_t capacity);
  // A copy of raw listpack bytes (checked by the caller).
  static StreamListpack FromBytes(std::string_view bytes);
  StreamListpack Clone() const { return FromBytes(view()); }

  void AppendInt(int64_t v);
  void Append(std::string_view s);
  // Replaces the element at `off` with an integer (lpReplaceInteger); what follows moves when
  // the encoding's size changes.
  void ReplaceInt(size_t off, int64_t v);
  // Gives back spare capacity (lpShrinkToFit).
  void ShrinkToFit();

  // Offsets of elements: First/Last, Next/Prev (kNone past the ends).
  size_t First() const;
  size_t Last() const;
  size_t Next(size_t off) const;
  size_t Prev(size_t off) const;
  Elem Get(size_t off) const;
  // The element at `off` as an integer (streams keep their counters and IDs as integers; a
  // string element is parsed, as lpGetInteger does).
  int64_t GetInt(size_t off) const;

  size_t bytes() const { return lp_ ? Bytes() : 0; }
  size_t capacity() const { return cap_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(lp_), bytes()}; }
  bool empty_buffer() const { return lp_ == nullptr; }

  // Encodes an integer entry (at most 10 bytes) or a string entry (at most its length + 10) with
  // its backlen into `out`; returns the entry's size. persist's ListpackBuilder uses them too.
  static size_t EncodeInt(int64_t v, uint8_t* out);
  static size_t EncodeString(std::string_view s, uint8_t* out);

  // Checks that `bytes` is a well-formed listpack: header, every entry's encoding, length and
  // backlen within bounds, the terminator and the element count. *count gets the elements.
  static bool Validate(std::string_view bytes, size_t* count);

 private:
  uint32_t Bytes() const;
  void SetBytes(uint32_t n);
  void Reserve(size_t need);
  void AppendEncoded(const uint8_t* e, size_t n);
  static size_t EntrySize(const uint8_t* p);  // encoding + data + backlen

  uint8_t* lp_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace kv::store
