// The strict JSON reader every input goes through: it requires keys unless a default is given,
// rejects unknown keys with "did you mean", checks types, units and ranges, and reports every
// problem as a ConfigError naming the file and the JSON pointer. nlohmann stays private to io/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"

#include "sim/io/unit_parse.hpp"

namespace trainsim::io {

// Limits on every JSON input (scenario, hardware, model, stack, sweep spec, runs, measurements):
// no input trainsim reads comes near them, and they keep /dev/zero, a FIFO that never ends or a
// 100,000-level nesting from exhausting memory or the stack.
inline constexpr std::size_t kMaxJsonBytes = std::size_t{64} << 20U;  // 64 MiB
inline constexpr int kMaxJsonDepth = 64;
// Bounds on the parsed document, which the byte limit alone leaves at 20 million values and
// over 2 GB for 64 MiB of "[{},{},...]": at most 2 million objects and arrays and 8 million
// values in all (a 64 MiB profiler trace holds about 0.3 million events of some 15 values
// each). At the limits nlohmann's tree takes about 0.5 GB and 3 s to build.
inline constexpr std::int64_t kMaxJsonContainers = 2'000'000;
inline constexpr std::int64_t kMaxJsonValues = 8'000'000;

// Reads at most `max_bytes` of the file at `path`, in chunks, never more than max_bytes + 1
// bytes in all, so an endless stream (/dev/zero, a FIFO) or a huge file is refused at once; a
// regular file's size is checked before reading (a 4 GiB sparse file costs nothing). A named
// pipe nobody writes to is opened without waiting and read as empty input, refused. `what`
// names the expected content ("a scenario file"); `inspect`, if given, sees each chunk and its
// offset as it arrives and may throw (NUL bytes, gzip magic) before the rest is read. Throws
// ConfigError naming `path` for a directory, an unopenable or unreadable file, an empty pipe or
// more than `max_bytes`.
std::string read_text_file(
    const std::string& path, std::size_t max_bytes, const std::string& what,
    const std::function<void(std::string_view chunk, std::size_t offset)>& inspect = {});

// Reads a whole file as JSON: read_text_file and parse_checked_json with the limits above.
// Throws ConfigError naming the file for an unreadable, too large or too deeply nested file,
// malformed JSON (with line and column) or a key given twice in one object.
nlohmann::json read_json_file(const std::string& path);
// Parses `text` as JSON; `source` names it in errors. The text is checked first with
// check_json_text and the limits above; every nlohmann exception and a key given twice in one
// object become a ConfigError.
nlohmann::json parse_json(const std::string& text, const std::string& source);

// Runs the pass for keys given twice over `text` without parsing it into a document: throws
// ConfigError naming `source` and the key's JSON pointer for the second occurrence of a key in
// one object. A syntax error ends the pass quietly, for the caller to report: returns whether
// the text is one well-formed JSON value. The pass keeps, per open object or array, about 100
// bytes and every key of the object so far: bound the nesting first (check_json_text) where the
// text may be deep.
// With `max_keys` > 0, an object of more keys is refused too ("more than N keys in one object").
bool check_unique_keys(std::string_view text, const std::string& source, std::size_t max_keys = 0);

// Keys per object for the readers that keep key order (sweep specs, search shards and hardware
// documents, parsed into nlohmann::ordered_json): its ordered_map finds each new key by a linear
// scan, so an object of n keys costs n^2 / 2 comparisons (100,000 keys took 17 s and 6 million
// over 14 minutes). 10,000 keys cost about 0.2 s; the widest object trainsim writes or reads there
// has under a few hundred.
inline constexpr std::size_t kMaxOrderedKeys = 10'000;

// Runs `load` on `json`, the object at `pointer` of `source`, as a loader's public entry does.
// A required key it finds missing there is found before the unknown key beside it that
// misspells it (ObjectReader::finish comes last), so such an error gets a note naming the near
// miss: "/layers: missing required key (the object has 'layer': a misspelling of 'layers'?)".
// A key is named only if the loader, given its value under the missing key too, reads the
// document up to it and calls it unknown: a valid sibling (bw_inter beside a missing bw_intra)
// is not a misspelling. A second problem the loader meets before the near miss (another key
// missing) leaves the line without a note. Runs `load` again only on that error path, so `load`
// must not write anything.
void with_near_miss_note(const nlohmann::json& json, const std::string& source,
                         const std::string& pointer,
                         const std::function<void(const nlohmann::json&)>& load);

// The kinds of document trainsim reads where one is named by id or path.
enum class DocumentKind { Hardware, Model, Stack };
// Refuses `json`, read at `pointer` of `source` where a document of `want` is expected, when it
// is plainly another kind: a hardware profile (gpu and node objects), a model (trainsim's layers
// and hidden, or a Hugging Face config's num_hidden_layers or hidden_size) or a software stack
// (fsdp and tensor_parallel). "<what> is a model, not a software stack; expected ..." with
// `what` "the file" (pointer "") or "the object" by default; the loaders' errors would name a
// missing key of the kind expected instead. Anything else passes, for the loader to judge.
void require_document_kind(const nlohmann::json& json, DocumentKind want, const std::string& source,
                           const std::string& pointer, const std::string& what = "");
// What `json` plainly is by the same marks, or none of the three.
[[nodiscard]] std::optional<DocumentKind> document_kind(const nlohmann::json& json);
// The kind with its article, as messages name it: "a hardware profile", "a model", "a software
// stack".
[[nodiscard]] std::string document_noun(DocumentKind kind);

// Parses a file compiled into the executable (builtin_data.hpp) as parse_json does, but without
// the pass for keys given twice: those files are the project's, a test runs the pass over every
// one of them instead, and a sweep reads them again for each scenario it resolves (the pass
// added 2.5% to the instructions of a sweep of 7B plans).
nlohmann::json parse_builtin_json(std::string_view text, const std::string& source);

// `text` with each control character (bytes 0x00-0x1F and 0x7F) written as JSON escapes it
// ("\u001b"): a name or key read from a file reaches an error line, a note or a CSV cell without
// driving the terminal or cutting the line short.
std::string escape_control(std::string_view text);

// The first `max_bytes` bytes of `text`, less a UTF-8 character the cut would split (an excerpt
// of a line for an error message).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

// `text` in a column of `width` characters, as printf's "%-<width>.<width>s" would put it if it
// counted characters, not bytes: cut to `width` UTF-8 characters (never inside one) and padded
// with spaces to `width`; with `cut` false, only padded.
std::string column_text(std::string_view text, std::size_t width, bool cut = true);

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
// above U+10FFFF), the only text nlohmann can write back as JSON.
[[nodiscard]] bool is_valid_utf8(std::string_view text);

// `text` with each byte that starts no well-formed UTF-8 sequence written as "\xff": an error
// line that echoes a file's bytes (a garbage file, an edited CSV cell) stays valid UTF-8 text.
std::string escape_invalid_utf8(std::string_view text);
// Refuses, before parsing, text that no JSON input of trainsim may be: longer than `max_bytes`
// ("file too large; expected <what> of at most ..."), holding a NUL byte (binary data),
// nesting objects and arrays deeper than `max_depth` (naming the line), or holding more objects
// and arrays than kMaxJsonContainers or more values than kMaxJsonValues. Throws ConfigError
// naming `source`.
void check_json_text(const std::string& text, const std::string& source, std::size_t max_bytes,
                     int max_depth, const std::string& what);
// Whether a key may appear twice in one object. Every input a user writes refuses it, naming
// the key's JSON pointer ("key given twice in one object"): nlohmann would keep the last value
// and drop the first without a word. Profiler traces allow it: trace writers repeat fields of
// an event's args (catapult-project/catapult#4343), a trace is not the user's to edit, and for
// the fields the trace reader takes from args (stream, correlation) the last value wins.
enum class DuplicateKeys { Reject, Allow };
// check_json_text, then parse_json; any other nlohmann exception (out_of_range for "1e400")
// becomes a ConfigError naming `source`: "invalid JSON (<nlohmann's message>); <expected>".
nlohmann::json parse_checked_json(const std::string& text, const std::string& source,
                                  std::size_t max_bytes, int max_depth, const std::string& what,
                                  const std::string& expected,
                                  DuplicateKeys keys = DuplicateKeys::Reject);

// A view of one JSON object with its location. Every accessor marks its key as read; finish()
// then rejects any key nobody read. Holds a reference to the json: it must outlive the reader.
class ObjectReader {
 public:
  // Throws ConfigError if `json` is not an object.
  ObjectReader(const nlohmann::json& json, std::string source, std::string pointer);

