// The exception types of trainsim. The library throws; only the command line catches and turns
// them into one line on stderr and an exit code (ConfigError 2, PlanError 3, anything else 1).
#pragma once

#include <stdexcept>
#include <string>

namespace trainsim {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message), message_(message) {}

  // what() as a std::string, whole even when a name or key read from a file holds a NUL byte
  // (what() is a C string and ends at the first).
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string message_;
};

// Bad input: unreadable file, bad JSON, a missing, unknown or ill-typed key, a bad unit, a value
// out of range. what() reads "<source>: <json pointer>: <problem>", dropping empty parts.
class ConfigError : public Error {
 public:
  ConfigError(std::string source, std::string pointer, std::string problem);
  explicit ConfigError(std::string problem) : ConfigError("", "", std::move(problem)) {}

  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }
  // The same problem located in `source` at `pointer` (an inner pointer, if any, is appended).
  [[nodiscard]] ConfigError located(const std::string& source, const std::string& pointer) const;

 private:
  std::string source_;
  std::string pointer_;
  std::string problem_;
};

// A well-formed plan that cannot run: TP does not divide the heads, the GPUs do not split into
// TP x PP x CP, the batch does not divide, it runs out of memory under --require-fit.
class PlanError : public Error {
 public:
  using Error::Error;
};

// A bug detected at run time: an invariant that must hold in release builds did not.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace trainsim
