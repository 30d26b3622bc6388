// run_case: runs one bad-input case of the robustness catalogue (catalogue.cmake) and checks
// that trainsim refuses it cleanly: the expected exit code (a signal is a failure), exactly one
// stderr line starting with "error: " that matches a regex, peak RSS under a limit, a time limit
// in CPU seconds (user + system: what the case costs, whatever else the machine runs; CTest's
// -j16 on two cores once made a dozen cases miss a wall-time limit), and no output or temporary
// file left in the work folder. A run that waits (every thread asleep, as on a FIFO nobody
// writes) longer than the time limit fails too, since waiting uses no CPU. The child is killed
// past the memory limit, and past kWallFactor times the time limit in wall time.
//
//   run_case --trainsim PATH --workdir DIR --exit 2 --stderr REGEX
//            [--input FILE]... [--prep "OP ARG..."]... [--no-file PATH]... [--stdin FILE]
//            [--env NAME=VALUE]... [--max-rss-mib 1024] [--max-seconds 5] [--percent-args]
//            [--stdout pipe|full|closed] -- args...
//
// REGEX is an ECMAScript regex searched in the one stderr line; --no-file paths are relative to
// the work folder. Exit status 0 when every check passes, else 1 with a diagnosis on stderr.
//
// The work folder is emptied first; then each --input file is copied into it and each --prep
// step runs, in the order given. Only what those placed there may remain after the case, and
// unchanged: a failed run must not touch an earlier output at its -o path. The folder is removed
// when the case passes and kept when it fails. Prep
// steps (one string each, words split at spaces and then percent-decoded, so %20 is a space and
// %FF the byte 0xFF; run in the work folder):
//   trainsim OUT ARGS...  run trainsim (must exit 0); stdout to OUT, or discarded when OUT is -
//   cut FILE N            keep the first N bytes of FILE; N < 0 drops the last -N bytes; N% keeps
//                         that percentage of them
//   dropline FILE K       delete line K (0-based; K < 0 counts from the end, -1 is the last)
//   dupline FILE K        write line K twice
//   subst FILE OLD NEW    replace the first OLD by NEW; fails when OLD is not in the file
//   set FILE KEY JSON     replace the value of the first "KEY": in FILE by the JSON text given
//   setstr FILE KEY TEXT  the same with the string "TEXT"
//   copy SRC DST          copy a file
//   append SRC DST        append SRC's bytes to DST
//   nest FILE N KIND      write N nested JSON arrays (KIND array) or objects (KIND object)
//   many FILE N TEXT      write a JSON array of N copies of TEXT ("[TEXT,TEXT,...]")
//   wide FILE N M         write a JSON array of one object of N keys ("k0" to "k<N-1>", each 0)
//                         and M empty objects
//   sparse FILE MIB       a file of MIB MiB of NUL bytes that takes no disk space
//   fifo FILE             a named pipe that nobody writes to
//   mkdir DIR             a folder
//   write FILE WORDS...   write the words joined by spaces and a newline
// --stdout gives trainsim's stdout to the runner (pipe, the default), to /dev/full (every write
// fails with ENOSPC) or to a pipe whose reader has gone (every write fails with EPIPE).
// With --percent-args, the arguments after -- are percent-decoded too (for bytes such as 0xFF
// that a CMake file cannot hold).
// Linux only for the in-flight memory check (/proc/<pid>/statm); the rest is POSIX.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string trainsim;
  fs::path workdir;
  int exit_code = 2;
  std::string stderr_regex;
  std::vector<std::string> inputs;
  std::vector<std::string> preps;
  std::vector<std::string> no_files;
  std::string stdin_file;
  std::vector<std::string> env;
  long max_rss_mib = 1024;
  double max_seconds = 5.0;
  bool percent_args = false;
  std::string stdout_mode = "pipe";
  std::vector<std::string> args;
};

