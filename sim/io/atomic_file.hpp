// Atomic replacement of an output file: the text goes to a temporary file in the target's
// folder (".<name>.tmp.XXXXXX"), which is flushed, synced and closed, and only then renamed
// onto the target (rename(2) replaces it atomically within one file system). A failed or
// interrupted write therefore never leaves a partial target: a reader sees the old file or the
// complete new one. Every file trainsim writes at a path the user gives goes through here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::io {

// One output file being written. Not thread-safe; write from one thread at a time.
//
// Lifetime: the constructor creates the temporary; commit() renames it onto the target; the
// destructor removes the temporary unless commit() succeeded (so an exception anywhere before
// commit leaves no trace). SIGINT, SIGTERM (what a batch system's time limit sends first) and
// SIGHUP, where the process has not set them otherwise, remove every temporary alive and then
// end the process by the same signal. A process killed by SIGKILL cannot clean up: its
// temporary ".<name>.tmp.XXXXXX" stays, and is never taken for the output since its name
// differs.
//
// A target that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) cannot be
// replaced; it is written in place, without atomicity. A symbolic link to a regular file is
// followed, so the link stays and the file it names is replaced.
class AtomicFile {
 public:
  // Creates the temporary beside `path` with the permissions a plain open would give (0666
  // less the umask). Throws ConfigError naming `path` when the folder is not writable.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&&) = delete;
  AtomicFile& operator=(AtomicFile&&) = delete;

  // Appends `text` (buffered). Throws ConfigError naming the target on a write error (disk
  // full, I/O error). Requires: not committed.
  void write(std::string_view text);
  // Flushes, syncs and closes the temporary, keeping it for commit(), which then only renames
  // it: files written to be committed together need not hold a descriptor each until then
  // (validate --scenarios writes 290). Throws ConfigError naming the target on a write error.
  // Requires: nothing is written after it.
  void close();
  // Closes the temporary (close()), then renames it onto the target. Throws ConfigError naming
  // the target when any step fails; the temporary is then removed.
  void commit();

  // The path the output will have once committed.
  [[nodiscard]] const std::string& path() const { return path_; }
  // Where the bytes go until commit (the target itself when written in place).
  [[nodiscard]] const std::string& temporary_path() const { return temp_; }

 private:
  void flush_buffer();
  [[noreturn]] void fail(const std::string& what, int error);

  std::string path_;    // as the user gave it, for messages
  std::string target_;  // what rename replaces: path_, or the file a symbolic link names
  std::string temp_;
  int fd_ = -1;
  bool in_place_ = false;  // target is a device or FIFO: no temporary, no rename
  bool committed_ = false;
  int slot_ = -1;  // where the signal handlers find the temporary (atomic_file.cpp); -1: nowhere
  std::string buffer_;
};

// Throws ConfigError located at `origin` (as "command line (--trace)") when the output path is
// "-", which other commands take for standard output, where this one writes `stdout_carries`
// ("the report"): written as a file, it left a file named '-' in the working directory. So is a
// path naming the file or pipe standard output is (/dev/stdout, the file it is redirected to),
// which the output would replace or run into.
void require_file_path(const std::string& output, const std::string& origin,
                       const std::string& stdout_carries,
                       const std::string& expected = "a file path");

// Throws ConfigError located at `origin` (as "command line (-o)") when the output path `output`
// names the same file as one of `inputs` (the same file however spelled, through links
// included), since writing the output would replace that input. "" and "-" (standard output)
// and paths that name no existing file are never an input.
void require_not_an_input(const std::string& output, const std::string& origin,
                          const std::vector<std::string>& inputs);

// Writes `text` to `path` atomically (AtomicFile). Throws ConfigError naming `path`.
void write_file_atomically(const std::string& path, std::string_view text);

// Where a command's output goes: standard output for "" or "-" (streamed as written), else an
// AtomicFile at the path (which appears only on commit).
class Output {
 public:
  explicit Output(const std::string& path);
  void write(std::string_view text);
  // Renames the file into place, or flushes stdout. Throws ConfigError when the bytes could not
  // all be written (on stdout: a full disk behind a redirection, a closed pipe).
  void commit();

 private:
  std::optional<AtomicFile> file_;
};

}  // namespace trainsim::io
