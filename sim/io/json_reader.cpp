#include "sim/io/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_set>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/io/spellcheck.hpp"

namespace trainsim::io {
namespace {

// JSON pointer escaping (RFC 6901): "~" -> "~0", "/" -> "~1".
std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

const char* type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

}  // namespace

std::string pointer_token(const std::string& key) {
  // Appends rather than `"/" + ...`, which trips g++ 12's false -Wrestrict at -O3.
  std::string out(1, '/');
  out.append(escape_pointer_token(key));
  return out;
}

std::string describe_json(const nlohmann::json& value) {
  // Replacement characters for invalid UTF-8 (a string set from the command line): a message
  // must not throw.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) {
    // Cut before a UTF-8 continuation byte never: back up to the start of a character.
    std::size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
    text = text.substr(0, cut) + "...";
  }
  if (value.is_object() || value.is_array()) return std::string(type_name(value)) + " " + text;
  return text;
}

namespace {

// A pass over nlohmann's SAX events that throws on the second occurrence of a key in one object,
// which nlohmann's parse would otherwise resolve silently by keeping the last value (RFC 8259
// §4: names "SHOULD be unique", and receivers differ on duplicates). It builds no document, so
// it costs one more lexing of the text, linear in its size (nlohmann's callback parser would
// rescan an array at the end of each object in it: quadratic). Keeps, per open object or array,
// the keys seen or the element index, which give the duplicate's JSON pointer; a syntax error
// ends the pass quietly, for the parse after it to report.
class DuplicateKeyCheck final : public nlohmann::json_sax<nlohmann::json> {
 public:
  DuplicateKeyCheck(const std::string& source, std::size_t max_keys)
      : source_(source), max_keys_(max_keys) {}

  bool null() override { return element(); }
  bool boolean(bool /*val*/) override { return element(); }
  bool number_integer(number_integer_t /*val*/) override { return element(); }
  bool number_unsigned(number_unsigned_t /*val*/) override { return element(); }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return element(); }
  bool string(string_t& /*val*/) override { return element(); }
  bool binary(binary_t& /*val*/) override { return element(); }
  bool start_object(std::size_t /*elements*/) override { return open(false); }
  bool start_array(std::size_t /*elements*/) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& val) override {
    Frame& f = frames_[depth_ - 1];
    f.key = val;
    if (!f.keys.insert(val).second) {
      throw ConfigError(source_, pointer(),
                        "key given twice in one object; expected each key at most once");
    }
    if (max_keys_ > 0 && f.keys.size() > max_keys_) {
      throw ConfigError(source_, pointer(),
                        "more than " + std::to_string(max_keys_) +
                            " keys in one object; expected at most " + std::to_string(max_keys_));
    }
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }

 private:
  struct Frame {
    bool is_array = false;
    std::int64_t index = -1;               // of the current element, in an array
    std::string key;                       // the current key, in an object
    std::unordered_set<std::string> keys;  // every key so far, in an object
  };

  // A value or container starts: in an array it is the next element.
  bool element() {
    if (depth_ > 0 && frames_[depth_ - 1].is_array) ++frames_[depth_ - 1].index;
    return true;
  }

  // Frames are kept when closed and reused, so an array of many small objects allocates no set
  // per object. clear() zeroes every bucket (libstdc++), so a set grown by a large object is
  // replaced, not cleared: else each small object after it at that depth would cost as much.
  bool open(bool is_array) {
    element();
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.is_array = is_array;
    f.index = -1;
    f.key.clear();
    if (f.keys.bucket_count() > kReusedBuckets) {
      std::unordered_set<std::string>().swap(f.keys);
    } else {
      f.keys.clear();
    }
    return true;
  }

  static constexpr std::size_t kReusedBuckets = 64;

  bool close() {
    --depth_;
    return true;
  }

  std::string pointer() const {
    std::string out;
    for (std::size_t i = 0; i < depth_; ++i) {
      const Frame& f = frames_[i];
      out += f.is_array ? "/" + std::to_string(f.index) : pointer_token(f.key);
    }
    return out;
  }

  const std::string& source_;
  std::size_t max_keys_ = 0;  // 0: no limit
  std::vector<Frame> frames_;
  std::size_t depth_ = 0;
};

}  // namespace

