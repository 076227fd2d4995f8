// LCS (Redis 7.0 t_string.c's lcsCommand): the longest common subsequence of two strings, as the
// string itself, its length (LEN) or the matching ranges (IDX). strings.cc registers it.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "cmd/string_ops.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace {

using store::Entry;

// ---- LCS ----------------------------------------------------------------------------------------

struct LcsOpts {
  bool len = false;
  bool idx = false;
  bool with_match_len = false;
  int64_t min_match_len = 0;
};

bool ParseLcsOpts(Context& c, LcsOpts* o) {
  for (size_t j = 3; j < c.argc(); j++) {
    std::string_view opt = c.arg(j);
    if (EqualsIgnoreCase(opt, "IDX")) {
      o->idx = true;
    } else if (EqualsIgnoreCase(opt, "LEN")) {
      o->len = true;
    } else if (EqualsIgnoreCase(opt, "WITHMATCHLEN")) {
      o->with_match_len = true;
    } else if (EqualsIgnoreCase(opt, "MINMATCHLEN") && j + 1 < c.argc()) {
      if (!c.ParseInt(c.arg(++j), &o->min_match_len)) return false;
      if (o->min_match_len < 0) o->min_match_len = 0;
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  if (o->len && o->idx) {
    c.Error("If you want both the length and indexes, please just use IDX.");
    return false;
  }
  return true;
}

// One common run: a[a_start..a_end] == b[b_start..b_end], inclusive.
struct LcsRange {
  uint32_t a_start, a_end, b_start, b_end;
};

// The dynamic-programming table: cell (i, j) holds the LCS length of a[0, i) and b[0, j).
class LcsTable {
 public:
  LcsTable(std::string_view a, std::string_view b) : a_(a), b_(b), width_(b.size() + 1) {}

  // Allocates and fills the table; false when the allocation fails.
  bool Build() {
    cells_.reset(new (std::nothrow) uint32_t[(a_.size() + 1) * width_]);
    if (!cells_) return false;
    for (size_t i = 0; i <= a_.size(); i++) {
      for (size_t j = 0; j <= b_.size(); j++) {
        if (i == 0 || j == 0)
          at(i, j) = 0;
        else if (a_[i - 1] == b_[j - 1])
          at(i, j) = at(i - 1, j - 1) + 1;
        else
          at(i, j) = std::max(at(i - 1, j), at(i, j - 1));
      }
    }
    return true;
  }
  uint32_t& at(size_t i, size_t j) { return cells_[i * width_ + j]; }
  uint32_t length() { return at(a_.size(), b_.size()); }

  // Walks back from the end as Redis does, returning the LCS string and appending the match
  // ranges of at least min_len to *ranges (last match first, Redis' reply order).
  std::string Walk(int64_t min_len, std::vector<LcsRange>* ranges) {
    const uint32_t alen = static_cast<uint32_t>(a_.size());
    std::string result(length(), '\0');
    uint32_t idx = length(), i = alen, j = static_cast<uint32_t>(b_.size());
    LcsRange r{alen, 0, 0, 0};  // a_start == alen: no range open
    while (i > 0 && j > 0) {
      bool emit = false;
      if (a_[i - 1] == b_[j - 1]) {
        result[idx - 1] = a_[i - 1];
        if (r.a_start == alen) {
          r = {i - 1, i - 1, j - 1, j - 1};
        } else if (r.a_start == i && r.b_start == j) {
          r.a_start--;
          r.b_start--;
        } else {
          emit = true;
        }
        if (r.a_start == 0 || r.b_start == 0) emit = true;
        idx--, i--, j--;
      } else {
        if (at(i - 1, j) > at(i, j - 1))
          i--;
        else
          j--;
        if (r.a_start != alen) emit = true;
      }
      if (!emit) continue;
      uint32_t match_len = r.a_end - r.a_start + 1;
      if (min_len == 0 || match_len >= min_len) ranges->push_back(r);
      r.a_start = alen;
    }
    return result;
  }

 private:
  std::string_view a_, b_;
  size_t width_;
  std::unique_ptr<uint32_t[]> cells_;
};

void ReplyLcsIdx(Context& c, const std::vector<LcsRange>& ranges, uint32_t len, bool with_len) {
  c.out.Map(2);
  c.out.Bulk("matches");
  c.out.Array(ranges.size());
  for (const LcsRange& r : ranges) {
    c.out.Array(with_len ? 3 : 2);
    c.out.Array(2);
    c.out.Int(r.a_start);
    c.out.Int(r.a_end);
    c.out.Array(2);
    c.out.Int(r.b_start);
    c.out.Int(r.b_end);
    if (with_len) c.out.Int(r.a_end - r.a_start + 1);
  }
  c.out.Bulk("len");
  c.out.Int(len);
}

}  // namespace

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]. Missing keys are empty strings.
// The O(len1 * len2) table is refused when its size overflows or is larger than
// proto-max-bulk-len, as Redis does (CVE-2021-32625).
void Lcs(Context& c) {
  Entry* ea = c.LookupRead(c.arg(1));
  Entry* eb = c.LookupRead(c.arg(2));
  if ((ea && !ea->value.is_string()) || (eb && !eb->value.is_string())) {
    c.Error("The specified keys must contain string values");
    return;
  }
  // Views, not copies: the strings may be gigabytes long, and the table is checked first. The
  // lookups are done, so nothing moves or frees the values until the command ends.
  char scratch_a[24], scratch_b[24];
  std::string_view a = ea ? ea->value.Str(scratch_a) : "";
  std::string_view b = eb ? eb->value.Str(scratch_b) : "";
  LcsOpts o;
  if (!ParseLcsOpts(c, &o)) return;
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    c.Error("String too long for LCS");
    return;
  }
  uint64_t cells = (uint64_t{a.size()} + 1) * (uint64_t{b.size()} + 1);  // below 2^64
  uint64_t bytes;
  if (__builtin_mul_overflow(cells, sizeof(uint32_t), &bytes) ||
      bytes > static_cast<uint64_t>(c.hooks.MaxBulkLen())) {
    c.Error("Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  LcsTable table(a, b);
  if (!table.Build()) {
    c.Error("Insufficient memory, failed allocating transient memory for LCS");
    return;
  }
  if (o.len) {
    c.out.Int(table.length());
    return;
  }
  std::vector<LcsRange> ranges;
  std::string result = table.Walk(o.min_match_len, &ranges);
  if (o.idx)
    ReplyLcsIdx(c, ranges, table.length(), o.with_match_len);
  else
    c.out.Bulk(result);
}

}  // namespace kv::cmd
