// nccl-tests stdout -> calibrate::NcclTestsLog. The formats are those of NVIDIA/nccl-tests
// src/util.cu (>= 2.13, unified columns) and src/*.cu print_header (<= 2.11); the checks follow
// the definitions of src/*.cu GetBw and doc/PERFORMANCE.md (docs/sources.md A.11-A.12).
#include "sim/io/nccl_tests_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "trainsim/error.hpp"

#include "sim/io/json_reader.hpp"

namespace trainsim::io {
namespace {

using calibrate::NcclTestsLog;
using calibrate::NcclTestsRow;
using collective::Op;

constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20U;

// Printed numbers are checked against the quantities they derive from with this tolerance on
// top of their own print rounding: 2% relative plus 0.01 GB/s (the last printed digit). It is
// loose on purpose: it accepts a rank list cut short at scale (the 128-node log lists 100 of
// 1024 ranks; 2(n-1)/n moves by 0.9%) and still rejects a wrong op or a doctored cell.
constexpr double kRelativeTolerance = 0.02;
constexpr double kAbsoluteToleranceGbPerS = 0.01;

// ---------------------------------------------------------------------------------------------
// Text helpers

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view ltrim(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

std::vector<std::string_view> split_tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_blank(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

// What a table row starts with: an integer (the size), possibly negative.
bool is_integer_token(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return all_digits(s);
}

// A piece of input for an error message: at most `limit` characters, non-printable bytes as '?'.
std::string quote(std::string_view text, std::size_t limit = 40) {
  std::string out;
  for (const char c : text.substr(0, limit)) out += (c >= ' ' && c <= '~') ? c : '?';
  if (text.size() > limit) out += "...";
  return out;
}

std::string join(const std::vector<std::string_view>& tokens) {
  std::string out;
  for (const auto t : tokens) {
    if (!out.empty()) out += ' ';
    out += t;
  }
  return out;
}

// Bandwidths and times as nccl-tests prints them: two decimals.
std::string fixed2(double v) {
  std::array<char, 64> buf{};
  // Two decimals as nccl-tests prints; past 1e12 (no bandwidth or time of a real log) three
  // significant digits, not a 60-digit number.
  std::snprintf(buf.data(), buf.size(), std::abs(v) < 1e12 ? "%.2f" : "%.3g", v);
  return buf.data();
}

// Ratios: three significant digits.
std::string short_number(double v) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.3g", v);
  return buf.data();
}

// ---------------------------------------------------------------------------------------------
// Numbers. std::from_chars never throws: out-of-range values (1e400) and junk come back as
// nullopt, and so do nan and inf.

std::optional<double> parse_double(std::string_view s) {
  double v = 0.0;
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), last, v);
  if (ec != std::errc() || ptr != last || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), last, v);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return v;
}

// Half a unit in the last printed place of a number token: the most its print rounding can
// have moved it ("15870" 0.5, "24.70" 0.005, "1.2e+07" 5e5).
double print_half_ulp(std::string_view s) {
  int exponent = 0;
  const auto e = s.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::string_view digits = s.substr(e + 1);
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    const auto parsed = parse_int(digits);
    if (parsed) exponent = static_cast<int>(std::clamp<std::int64_t>(*parsed, -400, 400));
  }
  const std::string_view mantissa = s.substr(0, e);
  const auto dot = mantissa.find('.');
  const auto decimals =
      dot == std::string_view::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

// A printed number with its print rounding.
struct Cell {
  double value = 0.0;
  double half_ulp = 0.0;
  std::string text;
};

// Whether `printed` is `expected` (itself known to +-`expected_uncertainty`) up to print
// rounding and the reader's tolerance.
bool close(const Cell& printed, double expected, double expected_uncertainty) {
  // A quantity that overflowed (a size over a time of 1e-300 us) matches nothing.
  if (!std::isfinite(expected) || !std::isfinite(expected_uncertainty)) return false;
  const double slack = kRelativeTolerance * std::abs(expected) + kAbsoluteToleranceGbPerS +
                       printed.half_ulp + expected_uncertainty;
  return std::abs(printed.value - expected) <= slack;
}

// ---------------------------------------------------------------------------------------------
// nccl-tests vocabulary

struct TypeSize {
  std::string_view name;
  std::int64_t bytes;
};

// src/common.cu test_typenames; "char" and "int" from the NCCL 1 build.
constexpr std::array<TypeSize, 14> kTypes = {{{"int8", 1},
                                              {"uint8", 1},
                                              {"int32", 4},
                                              {"uint32", 4},
                                              {"int64", 8},
                                              {"uint64", 8},
                                              {"half", 2},
                                              {"float", 4},
                                              {"double", 8},
                                              {"bfloat16", 2},
                                              {"f8e4m3", 1},
                                              {"f8e5m2", 1},
                                              {"char", 1},
                                              {"int", 4}}};

// src/common.cu test_opnames, plus "none" (all_gather, broadcast, alltoall).
constexpr std::array<std::string_view, 7> kRedops = {"sum", "prod",   "max", "min",
                                                     "avg", "mulsum", "none"};

std::optional<std::int64_t> element_bytes(std::string_view type) {
  for (const auto& t : kTypes) {
    if (t.name == type) return t.bytes;
  }
  return std::nullopt;
}

