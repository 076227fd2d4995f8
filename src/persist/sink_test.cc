// FdSink's incremental sync (rdb-save-incremental-fsync, aof-rewrite-incremental-fsync): a
// file being written is synced each time kAutoSyncBytes more were written, and never when the
// setting is off; SaveFileAtomic passes the setting on.
#include "persist/sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "persist/snapshot.h"

namespace kv::persist {
namespace {

class TempFile {
 public:
  TempFile() {
    char tmpl[] = "/tmp/kv_sink_testXXXXXX";
    fd_ = mkstemp(tmpl);
    path_ = tmpl;
  }
  ~TempFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }

 private:
  int fd_;
  std::string path_;
};

TEST(FdSinkAutoSync, SyncsEveryFourMegabytesWritten) {
  TempFile f;
  FdSink sink(f.fd());
  int calls = 0;
  sink.SetAutoSync(kAutoSyncBytes, [&](int fd) {
    EXPECT_EQ(fd, f.fd());
    calls++;
    return 0;
  });
  std::string chunk(1 << 20, 'x');  // 1 MiB
  for (int i = 0; i < 9; i++) ASSERT_TRUE(sink.Write(chunk.data(), chunk.size()).ok());
  EXPECT_EQ(kAutoSyncBytes, 4u << 20);
  EXPECT_EQ(calls, 2) << "synced after the 4th and the 8th MiB";
  EXPECT_EQ(sink.syncs(), 2u);
  EXPECT_EQ(sink.written(), 9u << 20);
}

TEST(FdSinkAutoSync, OffByDefaultAndFailingSyncFailsTheWrite) {
  TempFile f;
  FdSink plain(f.fd());
  std::string big(9 << 20, 'y');
  ASSERT_TRUE(plain.Write(big.data(), big.size()).ok());
  EXPECT_EQ(plain.syncs(), 0u);

  FdSink failing(f.fd());
  failing.SetAutoSync(kAutoSyncBytes, [](int) {
    errno = EIO;
    return -1;
  });
  EXPECT_TRUE(failing.Write(big.data(), 1 << 20).ok());
  EXPECT_FALSE(failing.Write(big.data(), big.size()).ok());
}

TEST(FdSinkAutoSync, RealSyncOfAFile) {
  TempFile f;
  FdSink sink(f.fd());
  sink.SetAutoSync(1 << 20);  // fdatasync itself
  std::string chunk(3 << 20, 'z');
  ASSERT_TRUE(sink.Write(chunk.data(), chunk.size()).ok());
  EXPECT_EQ(sink.syncs(), 1u);
}

TEST(SaveFileAtomicAutoSync, WritesTheWholeFile) {
  char dir_tmpl[] = "/tmp/kv_sink_dirXXXXXX";
  std::string dir = mkdtemp(dir_tmpl);
  std::string path = dir + "/out.rdb";
  std::string data(5 << 20, 'w');
  Status st = SaveFileAtomic(
      path, [&](Sink& s) { return s.Write(data.data(), data.size()); }, "", kAutoSyncBytes);
  ASSERT_TRUE(st.ok()) << st.message();
  FILE* fp = fopen(path.c_str(), "rb");
  ASSERT_NE(fp, nullptr);
  fseek(fp, 0, SEEK_END);
  EXPECT_EQ(ftell(fp), static_cast<long>(data.size()));
  fclose(fp);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace kv::persist