  [[nodiscard]] bool has(const std::string& key) const;
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] std::string pointer_of(const std::string& key) const;
  // The raw value of a key (marks it read); for callers that branch on the JSON type. A missing
  // key is "missing required key; expected <expected>" (no clause when `expected` is empty, for
  // callers that asked has() first).
  [[nodiscard]] const nlohmann::json& raw(const std::string& key, std::string_view expected = {});

  [[nodiscard]] std::string string(const std::string& key);
  [[nodiscard]] std::string string_or(const std::string& key, const std::string& fallback);
  // One of `choices`; an unknown value gets "did you mean".
  [[nodiscard]] std::string choice(const std::string& key, const std::vector<std::string>& choices);
  [[nodiscard]] std::string choice_or(const std::string& key,
                                      const std::vector<std::string>& choices,
                                      const std::string& fallback);
  [[nodiscard]] bool boolean(const std::string& key);
  [[nodiscard]] bool boolean_or(const std::string& key, bool fallback);
  // A plain number (no unit): fractions, ratios.
  [[nodiscard]] double number(const std::string& key);
  [[nodiscard]] double number_or(const std::string& key, double fallback);
  // A number in (0, 1], named *_efficiency or *_fraction in the specs.
  [[nodiscard]] double fraction(const std::string& key);
  // A fraction in [lowest, 1]: an efficiency, where a value near 0 is a unit slip that would
  // stretch every kernel past any time the engine can hold.
  [[nodiscard]] double fraction(const std::string& key, double lowest);
  // An integer >= min_value (and <= 2^53, the largest a JSON double holds exactly).
  [[nodiscard]] std::int64_t integer(const std::string& key, std::int64_t min_value);
  // An integer in [min_value, max_value]; a larger one is "out of range; expected at most ...".
  [[nodiscard]] std::int64_t integer(const std::string& key, std::int64_t min_value,
                                     std::int64_t max_value);
  [[nodiscard]] std::int64_t integer_or(const std::string& key, std::int64_t min_value,
                                        std::int64_t fallback);
  // A string with a unit; a bare number is rejected with the expected form. The value must be
  // > 0, or >= 0 when `allow_zero`.
  [[nodiscard]] double unit(const std::string& key, UnitKind kind, bool allow_zero = false);
  [[nodiscard]] Seconds seconds(const std::string& key, bool allow_zero = false) {
    return Seconds(unit(key, UnitKind::Time, allow_zero));
  }
  [[nodiscard]] Bytes bytes(const std::string& key) { return Bytes(unit(key, UnitKind::Data)); }
  [[nodiscard]] BytesPerSecond bandwidth(const std::string& key) {
    return BytesPerSecond(unit(key, UnitKind::DataRate));
  }
  [[nodiscard]] FlopsPerSecond flop_rate(const std::string& key) {
    return FlopsPerSecond(unit(key, UnitKind::WorkRate));
  }
  [[nodiscard]] Watts watts(const std::string& key) { return Watts(unit(key, UnitKind::Power)); }