template <std::size_t N>
std::string list_names(const std::array<std::string_view, N>& names) {
  std::string out;
  for (const auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string type_names() {
  std::string out;
  for (const auto& t : kTypes) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

// The tests' binaries, as "# Collective test starting:" names them (without "_perf").
constexpr std::array<std::pair<std::string_view, Op>, 7> kTests = {{
    {"all_reduce", Op::AllReduce},
    {"all_gather", Op::AllGather},
    {"reduce_scatter", Op::ReduceScatter},
    {"broadcast", Op::Broadcast},
    {"reduce", Op::Reduce},
    {"alltoall", Op::AllToAll},
    {"sendrecv", Op::SendRecv},
}};

// Ops in the order inference prefers them when the table cannot tell them apart: all_gather
// before all_to_all (same columns), all_reduce before send_recv (same on 2 ranks). The others
// that fit are kept with the log (NcclTestsLog::also_fits), for calibrate's note: an
// alltoall_perf log of nccl-tests before 2.16.7, which prints no test line, was fitted as
// all_gather without a word, its ring LL128 factor driven to its bound. A file named for one of
// them is read as that one.
constexpr std::array<Op, 7> kInferenceOrder = {Op::AllReduce, Op::AllGather, Op::ReduceScatter,
                                               Op::Broadcast, Op::Reduce,    Op::SendRecv,
                                               Op::AllToAll};

std::string op_name(Op op) { return std::string(collective::to_string(op)); }

bool reduces(Op op) { return op == Op::AllReduce || op == Op::ReduceScatter || op == Op::Reduce; }
bool prints_no_redop(Op op) {
  return op == Op::AllGather || op == Op::Broadcast || op == Op::AllToAll;
}
bool is_rooted(Op op) { return op == Op::Broadcast || op == Op::Reduce; }
// all_gather, reduce_scatter and alltoall print the per-rank count (reference A.11).
bool counts_per_rank(Op op) {
  return op == Op::AllGather || op == Op::ReduceScatter || op == Op::AllToAll;
}
bool factor_is_one(Op op) { return op == Op::Broadcast || op == Op::Reduce || op == Op::SendRecv; }

std::string_view factor_formula(Op op) {
  if (op == Op::AllReduce) return "2(n-1)/n";
  if (counts_per_rank(op)) return "(n-1)/n";
  return "1";
}

// busbw/algbw as nccl-tests prints it on n ranks: bus_factor, except that broadcast, reduce and
// sendrecv print busbw = algbw even on one rank (src/broadcast.cu, reduce.cu, sendrecv.cu).
double printed_factor(Op op, std::int64_t ranks) {
  if (ranks <= 1) return factor_is_one(op) ? 1.0 : 0.0;
  return collective::bus_factor(op, ranks);
}

// The op of a test binary name: "all_reduce_perf", "all_gather_perf_mpi", "./build/x_perf".
std::optional<Op> op_of_test(std::string_view program) {
  const auto slash = program.rfind('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  if (program.size() > 4 && program.substr(program.size() - 4) == "_mpi") {
    program.remove_suffix(4);
  }
  if (program.size() > 5 && program.substr(program.size() - 5) == "_perf") {
    program.remove_suffix(5);
  }
  for (const auto& [name, op] : kTests) {
    if (name == program) return op;
  }
  return std::nullopt;
}

// "2.26.2" of "2.26.2+cuda12.8"; nullopt unless it reads as dot-separated numbers.
std::optional<std::string> version_of(std::string_view token) {
  token = token.substr(0, token.find('+'));
  std::size_t parts = 0;
  std::size_t start = 0;
  while (true) {
    const auto dot = token.find('.', start);
    if (!all_digits(token.substr(start, dot - start))) return std::nullopt;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts < 2) return std::nullopt;
  return std::string(token);
}

// NCCL_VERSION_CODE: X*10000 + Y*100 + Z from 2.9 on, X*1000 + Y*100 + Z before.
std::string version_of_code(std::int64_t code) {
  if (code >= 20900) {
    return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
           std::to_string(code % 100);
  }
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 100) + "." +
         std::to_string(code % 100);
}

// ---------------------------------------------------------------------------------------------
// Launcher prefixes

enum class Prefix {
  None,
  Srun,       // srun -l / --label: " 0: "
  Rank,       // "[0]", which some launchers also inject inside a line (nccl#1453)
  TagOutput,  // Open MPI --tag-output: "[1,0]<stdout>:"
};

// The length of a `kind` tag at the start of `s`, or npos.
std::size_t tag_length(std::string_view s, Prefix kind) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i > start;
  };
  const auto literal = [&](std::string_view lit) {
    if (s.substr(i, lit.size()) != lit) return false;
    i += lit.size();
    return true;
  };
  switch (kind) {
    case Prefix::None:
      return 0;
    case Prefix::Srun:
      while (i < s.size() && is_blank(s[i])) ++i;
      if (!digits() || !literal(":")) return std::string_view::npos;
      return (i == s.size() || is_blank(s[i])) ? i : std::string_view::npos;
    case Prefix::Rank:
      return (literal("[") && digits() && literal("]")) ? i : std::string_view::npos;
    case Prefix::TagOutput:
      if (!literal("[") || !digits() || !literal(",") || !digits() || !literal("]<")) {
        return std::string_view::npos;
      }
      if (!literal("stdout") && !literal("stderr")) return std::string_view::npos;
      return literal(">:") ? i : std::string_view::npos;
  }
  return std::string_view::npos;
}

// The prefix the log uses, decided by its first comment line (every nccl-tests log has some):
// the kind whose removal leaves a line that starts with '#'.
Prefix detect_prefix(const std::vector<std::string_view>& lines) {
  for (const auto line : lines) {
    if (ltrim(line).starts_with('#')) return Prefix::None;
    for (const Prefix kind : {Prefix::TagOutput, Prefix::Rank, Prefix::Srun}) {
      const auto n = tag_length(line, kind);
      if (n != std::string_view::npos && ltrim(line.substr(n)).starts_with('#')) return kind;
    }
  }
  return Prefix::None;
}

