// trainsim's entry point: parses the command line, runs one subcommand and turns exceptions
// into one line on stderr and an exit code: 2 bad input, 3 impossible plan, 1 internal error.
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "trainsim/error.hpp"
#include "trainsim/version.hpp"

#include "sim/cli/commands.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"

namespace {

// CLI11's messages may span lines ("...\nRun with --help for more information."); the error
// contract is one line, so line breaks become "; " and other control characters JSON escapes.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') {
      if (!out.empty()) out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  // A key or value from an input file ("\u0000", "\u001b[2J") must neither cut the line short
  // nor drive the terminal, and bytes that are not UTF-8 (a garbage file's) are shown as "\xff".
  out = trainsim::io::escape_invalid_utf8(trainsim::io::escape_control(out));
  // A name echoed whole (a 10 MB hardware name) would make a line nobody reads: its middle is
  // left out, at the starts of UTF-8 characters, keeping the head (the file and key) and the
  // tail (what was expected).
  constexpr std::size_t kHead = 1000;
  constexpr std::size_t kTail = 1000;
  if (out.size() > kHead + kTail + 100) {
    const auto start_of_char = [&out](std::size_t i) {
      while (i > 0 && (static_cast<unsigned char>(out[i]) & 0xC0U) == 0x80U) --i;
      return i;
    };
    const std::size_t head = start_of_char(kHead);
    const std::size_t tail = start_of_char(out.size() - kTail);
    out = out.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes left out) ... " +
          out.substr(tail);
  }
  return out;
}

// "cannot convert '<text>'; expected a smaller integer (...)": an integer past what its option
// holds, said the same way whether it is past 64 bits or past a narrower option type.
std::string past_integer_range(const std::string& text) {
  const bool negative = text.find('-') != std::string::npos;
  return "cannot convert '" + text + "'; expected " + (negative ? "a larger" : "a smaller") +
         " integer (the value is past what the option holds)";
}

// CLI11 reads integers with base detection (strtoll base 0) and floats with strtod, so "010"
// would be 8, "0x40" 64 and "0x1p6" 64: every numeric option takes decimal text only, as the
// input files' numbers do, and a number written otherwise is refused naming the option. It also
// saturates what does not fit: "99999999999999999999" became 9223372036854775807, which the
// option's own range check then quoted as if typed, and "1e999" became inf. A number out of its
// type's range is refused as such. `text` comes without spaces around it (strict_option_values).
std::string decimal_number_problem(const std::string& text, std::string_view type) {
  if (text.empty()) return {};
  std::size_t i = 0;
  const std::size_t sign = i;
  if (text[i] == '+' || text[i] == '-') ++i;
  const bool zero = i + 1 < text.size() && text[i] == '0';
  const char next = zero ? text[i + 1] : '\0';
  const bool leading_zero = zero && std::isdigit(static_cast<unsigned char>(next)) != 0;
  const bool base_prefix = zero && std::string_view("xXbBoO").find(next) != std::string_view::npos;
  if (leading_zero || base_prefix) {
    return "'" + text +
           "': expected a decimal number (no zero before its first digit, as in 007 or 00.5; no "
           "0x, 0b or 0o)";
  }
  const std::size_t end = text.size();
  // from_chars takes no '+'; a '-' stays for the signed parse.
  const char* first = text.data() + (text[sign] == '+' ? sign + 1 : sign);
  const char* last = text.data() + end;
  std::errc ec{};
  if (type == "FLOAT" || type == "NUMBER") {
    double value = 0.0;
    ec = std::from_chars(first, last, value).ec;
    if (ec == std::errc::result_out_of_range) {
      return "'" + text +
             "': out of range of a double; expected 0 or a magnitude from about 1e-308 to 1e308";
    }
  } else if (type == "UINT" && text[sign] != '-') {
    std::uint64_t value = 0;
    ec = std::from_chars(first, last, value).ec;
  } else {
    std::int64_t value = 0;
    ec = std::from_chars(first, last, value).ec;
  }
  if (ec == std::errc::result_out_of_range) {
    // As cli11_message words an integer past a narrower option type: the options' own ranges
    // are checked after parsing, and a 64-bit range named here is none of them (--top is an int,
    // --virtual-stages at least 1).
    return past_integer_range(text);
  }
  return {};  // text that is no number at all is CLI11's to refuse ("cannot convert")
}

