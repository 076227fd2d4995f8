// Loading a corrupt or odd AOF directory: kvstore and redis-server 7.0.15 get
// the same prepared `appendonlydir` (manifest, base, increments) and must react
// alike. A refused start exits with status 1 and ends the log with Redis'
// lines, byte for byte (scripts and Redis' own test suite wait for them: `tail
// -1`, or a count of matching lines); a start that loads anyway (a torn tail
// under aof-load-truncated, annotations, empty files) logs Redis' warnings in
// Redis' order and ends with the same dataset and the same files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/dataset.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
namespace fs = std::filesystem;

const char* Name(Kind k) { return k == Kind::kKvstore ? "kvstore" : "redis-server"; }

// The command in the AOF's form (a RESP array of bulk strings).
std::string Cmd(std::vector<std::string> argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string Chop(std::string s) {  // the last byte off: a torn command
  s.pop_back();
  return s;
}

// Builds an AOF directory under a server directory.
class Layout {
 public:
  explicit Layout(std::string server_dir) : dir_(std::move(server_dir) + "/appendonlydir") {
    fs::create_directories(dir_);
  }
  void File(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
  }
  void Manifest(const std::string& text) const { File("appendonly.aof.manifest", text); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

const std::string kB1 = "appendonly.aof.1.base.aof";
const std::string kB2 = "appendonly.aof.2.base.aof";
const std::string kI1 = "appendonly.aof.1.incr.aof";
const std::string kI2 = "appendonly.aof.2.incr.aof";
const std::string kI3 = "appendonly.aof.3.incr.aof";
const std::string kI1Line = "file appendonly.aof.1.incr.aof seq 1 type i\n";
const std::string kB1Line = "file appendonly.aof.1.base.aof seq 1 type b\n";

// The log's lines with the "pid:role date time " prefix taken off (the level
// mark stays); lines a message's own newlines made stay as they are.
std::vector<std::string> Messages(const std::string& log) {
  static const std::regex kPrefix(R"(^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ )");
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string::npos) nl = log.size();
    out.push_back(std::regex_replace(log.substr(pos, nl - pos), kPrefix, ""));
    pos = nl + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  |" + l + "\n";
  return out;
}

// Lines containing `what`, as Redis' count_message_lines counts them.
int CountLines(const std::vector<std::string>& msgs, const std::string& what) {
  return static_cast<int>(std::count_if(msgs.begin(), msgs.end(), [&](const std::string& m) {
    return m.find(what) != std::string::npos;
  }));
}

// Each of `want` is in a line of `msgs`, in this order.
bool InOrder(const std::vector<std::string>& msgs, const std::vector<std::string>& want) {
  size_t i = 0;
  for (const auto& m : msgs) {
    if (i < want.size() && m.find(want[i]) != std::string::npos) i++;
  }
  return i == want.size();
}

// The bytes of the files a layout wrote (the manifest aside: kvstore may write
// it again in its own words when it differs only in comments or unknown keys).
std::map<std::string, std::string> DataFiles(const std::string& dir,
                                             const std::set<std::string>& names) {
  std::map<std::string, std::string> out;
  for (const auto& n : names) {
    if (n.find(".manifest") == std::string::npos) out[n] = ReadFile(dir + "/" + n);
  }
  return out;
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.is_regular_file()) out.insert(f.path().filename().string());
  }
  return out;
}

struct Case {
  const char* name;
  std::function<void(const Layout&)> setup;
  std::vector<std::string> args;  // after --appendonly yes
  // Refused: the log's exact last lines. Loaded: lines (parts of them) that
  // come in this order.
  std::vector<std::string> lines;
};

// Redis' block for a manifest it cannot use: every line ends in a newline of
// its own.
std::vector<std::string> ManifestError(const std::string& why, int line = 0,
                                       const std::string& text = "") {
  std::vector<std::string> out = {"# ", "*** FATAL AOF MANIFEST FILE ERROR ***", ""};
  if (line > 0) {
    out.insert(out.end(), {"# Reading the manifest file, at line " + std::to_string(line), "",
                           "# >>> '" + text + "'", ""});
  }
  out.insert(out.end(), {"# " + why, ""});
  return out;
}

std::string BadFormat(const std::string& file) {
  return "# Bad file format reading the append only file " + file +
         ": make a backup of your AOF file, then use ./redis-check-aof --fix "
         "<filename.manifest>";
}