  [[nodiscard]] ObjectReader object(const std::string& key);
  // Array of the key, checked to be an array (maybe empty).
  [[nodiscard]] const nlohmann::json& array(const std::string& key);

  // A ConfigError at this object's key.
  [[nodiscard]] ConfigError error(const std::string& key, const std::string& problem) const;

  // Throws ConfigError for the first key (in key order) that no accessor asked for, other than
  // the keys documenting the data that every trainsim object allows ("source", "notes",
  // "sources" and any key starting with "_").
  void finish() const;
  // Those documenting keys of the object that no accessor asked for, in key order: a reader of
  // another tool's format (a Hugging Face config's "_name_or_path") names them as ignored.
  [[nodiscard]] std::vector<std::string> unread_documentation_keys() const;

 private:
  // The value of a required key; a missing one is "missing required key; expected <expected>",
  // what the accessor asking for it reads ("an integer >= 1", "a bandwidth with a unit like
  // ..."). `expected` is text, or a callable giving it, called only when the key is missing.
  template <class Expected>
  const nlohmann::json& at(const std::string& key, const Expected& expected) {
    const auto it = json_.find(key);
    if (it == json_.end()) {
      if constexpr (std::is_invocable_v<const Expected&>) {
        missing(key, expected());
      } else {
        missing(key, expected);
      }
    }
    read_.insert(key);
    return *it;
  }
  [[noreturn]] void missing(const std::string& key, std::string_view expected) const;

  const nlohmann::json& json_;
  std::string source_;
  std::string pointer_;
  // Keys asked for, present or not (mutable: has() is a query that still records the key).
  mutable std::set<std::string> read_;
};

// "/" + key escaped as a JSON pointer token (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string pointer_token(const std::string& key);

// A short rendering of a JSON value for "got ..." in messages (strings quoted, long ones cut).
std::string describe_json(const nlohmann::json& value);

// Whether `v` is a whole number: an integer, or a finite float without a fraction (8.0), as
// every integer key of an input reads it.
bool is_whole_number(const nlohmann::json& v);

}  // namespace trainsim::io
