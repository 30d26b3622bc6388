// The hardware profiles and models compiled into the executable (cmake/embed_files.cmake).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::io {

struct BuiltinFile {
  std::string_view path;     // as in the source tree: "hardware_profiles/h100-dgx.json"
  std::string_view content;
};

std::span<const BuiltinFile> builtin_files();

// The content of built-in `<folder>/<id>.json`, if there is one.
std::optional<std::string_view> builtin_file(std::string_view folder, std::string_view id);
// Ids of every built-in file in `folder`, sorted.
std::vector<std::string> builtin_ids(std::string_view folder);

// Whether `name`, given where a built-in id or a file path is expected, reads as a path: it holds
// a path separator or ends in ".json", which no built-in id does. A loader that finds no such
// file then says so, instead of calling it an unknown id.
bool names_a_file(std::string_view name);

// Whether `path` names something to read as a file: anything that exists but a folder. A regular
// file, and also /dev/stdin, a named pipe or a shell's process substitution (<(...)), which the
// bounded reader reads without waiting on a pipe nobody writes to (io::read_text_file).
bool names_readable_file(const std::string& path);

}  // namespace trainsim::io
