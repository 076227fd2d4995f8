// The sorted set's ordered index for its "skiplist" encoding: Redis' skiplist (Pugh's, allowing
// equal scores, ordered by (score, member bytes), with a backward link at level 0 and a span per
// forward link so that ranks cost O(log n)).
//
// Each link also keeps a copy of the score of the node it points to, so a descent compares
// against the next node's score without touching that node: in a large set every node touched
// is a cache miss, and the checks that end a level are about a fifth of them. Only when scores
// tie does the descent read the next node's member.
//
// A ZNode is one allocation holding the member bytes, the score, the skiplist links and the
// `next` link of the member -> node hash table (IntrusiveTable<ZNode>) that ZSetValue keeps beside
// the list. The list links nodes but never owns them: whoever holds the table destroys them.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace kv::store {

struct ZNode {
  struct Level {
    ZNode* forward;
    double score;  // forward->score (0 when forward is null); kept in step by ZSkipList
    size_t span;   // nodes crossed by this link (the rank distance to `forward`)

    void Point(ZNode* to) {
      forward = to;
      score = to ? to->score : 0;
    }
    // True when the node this link points to sorts before (score, member).
    bool Before(double s, std::string_view member) const {
      return forward && (score < s || (score == s && forward->key() < member));
    }
  };

  ZNode* next = nullptr;      // member table chain (IntrusiveTable)
  ZNode* backward = nullptr;  // previous node at level 0; null for the first node
  double score = 0;
  uint32_t len = 0;    // member length
  uint8_t height = 0;  // number of levels
  // Level[height] follows the struct, then the member bytes.

  Level* levels() { return reinterpret_cast<Level*>(this + 1); }
  const Level* levels() const { return reinterpret_cast<const Level*>(this + 1); }
  ZNode* forward() const { return levels()[0].forward; }
  std::string_view key() const { return {reinterpret_cast<const char*>(levels() + height), len}; }

  static ZNode* Create(int height, std::string_view member, double score);
  static void Destroy(ZNode* n);
};

// True when (score a, member a) sorts before (score b, member b). Members compare as unsigned
// bytes, shorter first on a common prefix (Redis' sdscmp).
inline bool ZLess(double sa, std::string_view ma, double sb, std::string_view mb) {
  return sa < sb || (sa == sb && ma < mb);
}

class ZSkipList {
 public:
  static constexpr int kMaxLevel = 32;  // Redis' ZSKIPLIST_MAXLEVEL

  ZSkipList();
  ~ZSkipList();
  ZSkipList(const ZSkipList&) = delete;
  ZSkipList& operator=(const ZSkipList&) = delete;

  size_t size() const { return length_; }
  ZNode* first() const { return header_->forward(); }
  ZNode* last() const { return tail_; }

  // Creates a node of random height for a member that is not in the list and links it.
  ZNode* Insert(std::string_view member, double score);
  // Unlinks a node of this list (it is not destroyed).
  void Unlink(ZNode* node);
  // Gives a linked node a new score, moving it when its position changes (same node).
  void UpdateScore(ZNode* node, double score);

  // 1-based rank of the node with this score and member; 0 when absent.
  size_t Rank(double score, std::string_view member) const;
  // The node at a 1-based rank, or null when out of range.
  ZNode* ByRank(size_t rank) const;

  // Redis' range search: from the highest level down, moves forward while go(next node) holds
  // and returns the node where it stops (null for the header), with its 1-based rank. On an
  // ordered predicate that is the last node for which it holds.
  template <typename Go>
  ZNode* Descend(const Go& go, size_t* rank) const {
    ZNode* x = header_;
    size_t r = 0;
    for (int i = level_ - 1; i >= 0; i--) {
      while (x->levels()[i].forward && go(x->levels()[i].forward)) {
        r += x->levels()[i].span;
        x = x->levels()[i].forward;
      }
    }
    *rank = r;
    return x == header_ ? nullptr : x;
  }

  // Unlinks the nodes of 1-based ranks [start, end] in order, handing each to `on_unlinked`
  // (which owns it from then on). Returns how many were removed.
  size_t DeleteRangeByRank(size_t start, size_t end,
                           const std::function<void(ZNode*)>& on_unlinked);

  // For tests, O(n * levels): true when the nodes are in order, every link's span and score
  // copy agree with the nodes, and the level count is the tallest node's height.
  bool CheckLinks() const;

 private:
  static int RandomLevel();
  // Links a node (of any height) at its place by (score, member).
  void Link(ZNode* x);
  // Links x after update[i] at each of its levels; rank[i] is update[i]'s rank.
  void LinkAt(ZNode* x, ZNode** update, size_t* rank);
  // For a linked x about to move to `score`: from[] is what UnlinkWith needs, to[] and rank[]
  // what LinkAt needs once x is unlinked, both found in one walk.
  void FindMove(ZNode* x, double score, ZNode** from, ZNode** to, size_t* rank) const;
  // Fills update[] with the last node before (score, member) at each level.
  void FindUpdate(double score, std::string_view member, ZNode** update) const;
  void UnlinkWith(ZNode* x, ZNode** update);
  // Rewrites the score copies in the links that point to x (after x->score changed in place).
  void RefreshLinksTo(ZNode* x);

  ZNode* header_;
  ZNode* tail_ = nullptr;
  size_t length_ = 0;
  int level_ = 1;
};

}  // namespace kv::store