// Every subcommand's numeric option takes decimal text only (decimal_number_problem), and a
// flag given a value (--full-simulation=false) takes true or false only: CLI11 also reads
// numbers, yes/no and on/off, so --sequence-parallel=2 turned it on without a word. A bare flag
// reaches the check as "true".
void strict_option_values(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    for (CLI::Option* opt : sub->get_options()) {
      const std::string type = opt->get_type_name();
      if (type == "INT" || type == "UINT" || type == "FLOAT" || type == "NUMBER") {
        // Spaces around the number are dropped (a transform: a check may not change the text):
        // CLI11's conversion took " 0.1" and refused "0.1 " ("cannot convert").
        opt->transform(CLI::Validator(
            [type](std::string& text) {
              const std::size_t first = text.find_first_not_of(" \t");
              text = first == std::string::npos
                         ? text
                         : text.substr(first, text.find_last_not_of(" \t") + 1 - first);
              return decimal_number_problem(text, type);
            },
            ""));
      } else if (opt->get_expected_max() == 0 && opt != sub->get_help_ptr()) {
        // Once, as a value option: "--require-fit --require-fit=false" kept the last in silence
        // (and ran a plan that does not fit with exit 0).
        opt->multi_option_policy(CLI::MultiOptionPolicy::Throw);
        opt->check(CLI::Validator(
            [](std::string& text) -> std::string {
              if (text == "true" || text == "false") return {};
              return "'" + text + "': expected true or false";
            },
            ""));
      }
    }
  }
}

// "describe, run, ...": the subcommands in registration order.
std::string command_list(const CLI::App& app) {
  std::string list;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    list += (list.empty() ? "" : ", ") + sub->get_name();
  }
  return list;
}

// The first argument that is not an option, if it is not a subcommand: CLI11 would only say
// "A subcommand is required". Returns the message, or "" when the command line names one.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return "";
  const std::string first = argv[1];
  if (first.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    if (sub->get_name() == first) return "";
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  if (first.front() == '-') {
    // Only --help and --version come before the subcommand.
    if (first == "-h" || first == "--help" || first == "--version") return "";
    return "command line (" + first + "): unknown option before the command; expected a command " +
           "first, one of " + list + " (or --help, --version)";
  }
  return "unknown command '" + first + "'" + trainsim::io::did_you_mean(first, names) +
         "; expected one of " + list;
}

// CLI11's messages in the project's shape "<flag>: <problem>; expected <x>":
//   "Could not convert: --tp = abc"        -> "--tp: cannot convert 'abc'; expected ..."
//   "--format: yaml not in {table,json}"   -> "--format: unknown value 'yaml'; expected ..."
//   "A subcommand is required"             -> "... ; expected one of <commands>"
//   "The following argument was not expected: x"  -> "x: unexpected argument; expected ..."
//   "--tp: At Most 1 required but received 2"     -> "--tp: given 2 times; expected ..."
//   "--nodes is required", "scenario_b is required" -> "... missing required option/argument"
// What an option's value must be, from the type CLI11 prints in --help ("INT", "FLOAT"), or ""
// when the option is not found in the command given.
std::string option_value_noun(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands()) {
    if (const CLI::Option* opt = sub->get_option_no_throw(name)) {
      const std::string type = opt->get_type_name();
      if (type == "INT") return "an integer";
      if (type == "FLOAT") return "a number";
    }
  }
  return "";
}

