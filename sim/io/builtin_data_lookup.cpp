#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sim/io/builtin_data.hpp"

namespace trainsim::io {

std::optional<std::string_view> builtin_file(std::string_view folder, std::string_view id) {
  const std::string path = std::string(folder) + "/" + std::string(id) + ".json";
  for (const auto& f : builtin_files()) {
    if (f.path == path) return f.content;
  }
  return std::nullopt;
}

std::vector<std::string> builtin_ids(std::string_view folder) {
  const std::string prefix = std::string(folder) + "/";
  std::vector<std::string> ids;
  for (const auto& f : builtin_files()) {
    if (f.path.substr(0, prefix.size()) != prefix) continue;
    std::string_view name = f.path.substr(prefix.size());
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
      ids.emplace_back(name.substr(0, name.size() - 5));
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool names_readable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec);
}

bool names_a_file(std::string_view name) {
  return name.find('/') != std::string_view::npos ||
         (name.size() >= 5 && name.substr(name.size() - 5) == ".json");
}

}  // namespace trainsim::io