bool check_unique_keys(std::string_view text, const std::string& source, std::size_t max_keys) {
  DuplicateKeyCheck check(source, max_keys);
  return nlohmann::json::sax_parse(text, &check);
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms,
// surrogates or code points above U+10FFFF), or 0 where the byte starts none.
std::size_t utf8_sequence_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t extra = 0;
  unsigned lo = 0x80;  // bounds of the second byte (RFC 3629 §4)
  unsigned hi = 0xBF;
  if (c < 0x80U) return 1;
  if (c >= 0xC2U && c <= 0xDFU) {
    extra = 1;
  } else if (c >= 0xE0U && c <= 0xEFU) {
    extra = 2;
    if (c == 0xE0U) lo = 0xA0;  // no overlong forms
    if (c == 0xEDU) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0U && c <= 0xF4U) {
    extra = 3;
    if (c == 0xF0U) lo = 0x90;   // no overlong forms
    if (c == 0xF4U) hi = 0x8FU;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (extra >= text.size() - i) return 0;  // truncated sequence
  for (std::size_t k = 1; k <= extra; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    const unsigned low = k == 1 ? lo : 0x80U;
    const unsigned high = k == 1 ? hi : 0xBFU;
    if (b < low || b > high) return 0;
  }
  return extra + 1;
}

// nlohmann's parse of text already checked by check_json_text. Every nlohmann exception becomes
// a ConfigError naming `source`: a syntax error with its line and column, out_of_range
// ("number overflow parsing '1e400'") with nlohmann's words. A key given twice in one object is
// a ConfigError too, unless `keys` allows it.
nlohmann::json parse_unchecked(const std::string& text, const std::string& source,
                               const std::string& expected, DuplicateKeys keys) {
  // "line L, column C" of the byte before offset `stop` (nlohmann's offsets count from 1).
  const auto position = [&text](std::size_t stop) {
    std::size_t line = 1;
    std::size_t column = 1;
    stop = std::min(stop, text.size());
    for (std::size_t i = 0; i + 1 < stop; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  };
  try {
    if (keys == DuplicateKeys::Reject) (void)check_unique_keys(text, source);
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // The word the parser stopped in: NaN and Infinity, which Python's json module writes, are
    // not JSON (RFC 8259 §6: "Numeric values that cannot be represented ... such as Infinity and
    // NaN are not permitted").
    const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    std::size_t begin = at;
    while (begin > 0 && std::isalpha(static_cast<unsigned char>(text[begin - 1])) != 0) --begin;
    std::size_t end = begin;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end])) != 0) ++end;
    const std::string word = text.substr(begin, end - begin);
    // Only a bare word the parser read as a bad literal or number (-Infinity), not the inside
    // of a string (an unterminated "NaN) or text after the document.
    const std::string what = e.what();
    std::string folded;
    for (const char c : word)
      folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool not_a_number = (what.find("invalid literal") != std::string::npos ||
                               what.find("invalid number") != std::string::npos) &&
                              what.find("expected end of input") == std::string::npos &&
                              (begin == 0 || text[begin - 1] != '"') &&
                              (folded == "nan" || folded == "inf" || folded == "infinity");
    // Two causes the position alone does not tell: nothing to parse, and a byte that is not
    // UTF-8 (RFC 8259 §8.1: JSON text is UTF-8), such as a Latin-1 name.
    const bool empty = text.find_first_not_of(" \t\r\n") == std::string::npos;
    const bool not_utf8 = what.find("ill-formed UTF-8") != std::string::npos;
    // The parser stops at the byte that breaks a sequence (the '"' after a Latin-1 0xE9, the
    // 'x' after 0xE2 0x82), and it reads the text in order: the column is the first byte of the
    // text's first sequence that is not UTF-8.
    std::size_t stop = e.byte;
    if (not_utf8) {
      for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_sequence_at(text, i);
        if (n == 0) {
          stop = i + 1;
          break;
        }
        i += n;
      }
    }
    throw ConfigError(source, "",
                      "invalid JSON at " + position(stop) +
                          (not_a_number ? " ('" + word +
                                              "' is not a JSON number: write a finite number, "
                                              "or null where the key allows it)"
                           : empty    ? std::string(text.empty() ? " (the file is empty)"
                                                                 : " (the file holds only white "
                                                                      "space)")
                           : not_utf8 ? std::string(" (a byte that is not UTF-8: JSON text is "
                                                    "UTF-8)")
                                      : std::string()) +
                          "; " + expected);
  } catch (const nlohmann::json::exception& e) {
    std::string message = e.what();
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'" -> the part after "] ".
    if (const auto cut = message.find("] "); cut != std::string::npos) {
      message = message.substr(cut + 2);
    }
    // Where: the first place the number is written outside a string (a key or a value may
    // hold the same characters).
    std::string where;
    if (const auto quote = message.find('\''); quote != std::string::npos) {
      const std::string literal = message.substr(quote + 1, message.rfind('\'') - quote - 1);
      bool in_string = false;
      for (std::size_t i = 0; !literal.empty() && i < text.size(); ++i) {
        if (in_string) {
          if (text[i] == '\\') {
            ++i;  // the escaped character
          } else if (text[i] == '"') {
            in_string = false;
          }
        } else if (text[i] == '"') {
          in_string = true;
        } else if (text.compare(i, literal.size(), literal) == 0) {
          where = " at " + position(i + 1);
          break;
        }
      }
    }
    throw ConfigError(source, "", "invalid JSON" + where + " (" + message + "); " + expected);
  }
}

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& source) {
  return parse_checked_json(text, source, kMaxJsonBytes, kMaxJsonDepth, "a JSON document",
                            "expected a JSON document");
}

