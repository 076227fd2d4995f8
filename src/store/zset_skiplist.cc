#include "store/zset_skiplist.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>

#include "common/hash.h"

namespace kv::store {

ZNode* ZNode::Create(int height, std::string_view member, double score) {
  size_t bytes = sizeof(ZNode) + height * sizeof(Level) + member.size();
  void* mem = malloc(bytes);
  if (!mem) throw std::bad_alloc();
  ZNode* n = new (mem) ZNode();
  n->score = score;
  n->len = static_cast<uint32_t>(member.size());
  n->height = static_cast<uint8_t>(height);
  for (int i = 0; i < height; i++) n->levels()[i] = {nullptr, 0, 0};
  if (!member.empty()) memcpy(n->levels() + height, member.data(), member.size());
  return n;
}

void ZNode::Destroy(ZNode* n) {
  n->~ZNode();
  free(n);
}

ZSkipList::ZSkipList() : header_(ZNode::Create(kMaxLevel, {}, 0)) {}

ZSkipList::~ZSkipList() { ZNode::Destroy(header_); }

// Redis' zslRandomLevel: each further level with probability 1/4.
int ZSkipList::RandomLevel() {
  int level = 1;
  while (level < kMaxLevel && (RandomU64() & 0xFFFF) < 0xFFFF / 4) level++;
  return level;
}

ZNode* ZSkipList::Insert(std::string_view member, double score) {
  ZNode* x = ZNode::Create(RandomLevel(), member, score);
  Link(x);
  return x;
}

void ZSkipList::Link(ZNode* x) {
  ZNode* update[kMaxLevel];
  size_t rank[kMaxLevel];
  ZNode* p = header_;
  std::string_view member = x->key();
  for (int i = level_ - 1; i >= 0; i--) {
    rank[i] = i == level_ - 1 ? 0 : rank[i + 1];
    while (p->levels()[i].Before(x->score, member)) {
      rank[i] += p->levels()[i].span;
      p = p->levels()[i].forward;
    }
    update[i] = p;
  }
  LinkAt(x, update, rank);
}

void ZSkipList::LinkAt(ZNode* x, ZNode** update, size_t* rank) {
  int height = x->height;
  if (height > level_) {
    for (int i = level_; i < height; i++) {
      rank[i] = 0;
      update[i] = header_;
      header_->levels()[i].span = length_;
    }
    level_ = height;
  }
  for (int i = 0; i < height; i++) {
    ZNode::Level& up = update[i]->levels()[i];
    x->levels()[i].Point(up.forward);
    up.Point(x);
    x->levels()[i].span = up.span - (rank[0] - rank[i]);
    up.span = (rank[0] - rank[i]) + 1;
  }
  for (int i = height; i < level_; i++) update[i]->levels()[i].span++;
  x->backward = update[0] == header_ ? nullptr : update[0];
  if (x->forward())
    x->forward()->backward = x;
  else
    tail_ = x;
  length_++;
}

void ZSkipList::FindUpdate(double score, std::string_view member, ZNode** update) const {
  ZNode* p = header_;
  for (int i = level_ - 1; i >= 0; i--) {
    while (p->levels()[i].Before(score, member)) p = p->levels()[i].forward;
    update[i] = p;
  }
}

void ZSkipList::UnlinkWith(ZNode* x, ZNode** update) {
  for (int i = 0; i < level_; i++) {
    ZNode::Level& up = update[i]->levels()[i];
    if (up.forward == x) {
      up.span += x->levels()[i].span - 1;
      up.Point(x->levels()[i].forward);
    } else {
      up.span -= 1;
    }
  }
  if (x->forward())
    x->forward()->backward = x->backward;
  else
    tail_ = x->backward;
  while (level_ > 1 && header_->levels()[level_ - 1].forward == nullptr) level_--;
  length_--;
  x->backward = nullptr;
  for (int i = 0; i < x->height; i++) x->levels()[i] = {nullptr, 0, 0};
}

void ZSkipList::Unlink(ZNode* node) {
  ZNode* update[kMaxLevel];
  FindUpdate(node->score, node->key(), update);
  UnlinkWith(node, update);
}

void ZSkipList::UpdateScore(ZNode* node, double score) {
  // Stays in place when still between its neighbours (Redis' zslUpdateScore fast path).
  ZNode* prev = node->backward;
  ZNode* next = node->forward();
  if ((!prev || prev->score < score) && (!next || next->score > score)) {
    node->score = score;
    RefreshLinksTo(node);
    return;
  }
  ZNode* from[kMaxLevel];
  ZNode* to[kMaxLevel];
  size_t rank[kMaxLevel];
  FindMove(node, score, from, to, rank);
  UnlinkWith(node, from);
  node->score = score;
  LinkAt(node, to, rank);
}

// The two searches of a move, unlink and link, walk the list together: each step loads the
// next node of both paths, so in a large set their cache misses overlap instead of following
// one another. The second path walks the list as it will be once x is unlinked: it steps over
// x, and ranks past x count one less.
void ZSkipList::FindMove(ZNode* x, double score, ZNode** from, ZNode** to, size_t* rank) const {
  std::string_view member = x->key();
  const double old_score = x->score;
  ZNode* a = header_;  // the unlink path: the last node before x
  ZNode* b = header_;  // the link path: the last node before (score, member), x left out
  size_t rank_a = 0, rank_b = 0;
  for (int i = level_ - 1; i >= 0; i--) {
    for (;;) {
      const ZNode::Level& la = a->levels()[i];
      bool step_a = la.Before(old_score, member);
      const ZNode::Level& lb = b->levels()[i];
      ZNode* next = lb.forward;
      double next_score = lb.score;
      size_t span = lb.span;
      if (next == x) {
        const ZNode::Level& lx = x->levels()[i];
        next = lx.forward;
        next_score = lx.score;
        span += lx.span;
      }
      bool step_b = next && (next_score < score || (next_score == score && next->key() < member));
      if (!step_a && !step_b) break;
      if (step_a) {
        rank_a += la.span;
        a = la.forward;
      }
      if (step_b) {
        rank_b += span;
        b = next;
      }
    }
    from[i] = a;
    to[i] = b;
    rank[i] = rank_b;
  }
  // Ranks so far count x; those of nodes after it are one less once it is gone.
  size_t rank_x = rank_a + 1;
  for (int i = 0; i < level_; i++) {
    if (rank[i] > rank_x) rank[i]--;
  }
}

void ZSkipList::RefreshLinksTo(ZNode* x) {
  if (x->height == 1) {  // the only link to x is its level-0 predecessor's
    (x->backward ? x->backward : header_)->levels()[0].score = x->score;
    return;
  }
  // The predecessors at x's levels are where a search for x stops: the links from them reach
  // x (whose key is unique), so the search compares by member when it meets x's stale copy.
  ZNode* p = header_;
  std::string_view member = x->key();
  for (int i = level_ - 1; i >= 0; i--) {
    while (p->levels()[i].forward != x && p->levels()[i].Before(x->score, member)) {
      p = p->levels()[i].forward;
    }
    if (i < x->height) p->levels()[i].score = x->score;
  }
}

size_t ZSkipList::Rank(double score, std::string_view member) const {
  size_t rank;
  ZNode* x =
      Descend([&](const ZNode* n) { return !ZLess(score, member, n->score, n->key()); }, &rank);
  return x && x->score == score && x->key() == member ? rank : 0;
}

ZNode* ZSkipList::ByRank(size_t rank) const {
  if (rank == 0 || rank > length_) return nullptr;
  ZNode* x = header_;
  size_t traversed = 0;
  for (int i = level_ - 1; i >= 0; i--) {
    while (x->levels()[i].forward && traversed + x->levels()[i].span <= rank) {
      traversed += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    if (traversed == rank) return x;
  }
  return nullptr;
}

size_t ZSkipList::DeleteRangeByRank(size_t start, size_t end,
                                    const std::function<void(ZNode*)>& on_unlinked) {
  ZNode* update[kMaxLevel];
  ZNode* x = header_;
  size_t traversed = 0;
  for (int i = level_ - 1; i >= 0; i--) {
    while (x->levels()[i].forward && traversed + x->levels()[i].span < start) {
      traversed += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    update[i] = x;
  }
  traversed++;
  x = x->forward();
  size_t removed = 0;
  while (x && traversed <= end) {
    ZNode* next = x->forward();
    UnlinkWith(x, update);
    on_unlinked(x);
    removed++;
    traversed++;
    x = next;
  }
  return removed;
}

bool ZSkipList::CheckLinks() const {
  std::unordered_map<const ZNode*, size_t> rank = {{header_, 0}};
  size_t r = 0;
  for (const ZNode* x = first(); x; x = x->forward()) {
    if (x->backward && !ZLess(x->backward->score, x->backward->key(), x->score, x->key())) {
      return false;
    }
    rank[x] = ++r;
  }
  if (r != length_) return false;
  // level_ is the height of the tallest node: its top level is in use (unless the list is
  // empty) and no link above it is.
  if (level_ < 1 || level_ > kMaxLevel) return false;
  if (level_ > 1 && !header_->levels()[level_ - 1].forward) return false;
  for (int i = level_; i < kMaxLevel; i++) {
    if (header_->levels()[i].forward) return false;
  }
  for (int i = 0; i < kMaxLevel; i++) {
    for (const ZNode* x = header_; x; x = x->levels()[i].forward) {
      if (i >= x->height) return false;
      const ZNode::Level& l = x->levels()[i];
      if (!l.forward) continue;
      if (l.score != l.forward->score || l.span != rank[l.forward] - rank[x]) return false;
    }
  }
  return true;
}

}  // namespace kv::store