std::string UnexpectedEof(const std::string& file) {
  return "# Unexpected end of file reading the append only file " + file +
         ". You can: 1) Make a backup of your AOF file, then use "
         "./redis-check-aof --fix "
         "<filename.manifest>. 2) Alternatively you can set the "
         "'aof-load-truncated' "
         "configuration option to yes and restart the server.";
}

std::vector<std::string> Truncated(const std::string& file, size_t at) {
  return {"# !!! Warning: short read while loading the AOF file " + file + "!!!",
          "# !!! Truncating the AOF " + file + " at offset " + std::to_string(at) + " !!!",
          "# AOF " + file + " loaded anyway because aof-load-truncated is enabled"};
}

std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class AofLoadErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }

  // A fresh server directory per server, prepared by the case.
  static std::string Prepare(const Case& c) {
    char tmpl[] = "/tmp/kvstore-aofload-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    c.setup(Layout(dir));
    return dir;
  }

  static std::vector<std::string> Args(const Case& c) {
    std::vector<std::string> args = {"--appendonly", "yes"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    return args;
  }

  static void Refused(const Case& c) {
    SCOPED_TRACE(c.name);
    for (Kind k : {Kind::kRedis, Kind::kKvstore}) {
      SCOPED_TRACE(Name(k));
      std::string dir = Prepare(c);
      std::vector<std::string> msgs =
          Messages(ExpectRefusesToStart(dir, Args(c), k == Kind::kRedis));
      ASSERT_GE(msgs.size(), c.lines.size()) << Join(msgs);
      std::vector<std::string> tail(msgs.end() - static_cast<ptrdiff_t>(c.lines.size()),
                                    msgs.end());
      EXPECT_EQ(tail, c.lines) << Join(msgs);
      // The reason is logged once (scripts count its lines).
      const std::string& why = c.lines.size() > 1 && c.lines.back().empty()
                                   ? c.lines[c.lines.size() - 2]
                                   : c.lines.back();
      EXPECT_EQ(CountLines(msgs, why.substr(2)), 1) << Join(msgs);
      fs::remove_all(dir);
    }
  }

  static void Loaded(const Case& c) {
    SCOPED_TRACE(c.name);
    std::map<Kind, Snapshot> data;
    std::map<Kind, std::map<std::string, std::string>> files;
    for (Kind k : {Kind::kRedis, Kind::kKvstore}) {
      SCOPED_TRACE(Name(k));
      std::string dir = Prepare(c);
      std::set<std::string> names = Names(dir + "/appendonlydir");
      std::vector<std::string> args = {"--dir", dir};
      for (const auto& a : Args(c)) args.push_back(a);
      {
        ServerProcess s(k, args);
        RespClient rc(s.port());
        WaitLoaded(rc);
        data[k] = Capture(rc);
        std::vector<std::string> msgs = Messages(s.LogText());
        EXPECT_TRUE(InOrder(msgs, c.lines)) << Join(msgs);
        for (const auto& l : c.lines) EXPECT_EQ(CountLines(msgs, l), 1) << l << "\n" << Join(msgs);
        ASSERT_EQ(s.Stop(), 0);
      }
      files[k] = DataFiles(dir + "/appendonlydir", names);
      fs::remove_all(dir);
    }
    EXPECT_EQ(data[Kind::kKvstore].digest, data[Kind::kRedis].digest);
    EXPECT_EQ(data[Kind::kKvstore].shape, data[Kind::kRedis].shape);
    EXPECT_EQ(files[Kind::kKvstore],
              files[Kind::kRedis]);  // truncated at the same offset
  }
};