// Whether `text` is an optionally signed run of decimal digits.
bool is_integer_text(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The unexpected arguments as typed. CLI11 2.1's ExtrasError joins the arguments it is given
// backwards (detail::rjoin, written for its reversed argument stack), and after parsing it is
// given them in their order (App::remaining): "--trace x.json --stage 2" read "2 --stage x.json
// --trace". Where the list is the command's remaining arguments backwards, they are given in
// their order; otherwise as listed.
std::string unexpected_arguments(const std::string& listed, const CLI::App& app) {
  const std::vector<std::string> extras = app.remaining(true);
  std::string backwards;
  std::string typed;
  for (auto it = extras.rbegin(); it != extras.rend(); ++it) {
    backwards += (backwards.empty() ? "" : " ") + *it;
  }
  for (const std::string& arg : extras) typed += (typed.empty() ? "" : " ") + arg;
  return backwards == listed ? typed : listed;
}

std::string cli11_message(const CLI::ParseError& e, const CLI::App& app,
                          const std::string& commands) {
  const std::string text = one_line(e.what());
  constexpr std::string_view kConvert = "Could not convert: ";
  if (text.rfind(kConvert, 0) == 0) {
    // The value as given, from CLI11's own text: one_line drops trailing spaces, and "4096 " read
    // as "cannot convert '4096'" (a leading space is accepted, a trailing one not).
    const std::string raw = e.what();
    const std::string rest = raw.find('\n') == std::string::npos ? raw.substr(kConvert.size())
                                                                 : text.substr(kConvert.size());
    const auto eq = rest.find(" = ");
    if (eq != std::string::npos) {
      const std::string name = rest.substr(0, eq);
      const std::string value = rest.substr(eq + 3);
      const std::string noun = option_value_noun(app, name);
      const std::string shown =
          trainsim::io::escape_invalid_utf8(trainsim::io::escape_control(value));
      // An integer CLI11 could not store is past the option's type (--top is an int), a range
      // --help does not state: say which way it is off.
      if (noun == "an integer" && is_integer_text(value)) {
        return name + ": " + past_integer_range(shown);
      }
      return name + ": cannot convert '" + shown + "'; expected " +
             (noun.empty() ? "a value of the option's type" : noun);
    }
  }
  const auto colon = text.find(": ");
  const auto not_in = text.find(" not in {");
  if (colon != std::string::npos && not_in != std::string::npos && not_in > colon &&
      text.back() == '}') {
    std::string choices = text.substr(not_in + 9, text.size() - not_in - 10);
    std::string list;
    for (const char c : choices) list += c == ',' ? std::string(", ") : std::string(1, c);
    return text.substr(0, colon) + ": unknown value '" +
           text.substr(colon + 2, not_in - colon - 2) + "'; expected one of " + list;
  }
  if (text == "A subcommand is required") {
    return "a subcommand is required; expected one of " + commands;
  }
  for (const std::string_view lead : {"The following argument was not expected: ",
                                      "The following arguments were not expected: "}) {
    if (text.rfind(lead, 0) == 0) {
      return "command line (" + unexpected_arguments(text.substr(lead.size()), app) +
             "): unexpected argument; expected only the command's options and arguments (see "
             "trainsim <command> --help)";
    }
  }
  // "--nodes is required", "scenario_b is required": say whether a flag or an argument is
  // missing, in the project's shape.
  constexpr std::string_view kRequired = " is required";
  if (text.size() > kRequired.size() && text.ends_with(kRequired) &&
      text.find(' ') == text.size() - kRequired.size()) {
    const std::string name = text.substr(0, text.size() - kRequired.size());
    return name.rfind('-', 0) == 0
               ? "command line (" + name + "): missing required option; expected it (see " +
                     "trainsim <command> --help)"
               : "command line: missing argument '" + name + "'; expected it (see trainsim " +
                     "<command> --help)";
  }
  // "--steps: 1 required TEXT missing": the flag was given without its value.
  constexpr std::string_view kMissing = " missing";
  if (const auto colon_at = text.find(": ");
      colon_at != std::string::npos && text.ends_with(kMissing) &&
      text.find(" required ", colon_at) != std::string::npos) {
    const std::string name = text.substr(0, colon_at);
    const std::string noun = option_value_noun(app, name);
    return "command line (" + name + "): no value given; expected " +
           (noun.empty() ? std::string("a value after it") : noun + " after it") +
           " (see trainsim <command> --help)";
  }
  constexpr std::string_view kAtMost = ": At Most 1 required but received ";
  if (const auto at = text.find(kAtMost); at != std::string::npos) {
    return "command line (" + text.substr(0, at) + "): given " + text.substr(at + kAtMost.size()) +
           " times; expected it once";
  }
  return text;
}

// Names the flag (or the argument) whose value is not UTF-8, as the error contract asks.
std::string non_utf8_message(int i, char** argv) {
  const std::string arg = argv[i];
  const std::string_view tail =
      "is not valid UTF-8; expected UTF-8 text (names and paths are "
      "written to JSON reports)";
  if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
    return "command line (" + arg.substr(0, arg.find('=')) + "): the value " + std::string(tail);
  }
  if (i > 1 && argv[i - 1][0] == '-' && trainsim::io::is_valid_utf8(argv[i - 1])) {
    return "command line (" + std::string(argv[i - 1]) + "): the value " + std::string(tail);
  }
  return arg + ": this command line argument " + std::string(tail);
}