std::string strip_prefix(std::string_view line, Prefix kind) {
  if (kind == Prefix::None) return std::string(line);
  const auto n = tag_length(line, kind);
  std::string out(n == std::string_view::npos ? line : line.substr(n));
  if (kind == Prefix::Rank || kind == Prefix::TagOutput) {
    // Bracket tags may also sit inside a line, where another process's output was spliced in.
    for (auto at = out.find('['); at != std::string::npos; at = out.find('[', at)) {
      const auto len = tag_length(std::string_view(out).substr(at), kind);
      if (len == std::string_view::npos) {
        ++at;
      } else {
        out.replace(at, len, 1, ' ');
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The parser

// The table's columns, learned from its "#  size count type ..." line.
struct Layout {
  bool has_redop = true;
  bool has_root = true;
  bool error_column = false;  // nccl-tests <= 2.11: `error` (max delta) instead of #wrong

  [[nodiscard]] std::size_t columns() const {
    return 3U + (has_redop ? 1U : 0U) + (has_root ? 1U : 0U) + 8U;
  }
  [[nodiscard]] std::string names() const {
    std::string out = "size count type";
    if (has_redop) out += " redop";
    if (has_root) out += " root";
    const std::string half = error_column ? " time algbw busbw error" : " time algbw busbw #wrong";
    return out + half + half;
  }
};

// A row as read, with what the op checks need beyond NcclTestsRow.
struct RawRow {
  NcclTestsRow row;
  std::int64_t size = 0;
  bool has_redop = true;
  bool has_root = true;
  std::int64_t element_bytes = 0;
  std::array<Cell, 2> time;   // [0] out-of-place, [1] in-place; microseconds
  std::array<Cell, 2> algbw;  // GB/s
  std::array<Cell, 2> busbw;  // GB/s
};

constexpr std::array<std::string_view, 2> kHalves = {"out-of-place", "in-place"};

class LogParser {
 public:
  LogParser(std::string source, std::optional<Op> claimed)
      : source_(std::move(source)), claimed_(claimed) {}

  NcclTestsLog parse(std::string_view text);

 private:
  [[noreturn]] void fail(int line, const std::string& problem) const {
    throw ConfigError(source_, line > 0 ? "line " + std::to_string(line) : "", problem);
  }
  // The log contradicts the op it was claimed to be.
  [[noreturn]] void fail_claim(int line, const std::string& problem) const {
    throw ClaimedOpError(source_, line > 0 ? "line " + std::to_string(line) : "", problem);
  }

  void read_line(std::string_view line, int number);
  void read_comment(std::string_view body, int line);
  void read_test_name(const std::vector<std::string_view>& t, int line);
  void read_nthread_line(const std::vector<std::string_view>& t, int line);
  void read_rank_line(const std::vector<std::string_view>& t, std::string_view body, int line);
  void read_column_header(const std::vector<std::string_view>& t, int line);
  void read_units_line(const std::vector<std::string_view>& t, int line);
  void read_footer(const std::vector<std::string_view>& t, int line);
  void read_row(const std::vector<std::string_view>& t, int line);
  [[nodiscard]] Cell number_cell(std::string_view token, const std::string& what, int line) const;

  [[nodiscard]] const RawRow& reference_row() const;
  [[nodiscard]] std::optional<std::string> ratio_problem(Op op, const RawRow& r) const;
  [[nodiscard]] std::optional<std::string> count_problem(Op op, const RawRow& r) const;
  [[nodiscard]] std::optional<std::string> redop_problem(Op op, const RawRow& r) const;
  [[nodiscard]] std::optional<std::string> root_problem(Op op, const RawRow& r) const;
  [[nodiscard]] std::optional<std::string> fit_problem(Op op, const RawRow& r) const;
  [[nodiscard]] Op decide_op() const;
  // The other ops the table fits as well as the one inferred (decide_op), without a test line,
  // a claim or a file name to tell them apart.
  mutable std::vector<Op> also_fits_;
  void check_rows(Op op) const;

  std::string source_;
  std::optional<Op> claimed_;

  Layout layout_;
  bool seen_column_header_ = false;
  std::vector<RawRow> rows_;
  std::int64_t last_size_ = 0;
  int last_size_line_ = 0;

  std::optional<Op> test_op_;
  int test_op_line_ = 0;
  std::string test_name_;

  std::map<std::int64_t, int> rank_lines_;  // rank -> line
  std::map<std::int64_t, std::string> devices_;
  std::map<std::string, std::int64_t> hosts_;  // host -> ranks listed on it

  std::optional<std::string> nccl_version_;
  std::optional<std::string> library_version_;  // from "# nccl-tests version ... nccl-library="
  std::optional<std::int64_t> warmup_iters_;
  std::optional<std::int64_t> iters_;
  std::optional<bool> validation_;

  bool has_footer_ = false;
  double busbw_sum_ = 0.0;  // over the rows since the last footer, both halves
  double busbw_rounding_ = 0.0;
  int busbw_cells_ = 0;
  std::vector<std::pair<int, std::string>> footer_problems_;  // (line, problem)
};

NcclTestsLog LogParser::parse(std::string_view text) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    fail(static_cast<int>(line),
         "binary data (a NUL byte); expected the text output of an nccl-tests binary");
  }
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  // Host names, labels and comments may reach JSON outputs, which hold UTF-8 only.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!is_valid_utf8(lines[i])) {
      fail(static_cast<int>(i + 1),
           "not valid UTF-8 text; expected the text output of an nccl-tests binary");
    }
  }
  const Prefix prefix = detect_prefix(lines);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    read_line(strip_prefix(lines[i], prefix), static_cast<int>(i + 1));
  }

  const bool any_sized =
      std::any_of(rows_.begin(), rows_.end(), [](const RawRow& r) { return r.size > 0; });
  if (!any_sized) {
    fail(static_cast<int>(lines.size()),
         std::string("no nccl-tests table rows") + (rows_.empty() ? "" : " with a size above 0") +
             "; expected rows like '1048576  262144  float  sum  -1  28.15  37.25  65.19  0  "
             "27.52  38.10  66.67  0' under a '#  size  count  type ...' header, got none");
  }

  const Op op = decide_op();
  check_rows(op);
  if (!footer_problems_.empty()) {
    fail(footer_problems_.front().first, footer_problems_.front().second);
  }

  NcclTestsLog log;
  log.source = source_;
  log.op = op;
  log.also_fits = also_fits_;
  if (!rank_lines_.empty()) {
    log.ranks = static_cast<std::int64_t>(rank_lines_.size());
    log.nodes = static_cast<std::int64_t>(hosts_.size());
    std::int64_t fewest = 0;
    std::int64_t most = 0;
    for (const auto& [host, count] : hosts_) {
      fewest = fewest == 0 ? count : std::min(fewest, count);
      most = std::max(most, count);
    }
    log.fewest_ranks_per_host = fewest;
    log.most_ranks_per_host = most;
    for (const auto& [rank, device] : devices_) log.devices.push_back(device);
  }
  log.nccl_version = nccl_version_ ? nccl_version_ : library_version_;
  log.warmup_iters = warmup_iters_;
  log.iters = iters_;
  log.validation = validation_;
  for (const auto& r : rows_) {
    if (r.size > 0) log.rows.push_back(r.row);
    // check_rows() has checked the count against the size (and the rank lines, if any); without
    // rank lines each row is checked on its own n, so the rows must agree on it here.
    if (counts_per_rank(op) && r.size > 0 && r.row.count > 0) {
      const std::int64_t n = r.size / r.element_bytes / r.row.count;
      if (log.ranks_from_count && *log.ranks_from_count != n) {
        fail(r.row.line, "count: size / element bytes / count gives " + std::to_string(n) +
                             " ranks, line " + std::to_string(log.ranks_from_count_line) +
                             " gives " + std::to_string(*log.ranks_from_count) +
                             "; expected the rows of one run, on one number of ranks");
      }
      log.ranks_from_count = n;
      log.ranks_from_count_line = r.row.line;
    }
  }
  log.has_footer = has_footer_;
  return log;
}

