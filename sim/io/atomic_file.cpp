#include "sim/io/atomic_file.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainsim/error.hpp"

namespace trainsim::io {
namespace {

// Bytes gathered before one write(2): large enough that a sweep's short rows cost few system
// calls, small enough not to matter next to the rows themselves.
constexpr std::size_t kBufferBytes = 1 << 20;

// Longest base name kept in a temporary's name, so that ".<name>.tmp.XXXXXX" stays within
// NAME_MAX (255 on Linux file systems).
constexpr std::size_t kMaxNameInTemp = 200;

std::string describe(int error) { return std::strerror(error); }

ConfigError write_error(const std::string& path, const std::string& what, int error) {
  return ConfigError(path, "",
                     what + " (" + describe(error) + "); expected a writable path with free space");
}

// Six characters from [A-Za-z0-9], as mkstemp's XXXXXX. Names need only be unlikely to clash;
// open(O_EXCL) settles a clash.
std::string random_suffix() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device device;
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kChars - 2);
  std::string s(6, 'X');
  for (char& c : s) c = kChars[pick(device)];
  return s;
}

// fsync(2) on the folder holding `path`, ignoring failures (see AtomicFile::commit).
void sync_folder(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  const std::string name = folder.empty() ? std::string(".") : folder.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  (void)::close(fd);
}

// The temporaries alive, for a signal handler to remove: the handler may only call
// async-signal-safe functions (signal-safety(7): unlink, signal and raise are), so the paths sit
// in fixed slots. A slot's generation is odd while its path is written or being cleared; the
// handler copies a live path and removes it only if the generation did not move meanwhile
// (another thread may reuse the slot while the handler runs on this one). A temporary that finds
// no free slot (more than kSignalSlots open at once, or a longer path) is left to the
// destructor alone, as every temporary was before.
constexpr std::size_t kSignalSlots = 1024;    // validate --scenarios holds 290 at once
constexpr std::size_t kSlotPathBytes = 4096;  // PATH_MAX

struct SignalSlot {
  std::atomic<std::uint64_t> generation{0};  // odd: being written or cleared
  std::atomic<bool> claimed{false};
  std::atomic<bool> live{false};
  std::array<char, kSlotPathBytes> path{};
};

std::array<SignalSlot, kSignalSlots> g_signal_slots;

static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the signal handler reads the slots without locks");

extern "C" void remove_temporaries_and_end(int signal_number) {
  std::array<char, kSlotPathBytes> copy{};
  for (SignalSlot& slot : g_signal_slots) {
    const std::uint64_t before = slot.generation.load(std::memory_order_acquire);
    if ((before & 1U) != 0 || !slot.live.load(std::memory_order_acquire)) continue;
    std::memcpy(copy.data(), slot.path.data(), copy.size());
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.generation.load(std::memory_order_relaxed) != before) continue;
    copy.back() = '\0';
    (void)::unlink(copy.data());
  }
  // SA_RESETHAND restored the default action on entry: the signal raised again and unblocked
  // ends the process as it would have without the handler (exit status 128 + n). Where the
  // kernel drops a default action (PID 1 of a container), the process ends all the same: its
  // temporaries are gone, and the run it was told to stop would fail at its commit.
  (void)std::raise(signal_number);
  sigset_t self;
  sigemptyset(&self);
  sigaddset(&self, signal_number);
  (void)::pthread_sigmask(SIG_UNBLOCK, &self, nullptr);
  ::_exit(128 + signal_number);
}

// Installs the handler for the signals still at their default action (a signal ignored, as
// nohup ignores SIGHUP, or handled by an embedding program, is left alone). Once per process.
void install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(signal_number, nullptr, &current) != 0) continue;
      if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction action {};
      action.sa_handler = remove_temporaries_and_end;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      (void)::sigaction(signal_number, &action, nullptr);
    }
  });
}