// The manifest cases of Redis' aof-multi-part.tcl and the parse errors of
// aofLoadManifestFromFile, each with the line it names.
TEST_F(AofLoadErrors, BadManifestsRefuseTheStartWithRedisLines) {
  const std::string k1 = Cmd({"set", "k1", "v1"});
  auto two = [&](std::string manifest) {
    return [=](const Layout& l) {
      l.File(kB1, k1);
      l.File(kI1, Cmd({"set", "k3", "v3"}));
      l.Manifest(manifest);
    };
  };
  std::string long_line;
  for (int i = 0; i < 40; i++) long_line += "file appendonly.aof.1.base.aof seq 1 type b ";
  // A line of 1020 bytes: Redis cuts the message that quotes it at 1023 bytes.
  const std::string odd_long =
      "file appendonly.aof.1.incr.aof seq 1 type i " + std::string(1020 - 44, 'x');
  const Case cases[] = {
      {"odd parameter on a long line",
       two(odd_long + "\n"),
       {},
       {"# ", "*** FATAL AOF MANIFEST FILE ERROR ***", "", "# Reading the manifest file, at line 1",
        "", "# >>> '" + odd_long.substr(0, 1018), "# Invalid AOF manifest file format", ""}},
      {"empty",
       [](const Layout& l) { l.Manifest(""); },
       {},
       ManifestError("Found an empty AOF manifest")},
      {"blank line",
       [&](const Layout& l) {
         l.File(kI1, k1);
         l.File(kI3, k1);
         l.Manifest(kI1Line + "\nfile appendonly.aof.3.incr.aof seq 3 type i\n");
       },
       {},
       ManifestError("Invalid AOF manifest file format", 2, "")},
      {"duplicate base",
       [&](const Layout& l) {
         l.File(kB1, k1);
         l.File(kB2, k1);
         l.File(kI1, k1);
         l.Manifest(kB1Line + "file appendonly.aof.2.base.aof seq 2 type b\n" + kI1Line);
       },
       {},
       ManifestError("Found duplicate base file information", 2,
                     "file appendonly.aof.2.base.aof seq 2 type b")},
      {"unknown type",
       two("file appendonly.aof.1.base.aof seq 1 type x\n" + kI1Line),
       {},
       ManifestError("Unknown AOF file type", 1, "file appendonly.aof.1.base.aof seq 1 type x")},
      {"missing key",
       two("filx appendonly.aof.1.base.aof seq 1 type b\n" + kI1Line),
       {},
       ManifestError("Invalid AOF manifest file format", 1,
                     "filx appendonly.aof.1.base.aof seq 1 type b")},
      {"line too short",
       two(kB1Line + "file appendonly.aof.1.incr.aof type i\n"),
       {},
       ManifestError("Invalid AOF manifest file format", 2,
                     "file appendonly.aof.1.incr.aof type i")},
      {"odd parameter",
       two(kB1Line + "  file appendonly.aof.1.incr.aof seq 1 type i newkey\t\r\n"),
       {},
       ManifestError("Invalid AOF manifest file format", 2,
                     "file appendonly.aof.1.incr.aof seq 1 type i newkey")},
      {"line too long",
       two(long_line + "\n" + kI1Line),
       {},
       ManifestError("The AOF manifest file contains too long line")},
      {"line of 1025 bytes",
       two("file appendonly.aof.1.incr.aof seq 1 type i pad " + std::string(1025 - 49, 'x') + "\n"),
       {},
       ManifestError("The AOF manifest file contains too long line")},
      {"no final newline",
       two(kB1Line + "file appendonly.aof.1.incr.aof seq 1 type i"),
       {},
       ManifestError("The AOF manifest file contains too long line")},
      {"long comment",
       two("#" + std::string(1500, 'c') + "\n" + kB1Line + kI1Line),
       {},
       ManifestError("Invalid AOF manifest file format", 2, std::string(1500 - 1023, 'c'))},
      {"non-monotonic",
       [&](const Layout& l) {
         l.File(kI1, k1);
         l.File(kI2, k1);
         l.Manifest("file appendonly.aof.2.incr.aof seq 2 type i\n" + kI1Line);
       },
       {},
       ManifestError("Found a non-monotonic sequence number", 2,
                     "file appendonly.aof.1.incr.aof seq 1 type i")},
      {"path for a name",
       two("# ok\nfile ../appendonly.aof.1.incr.aof seq 1 type i\n"),
       {},
       ManifestError("File can't be a path, just a filename", 2,
                     "file ../appendonly.aof.1.incr.aof seq 1 type i")},
      {"seq not a number",
       two("file appendonly.aof.1.incr.aof seq abc type i\n"),
       {},
       ManifestError("Invalid AOF manifest file format", 1,
                     "file appendonly.aof.1.incr.aof seq abc type i")},
      {"unbalanced quotes",
       two("file \"appendonly.aof.1.incr.aof seq 1 type i\n"),
       {},
       ManifestError("Invalid AOF manifest file format", 1,
                     "file \"appendonly.aof.1.incr.aof seq 1 type i")},
  };
  for (const Case& c : cases) Refused(c);
}