void LogParser::read_line(std::string_view line, int number) {
  if (const auto at = line.find("NCCL version "); at != std::string_view::npos && !nccl_version_) {
    const auto tokens = split_tokens(line.substr(at + 13));
    if (!tokens.empty()) nccl_version_ = version_of(tokens.front());
  }
  // NCCL's own log lines ("host:pid:tid [0] NCCL INFO ...") may start with a numeric host name.
  for (const std::string_view level : {" NCCL INFO ", " NCCL WARN ", " NCCL TRACE "}) {
    if (line.find(level) != std::string_view::npos) return;
  }
  const auto trimmed = ltrim(line);
  if (trimmed.empty()) return;
  if (trimmed.front() == '#') {
    read_comment(trimmed.substr(1), number);
    return;
  }
  const auto tokens = split_tokens(trimmed);
  // Anything else that does not start like a row is launcher or MPI chatter; under a table's
  // header a line starting with any number is a row, so a size such as 1e20 is named on its
  // line rather than the table ending with no rows, and so is a line of the table's columns
  // whose size only starts like a number ('4194304x', '4M', '4,194,304'): such a row was
  // dropped without a word, and the fit ran on the rest.
  const std::string_view front = tokens.front();
  const bool starts_like_number =
      is_digit(front.front()) ||
      (front.size() > 1 && (front.front() == '-' || front.front() == '+') && is_digit(front[1]));
  const bool in_table = seen_column_header_ && !has_footer_;
  if (is_integer_token(front) ||
      (in_table &&
       (parse_double(front) || (starts_like_number && tokens.size() == layout_.columns())))) {
    read_row(tokens, number);
  }
}

void LogParser::read_comment(std::string_view body, int line) {
  const auto t = split_tokens(body);
  if (t.empty()) return;
  if (t[0] == "Collective" && t.size() >= 3 && t[1] == "test") {
    read_test_name(t, line);
  } else if (t[0] == "nThread") {
    read_nthread_line(t, line);
  } else if (t[0] == "Rank") {
    read_rank_line(t, body, line);
  } else if (t[0] == "size" && t.size() >= 2 && t[1] == "count") {
    read_column_header(t, line);
  } else if (t[0] == "(B)") {
    read_units_line(t, line);
  } else if (t.size() >= 3 && t[0] == "Avg" && t[1] == "bus" && t[2] == "bandwidth") {
    read_footer(t, line);
  } else if (t[0] == "nccl-tests" && t.size() >= 2 && t[1] == "version") {
    for (const auto token : t) {
      if (!token.starts_with("nccl-library=")) continue;
      const auto code = parse_int(token.substr(13));
      if (code && *code > 0) library_version_ = version_of_code(*code);
    }
  }
}

void LogParser::read_test_name(const std::vector<std::string_view>& t, int line) {
  if (t[2] != "starting:" && t[2] != "concluded:") return;
  if (t.size() != 4) {
    fail(line, "malformed test line; expected '# Collective test " + std::string(t[2]) +
                   " all_reduce_perf', got '# " + quote(join(t), 80) + "'");
  }
  const auto op = op_of_test(t[3]);
  if (!op) {
    std::string names;
    for (const auto& [name, o] : kTests) {
      if (!names.empty()) names += ", ";
      names += name;
    }
    fail(line, "unsupported nccl-tests binary; expected one of " + names + " (with _perf), got " +
                   quote(t[3]));
  }
  if (test_op_ && *test_op_ != *op) {
    fail(line, "the log names two tests; expected " + test_name_ + " (line " +
                   std::to_string(test_op_line_) + ") again, got " + quote(t[3]));
  }
  if (!test_op_) {
    test_op_ = op;
    test_op_line_ = line;
    test_name_ = std::string(t[3]);
  }
}

void LogParser::read_nthread_line(const std::vector<std::string_view>& t, int line) {
  const auto value = [&](std::size_t j, const std::string& key, std::int64_t min) {
    const auto v = j + 1 < t.size() ? parse_int(t[j + 1]) : std::nullopt;
    if (!v || *v < min) {
      fail(line, "# nThread line: " + key + " expected an integer >= " + std::to_string(min) +
                     ", got " + (j + 1 < t.size() ? quote(t[j + 1]) : "nothing"));
    }
    return *v;
  };
  for (std::size_t j = 0; j < t.size(); ++j) {
    if (t[j] == "iters:") {
      const std::string_view before = j > 0 ? t[j - 1] : "";
      if (before == "warmup") {
        warmup_iters_ = value(j, "warmup iters:", 0);
      } else if (before != "agg") {
        iters_ = value(j, "iters:", 1);
      }
    } else if (t[j] == "validation:") {
      validation_ = value(j, "validation:", 0) != 0;
    }
  }
}