// The error for an empty argument, or "" when there is none. CLI11 reads an empty value as an
// absent one (`--tp ""` would keep the file's tp, `-o ""` would write to stdout), so no
// subcommand gets one: every flag, file and path needs a value.
std::string empty_argument_message(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() > 2 && arg.rfind("--", 0) == 0 && arg.back() == '=') {
      return "command line (" + std::string(arg.substr(0, arg.size() - 1)) +
             "): empty value; expected a value after '='";
    }
    if (!arg.empty()) continue;
    if (i > 1 && argv[i - 1][0] == '-') {
      return "command line (" + std::string(argv[i - 1]) + "): empty value; expected a value";
    }
    return "command line: argument " + std::to_string(i) +
           " is empty; expected a file, a value or a flag";
  }
  return "";
}

// "[json.exception.out_of_range.406] number overflow ..." -> "number overflow ...".
std::string nlohmann_message(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto cut = what.find("] ");
  return cut == std::string::npos ? what : what.substr(cut + 2);
}

int report(std::string_view prefix, std::string_view message, int code) {
  std::cerr << prefix << one_line(message) << '\n';
  return code;
}

// Exit 1: what no input should cause, with a request for a bug report.
int internal_error(std::string_view what) {
  return report("internal error: ",
                std::string(what) +
                    "; this is a bug in trainsim, please report it with the command line and "
                    "input files",
                1);
}

