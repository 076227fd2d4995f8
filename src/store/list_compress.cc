// ListValue's node compression (list-compress-depth), after Redis' quicklist:
// inner nodes are kept LZF-compressed, the depth nodes at each end plain. Reads
// inflate a node into scratch memory and leave it compressed; changes
// decompress the nodes they touch and Settle recompresses them.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "common/lzf.h"
#include "store/list_type.h"

namespace kv::store {
namespace {

// Redis' MIN_COMPRESS_BYTES and MIN_COMPRESS_IMPROVE: smaller nodes are not
// worth compressing, and a compressed form must save more than this many bytes
// to be kept.
constexpr size_t kMinCompressBytes = 48;
constexpr size_t kMinCompressImprove = 8;

}  // namespace

const char *ListValue::NodeBytes(size_t i, std::string *tmp) const {
  const Node &n = nodes_[i];
  if (n.lzf_raw == 0) return n.data();
  tmp->resize(n.lzf_raw);
  // The list wrote these bytes itself, so a failure is memory corruption, not
  // bad input.
  if (!LzfDecompress(n.data(), n.used(), tmp->data(), n.lzf_raw)) abort();
  return tmp->data();
}

void ListValue::Decompress(size_t i) {
  Node &n = nodes_[i];
  if (n.lzf_raw == 0) return;
  std::unique_ptr<char[]> raw(new char[n.lzf_raw]);
  if (!LzfDecompress(n.data(), n.used(), raw.get(), n.lzf_raw)) abort();
  n.buf = std::move(raw);
  n.cap = n.lzf_raw;
  n.begin = 0;
  n.end = n.lzf_raw;
  n.lzf_raw = 0;
}

void ListValue::TryCompress(size_t i) {
  Node &n = nodes_[i];
  size_t u = n.used();
  if (n.lzf_raw != 0 || u < kMinCompressBytes || u > UINT32_MAX) return;
  std::unique_ptr<char[]> out(new char[u]);
  size_t c = LzfCompress(n.data(), u, out.get(), u);
  if (c == 0 || c + kMinCompressImprove >= u) return;  // does not pay: stays plain
  std::unique_ptr<char[]> packed(new char[c]);
  memcpy(packed.get(), out.get(), c);
  n.buf = std::move(packed);
  n.cap = c;
  n.begin = 0;
  n.end = c;
  n.lzf_raw = static_cast<uint32_t>(u);
}

void ListValue::Settle(size_t lo, size_t hi) {
  if (depth_ == 0) return;
  size_t size = nodes_.size();
  for (size_t k = 0; k < depth_ && k < size; k++) {
    Decompress(k);
    Decompress(size - 1 - k);
  }
  if (size <= 2 * size_t{depth_}) return;  // no inner nodes
  size_t inner_end = size - depth_;        // inner nodes: [depth_, inner_end)
  // Nodes added in [lo, hi] may have pushed as many plain nodes past either
  // boundary.
  size_t shifted = lo <= hi ? hi - lo : 0;
  for (size_t k = 0; k <= shifted && depth_ + k < inner_end; k++) {
    TryCompress(depth_ + k);
    TryCompress(inner_end - 1 - k);
  }
  for (size_t i = std::max<size_t>(lo, depth_); i <= hi && i < inner_end; i++) TryCompress(i);
}

size_t ListValue::compressed_node_count() const {
  size_t n = 0;
  for (size_t i = 0; i < nodes_.size(); i++) n += nodes_[i].lzf_raw != 0;
  return n;
}

size_t ListValue::uncompressed_bytes() const {
  size_t bytes = 0;
  for (size_t i = 0; i < nodes_.size(); i++) {
    const Node &n = nodes_[i];
    bytes += n.plain ? PayloadOf(RawUsed(n)) : RawUsed(n);
  }
  return bytes;
}

}  // namespace kv::store