void LogParser::read_rank_line(const std::vector<std::string_view>& t, std::string_view body,
                               int line) {
  // "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" (>= 2.13);
  // "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s" (<= 2.11, no Group).
  const auto malformed = [&] {
    return ConfigError(source_, "line " + std::to_string(line),
                       "malformed rank line; expected '#  Rank  0 Group  0 Pid  1234 on host "
                       "device  0 [0000:18:00] NVIDIA H100 80GB HBM3', got '#" +
                           quote(body, 100) + "'");
  };
  std::size_t i = 1;
  const auto integer = [&]() -> std::int64_t {
    const auto v = i < t.size() ? parse_int(t[i]) : std::nullopt;
    if (!v || *v < 0) throw malformed();
    ++i;
    return *v;
  };
  const auto word = [&](std::string_view expected) {
    if (i >= t.size() || t[i] != expected) throw malformed();
    ++i;
  };
  const std::int64_t rank = integer();
  if (i < t.size() && t[i] == "Group") {
    ++i;
    (void)integer();
  }
  word("Pid");
  (void)integer();
  word("on");
  if (i >= t.size()) throw malformed();
  const std::string host(t[i++]);
  word("device");
  (void)integer();
  if (i >= t.size() || !t[i].starts_with('[') || !t[i].ends_with(']')) throw malformed();
  ++i;
  if (i >= t.size()) throw malformed();
  std::vector<std::string_view> name(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());

  if (const auto seen = rank_lines_.find(rank); seen != rank_lines_.end()) {
    fail(line, "rank " + std::to_string(rank) + " is listed twice (also at line " +
                   std::to_string(seen->second) +
                   "); expected each rank once, got a repeat: several 1-rank jobs ran (an "
                   "nccl-tests binary built without MPI under mpirun?) or two logs were joined");
  }
  rank_lines_[rank] = line;
  devices_[rank] = join(name);
  ++hosts_[host];
}

void LogParser::read_column_header(const std::vector<std::string_view>& t, int line) {
  Layout layout;
  std::size_t i = 3;
  bool ok = t.size() > 3 && t[2] == "type";
  layout.has_redop = ok && i < t.size() && t[i] == "redop";
  if (layout.has_redop) ++i;
  layout.has_root = ok && i < t.size() && t[i] == "root";
  if (layout.has_root) ++i;
  ok = ok && t.size() == i + 8;
  if (ok) {
    layout.error_column = t[i + 3] == "error";
    const std::string_view wrong = layout.error_column ? "error" : "#wrong";
    for (std::size_t half = 0; half < 2; ++half) {
      const std::size_t at = i + 4 * half;
      ok = ok && t[at] == "time" && t[at + 1] == "algbw" && t[at + 2] == "busbw" &&
           t[at + 3] == wrong;
    }
  }
  if (!ok) {
    fail(line,
         "unsupported table columns (nccl-tests -C cputime, -I per-iteration and -S "
         "timestamp columns are not read); expected 'size count type [redop] [root] time "
         "algbw busbw #wrong time algbw busbw #wrong', got '" +
             quote(join(t), 160) + "'");
  }
  layout_ = layout;
  seen_column_header_ = true;
}

void LogParser::read_units_line(const std::vector<std::string_view>& t, int line) {
  // "#  (B)  (elements)  (us)  (GB/s)  (GB/s)  (us)  (GB/s)  (GB/s)" under the column names:
  // the rows are read in those units, so a log that says otherwise is refused, not misread.
  for (std::size_t i = 2; i < t.size(); ++i) {
    const std::string_view expected = (i - 2) % 3 == 0 ? "(us)" : "(GB/s)";
    if (t[i] != expected) {
      fail(line, "unsupported unit '" + quote(t[i]) + "'" +
                     " in the column header; expected times in (us) and bandwidths in (GB/s), "
                     "as nccl-tests prints them");
    }
  }
}

void LogParser::read_footer(const std::vector<std::string_view>& t, int line) {
  // "# Avg bus bandwidth    : 232.167", then OK or FAILED when a minimum was asked for.
  has_footer_ = true;
  if (busbw_cells_ == 0) return;  // nothing to average (nccl-tests prints nan here)
  const std::size_t at = t.size() > 4 && t[3] == ":" ? 4 : t.size();
  const auto avg = at < t.size() ? parse_double(t[at]) : std::nullopt;
  if (!avg) {
    fail(line, "Avg bus bandwidth: expected a number of GB/s, got " +
                   (at < t.size() ? quote(t[at]) : std::string("nothing")));
  }
  // nccl-tests prints the mean of every busbw of the run, both halves, unrounded (src/common.cu);
  // the printed cells are each within their rounding of it. Checked after the rows, whose own
  // errors say more.
  const double mean = busbw_sum_ / busbw_cells_;
  const double slack = busbw_rounding_ + print_half_ulp(t[at]) + 1e-4 * std::abs(mean);
  if (std::abs(*avg - mean) > slack) {
    footer_problems_.emplace_back(
        line, "Avg bus bandwidth is not the mean of the busbw columns above; expected " +
                  fixed2(mean) + " GB/s, got " + quote(t[at]) +
                  " (rows missing or edited? a log must keep its whole table)");
  }
  busbw_sum_ = 0.0;
  busbw_rounding_ = 0.0;
  busbw_cells_ = 0;
}

Cell LogParser::number_cell(std::string_view token, const std::string& what, int line) const {
  const auto v = parse_double(token);
  if (!v || *v < 0.0) fail(line, what + ": expected a number >= 0, got " + quote(token));
  return Cell{*v, print_half_ulp(token), std::string(token)};
}

