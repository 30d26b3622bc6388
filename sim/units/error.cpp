#include "trainsim/error.hpp"

#include <utility>

namespace trainsim {
namespace {

std::string join(const std::string& source, const std::string& pointer,
                 const std::string& problem) {
  std::string out;
  if (!source.empty()) out += source + ": ";
  if (!pointer.empty()) out += pointer + ": ";
  return out + problem;
}

}  // namespace

ConfigError::ConfigError(std::string source, std::string pointer, std::string problem)
    : Error(join(source, pointer, problem)),
      source_(std::move(source)),
      pointer_(std::move(pointer)),
      problem_(std::move(problem)) {}

ConfigError ConfigError::located(const std::string& source, const std::string& pointer) const {
  return ConfigError(source_.empty() ? source : source_, pointer + pointer_, problem_);
}

}  // namespace trainsim