// A run is killed after this many times --max-seconds of wall time: CTest -j16 on two cores
// runs eight cases per core, so a case within its CPU limit may take eight times it in wall
// time, and a little more for the machine's other work.
constexpr double kWallFactor = 12.0;

// What one child did: how it ended, what it printed, its peak memory, wall and CPU time.
struct Outcome {
  bool exited = false;
  int exit_code = 0;
  int signal = 0;
  bool timed_out = false;
  bool over_memory = false;  // killed while running because its RSS passed the limit
  std::string out;
  std::string err;
  long max_rss_kib = 0;
  double seconds = 0.0;      // wall time
  double cpu_seconds = 0.0;  // user + system time of the child and its reaped children
  double asleep_seconds = 0.0;  // wall time with every thread of the child and its children asleep
};

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "FAIL: " << message << "\n";
  std::exit(1);
}

// "%20" -> " ", "%FF" -> byte 0xFF; other characters are kept.
std::string percent_decode(const std::string& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      r += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      r += s[i];
    }
  }
  return r;
}

Options parse_options(int argc, char** argv) {
  Options o;
  using Setter = std::function<void(const std::string&)>;
  const std::map<std::string, Setter> setters = {
      {"--trainsim", [&](const std::string& v) { o.trainsim = v; }},
      {"--workdir", [&](const std::string& v) { o.workdir = v; }},
      {"--exit", [&](const std::string& v) { o.exit_code = std::stoi(v); }},
      {"--stderr", [&](const std::string& v) { o.stderr_regex = v; }},
      {"--input", [&](const std::string& v) { o.inputs.push_back(v); }},
      {"--prep", [&](const std::string& v) { o.preps.push_back(v); }},
      {"--no-file", [&](const std::string& v) { o.no_files.push_back(v); }},
      {"--stdin", [&](const std::string& v) { o.stdin_file = v; }},
      {"--env", [&](const std::string& v) { o.env.push_back(v); }},
      {"--max-rss-mib", [&](const std::string& v) { o.max_rss_mib = std::stol(v); }},
      {"--max-seconds", [&](const std::string& v) { o.max_seconds = std::stod(v); }},
      {"--stdout",
       [&](const std::string& v) {
         if (v != "pipe" && v != "full" && v != "closed") fail("run_case: --stdout " + v);
         o.stdout_mode = v;
       }},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      o.args.assign(argv + i + 1, argv + argc);
      break;
    }
    if (a == "--percent-args") {
      o.percent_args = true;
      continue;
    }
    const auto setter = setters.find(a);
    if (setter == setters.end()) fail("run_case: unknown option " + a);
    if (i + 1 >= argc) fail("run_case: " + a + " needs a value");
    setter->second(argv[++i]);
  }
  if (o.percent_args) {
    for (auto& a : o.args) a = percent_decode(a);
  }
  if (o.trainsim.empty() || o.workdir.empty())
    fail("run_case: --trainsim and --workdir are required");
  if (o.workdir.lexically_normal() == "/" || o.workdir.relative_path().empty()) {
    fail("run_case: refusing to empty " + o.workdir.string());
  }
  return o;
}

// Current resident set of a running process in KiB, or 0 where /proc cannot tell.
long current_rss_kib(pid_t pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  long pages_total = 0;
  long pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Whether every thread of `pid` and of its descendants is in interruptible sleep (state S in
// /proc/<pid>/task/*/stat: waiting on a pipe, a FIFO, a lock or a timer), none running, runnable
// or in disk I/O. A process that waits for a busy child process is not asleep. False when a
// process cannot be read (it has ended).
bool all_threads_asleep(pid_t pid, int depth = 0) {
  std::error_code ec;
  fs::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
  if (ec || depth > 16) return false;
  bool any = false;
  for (const fs::directory_entry& task : tasks) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    // "tid (comm) S ...": the state follows the last ')', as comm may hold one.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'S') {
      return false;
    }
    std::ifstream children(task.path() / "children");
    pid_t child = 0;
    while (children >> child) {
      if (!all_threads_asleep(child, depth + 1)) return false;
    }
    any = true;
  }
  return any;
}