void LogParser::read_row(const std::vector<std::string_view>& t, int line) {
  if (t.size() != layout_.columns()) {
    std::string problem = "malformed table row; expected " + std::to_string(layout_.columns()) +
                          " columns (" + layout_.names() + "), got " + std::to_string(t.size());
    if (!seen_column_header_ && rows_.empty()) {
      problem +=
          " (no '#  size  count  type ...' header came before it: is this nccl-tests "
          "output?)";
    }
    fail(line, problem);
  }
  RawRow r;
  r.row.line = line;
  r.has_redop = layout_.has_redop;
  r.has_root = layout_.has_root;
  std::size_t i = 0;
  const auto integer = [&](const std::string& what, std::int64_t min) {
    const auto v = parse_int(t[i]);
    if (!v || *v < min) {
      fail(line, what + ": expected an integer >= " + std::to_string(min) + ", got " + quote(t[i]));
    }
    ++i;
    return *v;
  };
  r.size = integer("size (B)", 0);
  r.row.count = integer("count (elements)", 0);
  const auto elt = element_bytes(t[i]);
  if (!elt) fail(line, "type: expected one of " + type_names() + ", got " + quote(t[i]));
  r.element_bytes = *elt;
  r.row.type = std::string(t[i++]);
  if (layout_.has_redop) {
    if (std::find(kRedops.begin(), kRedops.end(), t[i]) == kRedops.end()) {
      fail(line, "redop: expected one of " + list_names(kRedops) + ", got " + quote(t[i]));
    }
    r.row.redop = std::string(t[i++]);
  }
  r.row.root = layout_.has_root ? integer("root", -1) : -1;

  std::array<std::optional<std::int64_t>, 2> wrong;
  for (std::size_t h = 0; h < 2; ++h) {
    const std::string half(kHalves[h]);
    const auto time = parse_double(t[i]);
    // nccl-tests prints times with at most two decimals (src/common.cu), so a printed time
    // above 0 is at least 0.01 us.
    if (!time || *time < 0.01) {
      fail(line, half + " time: expected a number of microseconds >= 0.01, got " + quote(t[i]));
    }
    r.time[h] = Cell{*time, print_half_ulp(t[i]), std::string(t[i])};
    ++i;
    r.algbw[h] = number_cell(t[i++], half + " algbw", line);
    r.busbw[h] = number_cell(t[i++], half + " busbw", line);
    if (t[i] != "N/A") {
      const std::string what = half + (layout_.error_column ? " error" : " #wrong");
      const Cell cell = number_cell(t[i], what, line);
      // #wrong is a count, printed with %6g (so 1e+06 is possible); error is a max delta.
      if (!layout_.error_column) {
        if (cell.value != std::floor(cell.value) || cell.value > 9e18) {
          fail(line, what + ": expected a count of wrong elements, got " + quote(t[i]));
        }
        wrong[h] = static_cast<std::int64_t>(cell.value);
      }
    }
    ++i;
  }

  // algbw = size / time (src/*.cu GetBw), both printed rounded.
  for (std::size_t h = 0; h < 2; ++h) {
    const double expected = static_cast<double>(r.size) / r.time[h].value / 1e3;  // GB/s
    const double uncertainty = expected * r.time[h].half_ulp / r.time[h].value;
    if (!close(r.algbw[h], expected, uncertainty)) {
      fail(line, std::string(kHalves[h]) + " algbw: expected size/time = " +
                     std::to_string(r.size) + " B / " + r.time[h].text +
                     " us = " + fixed2(expected) + " GB/s, got " + r.algbw[h].text);
    }
  }

  if (r.size > 0) {
    if (last_size_line_ > 0 && r.size <= last_size_) {
      fail(line, "sizes out of order; expected a size above " + std::to_string(last_size_) +
                     " (line " + std::to_string(last_size_line_) + "), got " +
                     std::to_string(r.size) +
                     ": one log must hold one sweep (-d all, -o all, -r -1 and -N > 1 print "
                     "several; split them into one file each)");
    }
    last_size_ = r.size;
    last_size_line_ = line;
  }
  for (std::size_t h = 0; h < 2; ++h) {
    busbw_sum_ += r.busbw[h].value;
    busbw_rounding_ = std::max(busbw_rounding_, r.busbw[h].half_ulp);
    ++busbw_cells_;
  }

  r.row.size = Bytes(static_cast<double>(r.size));
  r.row.time_out_of_place = Seconds(r.time[0].value * 1e-6);
  r.row.time_in_place = Seconds(r.time[1].value * 1e-6);
  r.row.algbw_out_of_place = BytesPerSecond(r.algbw[0].value * 1e9);
  r.row.algbw_in_place = BytesPerSecond(r.algbw[1].value * 1e9);
  r.row.busbw_out_of_place = BytesPerSecond(r.busbw[0].value * 1e9);
  r.row.busbw_in_place = BytesPerSecond(r.busbw[1].value * 1e9);
  r.row.bandwidth_half_ulp =
      BytesPerSecond(std::max(r.algbw[0].half_ulp, r.busbw[0].half_ulp) * 1e9);
  r.row.wrong_out_of_place = wrong[0];
  r.row.wrong_in_place = wrong[1];
  rows_.push_back(std::move(r));
}

// The row whose busbw/algbw is read most precisely: the largest out-of-place algbw.
const RawRow& LogParser::reference_row() const {
  const RawRow* best = &rows_.front();
  for (const auto& r : rows_) {
    if (r.algbw[0].value >= best->algbw[0].value) best = &r;
  }
  return *best;
}

