// Helpers shared by the fuzz harnesses: the fuzzer's bytes as text, and as a file for the
// readers whose public function takes a path. Header-only, so that each harness is one source
// file plus either libFuzzer's main or replay_main.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace trainsim::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits `text` at every byte 0x1E (ASCII record separator), the shard separator of the merge
// harnesses: "a\x1e" gives {"a", ""}.
inline std::vector<std::string> split_records(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\x1e') {
      parts.emplace_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return parts;
}

// A private directory on tmpfs (/dev/shm, else $TMPDIR, else /tmp), made on first use and
// removed at exit. It holds only the files the harness writes, so relative paths inside an
// input (a scenario naming "hardware": "h.json") resolve to nothing there.
class ScratchDir {
 public:
  ScratchDir() {
    std::string root = "/dev/shm";
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec) || access(root.c_str(), W_OK) != 0) {
      const char* tmp = std::getenv("TMPDIR");
      root = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    }
    std::string templ = root + "/trainsim-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) std::abort();  // no place to write: cannot fuzz at all
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ScratchDir(ScratchDir&&) = delete;
  ScratchDir& operator=(ScratchDir&&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

  // Writes `data` to the file `name` in the directory (replacing it) and returns its path.
  [[nodiscard]] std::string write(const std::string& name, const std::uint8_t* data,
                                  std::size_t size) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) std::abort();  // tmpfs full: a problem of the machine, not of the reader
    return file;
  }

 private:
  std::string path_;
};

// The process's scratch directory.
inline const ScratchDir& scratch_dir() {
  static const ScratchDir dir;
  return dir;
}

}  // namespace trainsim::fuzz