std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20U || byte == 0x7FU) {
      char escaped[8];
      (void)std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) to the character's lead byte, which starts the cut.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) --end;
  return text.substr(0, end);
}

std::string column_text(std::string_view text, std::size_t width, bool cut) {
  std::string out;
  std::size_t characters = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts = (static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U;
    if (starts && cut && characters == width) break;
    if (starts) ++characters;
    out += text[i];
  }
  if (characters < width) out.append(width - characters, ' ');
  return out;
}

nlohmann::json parse_builtin_json(std::string_view text, const std::string& source) {
  return parse_checked_json(std::string(text), source, kMaxJsonBytes, kMaxJsonDepth,
                            "a JSON document", "expected a JSON document", DuplicateKeys::Allow);
}

namespace {

// "a readable measurement document" from "a measurement document".
std::string readable(const std::string& what) {
  if (what.rfind("a ", 0) == 0) return "a readable " + what.substr(2);
  if (what.rfind("an ", 0) == 0) return "a readable " + what.substr(3);
  return "a readable file with " + what;
}

// Closes a file descriptor on scope exit.
struct FileDescriptor {
  int fd = -1;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  explicit FileDescriptor(int f) : fd(f) {}
  ~FileDescriptor() {
    if (fd >= 0) (void)::close(fd);
  }
};

}  // namespace