std::optional<std::string> LogParser::ratio_problem(Op op, const RawRow& r) const {
  const Cell& a = r.algbw[0];
  const Cell& b = r.busbw[0];
  if (a.value <= 0.0) return std::nullopt;  // all rows print 0.00: nothing to compare
  const std::string ratio = short_number(b.value / a.value);
  const auto fits = [&](double f) { return close(b, a.value * f, a.half_ulp * f); };
  const std::string formula(factor_formula(op));
  if (rank_lines_.empty()) {
    // Any n >= 1 may have run: 2(n-1)/n spans {0} and [1, 2), (n-1)/n {0} and [0.5, 1).
    const double ratio_value = b.value / a.value;
    bool ok = false;
    std::string range;
    if (factor_is_one(op)) {
      ok = fits(1.0);
      range = "1";
    } else {
      const double lo = op == Op::AllReduce ? 1.0 : 0.5;
      const double hi = op == Op::AllReduce ? 2.0 : 1.0;
      ok = fits(0.0) || fits(std::clamp(ratio_value, lo, hi));
      range = formula + ", in [" + short_number(lo) + ", " + short_number(hi) + ") for n >= 2";
    }
    if (ok) return std::nullopt;
    return "busbw/algbw is " + ratio + "; expected the ratio of " + op_name(op) + ", " + range +
           ", got " + ratio;
  }
  const auto n = static_cast<std::int64_t>(rank_lines_.size());
  const double f = printed_factor(op, n);
  if (fits(f)) return std::nullopt;
  std::string seen = "busbw/algbw is " + ratio;
  for (const Op other : kInferenceOrder) {
    if (other != op && fits(printed_factor(other, n))) {
      seen += " = " + std::string(factor_formula(other)) + " of " + op_name(other) + " on " +
              std::to_string(n) + " ranks";
      break;
    }
  }
  return seen + "; expected the ratio of " + op_name(op) + ", " + formula + " = " +
         short_number(f) + " on " + std::to_string(n) + " ranks, got " + ratio;
}

std::optional<std::string> LogParser::count_problem(Op op, const RawRow& r) const {
  const std::int64_t elt = r.element_bytes;
  const std::string per = " (" + r.row.type + " is " + std::to_string(elt) + " B)";
  if (r.size % elt != 0) {
    return "size: expected a whole number of " + r.row.type + " elements" + per + ", got " +
           std::to_string(r.size) + " B";
  }
  const std::int64_t elements = r.size / elt;
  const std::int64_t count = r.row.count;
  if (!counts_per_rank(op)) {
    if (count == elements) return std::nullopt;
    return "count: expected size/" + std::to_string(elt) + " = " + std::to_string(elements) +
           " elements for " + op_name(op) + per + ", got " + std::to_string(count);
  }
  if (!rank_lines_.empty()) {
    const auto n = static_cast<std::int64_t>(rank_lines_.size());
    if (elements % n == 0 && count == elements / n) return std::nullopt;
    return "count: expected size/" + std::to_string(elt) + "/" + std::to_string(n) +
           " elements per rank for " + op_name(op) + " on " + std::to_string(n) + " ranks" + per +
           ", got " + std::to_string(count);
  }
  if (count > 0 ? elements % count == 0 : elements == 0) return std::nullopt;
  return "count: expected size/" + std::to_string(elt) + "/n elements per rank for " + op_name(op) +
         " on some number of ranks n" + per + ", got " + std::to_string(count) + " for " +
         std::to_string(elements) + " elements";
}

std::optional<std::string> LogParser::redop_problem(Op op, const RawRow& r) const {
  if (!r.has_redop) return std::nullopt;
  if (reduces(op) && r.row.redop == "none") {
    return "redop: expected a reduction (sum, prod, max, min, avg, mulsum) for " + op_name(op) +
           ", got none";
  }
  if (prints_no_redop(op) && r.row.redop != "none") {
    return "redop: expected none for " + op_name(op) + ", got " + r.row.redop;
  }
  return std::nullopt;
}

std::optional<std::string> LogParser::root_problem(Op op, const RawRow& r) const {
  if (!r.has_root) return std::nullopt;
  const std::int64_t root = r.row.root;
  if (!is_rooted(op)) {
    if (root == -1) return std::nullopt;
    return "root: expected -1 (no root) for " + op_name(op) + ", got " + std::to_string(root);
  }
  if (root < 0) {
    return "root: expected a root rank >= 0 for " + op_name(op) + ", got " + std::to_string(root);
  }
  const auto n = static_cast<std::int64_t>(rank_lines_.size());
  if (n > 0 && root >= n) {
    return "root: expected a rank below " + std::to_string(n) + ", got " + std::to_string(root);
  }
  return std::nullopt;
}

// The first way `r` contradicts `op`: busbw/algbw, count, redop, root.
std::optional<std::string> LogParser::fit_problem(Op op, const RawRow& r) const {
  if (auto p = ratio_problem(op, r)) return p;
  if (auto p = count_problem(op, r)) return p;
  if (auto p = redop_problem(op, r)) return p;
  return root_problem(op, r);
}

Op LogParser::decide_op() const {
  const RawRow& ref = reference_row();
  if (test_op_) {
    if (claimed_ && *claimed_ != *test_op_) {
      fail_claim(test_op_line_, "the log is " + test_name_ + "; expected " + op_name(*claimed_) +
                                    " (the claimed op), got " + op_name(*test_op_));
    }
    if (const auto p = fit_problem(*test_op_, ref)) {
      fail(ref.row.line, "the table does not fit " + test_name_ + " (line " +
                             std::to_string(test_op_line_) + "): " + *p);
    }
    return *test_op_;
  }
  if (claimed_) {
    if (const auto p = fit_problem(*claimed_, ref)) {
      fail_claim(ref.row.line,
                 "the claimed op " + op_name(*claimed_) + " does not fit the table: " + *p);
    }
    return *claimed_;
  }
  std::vector<Op> fitting;
  for (const Op op : kInferenceOrder) {
    if (!fit_problem(op, ref)) fitting.push_back(op);
  }
  if (fitting.size() > 1) {
    // A file named for one of the ops that fit, and for no other of them ("alltoall.txt",
    // "x-all_gather.log"), is that one, and nothing is left to say; a name that spells two
    // ("all_gather_vs_alltoall.txt") decides nothing.
    const std::string name = std::filesystem::path(source_).filename().string();
    std::vector<Op> named;
    for (const Op op : fitting) {
      const auto test = std::find_if(kTests.begin(), kTests.end(),
                                     [op](const auto& t) { return t.second == op; });
      if (name.find(test->first) != std::string::npos ||
          name.find(op_name(op)) != std::string::npos) {
        named.push_back(op);
      }
    }
    if (named.size() == 1) return named.front();
    also_fits_.assign(fitting.begin() + 1, fitting.end());
  }
  if (!fitting.empty()) return fitting.front();
  std::string names;
  for (const Op op : kInferenceOrder) {
    if (!names.empty()) names += ", ";
    names += op_name(op);
  }
  const std::string ratio =
      ref.algbw[0].value > 0 ? short_number(ref.busbw[0].value / ref.algbw[0].value) : "unknown";
  fail(ref.row.line,
       "cannot tell which collective this table measured (no '# Collective test starting:' "
       "line); expected the columns of one of " +
           names + ", got busbw/algbw " + ratio + ", redop " +
           (ref.has_redop ? ref.row.redop : "(no column)") + ", root " +
           (ref.has_root ? std::to_string(ref.row.root) : "(no column)") + ", count " +
           std::to_string(ref.row.count) + " for " + std::to_string(ref.size) + " B of " +
           ref.row.type + "; say the op");
}

