#include "repl/datalink/snapshot_ring.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "persist/snapshot.h"
#include "store/keyspace.h"

namespace kv::repl {
namespace {

// Deterministic bytes, different at every offset (so a misplaced piece shows).
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// Forks a producer that writes `data` into the ring in pieces of varying size, then finishes
// (ok or not); its exit status is 0 when every write succeeded, 3 when one failed.
pid_t Produce(SnapshotRing& ring, const std::string& data, bool ok = true) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  size_t pos = 0, piece = 1;
  while (pos < data.size()) {
    size_t n = std::min(piece, data.size() - pos);
    if (!ring.Write(data.data() + pos, n).ok()) _exit(3);
    pos += n;
    piece = piece * 7 % 9973 + 1;
  }
  ring.Finish(ok);
  _exit(0);
}

int ExitCode(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Reads everything the producer writes, releasing all but the last `keep` bytes as it goes.
std::string Consume(SnapshotRing& ring, size_t keep) {
  std::string out;
  while (true) {
    bool finished = ring.finished();
    auto part = ring.Readable(out.size());
    if (part.empty()) {
      if (finished) return out;
      ring.WaitForBytes(out.size(), 100);
      continue;
    }
    out.append(reinterpret_cast<const char*>(part.data()), part.size());
    if (out.size() > keep) ring.Release(out.size() - keep);
  }
}

TEST(SnapshotRing, ChildStreamsManyTimesItsCapacityThrough) {
  auto ring = SnapshotRing::Create(8192);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ((*ring)->memory().size() % 4096, 0u);
  size_t capacity = (*ring)->memory().size();
  std::string data = Pattern(3 << 20);
  pid_t pid = Produce(**ring, data);
  std::string got = Consume(**ring, 1000);
  EXPECT_EQ(ExitCode(pid), 0);
  EXPECT_TRUE((*ring)->finished());
  EXPECT_FALSE((*ring)->failed());
  EXPECT_EQ((*ring)->produced(), data.size());
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  // The unreleased tail is still there to be read again (a rebuilt link resends it).
  uint64_t from = (*ring)->released();
  EXPECT_EQ(from, data.size() - 1000);
  EXPECT_LE(data.size() - from, capacity);
  std::string again;
  while (from + again.size() < data.size()) {
    auto part = (*ring)->Readable(from + again.size());
    ASSERT_FALSE(part.empty());
    again.append(reinterpret_cast<const char*>(part.data()), part.size());
  }
  EXPECT_TRUE(again == data.substr(from));
}

TEST(SnapshotRing, ProducerWaitsForReleasedSpace) {
  auto ring = SnapshotRing::Create(4096);
  ASSERT_TRUE(ring.ok());
  std::string data = Pattern(64 << 10);
  pid_t pid = Produce(**ring, data);
  // Nothing released: the producer fills the ring and waits.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ((*ring)->produced(), (*ring)->memory().size());
  EXPECT_FALSE((*ring)->finished());
  std::string got = Consume(**ring, 0);
  EXPECT_EQ(ExitCode(pid), 0);
  EXPECT_TRUE(got == data);
}

TEST(SnapshotRing, AbandonFailsTheProducersWrite) {
  auto ring = SnapshotRing::Create(4096);
  ASSERT_TRUE(ring.ok());
  pid_t pid = Produce(**ring, Pattern(1 << 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*ring)->Abandon();
  EXPECT_EQ(ExitCode(pid), 3);
  EXPECT_FALSE((*ring)->finished());
}

TEST(SnapshotRing, AFailedProducerIsSeen) {
  auto ring = SnapshotRing::Create(1 << 20);
  ASSERT_TRUE(ring.ok());
  std::string data = Pattern(1000);
  pid_t pid = Produce(**ring, data, /*ok=*/false);
  std::string got = Consume(**ring, 0);
  EXPECT_EQ(ExitCode(pid), 0);
  EXPECT_TRUE((*ring)->finished());
  EXPECT_TRUE((*ring)->failed());
  EXPECT_TRUE(got == data);
}

TEST(SnapshotRing, RdbWriterSerializesIntoTheRingInPlace) {
  store::Keyspace ks(16);
  for (int i = 0; i < 2000; i++) {
    ks.Set(i % 3, "key:" + std::to_string(i), store::Value::String(Pattern(100 + i * 13 % 3000)));
  }
  persist::StringSink expected;
  ASSERT_TRUE(persist::WriteRdb(ks, expected, {}, persist::StandardAux({"7.0.15"}), nullptr).ok());
  // A ring far smaller than the snapshot: the writer's windows wrap and wait for space.
  auto ring = SnapshotRing::Create(8192);
  ASSERT_TRUE(ring.ok());
  pid_t pid = fork();
  if (pid == 0) {
    RingSink sink(**ring);
    Status st = persist::WriteRdb(ks, sink, {}, persist::StandardAux({"7.0.15"}), nullptr);
    (*ring)->Finish(st.ok());
    _exit(st.ok() ? 0 : 3);
  }
  std::string got = Consume(**ring, 0);
  EXPECT_EQ(ExitCode(pid), 0);
  EXPECT_FALSE((*ring)->failed());
  EXPECT_GT(got.size(), 8 * (*ring)->memory().size());
  EXPECT_TRUE(got == expected.str());
}

}  // namespace
}  // namespace kv::repl