std::string read_text_file(
    const std::string& path, std::size_t max_bytes, const std::string& what,
    const std::function<void(std::string_view chunk, std::size_t offset)>& inspect) {
  const auto too_large = [&](const std::string& got) {
    return ConfigError(path, "",
                       "file too large; expected " + what + " of at most " +
                           std::to_string(max_bytes >> 20U) + " MiB, got " + got);
  };
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw ConfigError(path, "", "cannot open file; expected " + readable(what));
  }
  if (S_ISDIR(info.st_mode)) throw ConfigError(path, "", "is a directory; expected " + what);
  if (S_ISREG(info.st_mode) && static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
    throw too_large(std::to_string(info.st_size) + " bytes");
  }
  // O_NONBLOCK: opening a named pipe waits for a writer otherwise. Reads block again after.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (file.fd < 0) throw ConfigError(path, "", "cannot open file; expected " + readable(what));
  const int flags = ::fcntl(file.fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);
  // Chunks of at most 64 KiB (few reads for a large file, little zero-filling for a small one),
  // and never more than max_bytes + 1 bytes in all: /dev/zero, a pipe that never ends or a file
  // that grows is refused after reading just past the limit.
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 16U);
  for (;;) {
    const std::size_t want = std::min(chunk.size(), max_bytes + 1 - text.size());
    const ::ssize_t got = ::read(file.fd, chunk.data(), want);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ConfigError(path, "", "read error; expected " + readable(what));
    }
    if (got == 0) break;
    const std::string_view part(chunk.data(), static_cast<std::size_t>(got));
    if (inspect) inspect(part, text.size());
    text.append(part);
    if (text.size() > max_bytes) throw too_large("more");
  }
  if (text.empty() && S_ISFIFO(info.st_mode)) {
    throw ConfigError(path, "", "empty input from a pipe nobody writes to; expected " + what);
  }
  return text;
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_checked_json(read_text_file(path, kMaxJsonBytes, "a JSON document"), path,
                            kMaxJsonBytes, kMaxJsonDepth, "a JSON document",
                            "expected a JSON document");
}

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t n = utf8_sequence_at(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t n = utf8_sequence_at(text, i);
    if (n == 0) {
      char escaped[8];
      (void)std::snprintf(escaped, sizeof escaped, "\\x%02x",
                          static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      out += escaped;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

ObjectReader::ObjectReader(const nlohmann::json& json, std::string source, std::string pointer)
    : json_(json), source_(std::move(source)), pointer_(std::move(pointer)) {
  if (!json_.is_object()) {
    throw ConfigError(source_, pointer_.empty() ? "/" : pointer_,
                      std::string("expected an object, got ") + describe_json(json_));
  }
}

bool ObjectReader::has(const std::string& key) const {
  // Asking for a key makes it a known one, so an optional key's misspelling still gets a
  // suggestion from finish().
  read_.insert(key);
  return json_.contains(key);
}

std::string ObjectReader::pointer_of(const std::string& key) const {
  return pointer_ + "/" + escape_pointer_token(key);
}

ConfigError ObjectReader::error(const std::string& key, const std::string& problem) const {
  return ConfigError(source_, pointer_of(key), problem);
}

void ObjectReader::missing(const std::string& key, std::string_view expected) const {
  throw ConfigError(source_, pointer_of(key),
                    expected.empty() ? std::string("missing required key")
                                     : "missing required key; expected " + std::string(expected));
}

const nlohmann::json& ObjectReader::raw(const std::string& key, std::string_view expected) {
  return at(key, expected);
}

std::string ObjectReader::string(const std::string& key) {
  const auto& v = at(key, "a string");
  if (!v.is_string()) throw error(key, "expected a string, got " + describe_json(v));
  return v.get<std::string>();
}

std::string ObjectReader::string_or(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : fallback;
}

std::string ObjectReader::choice(const std::string& key, const std::vector<std::string>& choices) {
  const auto list_of = [&choices] {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    return list;
  };
  (void)at(key, [&] { return "one of " + list_of(); });
  const std::string v = string(key);
  for (const auto& c : choices) {
    if (c == v) return v;
  }
  const std::string list = list_of();
  throw error(key,
              "unknown value '" + v + "'" + did_you_mean(v, choices) + "; expected one of " + list);
}

std::string ObjectReader::choice_or(const std::string& key, const std::vector<std::string>& choices,
                                    const std::string& fallback) {
  return has(key) ? choice(key, choices) : fallback;
}

bool ObjectReader::boolean(const std::string& key) {
  const auto& v = at(key, "true or false");
  if (!v.is_boolean()) throw error(key, "expected true or false, got " + describe_json(v));
  return v.get<bool>();
}

bool ObjectReader::boolean_or(const std::string& key, bool fallback) {
  return has(key) ? boolean(key) : fallback;
}

double ObjectReader::number(const std::string& key) {
  const auto& v = at(key, "a number");
  if (v.is_string()) {
    throw error(key, "expected a plain number (this key has no unit), got " + describe_json(v));
  }
  if (!v.is_number()) throw error(key, "expected a number, got " + describe_json(v));
  return v.get<double>();
}

double ObjectReader::number_or(const std::string& key, double fallback) {
  return has(key) ? number(key) : fallback;
}

double ObjectReader::fraction(const std::string& key) {
  (void)at(key, "a fraction in (0, 1]");
  const double v = number(key);
  if (!(v > 0.0 && v <= 1.0)) {
    throw error(key, "expected a fraction in (0, 1], got " + describe_json(json_.at(key)));
  }
  return v;
}

double ObjectReader::fraction(const std::string& key, double lowest) {
  char bound[32];
  (void)std::snprintf(bound, sizeof bound, "%g", lowest);
  const std::string expected = std::string("a fraction in [") + bound + ", 1]";
  (void)at(key, expected);
  const double v = number(key);
  if (!(v >= lowest && v <= 1.0)) {
    throw error(key, "expected " + expected + ", got " + describe_json(json_.at(key)));
  }
  return v;
}

bool is_whole_number(const nlohmann::json& v) {
  return v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                   std::floor(v.get<double>()) == v.get<double>());
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t min_value) {
  // Counts above 2^53 are not exact as JSON doubles and far beyond any cluster or batch.
  return integer(key, min_value, std::int64_t{1} << 53U);
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t min_value,
                                   std::int64_t max_value) {
  const auto& v = at(key, [&] {
    return max_value == std::int64_t{1} << 53U ? "an integer >= " + std::to_string(min_value)
                                               : "an integer in [" + std::to_string(min_value) +
                                                     ", " + std::to_string(max_value) + "]";
  });
  if (!is_whole_number(v)) throw error(key, "expected an integer, got " + describe_json(v));
  // Compared as doubles first: 1e30 or -1e30 do not fit an int64 at all.
  const double d = v.get<double>();
  if (d > static_cast<double>(max_value) ||
      (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max_value))) {
    if (max_value == std::int64_t{1} << 53U) {
      throw error(key, "expected an integer <= 2^53, got " + describe_json(v));
    }
    throw error(key,
                describe_json(v) + ": out of range; expected at most " + std::to_string(max_value));
  }
  if (d < static_cast<double>(min_value)) {
    throw error(
        key, "expected an integer >= " + std::to_string(min_value) + ", got " + describe_json(v));
  }
  const auto value = v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(d);
  if (value < min_value || value > max_value) {
    throw error(key, "expected an integer in [" + std::to_string(min_value) + ", " +
                         std::to_string(max_value) + "], got " + describe_json(v));
  }
  return value;
}

std::int64_t ObjectReader::integer_or(const std::string& key, std::int64_t min_value,
                                      std::int64_t fallback) {
  return has(key) ? integer(key, min_value) : fallback;
}

double ObjectReader::unit(const std::string& key, UnitKind kind, bool allow_zero) {
  const auto& v =
      at(key, [kind] { return unit_noun(kind) + " with a unit like " + unit_example(kind); });
  if (!v.is_string()) {
    throw error(key, "expected " + unit_noun(kind) + " with a unit like " + unit_example(kind) +
                         ", got " + describe_json(v));
  }
  double si = 0.0;
  try {
    si = parse_unit(v.get<std::string>(), kind);
  } catch (const ConfigError& e) {
    throw e.located(source_, pointer_of(key));
  }
  if (si < 0.0 || (si == 0.0 && !allow_zero)) {
    throw error(key, "expected " + unit_noun(kind) + (allow_zero ? " >= 0" : " > 0") + ", got " +
                         describe_json(v));
  }
  // "-0 USD/h" reads as -0.0, which passes the sign test and printed "-0" costs: a zero is +0.
  return si + 0.0;
}

ObjectReader ObjectReader::object(const std::string& key) {
  return ObjectReader(at(key, "an object"), source_, pointer_of(key));
}

const nlohmann::json& ObjectReader::array(const std::string& key) {
  const auto& v = at(key, "an array");
  if (!v.is_array()) throw error(key, "expected an array, got " + describe_json(v));
  return v;
}

namespace {
// Keys documenting the data, allowed in every object.
bool documentation_key(const std::string& key) {
  return key == "source" || key == "notes" || key == "sources" || key.rfind("_", 0) == 0;
}
}  // namespace

std::vector<std::string> ObjectReader::unread_documentation_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : json_.items()) {
    if (read_.count(key) == 0U && documentation_key(key)) keys.push_back(key);
  }
  return keys;
}

