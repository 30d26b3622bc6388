// sim/io/atomic_file: lives beside the sweep tests because the sweep, merge and trace outputs
// are its users.
#include "sim/io/atomic_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "trainsim/error.hpp"

using namespace trainsim;
using namespace trainsim::io;
namespace fs = std::filesystem;

namespace {

// A fresh empty folder under the system's temporary folder, removed at the end of the test.
class Folder {
 public:
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "trainsim-atomic-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  Folder(Folder&&) = delete;
  Folder& operator=(Folder&&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }
  // Names in the folder, sorted.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("atomic file: the target appears only on commit, whole, with no temporary left", "[io]") {
  const Folder dir;
  const std::string target = (dir.path() / "out.csv").string();
  {
    AtomicFile file(target);
    file.write("index,x\n");
    // The bytes go to ".out.csv.tmp.XXXXXX" in the same folder (rename stays on one file
    // system); the target does not exist yet.
    CHECK(fs::path(file.temporary_path()).parent_path() == dir.path());
    CHECK(fs::path(file.temporary_path()).filename().string().rfind(".out.csv.tmp.", 0) == 0);
    CHECK_FALSE(fs::exists(target));
    // More than the 1 MiB buffer, so that part of it reaches the temporary before commit.
    file.write(std::string(3 << 20, 'x'));
    file.commit();
  }
  CHECK(read(target) == "index,x\n" + std::string(3 << 20, 'x'));
  CHECK(dir.names() == std::vector<std::string>{"out.csv"});
}

TEST_CASE("atomic file: without commit nothing changes and the temporary is removed", "[io]") {
  const Folder dir;
  const fs::path target = dir.path() / "out.csv";
  SECTION("no earlier file") {
    {
      AtomicFile file(target.string());
      file.write(std::string(2 << 20, 'y'));
    }  // as when an exception unwinds past it
    CHECK(dir.names().empty());
  }
  SECTION("an earlier file stays as it was") {
    std::ofstream(target) << "old\n";
    {
      AtomicFile file(target.string());
      file.write("new, but never committed\n");
    }
    CHECK(read(target) == "old\n");
    CHECK(dir.names() == std::vector<std::string>{"out.csv"});
  }
}

TEST_CASE("atomic file: replacing keeps permissions and symbolic links", "[io]") {
  const Folder dir;
  const fs::path real = dir.path() / "real.json";
  const fs::path link = dir.path() / "link.json";
  std::ofstream(real) << "old\n";
  REQUIRE(::chmod(real.c_str(), 0640) == 0);
  fs::create_symlink(real, link);
  write_file_atomically(link.string(), "new\n");
  CHECK(fs::is_symlink(link));
  CHECK(read(real) == "new\n");
  struct stat st {};
  REQUIRE(::stat(real.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("atomic file: a dangling link is followed, and stays a link", "[io]") {
  // As a shell's `>` does: the file is created where the link points (a relative target beside
  // the link, through a chain of links), and the links stay links. The rename onto the link
  // had replaced it with a regular file, leaving its target missing.
  const Folder dir;
  const fs::path link = dir.path() / "out.json";
  fs::create_symlink("middle.json", link);
  fs::create_symlink("real.json", dir.path() / "middle.json");
  REQUIRE(!fs::exists(link));
  write_file_atomically(link.string(), "new\n");
  CHECK(fs::is_symlink(link));
  CHECK(fs::is_symlink(dir.path() / "middle.json"));
  CHECK(read(dir.path() / "real.json") == "new\n");
  CHECK(read(link) == "new\n");
  // A loop of links leads to no file: an error, and the links stay as they were.
  const fs::path a = dir.path() / "loop_a";
  const fs::path b = dir.path() / "loop_b";
  fs::create_symlink("loop_b", a);
  fs::create_symlink("loop_a", b);
  REQUIRE_THROWS_WITH(write_file_atomically(a.string(), "x"),
                      a.string() +
                          ": cannot write the file (Too many levels of symbolic links); "
                          "expected a writable path with free space");
  CHECK(fs::is_symlink(a));
  CHECK(fs::is_symlink(b));
}

TEST_CASE("atomic file: devices are written in place, bad folders are ConfigErrors", "[io]") {
  using Catch::Contains;
  // /dev/null cannot be renamed over (and must not be, as root): written in place.
  write_file_atomically("/dev/null", "discarded\n");
  const Folder dir;
  const std::string missing = (dir.path() / "no_such_folder" / "out.csv").string();
  REQUIRE_THROWS_AS(write_file_atomically(missing, "x"), ConfigError);
  REQUIRE_THROWS_WITH(write_file_atomically(missing, "x"),
                      missing +
                          ": cannot write the file (No such file or directory); expected a "
                          "writable path with free space");
  REQUIRE_THROWS_WITH(write_file_atomically(dir.path().string(), "x"),
                      Contains("is a folder; expected a file path to write"));
  CHECK(dir.names().empty());
}