// Runs `program args` in `dir` with stdin from `stdin_file` (or /dev/null) and extra environment
// variables; collects stdout and stderr (the first 1 MiB of each) and kills the child past
// `max_seconds` of wall time or past `max_rss_kib` of resident memory (0: no memory limit).
Outcome spawn(const std::string& program, const std::vector<std::string>& args, const fs::path& dir,
              const std::string& stdin_file, const std::vector<std::string>& env,
              double max_seconds, long max_rss_kib, const std::string& stdout_mode = "pipe") {
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  if (pipe(out_pipe.data()) != 0 || pipe(err_pipe.data()) != 0)
    fail("run_case: pipe: " + std::string(strerror(errno)));
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) fail("run_case: fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    // Child: only async-signal-safe calls plus exec; a failure exits 127 with a note.
    setpgid(0, 0);
    const std::string in = stdin_file.empty() ? "/dev/null" : stdin_file;
    const int in_fd = open(in.c_str(), O_RDONLY);
    if (in_fd < 0 || chdir(dir.c_str()) != 0) _exit(127);
    dup2(in_fd, 0);
    dup2(out_pipe[1], 1);
    if (stdout_mode == "full") {
      const int full_fd = open("/dev/full", O_WRONLY);
      if (full_fd < 0) _exit(127);
      dup2(full_fd, 1);
    } else if (stdout_mode == "closed") {
      std::array<int, 2> gone{};
      if (pipe(gone.data()) != 0) _exit(127);
      close(gone[0]);
      dup2(gone[1], 1);
    }
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    // A case sees the shard variables it sets and no others (ctest may run inside a Slurm job).
    for (const char* name :
         {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "JOB_COMPLETION_INDEX"}) {
      unsetenv(name);
    }
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    const std::string_view note = "run_case: cannot execute the program\n";
    [[maybe_unused]] const ssize_t written = write(2, note.data(), note.size());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);

  Outcome r;
  constexpr std::size_t kKeep = 1 << 20;
  std::array<pollfd, 2> fds = {pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  const std::array<std::string*, 2> sinks = {&r.out, &r.err};
  std::array<char, 65536> buf{};
  int open_pipes = 2;
  int status = 0;
  bool reaped = false;
  rusage usage{};
  double sampled = 0.0;  // elapsed time at the previous sample of the threads' states
  while (!reaped) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (all_threads_asleep(pid)) r.asleep_seconds += elapsed - sampled;
    sampled = elapsed;
    if (elapsed > max_seconds && !r.timed_out && !r.over_memory) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
    if (max_rss_kib > 0 && !r.timed_out && !r.over_memory && current_rss_kib(pid) > max_rss_kib) {
      r.over_memory = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
    if (open_pipes > 0) {
      if (poll(fds.data(), fds.size(), 20) > 0) {
        for (std::size_t k = 0; k < fds.size(); ++k) {
          if (fds[k].fd < 0 || (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
          const ssize_t n = read(fds[k].fd, buf.data(), buf.size());
          if (n > 0) {
            if (sinks[k]->size() < kKeep) sinks[k]->append(buf.data(), static_cast<std::size_t>(n));
          } else if (n == 0 || errno != EINTR) {
            close(fds[k].fd);
            fds[k].fd = -1;
            --open_pipes;
          }
        }
      }
    } else {
      usleep(20000);
    }
    const pid_t w = wait4(pid, &status, WNOHANG, &usage);
    if (w == pid) reaped = true;
  }
  // Drain what the child wrote just before it ended (a grandchild may keep a pipe open: stop
  // at the first empty poll).
  for (std::size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].fd < 0) continue;
    fcntl(fds[k].fd, F_SETFL, O_NONBLOCK);
    ssize_t n = 0;
    while ((n = read(fds[k].fd, buf.data(), buf.size())) > 0) {
      if (sinks[k]->size() < kKeep) sinks[k]->append(buf.data(), static_cast<std::size_t>(n));
    }
    close(fds[k].fd);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.max_rss_kib = usage.ru_maxrss;
  const auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  r.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail("prep: cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& p, const std::string& text, std::ios::openmode mode = {}) {
  std::ofstream out(p, std::ios::binary | mode);
  if (!(out << text)) fail("prep: cannot write " + p.string());
}

// Where the JSON value after position `at` ends: a string to its closing quote, an array or
// object to its matching bracket, anything else to the next ',', '}', ']' or white space.
std::size_t end_of_json_value(const std::string& text, std::size_t at) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (depth == 0) return i;
      if (c == ']' || c == '}') {
        if (--depth == 0) return i + 1;
      }
    }
  }
  return text.size();
}