void ObjectReader::finish() const {
  const std::vector<std::string> known(read_.begin(), read_.end());
  for (const auto& [key, value] : json_.items()) {
    if (read_.count(key) != 0U) continue;
    // Keys documenting the data ("source", "notes", "_comment") are allowed everywhere.
    if (documentation_key(key)) continue;
    // A near miss gets its suggestion; otherwise the keys this object was asked for, so the
    // line says what is expected here.
    const std::string suggestion = did_you_mean(key, known);
    if (!suggestion.empty() || known.empty()) throw error(key, "unknown key" + suggestion);
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw error(key, "unknown key; expected one of " + list);
  }
}

void with_near_miss_note(const nlohmann::json& json, const std::string& source,
                         const std::string& pointer,
                         const std::function<void(const nlohmann::json&)>& load) {
  const std::string missing = "missing required key";
  try {
    load(json);
  } catch (const ConfigError& e) {
    if (e.source() != source || e.problem().rfind(missing, 0) != 0 ||
        e.pointer().rfind(pointer + "/", 0) != 0) {
      throw;
    }
    const nlohmann::json::json_pointer at(e.pointer().substr(pointer.size()));
    const nlohmann::json::json_pointer parent = at.parent_pointer();
    const std::string& key = at.back();
    if (!json.contains(parent) || !json.at(parent).is_object()) throw;
    for (const auto& [other, value] : json.at(parent).items()) {
      if (documentation_key(other) || !closest(other, {key})) continue;
      // The near miss's value given to the missing key too: if the loader then reads the
      // document up to the near miss and calls it unknown, it is no key of the object and its
      // value is one the missing key takes. A valid sibling, required or optional
      // (gemm_comm_contention beside a missing comm_compute_contention), loads or fails
      // elsewhere; so does a value of the wrong kind (an object under 'node' for 'name').
      nlohmann::json both = json;
      both.at(parent)[key] = value;
      bool unknown = false;
      try {
        load(both);
      } catch (const ConfigError& again) {
        unknown = again.source() == source &&
                  again.pointer() == pointer + (parent / other).to_string() &&
                  again.problem().rfind("unknown key", 0) == 0;
      }
      if (!unknown) continue;
      throw ConfigError(e.source(), e.pointer(),
                        missing + " (the object has '" + other + "': a misspelling of '" + key +
                            "'?)" + e.problem().substr(missing.size()));
    }
    throw;
  }
}