void LogParser::check_rows(Op op) const {
  // busbw = algbw x factor (src/*.cu GetBw). The factor needs n: the rank lines', else the
  // count column's for per-rank ops, else (all_reduce) the ratio of the reference row.
  const RawRow& ref = reference_row();
  std::optional<double> ref_ratio;
  if (ref.algbw[0].value > 0.0 && ref.busbw[0].value > 0.0) {
    const double ratio = ref.busbw[0].value / ref.algbw[0].value;
    const double spread =
        ref.busbw[0].half_ulp / ref.busbw[0].value + ref.algbw[0].half_ulp / ref.algbw[0].value;
    if (spread < 0.005) ref_ratio = ratio;
  }
  // The first row of the reduction most rows give (of the rows that print one).
  std::map<std::string, int> redops;
  const RawRow* usual = nullptr;
  for (const auto& r : rows_) {
    if (r.has_redop) ++redops[r.row.redop];
  }
  for (const auto& r : rows_) {
    if (r.has_redop && (usual == nullptr || redops[r.row.redop] > redops[usual->row.redop])) {
      usual = &r;
    }
  }
  for (const auto& r : rows_) {
    if (auto p = count_problem(op, r)) fail(r.row.line, *p);
    if (auto p = redop_problem(op, r)) fail(r.row.line, *p);
    // One run of a test reduces with one operation (-o; "-o all", several sweeps, is refused
    // where the sizes restart): another on one row is an edited or spliced table. The odd row
    // is the one named: against the operation most rows give (the first of them on a tie).
    if (r.has_redop && usual != nullptr && r.row.redop != usual->row.redop) {
      fail(r.row.line, "redop: expected " + usual->row.redop + " as on line " +
                           std::to_string(usual->row.line) +
                           " (one run reduces with one operation), got " + r.row.redop);
    }
    if (auto p = root_problem(op, r)) fail(r.row.line, *p);

    std::optional<double> factor;
    std::string why;
    if (!rank_lines_.empty()) {
      const auto n = static_cast<std::int64_t>(rank_lines_.size());
      factor = printed_factor(op, n);
      why = std::string(factor_formula(op)) + " of " + op_name(op) + " on " + std::to_string(n) +
            " ranks";
    } else if (factor_is_one(op)) {
      factor = 1.0;
      why = "1 of " + op_name(op);
    } else if (counts_per_rank(op) && r.row.count > 0) {
      const std::int64_t n = r.size / r.element_bytes / r.row.count;
      factor = printed_factor(op, n);
      why = std::string(factor_formula(op)) + " of " + op_name(op) +
            " with n = " + std::to_string(n) + " from the count";
    } else if (ref_ratio) {
      factor = *ref_ratio;
      why = "the busbw/algbw of line " + std::to_string(ref.row.line);
    }
    if (!factor) continue;
    for (std::size_t h = 0; h < 2; ++h) {
      const double expected = r.algbw[h].value * *factor;
      if (close(r.busbw[h], expected, r.algbw[h].half_ulp * *factor)) continue;
      fail(r.row.line, std::string(kHalves[h]) + " busbw: expected algbw x " + why + " = " +
                           r.algbw[h].text + " x " + short_number(*factor) + " = " +
                           fixed2(expected) + " GB/s, got " + r.busbw[h].text);
    }
  }
}

}  // namespace

calibrate::NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& source,
                                         std::optional<collective::Op> claimed_op) {
  return LogParser(source, claimed_op).parse(text);
}

std::string read_nccl_tests_text(const std::string& path) {
  // Bounded, chunk by chunk: /dev/zero is refused at its first NUL byte, a huge file or a pipe
  // that never ends after 64 MiB, a named pipe nobody writes to at once.
  std::string text;
  try {
    text = read_text_file(path, kMaxLogBytes, "an nccl-tests log",
                          [&path](std::string_view part, std::size_t) {
                            if (part.find('\0') != std::string_view::npos) {
                              throw ConfigError(path, "",
                                                "binary data (a NUL byte); expected the text "
                                                "output of an nccl-tests binary");
                            }
                          });
  } catch (const ConfigError& e) {
    if (e.problem().rfind("is a directory", 0) == 0) {
      throw ConfigError(path, "", "cannot read: it is a directory; expected an nccl-tests log");
    }
    if (e.problem().rfind("cannot open", 0) == 0)
      throw ConfigError(path, "", "cannot open the file; expected a readable nccl-tests log");
    throw;
  }
  return text;
}

calibrate::NcclTestsLog read_nccl_tests_file(const std::string& path,
                                             std::optional<collective::Op> claimed_op) {
  return parse_nccl_tests(read_nccl_tests_text(path), path, claimed_op);
}

}  // namespace trainsim::io