// One --prep step, run in the work folder (see the file's top comment).
void run_prep(const Options& o, const std::string& step) {
  std::vector<std::string> w = split_words(step);
  for (auto& word : w) word = percent_decode(word);
  auto need = [&](std::size_t n) {
    if (w.size() < n) fail("prep '" + step + "': too few words");
  };
  need(2);
  const std::string& op = w[0];
  const fs::path file = o.workdir / w[1];
  if (op == "trainsim") {
    const std::vector<std::string> args(w.begin() + 2, w.end());
    const Outcome r = spawn(o.trainsim, args, o.workdir, "", o.env, 120.0, 0);
    if (!r.exited || r.exit_code != 0) {
      fail("prep '" + step + "' did not succeed (exit " + std::to_string(r.exit_code) +
           ", signal " + std::to_string(r.signal) + "):\n" + r.err);
    }
    if (w[1] != "-") write_all(file, r.out);
  } else if (op == "cut" || op == "dropline" || op == "dupline") {
    need(3);
    std::string text = read_all(file);
    const long n = std::stol(w[2]);
    if (op == "cut") {
      const long size = static_cast<long>(text.size());
      long keep = n >= 0 ? n : size + n;
      if (w[2].back() == '%') keep = size * n / 100;
      if (keep < 0 || keep > size)
        fail("prep '" + step + "': file has " + std::to_string(size) + " bytes");
      text.resize(static_cast<std::size_t>(keep));
    } else {
      std::vector<std::string> lines;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
      const long count = static_cast<long>(lines.size());
      const long k = n >= 0 ? n : count + n;
      if (k < 0 || k >= count)
        fail("prep '" + step + "': file has " + std::to_string(count) + " lines");
      if (op == "dropline") {
        lines.erase(lines.begin() + k);
      } else {
        lines.insert(lines.begin() + k, lines[static_cast<std::size_t>(k)]);
      }
      text.clear();
      for (const auto& line : lines) text += line;
    }
    write_all(file, text);
  } else if (op == "copy" || op == "append") {
    need(3);
    write_all(o.workdir / w[2], read_all(file), op == "append" ? std::ios::app : std::ios::trunc);
  } else if (op == "subst") {
    need(4);
    std::string text = read_all(file);
    const std::string& old_text = w[2];
    const auto at = text.find(old_text);
    if (at == std::string::npos) fail("prep '" + step + "': text not found");
    text.replace(at, old_text.size(), w[3]);
    write_all(file, text);
  } else if (op == "set" || op == "setstr") {
    need(4);
    std::string text = read_all(file);
    const auto key = text.find("\"" + w[2] + "\"");
    const auto colon = key == std::string::npos ? key : text.find(':', key);
    if (colon == std::string::npos) fail("prep '" + step + "': key not found");
    const auto value = text.find_first_not_of(" \t\r\n", colon + 1);
    if (value == std::string::npos) fail("prep '" + step + "': no value after the key");
    const std::string replacement = op == "set" ? w[3] : "\"" + w[3] + "\"";
    text.replace(value, end_of_json_value(text, value) - value, replacement);
    write_all(file, text);
  } else if (op == "nest") {
    need(4);
    const long n = std::stol(w[2]);
    const bool object = w[3] == "object";
    std::string text;
    text.reserve(static_cast<std::size_t>(n) * 6 + 2);
    for (long i = 0; i < n; ++i) text += object ? "{\"a\":" : "[";
    text += "0";
    for (long i = 0; i < n; ++i) text += object ? "}" : "]";
    write_all(file, text + "\n");
  } else if (op == "many") {
    need(4);
    const long n = std::stol(w[2]);
    std::string text = "[";
    text.reserve(static_cast<std::size_t>(n) * (w[3].size() + 1) + 2);
    for (long i = 0; i < n; ++i) text += (i == 0 ? "" : ",") + w[3];
    write_all(file, text + "]\n");
  } else if (op == "wide") {
    need(4);
    const long n = std::stol(w[2]);
    const long m = std::stol(w[3]);
    std::string text = "[{";
    for (long i = 0; i < n; ++i) text += (i == 0 ? "\"k" : ",\"k") + std::to_string(i) + "\":0";
    text += "}";
    for (long i = 0; i < m; ++i) text += ",{}";
    write_all(file, text + "]\n");
  } else if (op == "sparse") {
    need(3);
    write_all(file, "");
    fs::resize_file(file, static_cast<std::uintmax_t>(std::stol(w[2])) * 1024 * 1024);
  } else if (op == "fifo") {
    if (mkfifo(file.c_str(), 0600) != 0)
      fail("prep: mkfifo " + file.string() + ": " + strerror(errno));
  } else if (op == "mkdir") {
    fs::create_directories(file);
  } else if (op == "write") {
    std::string text;
    for (std::size_t i = 2; i < w.size(); ++i) text += (i > 2 ? " " : "") + w[i];
    write_all(file, text + "\n");
  } else {
    fail("prep '" + step + "': unknown step " + op);
  }
}