namespace {

bool is_document_kind(const nlohmann::json& json, DocumentKind kind) {
  if (!json.is_object()) return false;
  switch (kind) {
    case DocumentKind::Hardware:
      return json.contains("gpu") && json.contains("node");
    case DocumentKind::Model:
      // A Hugging Face config.json of any family carries model_type (gpt2's has neither
      // num_hidden_layers nor hidden_size).
      return (json.contains("layers") && json.contains("hidden")) ||
             json.contains("num_hidden_layers") || json.contains("hidden_size") ||
             json.contains("model_type");
    case DocumentKind::Stack:
      return json.contains("fsdp") && json.contains("tensor_parallel");
  }
  return false;
}

}  // namespace

std::string document_noun(DocumentKind kind) {
  switch (kind) {
    case DocumentKind::Hardware:
      return "a hardware profile";
    case DocumentKind::Model:
      return "a model";
    case DocumentKind::Stack:
      return "a software stack";
  }
  return "";
}

std::optional<DocumentKind> document_kind(const nlohmann::json& json) {
  for (const DocumentKind kind :
       {DocumentKind::Hardware, DocumentKind::Model, DocumentKind::Stack}) {
    if (is_document_kind(json, kind)) return kind;
  }
  return std::nullopt;
}

void require_document_kind(const nlohmann::json& json, DocumentKind want, const std::string& source,
                           const std::string& pointer, const std::string& what) {
  if (!json.is_object() || is_document_kind(json, want)) return;
  const std::string subject = what.empty() ? (pointer.empty() ? "the file" : "the object") : what;
  for (const DocumentKind other :
       {DocumentKind::Hardware, DocumentKind::Model, DocumentKind::Stack}) {
    if (other == want || !is_document_kind(json, other)) continue;
    throw ConfigError(source, pointer,
                      subject + " is " + document_noun(other) + ", not " + document_noun(want) +
                          "; expected " + document_noun(want));
  }
  // trainsim's other documents, which the loaders refused on a missing /id (a scenario given
  // as --stack, a sweep spec, the NCCL constants beside the profiles).
  const auto has = [&json](const char* key) { return json.contains(key); };
  std::string other;
  if (has("base") && has("axes")) {
    other = "a sweep spec";
  } else if (has("cluster") || has("training") || (has("hardware") && has("model"))) {
    other = "a scenario";
  } else if (has("nccl_version") && has("base_latency")) {
    other = "NCCL's constants (hardware_profiles/nccl/)";
  } else if (const auto schema = json.find("schema");
             schema != json.end() && schema->is_string() && *schema == "trainsim-measurements") {
    other = "a measurement document";
  }
  if (!other.empty()) {
    throw ConfigError(source, pointer,
                      subject + " is " + other + ", not " + document_noun(want) + "; expected " +
                          document_noun(want));
  }
}

