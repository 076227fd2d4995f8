// Redis Cluster with kvstore nodes among Debian's redis-server 7.0 nodes, end to end: six nodes
// (three primaries, three replicas) joined with redis-cli --cluster create, in three layouts: all
// redis-server (the reference), mixed (kvstore and redis-server each both primary and replica)
// and all kvstore. The cluster must pass redis-cli --cluster check, answer CLUSTER NODES, SLOTS
// and SHARDS alike on every node, route keys with -MOVED and (while a slot migrates) -ASK as Redis
// does, take a primary's restart, and reshard both ways under a write load without losing a key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/cluster_client.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
constexpr Kind K = Kind::kKvstore;
constexpr Kind R = Kind::kRedis;

const std::string kCrossSlot = "-CROSSSLOT Keys in request don't hash to the same slot\r\n";

std::string Key(int i) { return "key:" + std::to_string(i); }
std::string Value(int i) { return "value:" + std::to_string(i); }

std::string Moved(int slot, int port) {
  return "-MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(port) + "\r\n";
}

std::string Joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- slot maps, from CLUSTER NODES, SLOTS and SHARDS ----

// "a-b" or "a" as the pair of its first and last slot.
std::pair<int, int> Range(const std::string& s) {
  size_t dash = s.find('-');
  int first = std::stoi(s.substr(0, dash));
  return {first, dash == std::string::npos ? first : std::stoi(s.substr(dash + 1))};
}

// "127.0.0.1:port" of an entry.
std::string HostPort(const ClusterNodeEntry& e) { return e.addr.substr(0, e.addr.find('@')); }