// Every path under `dir` (relative to it), with the size and time of last write of the regular
// files: a failed run must leave the files a case placed as they were (the sparse inputs are too
// big to compare byte by byte; a rewrite changes the time).
std::map<std::string, std::string> list_dir(const fs::path& dir) {
  std::map<std::string, std::string> entries;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string stamp;
    if (e.is_regular_file()) {
      stamp = std::to_string(e.file_size()) + " bytes, written at " +
              std::to_string(e.last_write_time().time_since_epoch().count());
    }
    entries[fs::relative(e.path(), dir).string()] = stamp;
  }
  return entries;
}

std::string quoted_command(const Options& o) {
  std::string s = "trainsim";
  for (const auto& a : o.args) s += " '" + a + "'";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  std::error_code ec;
  fs::remove_all(o.workdir, ec);
  fs::create_directories(o.workdir);
  for (const auto& input : o.inputs) {
    fs::copy_file(input, o.workdir / fs::path(input).filename(),
                  fs::copy_options::overwrite_existing);
  }
  for (const auto& step : o.preps) run_prep(o, step);
  const std::map<std::string, std::string> placed = list_dir(o.workdir);

  const double max_wall = kWallFactor * o.max_seconds;
  const Outcome r = spawn(o.trainsim, o.args, o.workdir, o.stdin_file, o.env, max_wall,
                          o.max_rss_mib * 1024, o.stdout_mode);

  std::vector<std::string> problems;
  if (r.timed_out) {
    problems.push_back("timeout: still running after " + std::to_string(max_wall) +
                       " s of wall time; killed");
  } else if (r.over_memory) {
    problems.push_back("memory: resident set passed " + std::to_string(o.max_rss_mib) +
                       " MiB; killed");
  } else if (r.signal != 0) {
    problems.push_back("crash: killed by signal " + std::to_string(r.signal) + " (" +
                       strsignal(r.signal) + ")");
  } else if (r.exit_code != o.exit_code) {
    problems.push_back("exit: expected " + std::to_string(o.exit_code) + ", got " +
                       std::to_string(r.exit_code));
  }
  // The first thing wrong with stderr, if anything.
  if (!r.timed_out && !r.over_memory) {
    const auto lines = std::count(r.err.begin(), r.err.end(), '\n');
    const std::string first = r.err.substr(0, r.err.find('\n'));
    if (r.err.empty()) {
      problems.emplace_back("stderr: empty; expected one line 'error: ...'");
    } else if (lines != 1 || r.err.back() != '\n') {
      problems.push_back("stderr: " + std::to_string(lines) + " line break(s); expected one line");
    } else if (first.rfind("error: ", 0) != 0) {
      problems.emplace_back("stderr: does not start with 'error: '");
    } else if (!std::regex_search(first, std::regex(o.stderr_regex))) {
      problems.push_back("stderr: wrong message; expected a match of /" + o.stderr_regex + "/");
    }
  }
  if (r.max_rss_kib > o.max_rss_mib * 1024 && !r.over_memory) {
    problems.push_back("memory: peak RSS " + std::to_string(r.max_rss_kib / 1024) + " MiB, limit " +
                       std::to_string(o.max_rss_mib) + " MiB");
  }
  if (r.asleep_seconds > o.max_seconds && !r.timed_out && !r.over_memory) {
    problems.push_back("waited: " + std::to_string(r.asleep_seconds) +
                       " s with every thread asleep (blocked on input?), limit " +
                       std::to_string(o.max_seconds) + " s");
  }
  if (r.cpu_seconds > o.max_seconds && !r.timed_out && !r.over_memory) {
    problems.push_back("time: " + std::to_string(r.cpu_seconds) +
                       " s of CPU (user + system), limit " + std::to_string(o.max_seconds) + " s");
  }
  for (const auto& p : o.no_files) {
    if (fs::exists(fs::symlink_status(o.workdir / p)))
      problems.push_back("output left behind: " + p);
  }
  const std::map<std::string, std::string> after = list_dir(o.workdir);
  for (const auto& [name, stamp] : after) {
    const auto before = placed.find(name);
    if (before == placed.end()) {
      problems.push_back("stray file left in the work folder: " + name);
    } else if (before->second != stamp) {
      problems.push_back("input or earlier output modified: " + name + " (" + before->second);
      problems.back() += ", now " + stamp + ")";
    }
  }
  for (const auto& [name, stamp] : placed) {
    if (after.count(name) == 0) problems.push_back("input or earlier output removed: " + name);
  }

  if (problems.empty()) {
    std::cout << "ok: exit " << r.exit_code << ", " << r.max_rss_kib / 1024 << " MiB, "
              << r.cpu_seconds << " s of CPU, " << r.seconds << " s: " << r.err;
    // Only a failed case's folder is kept, for a look; the sparse inputs are 4 GiB each when
    // copied without care.
    fs::remove_all(o.workdir, ec);
    return 0;
  }
  std::cerr << "FAIL: " << quoted_command(o) << "\n  in " << o.workdir.string() << "\n";
  for (const auto& p : problems) std::cerr << "  " << p << "\n";
  std::cerr << "  (exit " << (r.exited ? std::to_string(r.exit_code) : "-") << ", signal "
            << r.signal << ", peak RSS " << r.max_rss_kib / 1024 << " MiB, " << r.cpu_seconds
            << " s of CPU, " << r.seconds << " s)\n";
  auto excerpt = [](const std::string& s) {
    return s.size() > 2000 ? s.substr(0, 2000) + "..." : s;
  };
  std::cerr << "--- stderr ---\n"
            << excerpt(r.err) << "--- stdout (" << r.out.size() << " bytes) ---\n"
            << excerpt(r.out) << "\n";
  return 1;
}