// Exit 2 when what the command printed did not all reach stdout (a full disk, a reader that
// closed the pipe): a partial report must not pass for a whole one. The file outputs (-o,
// --trace) are checked where they are committed (io::AtomicFile).
int check_stdout(int exit_code) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return exit_code;
  std::cout.clear();
  return report("error: ",
                "standard output: cannot write the output; expected a writable stdout (disk full "
                "or a closed pipe?)",
                exit_code == 0 ? 2 : exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that closes the pipe early (`trainsim run ... | head -1`) makes writes fail with
  // EPIPE instead of killing the process, so the failure is reported like any other.
  static_cast<void>(std::signal(SIGPIPE, SIG_IGN));
  CLI::App app{"trainsim: performance simulator for distributed LLM training"};
  app.set_version_flag("--version", std::string("trainsim ") + trainsim::kVersion);
  app.require_subcommand(1);
  // Log lines go to stderr: stdout carries reports, CSV rows and JSON that a warning would corrupt.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("trainsim"));
  spdlog::set_level(spdlog::level::warn);
  int exit_code = 0;
  try {
    trainsim::cli::register_describe(app, exit_code);
    trainsim::cli::register_run(app, exit_code);
    trainsim::cli::register_collective(app, exit_code);
    trainsim::cli::register_sweep(app, exit_code);
    trainsim::cli::register_search(app, exit_code);
    trainsim::cli::register_merge(app, exit_code);
    trainsim::cli::register_calibrate(app, exit_code);
    trainsim::cli::register_compare(app, exit_code);
    trainsim::cli::register_validate(app, exit_code);
    trainsim::cli::register_diff(app, exit_code);
    strict_option_values(app);
    // Arguments become names in reports and JSON strings, which must be UTF-8.
    for (int i = 1; i < argc; ++i) {
      if (!trainsim::io::is_valid_utf8(argv[i]))
        return report("error: ", non_utf8_message(i, argv), 2);
    }
    if (const std::string empty = empty_argument_message(argc, argv); !empty.empty()) {
      return report("error: ", empty, 2);
    }
    if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
      return report("error: ", unknown, 2);
    }
    app.parse(argc, argv);
    exit_code = check_stdout(exit_code);
  } catch (const CLI::ParseError& e) {
    // CLI11 uses exit code 0 for --help and --version: print them as CLI11 does.
    // A help or version text that did not reach stdout (/dev/full) is a failure like any
    // other output's.
    if (e.get_exit_code() == 0) return check_stdout(app.exit(e));
    return report("error: ", cli11_message(e, app, command_list(app)), 2);
  } catch (const trainsim::ConfigError& e) {
    // The file's name as given, its newlines escaped ("bad\u000anl.json") as the notes and
    // tables print it: one_line would make them "; " and name a file that does not exist.
    std::string message = e.message();
    if (!e.source().empty() && message.starts_with(e.source())) {
      message = trainsim::io::escape_control(e.source()) + message.substr(e.source().size());
    }
    return report("error: ", message, 2);
  } catch (const trainsim::PlanError& e) {
    return report("error: ", e.message(), 3);
  } catch (const std::bad_alloc&) {
    // Inputs are bounded where they are read; what remains is a request (a sweep, a search
    // space, a sequence) whose simulation needs more memory than this machine has.
    return report("error: ",
                  "out of memory while running the command; expected inputs whose simulation "
                  "fits in this machine's memory (fewer scenarios, a smaller search space)",
                  2);
  } catch (const nlohmann::json::parse_error& e) {
    // A reader that parsed input without io::parse_json: still bad input, not a bug.
    return report(
        "error: ",
        "invalid JSON in an input (" + nlohmann_message(e) + "); expected a JSON document", 2);
  } catch (const nlohmann::json::out_of_range& e) {
    if (e.id == 406) {  // "number overflow parsing '1e400'": a number beyond double range
      return report("error: ",
                    "invalid JSON in an input (" + nlohmann_message(e) +
                        "); expected numbers within double range",
                    2);
    }
    return internal_error(e.what());
  } catch (const nlohmann::json::type_error& e) {
    // 316: a string that is not UTF-8 reached a JSON writer; every such string comes from an
    // input (a log, a path), never from trainsim itself.
    if (e.id == 316) {
      return report("error: ",
                    "input text is not valid UTF-8 and cannot be written as JSON; expected "
                    "UTF-8 text in the input files",
                    2);
    }
    return internal_error(e.what());
  } catch (const std::out_of_range& e) {
    // std::stod and friends throw out_of_range named after themselves for a number too large
    // for its type ("1e400", 30 digits): bad input, not a bug.
    const std::string_view what = e.what();
    if (what.rfind("sto", 0) == 0 && what.size() <= 5) {
      return report("error: ",
                    "a number in the command line or an input is out of range for its type; "
                    "expected a smaller number",
                    2);
    }
    return internal_error(e.what());
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("unknown exception");
  }
  return exit_code;
}