// Puts `path` in a free slot, not yet live (the file is not created); returns its index, or -1
// when none is free or the path is too long.
int register_temporary(const std::string& path) {
  if (path.size() >= kSlotPathBytes) return -1;
  install_signal_cleanup();
  for (std::size_t i = 0; i < g_signal_slots.size(); ++i) {
    SignalSlot& slot = g_signal_slots[i];
    bool expected = false;
    if (!slot.claimed.compare_exchange_strong(expected, true, std::memory_order_acquire)) continue;
    slot.generation.fetch_add(1, std::memory_order_acq_rel);  // odd
    std::memcpy(slot.path.data(), path.c_str(), path.size() + 1);
    slot.generation.fetch_add(1, std::memory_order_release);  // even, not live
    return static_cast<int>(i);
  }
  return -1;
}

// The slot's file exists now and is ours: the handlers remove it from here on.
void arm_temporary(int index) {
  if (index < 0) return;
  g_signal_slots[static_cast<std::size_t>(index)].live.store(true, std::memory_order_release);
}

void release_temporary(int index) {
  if (index < 0) return;
  SignalSlot& slot = g_signal_slots[static_cast<std::size_t>(index)];
  slot.generation.fetch_add(1, std::memory_order_acq_rel);  // odd
  slot.live.store(false, std::memory_order_release);
  slot.generation.fetch_add(1, std::memory_order_release);
  slot.claimed.store(false, std::memory_order_release);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), target_(path_) {
  if (path_.empty()) throw ConfigError("", "", "empty output path; expected a file path");
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  // A loop of symbolic links leads to no file: refused as reading it is, not replaced.
  if (!exists && errno == ELOOP) throw write_error(path_, "cannot write the file", ELOOP);
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      throw ConfigError(path_, "", "is a folder; expected a file path to write");
    }
    // A device or FIFO (/dev/null, /dev/stdout, a named pipe) cannot be replaced by rename;
    // renaming onto /dev/null as root would even replace the device node.
    in_place_ = true;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw write_error(path_, "cannot write the file", errno);
    temp_ = path_;
    return;
  }
  struct stat lst {};
  if (exists && ::lstat(path_.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::canonical(path_, ec);
    if (!ec) target_ = resolved.string();
  } else if (!exists) {
    // A dangling link is followed too, as a shell's `>` follows it: the file is created where
    // the link points (each link of a chain read in turn, relative ones beside their link),
    // and the link stays. Renaming onto the link replaced it with a regular file.
    std::filesystem::path at(path_);
    for (int hop = 0; hop < 40 && ::lstat(at.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode); ++hop) {
      std::error_code ec;
      const std::filesystem::path next = std::filesystem::read_symlink(at, ec);
      if (ec) break;
      at = next.is_absolute() ? next : at.parent_path() / next;
    }
    target_ = at.string();
  }
  const std::filesystem::path target(target_);
  const std::filesystem::path folder = target.parent_path();
  const std::string name = target.filename().string().substr(0, kMaxNameInTemp);
  const std::string prefix =
      (folder.empty() ? std::string() : folder.string() + "/") + "." + name + ".tmp.";
  int error = 0;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_ = prefix + random_suffix();
    // Its slot is filled before the file exists and armed as soon as it does, so that a signal
    // between the two finds the file unknown to the handler for one store at most (filling the
    // slot took a search of 1,024); a name another file holds (EEXIST) is never armed.
    slot_ = register_temporary(temp_);
    // 0666 less the umask, as a plain open of the target would create it.
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    error = errno;
    if (fd_ >= 0) {
      arm_temporary(slot_);
    } else {
      release_temporary(slot_);
      slot_ = -1;
    }
    if (fd_ < 0 && error != EEXIST) break;
  }
  if (fd_ < 0) {
    temp_.clear();
    throw write_error(path_, "cannot write the file", error);
  }
  // Replacing a file keeps its permissions, as truncating it in place would.
  if (exists) (void)::fchmod(fd_, st.st_mode & 07777);
  buffer_.reserve(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) (void)::close(fd_);
  if (!committed_ && !in_place_ && !temp_.empty()) (void)::unlink(temp_.c_str());
  release_temporary(slot_);
}