// Files the manifest names that are missing or unreadable, and an AOF directory
// that is not one.
TEST_F(AofLoadErrors, MissingOrUnreadableFilesRefuseTheStart) {
  const std::string k1 = Cmd({"set", "k1", "v1"});
  const Case cases[] = {
      {"missing increment",
       [&](const Layout& l) {
         l.File(kB1, k1);
         l.File(kI2, k1);
         l.Manifest(kB1Line + kI1Line + "file appendonly.aof.2.incr.aof seq 2 type i\n");
       },
       {},
       {"# Unable to obtain the AOF file appendonly.aof.1.incr.aof length. "
        "stat: No such file or "
        "directory"}},
      {"old-style base nowhere",
       [](const Layout& l) { l.Manifest("file appendonly.aof seq 1 type b\n"); },
       {},
       {"# Unable to obtain the AOF file appendonly.aof length. stat: No such "
        "file or directory"}},
      {"increment is a directory",
       [&](const Layout& l) {
         l.File(kB1, k1);
         fs::create_directory(l.dir() + "/" + kI1);
         l.Manifest(kB1Line + kI1Line);
       },
       {},
       {"# Unrecoverable error reading the append only file "
        "appendonly.aof.1.incr.aof: Is a "
        "directory"}},
      {"empty file name",
       [&](const Layout& l) {
         l.File(kI1, k1);
         l.Manifest("file \"\" seq 1 type i\n");
       },
       {},
       {"# Unrecoverable error reading the append only file : Is a directory"}},
      {"manifest is a directory",  // no manifest then: the one written at start fails
       [](const Layout& l) { fs::create_directory(l.dir() + "/appendonly.aof.manifest"); },
       {},
       {"# Error trying to rename the temporary AOF manifest file temp-appendonly.aof.manifest "
        "into appendonly.aof.manifest: Is a directory"}},
      {"appenddirname is a file",
       [](const Layout& l) {
         fs::remove(l.dir());
         std::ofstream(l.dir()) << "not a directory";
       },
       {},
       {"# Can't open or create append-only dir appendonlydir: Not a "
        "directory"}},
  };
  for (const Case& c : cases) Refused(c);
}

// The cases of Redis' aof.tcl that refuse the start: format errors (whatever
// aof-load-truncated says), unknown commands, torn tails without
// aof-load-truncated, and a torn file that is not the last one.
TEST_F(AofLoadErrors, CorruptFilesRefuseTheStartWithRedisLines) {
  const std::string foo = Cmd({"set", "foo", "hello"});
  auto incr = [&](std::string bytes) {
    return [=](const Layout& l) {
      l.File(kI1, bytes);
      l.Manifest(kI1Line);
    };
  };
  auto torn_base = [&](std::string base) {
    return [=](const Layout& l) {
      l.File(kB1, base);
      l.File(kI1, Cmd({"set", "k2", "v2"}));
      l.Manifest(kB1Line + kI1Line);
    };
  };
  const std::string multi = foo + Cmd({"multi"}) + Cmd({"set", "bar", "world"});
  const Case cases[] = {
      {"garbage between commands",
       incr(foo + "!!!" + foo),
       {"--aof-load-truncated", "yes"},
       {BadFormat(kI1)}},
      {"no arguments", incr(foo + "*0\r\n" + foo), {}, {BadFormat(kI1)}},
      {"no bulk length", incr(foo + "*1\r\nX\r\n"), {}, {BadFormat(kI1)}},
      {"annotation longer than a read",
       incr(foo + "#" + std::string(1021, 'x') + "\r\n" + foo),
       {},
       {BadFormat(kI1)}},
      {"unknown command",
       incr(foo + Cmd({"bla", "foo", "hello"}) + foo),
       {"--aof-load-truncated", "yes"},
       {"# Unknown command 'bla' reading the append only file "
        "appendonly.aof.1.incr.aof"}},
      {"unknown subcommand",
       incr(foo + Cmd({"config", "blah", "x"})),
       {},
       {"# Unknown command 'config' reading the append only file "
        "appendonly.aof.1.incr.aof"}},
      {"torn tail, not allowed",
       incr(foo + Chop(Cmd({"set", "bar", "world"}))),
       {"--aof-load-truncated", "no"},
       {UnexpectedEof(kI1)}},
      {"unfinished MULTI, not allowed",
       incr(multi),
       {"--aof-load-truncated", "no"},
       {"# Revert incomplete MULTI/EXEC transaction in AOF file " + kI1, UnexpectedEof(kI1)}},
      {"torn base before an increment",
       torn_base(foo + Chop(Cmd({"set", "bar", "world"}))),
       {},
       Cat(Truncated(kB1, foo.size()), {"# Fatal error: the truncated file is not the last file"})},
      {"unfinished MULTI in the base",
       torn_base(multi),
       {},
       Cat(Cat({"# Revert incomplete MULTI/EXEC transaction in AOF file " + kB1},
               Truncated(kB1, foo.size())),
           {"# Fatal error: the truncated file is not the last file"})},
  };
  for (const Case& c : cases) Refused(c);
}