void check_json_text(const std::string& text, const std::string& source, std::size_t max_bytes,
                     int max_depth, const std::string& what) {
  if (text.size() > max_bytes) {
    throw ConfigError(source, "",
                      "file too large; expected " + what + " of at most " +
                          std::to_string(max_bytes >> 20U) + " MiB, got " +
                          std::to_string(text.size()) + " bytes");
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw ConfigError(source, "",
                      "NUL byte at offset " + std::to_string(nul) +
                          "; expected a JSON text file, got binary data");
  }
  int depth = 0;
  std::size_t line = 1;
  bool in_string = false;
  bool escaped = false;
  // Every value is the document itself, the first element of an object or array, or follows a
  // comma, so 1 + containers + commas bounds the values from above.
  std::int64_t containers = 0;
  std::int64_t values = 1;
  const auto too_many = [&](const std::string& kind, std::int64_t limit) {
    return ConfigError(source, "",
                       "JSON with more than " + std::to_string(limit) + " " + kind + " (line " +
                           std::to_string(line) + "); expected " + what + " of at most " +
                           std::to_string(limit) + " " + kind);
  };
  for (const char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',') {
      if (++values > kMaxJsonValues) throw too_many("values", kMaxJsonValues);
    } else if (c == '{' || c == '[') {
      if (++containers > kMaxJsonContainers) {
        throw too_many("objects and arrays", kMaxJsonContainers);
      }
      if (++values > kMaxJsonValues) throw too_many("values", kMaxJsonValues);
      if (++depth > max_depth) {
        throw ConfigError(source, "",
                          "JSON nested too deeply at line " + std::to_string(line) +
                              "; expected at most " + std::to_string(max_depth) +
                              " levels of objects and arrays, got more");
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
}

nlohmann::json parse_checked_json(const std::string& text, const std::string& source,
                                  std::size_t max_bytes, int max_depth, const std::string& what,
                                  const std::string& expected, DuplicateKeys keys) {
  check_json_text(text, source, max_bytes, max_depth, what);
  return parse_unchecked(text, source, expected, keys);
}

}  // namespace trainsim::io