void AtomicFile::fail(const std::string& what, int error) {
  // Leaves the temporary for the destructor to remove.
  throw write_error(path_, what, error);
}

void AtomicFile::flush_buffer() {
  const char* data = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write the file", errno);
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void AtomicFile::write(std::string_view text) {
  if (committed_ || fd_ < 0) throw InternalError(path_ + ": AtomicFile::write after close");
  buffer_.append(text);
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void AtomicFile::close() {
  if (committed_ || fd_ < 0) return;
  flush_buffer();
  std::string().swap(buffer_);
  // A device or FIFO need not (and often cannot) be synced.
  if (!in_place_ && ::fsync(fd_) != 0) fail("cannot write the file", errno);
  const int fd = fd_;
  fd_ = -1;
  // close(2) can report a delayed write error (NFS); the data is then not safely written.
  if (::close(fd) != 0) fail("cannot write the file", errno);
}

void AtomicFile::commit() {
  if (committed_) return;
  close();
  if (!in_place_ && std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail("cannot replace the file", errno);
  }
  committed_ = true;
  // Renamed: the temporary's name is free again, and no handler may remove it.
  release_temporary(slot_);
  slot_ = -1;
  // The rename is a change to the folder, which reaches the disk only when the folder is synced
  // (fsync(2): "Calling fsync() does not necessarily ensure that the entry in the directory
  // containing the file has also reached disk. For that an explicit fsync() on a file
  // descriptor for the directory is also needed."). Best effort: the file is complete and in
  // place either way, and some file systems refuse to sync a folder.
  if (!in_place_) sync_folder(target_);
}

void require_file_path(const std::string& output, const std::string& origin,
                       const std::string& stdout_carries, const std::string& expected) {
  if (output == "-") {
    throw ConfigError(
        origin, "",
        "'-' would be standard output, which carries " + stdout_carries + "; expected " + expected);
  }
  // A path to the file or pipe standard output is (/dev/stdout, /proc/self/fd/1, the file it is
  // redirected to): `run --trace /dev/stdout > out.txt` renamed the trace onto out.txt, and the
  // report written to the replaced file was lost; through a pipe the two ran together. A
  // terminal or /dev/null (character devices) loses nothing.
  struct stat out {};
  struct stat std_out {};
  if (output.empty() || ::stat(output.c_str(), &out) != 0 ||
      ::fstat(STDOUT_FILENO, &std_out) != 0 || S_ISCHR(out.st_mode) ||
      out.st_dev != std_out.st_dev || out.st_ino != std_out.st_ino) {
    return;
  }
  throw ConfigError(origin, "",
                    "'" + output + "' is standard output, which carries " + stdout_carries +
                        "; expected " + expected);
}

void require_not_an_input(const std::string& output, const std::string& origin,
                          const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") return;
  for (const std::string& input : inputs) {
    if (input.empty() || input == "-") continue;
    std::error_code ec;
    if (!std::filesystem::equivalent(output, input, ec) || ec) continue;
    throw ConfigError(origin, "",
                      "'" + output + "' is the input file " + input +
                          ", which the output would replace; expected another path");
  }
}

void write_file_atomically(const std::string& path, std::string_view text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

Output::Output(const std::string& path) {
  if (!path.empty() && path != "-") file_.emplace(path);
}

namespace {

[[noreturn]] void stdout_failed() {
  throw ConfigError("standard output", "",
                    "cannot write the output; expected a writable stdout (disk full or a "
                    "closed pipe?)");
}

}  // namespace

void Output::write(std::string_view text) {
  if (file_) {
    file_->write(text);
    return;
  }
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  // A write that failed (a reader that closed the pipe: `trainsim sweep ... | head -1`, EPIPE
  // with SIGPIPE ignored) stops the command at once, where it went on computing every row
  // (a 10^8-point --list piped to head -1 took 38.6 s) to report the failure at the end.
  if (!std::cout) stdout_failed();
}

void Output::commit() {
  if (file_) {
    file_->commit();
    return;
  }
  std::cout.flush();
  if (!std::cout) stdout_failed();
}

}  // namespace trainsim::io