// What loads anyway: torn tails cut off under aof-load-truncated (the file
// truncated where Redis truncates it), annotations, empty files, comments and
// unknown keys in the manifest.
TEST_F(AofLoadErrors, OddFilesLoadLikeRedis) {
  const std::string foo = Cmd({"set", "foo", "hello"});
  auto incr = [&](std::string bytes) {
    return [=](const Layout& l) {
      l.File(kI1, bytes);
      l.Manifest(kI1Line);
    };
  };
  std::string five;
  for (int i = 0; i < 5; i++) five += Cmd({"incr", "foo"});
  const Case cases[] = {
      {"torn tail",
       incr(five + Chop(Cmd({"incr", "foo"}))),
       {"--aof-load-truncated", "yes"},
       Truncated(kI1, five.size())},
      {"unfinished MULTI",
       incr(foo + Cmd({"multi"}) + Cmd({"set", "bar", "world"})),
       {},
       Cat({"# Revert incomplete MULTI/EXEC transaction in AOF file " + kI1},
           Truncated(kI1, foo.size()))},
      {"lone '*' at the end", incr(foo + "*"), {}, Truncated(kI1, foo.size())},
      {"bulk longer than the file",
       incr(foo + "*1\r\n$100\r\nabc"),
       {},
       Truncated(kI1, foo.size())},
      {"missing arguments", incr(foo + "*2\r\n$3\r\nGET\r\n"), {}, Truncated(kI1, foo.size())},
      {"timestamp annotations",
       incr("#TS:1628217470\r\n" + Cmd({"set", "foo1", "bar1"}) + "#TS:not-a-time\r\n" +
            Cmd({"set", "foo2", "bar2"}) + "#TS:1628217474\r\n"),
       {},
       {"* DB loaded from append only file"}},
      {"annotation of a full read",
       incr(foo + "#" + std::string(1020, 'x') + "\r\n" + foo),
       {},
       {"* DB loaded from append only file"}},
      {"empty increment between others",
       [](const Layout& l) {
         l.File(kB1, Cmd({"set", "k1", "v1"}));
         l.File(kI1, "");
         l.File(kI3, Cmd({"set", "k3", "v3"}));
         l.Manifest(kB1Line + kI1Line + "file appendonly.aof.3.incr.aof seq 3 type i\n");
       },
       {},
       {"* DB loaded from append only file"}},
      {"every file empty",
       [](const Layout& l) {
         l.File(kB1, "");
         l.File(kI1, "");
         l.Manifest(kB1Line + kI1Line);
       },
       {},
       {"* DB loaded from append only file"}},
      {"no AOF directory",
       [](const Layout& l) { fs::remove(l.dir()); },
       {"--loglevel", "debug"},
       {". The AOF directory appendonlydir doesn't exist"}},
      {"no manifest",
       [](const Layout&) {},
       {"--loglevel", "debug"},
       {". The AOF manifest file appendonly.aof.manifest doesn't exist"}},
      {"comments, unknown keys, a line of 1024 bytes",
       [](const Layout& l) {
         l.File(kB1, Cmd({"set", "k1", "v1"}));
         l.File(kI1, Cmd({"set", "k2", "v2"}));
         l.Manifest(
             "# comment\nfile appendonly.aof.1.base.aof seq 1 type b newkey "
             "newvalue\n#\n" +
             std::string("file appendonly.aof.1.incr.aof seq 1 type i pad ") +
             std::string(1024 - 49, 'x') + "\n");
       },
       {},
       {"* DB loaded from append only file"}},
  };
  for (const Case& c : cases) Loaded(c);
}

// Harnesses wait for the logo's PID line and then for the server to answer or exit: a start
// refused over its data shows the logo first, as Redis' (it loads after showing it).
TEST_F(AofLoadErrors, ARefusedStartShowsTheLogoFirst) {
  const Case c{"empty manifest",
               [](const Layout& l) { l.Manifest(""); },
               {"--always-show-logo", "yes"},
               ManifestError("Found an empty AOF manifest")};
  for (Kind k : {Kind::kRedis, Kind::kKvstore}) {
    SCOPED_TRACE(Name(k));
    std::string dir = Prepare(c);
    std::string log = ExpectRefusesToStart(dir, Args(c), k == Kind::kRedis);
    size_t pid = log.find(" PID: ");
    size_t refusal = log.find("Found an empty AOF manifest");
    ASSERT_NE(pid, std::string::npos) << log;
    ASSERT_NE(refusal, std::string::npos) << log;
    EXPECT_LT(pid, refusal) << log;
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace kv::test