const ClusterNodeEntry* ById(const std::vector<ClusterNodeEntry>& view, const std::string& id) {
  for (const ClusterNodeEntry& e : view) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

// Each slot's primary port by `view` (0: no owner).
std::vector<int> OwnerPorts(const std::vector<ClusterNodeEntry>& view) {
  std::vector<int> owner(kClusterSlots, 0);
  for (const ClusterNodeEntry& e : view) {
    for (const std::string& s : e.slots) {
      auto [first, last] = Range(s);
      for (int slot = first; slot <= last; slot++) owner[slot] = e.port;
    }
  }
  return owner;
}

int SlotCount(const std::vector<ClusterNodeEntry>& view, int port) {
  std::vector<int> owner = OwnerPorts(view);
  return static_cast<int>(std::count(owner.begin(), owner.end(), port));
}

// A per-slot map as its runs: "first-last value", one per run of equal values.
std::vector<std::string> Runs(const std::vector<std::string>& by_slot) {
  std::vector<std::string> out;
  for (int first = 0; first < kClusterSlots;) {
    int last = first;
    while (last + 1 < kClusterSlots && by_slot[last + 1] == by_slot[first]) last++;
    out.push_back(std::to_string(first) + "-" + std::to_string(last) + " " + by_slot[first]);
    first = last + 1;
  }
  return out;
}

// Each slot's "primary [replicas]" (each "ip:port id", replicas sorted) by CLUSTER NODES.
std::vector<std::string> SlotsFromNodes(const std::vector<ClusterNodeEntry>& view) {
  std::vector<std::string> out(kClusterSlots, "unassigned");
  for (const ClusterNodeEntry& e : view) {
    std::vector<std::string> replicas;
    for (const ClusterNodeEntry& r : view) {
      if (r.primary_id == e.id) replicas.push_back(HostPort(r) + " " + r.id);
    }
    std::sort(replicas.begin(), replicas.end());
    std::string d = HostPort(e) + " " + e.id + " [" + Joined(replicas, ", ") + "]";
    for (const std::string& s : e.slots) {
      auto [first, last] = Range(s);
      for (int slot = first; slot <= last; slot++) out[slot] = d;
    }
  }
  return out;
}

// The same by CLUSTER SLOTS, whose replicas' order Redis does not fix.
std::vector<std::string> SlotsFromSlots(const Reply& reply) {
  std::vector<std::string> out(kClusterSlots, "unassigned");
  auto node = [](const Reply& n) {
    return n.elems.size() < 3
               ? "?" + n.Debug()
               : n.elems[0].str + ":" + std::to_string(n.elems[1].integer) + " " + n.elems[2].str;
  };
  for (const Reply& range : reply.elems) {
    if (range.elems.size() < 3) return {"malformed: " + reply.Debug()};
    std::vector<std::string> replicas;
    for (size_t i = 3; i < range.elems.size(); i++) replicas.push_back(node(range.elems[i]));
    std::sort(replicas.begin(), replicas.end());
    std::string d = node(range.elems[2]) + " [" + Joined(replicas, ", ") + "]";
    for (int64_t slot = range.elems[0].integer; slot <= range.elems[1].integer; slot++) {
      if (slot >= 0 && slot < kClusterSlots) out[slot] = d;
    }
  }
  return out;
}

// CLUSTER SHARDS as sorted lines "slots a-b ... | node | node" with each node's fields sorted
// and its replication-offset left out (it moves).
std::vector<std::string> ShardsFromShards(const Reply& reply) {
  auto text = [](const Reply& v) { return v.type == ':' ? std::to_string(v.integer) : v.str; };
  std::vector<std::string> out;
  for (const Reply& shard : reply.elems) {
    std::string slots = "slots";
    std::vector<std::string> nodes;
    for (size_t k = 0; k + 1 < shard.elems.size(); k += 2) {
      const Reply& v = shard.elems[k + 1];
      if (shard.elems[k].str == "slots") {
        for (size_t j = 0; j + 1 < v.elems.size(); j += 2) {
          slots += " " + text(v.elems[j]) + "-" + text(v.elems[j + 1]);
        }
      } else if (shard.elems[k].str == "nodes") {
        for (const Reply& n : v.elems) {
          std::vector<std::string> fields;
          for (size_t f = 0; f + 1 < n.elems.size(); f += 2) {
            if (n.elems[f].str != "replication-offset") {
              fields.push_back(n.elems[f].str + "=" + text(n.elems[f + 1]));
            }
          }
          std::sort(fields.begin(), fields.end());
          nodes.push_back(Joined(fields, ","));
        }
      }
    }
    std::sort(nodes.begin(), nodes.end());
    out.push_back(slots + " | " + Joined(nodes, " | "));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What CLUSTER SHARDS should say by CLUSTER NODES, every node online.
std::vector<std::string> ShardsFromNodes(const std::vector<ClusterNodeEntry>& view) {
  auto node = [](const ClusterNodeEntry& e, const char* role) {
    std::string ip = HostPort(e).substr(0, HostPort(e).rfind(':'));
    return "endpoint=" + ip + ",health=online,id=" + e.id + ",ip=" + ip +
           ",port=" + std::to_string(e.port) + ",role=" + role;
  };
  std::vector<std::string> out;
  for (const ClusterNodeEntry& e : view) {
    if (!e.is_primary()) continue;
    std::string slots = "slots";
    for (const std::string& s : e.slots) {
      auto [first, last] = Range(s);
      slots += " " + std::to_string(first) + "-" + std::to_string(last);
    }
    std::vector<std::string> nodes = {node(e, "master")};
    for (const ClusterNodeEntry& r : view) {
      if (r.primary_id == e.id) nodes.push_back(node(r, "replica"));
    }
    std::sort(nodes.begin(), nodes.end());
    out.push_back(slots + " | " + Joined(nodes, " | "));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- a write load on its own thread ----

// Sets keys load:0 .. load:<keys-1> round and round through a ClusterClient (so across -MOVED and
// -ASK) on its own thread, each to the number of the write, until stopped, remembering each
// key's last acknowledged value. -TRYAGAIN is retried; any other error stops it.
class WriteLoad {
 public:
  WriteLoad(int seed_port, int keys) : thread_([this, seed_port, keys] { Run(seed_port, keys); }) {}
  ~WriteLoad() { Stop(); }

  int64_t writes() const { return writes_.load(); }
  bool failed() const { return failed_.load(); }
  // Stops the writer and waits for it; the accessors below are for after Stop.
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const std::map<std::string, std::string>& last() const { return last_; }
  const std::string& error() const { return error_; }
  int64_t moved() const { return moved_; }
  int64_t asked() const { return asked_; }

 private:
  void Run(int seed_port, int keys) {
    ClusterClient cc(seed_port, 60000);  // a node may stall a while on a loaded machine
    for (int64_t n = 0; !stop_;) {
      std::string key = "load:" + std::to_string(n % keys), value = std::to_string(n);
      Reply r = cc.Call({"SET", key, value});
      if (r.type == '+' && r.str == "OK") {
        last_[key] = value;
        n++;
        writes_++;
      } else if (r.is_error() && r.str.rfind("TRYAGAIN", 0) == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      } else {
        error_ = "SET " + key + " " + value + ": " + (r.type ? r.Debug() : "connection lost");
        failed_ = true;
        break;
      }
    }
    moved_ = cc.moved();
    asked_ = cc.asked();
  }

  std::atomic<bool> stop_{false}, failed_{false};
  std::atomic<int64_t> writes_{0};
  // Written by the writer only; read after Stop.
  std::map<std::string, std::string> last_;
  std::string error_;
  int64_t moved_ = 0, asked_ = 0;
  std::thread thread_;  // last, so that it starts once the members above exist
};

// ---- the fixture ----

class ClusterMixed : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
      GTEST_SKIP() << "redis-server or redis-cli is not installed";
    }
    const std::vector<Kind>& kinds = GetParam().kinds;
    cluster_ = std::make_unique<TestCluster>(kinds);
    ASSERT_TRUE(cluster_->Create(1));
  }

  void TearDown() override {
    if (HasFailure() && cluster_) {
      printf("The cluster at the end:\n%s\n", cluster_->Describe().c_str());
    }
  }

  // A primary of `kind` by node 0's view; -1 when there is none.
  int PrimaryOfKind(Kind kind) {
    for (size_t p : cluster_->Primaries()) {
      if (cluster_->kind(p) == kind) return static_cast<int>(p);
    }
    return -1;
  }

  std::unique_ptr<TestCluster> cluster_;
};

// ---- the tests ----

TEST_P(ClusterMixed, Create3x3) {
  TestCluster& c = *cluster_;
  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All nodes agree about slots configuration."))
      << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All 16384 slots covered.")) << check.output;

  // The first three nodes are the primaries, each with a replica among the other three.
  std::vector<ClusterNodeEntry> view = c.Nodes(0);
  ASSERT_EQ(view.size(), 6u);
  EXPECT_EQ(c.Primaries(), (std::vector<size_t>{0, 1, 2}));
  std::map<std::string, int> replicas_of;
  for (const ClusterNodeEntry& e : view) {
    if (e.is_primary()) {
      EXPECT_FALSE(e.slots.empty()) << e.addr;
    } else {
      EXPECT_TRUE(e.HasFlag("slave")) << e.addr;
      ASSERT_NE(ById(view, e.primary_id), nullptr) << e.addr;
      replicas_of[e.primary_id]++;
    }
  }
  EXPECT_EQ(replicas_of.size(), 3u);
  for (auto& [id, n] : replicas_of) EXPECT_EQ(n, 1) << id;
  std::vector<int> owner = OwnerPorts(view);
  EXPECT_EQ(std::count(owner.begin(), owner.end(), 0), 0);

  // Every node lists the six nodes with the same roles and slot ranges.
  for (size_t i = 0; i < c.size(); i++) {
    std::vector<ClusterNodeEntry> other = c.Nodes(i);
    ASSERT_EQ(other.size(), 6u) << "node " << i;
    for (const ClusterNodeEntry& e : other) {
      const ClusterNodeEntry* mine = ById(view, e.id);
      ASSERT_NE(mine, nullptr) << "node " << i << " knows " << e.id;
      EXPECT_EQ(Joined(e.slots, " "), Joined(mine->slots, " ")) << "node " << i << ", " << e.id;
      EXPECT_EQ(e.primary_id, mine->primary_id) << "node " << i << ", " << e.id;
      EXPECT_EQ(e.addr, mine->addr) << "node " << i << ", " << e.id;
    }
    RespClient conn(c.port(i));
    std::string info = conn.Call({"CLUSTER", "INFO"}).str;
    for (const char* field :
         {"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_slots_ok:16384",
          "cluster_known_nodes:6", "cluster_size:3"}) {
      EXPECT_TRUE(Contains(info, std::string(field) + "\r\n")) << "node " << i << ":\n" << info;
    }
  }

  // In the mixed layout each kind is both a primary and a replica.
  if (std::string(GetParam().name) == "Mixed") {
    std::vector<size_t> primaries = c.Primaries();
    for (Kind k : {K, R}) {
      int primaries_of_kind = 0, replicas = 0;
      for (size_t i = 0; i < c.size(); i++) {
        bool primary = std::count(primaries.begin(), primaries.end(), i) > 0;
        if (c.kind(i) == k) (primary ? primaries_of_kind : replicas)++;
      }
      EXPECT_GT(primaries_of_kind, 0);
      EXPECT_GT(replicas, 0);
    }
  }

  // CLUSTER SLOTS and SHARDS say the same on every node, and what CLUSTER NODES says. A replica
  // whose replication offset is still 0 shows as "loading" in SHARDS (in Redis until its primary's
  // first replication PING, 10 s after the sync): a write to each shard gives each an offset.
  ClusterClient cc(c.port(0));
  std::set<int> reached;  // primaries' ports
  for (int i = 0; reached.size() < 3 && i < 100; i++) {
    ASSERT_EQ(cc.Call({"SET", Key(i), Value(i)}).raw, "+OK\r\n") << Key(i);
    reached.insert(owner[KeySlot(Key(i))]);
  }
  ASSERT_EQ(reached.size(), 3u);
  std::vector<std::string> slots_want = Runs(SlotsFromNodes(view));
  std::vector<std::string> shards_want = ShardsFromNodes(view);
  std::vector<std::unique_ptr<RespClient>> conns;
  for (size_t i = 0; i < c.size(); i++) conns.push_back(std::make_unique<RespClient>(c.port(i)));
  std::string why;  // the first node that differs, and how
  EXPECT_TRUE(WaitFor(
      [&] {
        for (size_t i = 0; i < c.size(); i++) {
          std::vector<std::string> slots =
              Runs(SlotsFromSlots(conns[i]->Call({"CLUSTER", "SLOTS"})));
          std::vector<std::string> shards = ShardsFromShards(conns[i]->Call({"CLUSTER", "SHARDS"}));
          if (slots != slots_want || shards != shards_want) {
            why = "node " + std::to_string(i) + "\nCLUSTER SLOTS:\n" + Joined(slots, "\n") +
                  "\nwanted:\n" + Joined(slots_want, "\n") + "\nCLUSTER SHARDS:\n" +
                  Joined(shards, "\n") + "\nwanted:\n" + Joined(shards_want, "\n");
            return false;
          }
        }
        return true;
      },
      60000, 100))
      << why;
}

TEST_P(ClusterMixed, KeysAcrossSlots) {
  TestCluster& c = *cluster_;
  constexpr int kKeys = 1000;
  ClusterClient cc(c.port(0));
  for (int i = 0; i < kKeys; i++) {
    Reply r = cc.Call({"SET", Key(i), Value(i)});
    ASSERT_EQ(r.raw, "+OK\r\n") << Key(i) << ": " << r.Debug();
  }
  EXPECT_GT(cc.moved(), 0);

  std::vector<ClusterNodeEntry> view = c.Nodes(0);
  std::vector<int> owner = OwnerPorts(view);
  std::vector<size_t> primaries = c.Primaries();
  ASSERT_EQ(primaries.size(), 3u);
  std::map<int, std::unique_ptr<RespClient>> conns;  // by port
  for (size_t i = 0; i < c.size(); i++) conns[c.port(i)] = std::make_unique<RespClient>(c.port(i));

  // Each key is on the primary that owns its slot; the other primaries send the client there.
  for (int i = 0; i < kKeys; i++) {
    int slot = KeySlot(Key(i));
    ASSERT_EQ(conns[c.port(0)]->Call({"CLUSTER", "KEYSLOT", Key(i)}).integer, slot) << Key(i);
    EXPECT_EQ(conns[owner[slot]]->Call({"GET", Key(i)}).str, Value(i)) << Key(i);
    for (size_t p : primaries) {
      if (c.port(p) == owner[slot]) continue;
      EXPECT_EQ(conns[c.port(p)]->Raw({"GET", Key(i)}), Moved(slot, owner[slot]))
          << Key(i) << " asked of node " << p;
    }
  }
  int64_t total = 0;
  for (size_t p : primaries) {
    int64_t n = conns[c.port(p)]->Call({"DBSIZE"}).integer;
    EXPECT_GT(n, 0) << "node " << p;
    total += n;
  }
  EXPECT_EQ(total, kKeys);

  // A replica sends every key to its owner, its own primary's included, until READONLY; then it
  // serves its primary's keys.
  for (size_t i = 0; i < c.size(); i++) {
    const ClusterNodeEntry* self = nullptr;
    for (const ClusterNodeEntry& e : view) {
      if (e.port == c.port(i)) self = &e;
    }
    ASSERT_NE(self, nullptr);
    if (self->is_primary()) continue;
    int primary_port = ById(view, self->primary_id)->port;
    RespClient& rc = *conns[c.port(i)];
    for (int k = 0; k < 100; k++) {
      int slot = KeySlot(Key(k));
      EXPECT_EQ(rc.Raw({"GET", Key(k)}), Moved(slot, owner[slot])) << Key(k) << " on node " << i;
    }
    EXPECT_EQ(rc.Raw({"READONLY"}), "+OK\r\n");
    for (int k = 0; k < 100; k++) {
      int slot = KeySlot(Key(k));
      if (owner[slot] != primary_port) {
        EXPECT_EQ(rc.Raw({"GET", Key(k)}), Moved(slot, owner[slot])) << Key(k) << " on " << i;
      } else {
        EXPECT_TRUE(WaitFor([&] {
          return rc.Call({"GET", Key(k)}).str == Value(k);
        })) << Key(k)
            << " on replica " << i;
      }
    }
  }

  // Multi-key commands across slots are refused by every node, whoever owns the slots.
  ASSERT_NE(KeySlot(Key(0)), KeySlot(Key(1)));
  for (size_t i = 0; i < c.size(); i++) {
    RespClient& n = *conns[c.port(i)];
    EXPECT_EQ(n.Raw({"MSET", Key(0), "a", Key(1), "b"}), kCrossSlot) << "node " << i;
    EXPECT_EQ(n.Raw({"MGET", Key(0), Key(1)}), kCrossSlot) << "node " << i;
    EXPECT_EQ(n.Raw({"DEL", Key(0), Key(1)}), kCrossSlot) << "node " << i;
  }

  // Keys with one hash tag share a slot: one MSET writes both.
  EXPECT_EQ(cc.Call({"MSET", "{user}:a", "1", "{user}:b", "2"}).raw, "+OK\r\n");
  Reply both = cc.Call({"MGET", "{user}:a", "{user}:b"});
  ASSERT_EQ(both.elems.size(), 2u) << both.Debug();
  EXPECT_EQ(both.elems[0].str, "1");
  EXPECT_EQ(both.elems[1].str, "2");
  // What a hash tag is, as every node computes it and as KeySlot does.
  for (size_t i = 0; i < c.size(); i++) {
    for (const char* key : {"{user}:a", "{user}:b", "user", "", "{", "}", "{}", "{}user", "a{}{b}",
                            "x{user}y", "{{user}}", "{user}{other}", "{user"}) {
      EXPECT_EQ(conns[c.port(i)]->Call({"CLUSTER", "KEYSLOT", key}).integer, KeySlot(key))
          << "'" << key << "' on node " << i;
    }
  }
  EXPECT_EQ(KeySlot("{user}:a"), KeySlot("user"));
}

TEST_P(ClusterMixed, AskWhileMigrating) {
  TestCluster& c = *cluster_;
  // One slot by hand from node 0 to node 1 (primaries; kvstore to redis-server in the mixed
  // layout), as redis-cli --cluster reshard moves each slot.
  const size_t a = 0, b = 1;
  const std::string id_a = c.NodeId(a), id_b = c.NodeId(b);
  std::vector<int> owner = OwnerPorts(c.Nodes(0));
  std::string tag;
  for (int i = 0; tag.empty(); i++) {
    if (owner[KeySlot("t" + std::to_string(i))] == c.port(a)) tag = "t" + std::to_string(i);
  }
  const int slot = KeySlot(tag);
  const std::string present = "{" + tag + "}present", absent = "{" + tag + "}absent";
  const std::string s = std::to_string(slot);
  ClusterClient cc(c.port(2));
  ASSERT_EQ(cc.Call({"SET", present, "here"}).raw, "+OK\r\n");
  RespClient ca(c.port(a)), cb(c.port(b));
  ASSERT_EQ(cb.Raw({"CLUSTER", "SETSLOT", s, "IMPORTING", id_a}), "+OK\r\n");
  ASSERT_EQ(ca.Raw({"CLUSTER", "SETSLOT", s, "MIGRATING", id_b}), "+OK\r\n");
  for (const ClusterNodeEntry& e : c.Nodes(a)) {
    if (e.HasFlag("myself")) {
      EXPECT_EQ(Joined(e.open_slots, " "), "[" + s + "->-" + id_b + "]");
    }
  }
  for (const ClusterNodeEntry& e : c.Nodes(b)) {
    if (e.HasFlag("myself")) {
      EXPECT_EQ(Joined(e.open_slots, " "), "[" + s + "-<-" + id_a + "]");
    }
  }

  // The source serves the keys it still has and sends the others to the target with -ASK; the
  // target takes them only after ASKING, for one command.
  const std::string ask = "-ASK " + s + " 127.0.0.1:" + std::to_string(c.port(b)) + "\r\n";
  EXPECT_EQ(ca.Raw({"GET", present}), "$4\r\nhere\r\n");
  EXPECT_EQ(ca.Raw({"GET", absent}), ask);
  EXPECT_EQ(cb.Raw({"GET", absent}), Moved(slot, c.port(a)));
  EXPECT_EQ(cb.Raw({"ASKING"}), "+OK\r\n");
  EXPECT_EQ(cb.Raw({"GET", absent}), "$-1\r\n");
  EXPECT_EQ(cb.Raw({"GET", absent}), Moved(slot, c.port(a)));
  EXPECT_EQ(ca.Raw({"MGET", present, absent}),
            "-TRYAGAIN Multiple keys request during rehashing of slot\r\n");
  EXPECT_EQ(cc.Call({"SET", absent, "there"}).raw, "+OK\r\n");
  EXPECT_EQ(cc.asked(), 1);
  EXPECT_EQ(ca.Call({"CLUSTER", "COUNTKEYSINSLOT", s}).integer, 1);
  Reply keys = ca.Call({"CLUSTER", "GETKEYSINSLOT", s, "10"});
  ASSERT_EQ(keys.elems.size(), 1u) << keys.Debug();
  EXPECT_EQ(keys.elems[0].str, present);

  // As redis-cli moves keys and then hands the slot over: target, source, the other primary.
  EXPECT_EQ(ca.Raw({"MIGRATE", "127.0.0.1", std::to_string(c.port(b)), "", "0", "10000", "KEYS",
                    present}),
            "+OK\r\n");
  EXPECT_EQ(ca.Raw({"GET", present}), ask);
  EXPECT_EQ(ca.Call({"CLUSTER", "COUNTKEYSINSLOT", s}).integer, 0);
  for (size_t n : {b, a, size_t{2}}) {
    EXPECT_EQ(RespClient(c.port(n)).Raw({"CLUSTER", "SETSLOT", s, "NODE", id_b}), "+OK\r\n")
        << "node " << n;
  }
  ASSERT_TRUE(c.WaitHealthy());
  EXPECT_EQ(ca.Raw({"GET", present}), Moved(slot, c.port(b)));
  EXPECT_EQ(cb.Raw({"GET", present}), "$4\r\nhere\r\n");
  EXPECT_EQ(cb.Raw({"GET", absent}), "$5\r\nthere\r\n");
  EXPECT_EQ(cb.Call({"CLUSTER", "COUNTKEYSINSLOT", s}).integer, 2);
  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All 16384 slots covered.")) << check.output;
}

TEST_P(ClusterMixed, RestartRejoins) {
  TestCluster& c = *cluster_;
  // Nodes 0 and 1 are primaries; in the mixed layout one of each kind.
  for (size_t i : {0u, 1u}) {
    std::string id = c.NodeId(i);
    ASSERT_EQ(id.size(), 40u) << id;
    std::string conf = ReadFile(c.node(i).dir() + "/nodes.conf");
    EXPECT_TRUE(Contains(conf, id + " ") && Contains(conf, "myself")) << conf;

    EXPECT_EQ(c.node(i).Stop(), 0) << c.node(i).LogText();
    ASSERT_TRUE(c.node(i).Restart()) << c.node(i).LogText();
    EXPECT_EQ(c.NodeId(i), id);
    ASSERT_TRUE(c.WaitHealthy());
    // Every node knows it by its old ID at its old port. (It may come back as a replica if its
    // replica took over while it was away: the cluster is whole either way.)
    for (size_t j = 0; j < c.size(); j++) {
      std::string seen_as = "nothing";
      for (const ClusterNodeEntry& e : c.Nodes(j)) {
        if (e.port == c.port(i)) seen_as = e.id;
      }
      EXPECT_EQ(seen_as, id) << "node " << j << "'s view of node " << i;
    }
  }
  CliResult check = c.Check(2);
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All 16384 slots covered.")) << check.output;
}

TEST_P(ClusterMixed, ReshardBothWays) {
  TestCluster& c = *cluster_;
  std::vector<size_t> primaries = c.Primaries();
  ASSERT_EQ(primaries.size(), 3u);
  // In the mixed layout from a kvstore primary to a redis-server one, and back.
  int a = PrimaryOfKind(K), b = PrimaryOfKind(R);
  if (a < 0 || b < 0) a = static_cast<int>(primaries[0]), b = static_cast<int>(primaries[1]);
  const int a_slots = SlotCount(c.Nodes(0), c.port(a)), b_slots = SlotCount(c.Nodes(0), c.port(b));

  constexpr int kLoadKeys = 2000;
  WriteLoad load(c.port(0), kLoadKeys);
  // Every key written once before the first move.
  ASSERT_TRUE(WaitFor([&] { return load.writes() >= 2 * kLoadKeys || load.failed(); }, 60000));
  int64_t during = 0;
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    ASSERT_FALSE(load.failed());
    ASSERT_TRUE(c.WaitHealthy());  // redis-cli refuses to reshard a cluster in disagreement
    int64_t before = load.writes();
    CliResult r = c.Reshard(from, to, 1000);
    during += load.writes() - before;
    ASSERT_EQ(r.status, 0) << r.output;
    ASSERT_TRUE(c.WaitHealthy());
    std::vector<ClusterNodeEntry> view = c.Nodes(0);
    EXPECT_EQ(SlotCount(view, c.port(a)), from == a ? a_slots - 1000 : a_slots);
    EXPECT_EQ(SlotCount(view, c.port(b)), from == a ? b_slots + 1000 : b_slots);
    // The load goes on through the new owners.
    int64_t seen = load.writes();
    ASSERT_TRUE(WaitFor([&] { return load.writes() >= seen + 1000 || load.failed(); }, 60000));
  }
  load.Stop();
  ASSERT_EQ(load.error(), "");
  EXPECT_GT(load.moved(), 0);
  printf("ReshardBothWays: %lld writes, %lld of them during the reshards; %lld MOVED, %lld ASK\n",
         static_cast<long long>(load.writes()), static_cast<long long>(during),
         static_cast<long long>(load.moved()), static_cast<long long>(load.asked()));

  // No key lost, none left behind twice.
  ASSERT_EQ(load.last().size(), static_cast<size_t>(kLoadKeys));
  ClusterClient reader(c.port(c.size() - 1));
  int wrong = 0;
  for (const auto& [key, value] : load.last()) {
    Reply r = reader.Call({"GET", key});
    if (r.str != value && wrong++ < 10)
      ADD_FAILURE() << key << ": " << r.Debug() << ", not " << value;
  }
  EXPECT_EQ(wrong, 0);
  int64_t total = 0;
  for (size_t p : c.Primaries()) total += RespClient(c.port(p)).Call({"DBSIZE"}).integer;
  EXPECT_EQ(total, kLoadKeys);

  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All nodes agree about slots configuration."))
      << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All 16384 slots covered.")) << check.output;
  EXPECT_FALSE(Contains(check.output, "[WARNING]") || Contains(check.output, "[ERR]"))
      << check.output;
}

INSTANTIATE_TEST_SUITE_P(Layouts, ClusterMixed,
                         ::testing::Values(Layout{"AllRedis", {R, R, R, R, R, R}},
                                           // Primaries K R K, replicas R K R.
                                           Layout{"Mixed", {K, R, K, R, K, R}},
                                           Layout{"AllKvstore", {K, K, K, K, K, K}}),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kv::test
