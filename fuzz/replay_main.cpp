// Corpus replay: a main for the fuzz harnesses when they are built without libFuzzer (any
// compiler, no instrumentation). It runs LLVMFuzzerTestOneInput once on every regular file of
// the folders and files named on the command line, in sorted order, so that CTest re-runs each
// harness's corpus, crash reproducers included, on every change.
//
// Usage: replay_main <folder-or-file>...
// Exit status: 0 when every input ran; 1 when an exception other than the ones the harness
// expects escaped (the file and the message are printed); 2 for a folder that cannot be read or
// holds no file. A crash ends the process; the last "replay:" line names the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> inputs_of(const std::filesystem::path& arg) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(arg)) {
    for (const auto& entry : std::filesystem::directory_iterator(arg)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::is_regular_file(arg)) {
    files.push_back(arg);
  }
  return files;
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t num_run = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::filesystem::path> files = inputs_of(argv[i]);
    if (files.empty()) {
      std::cerr << "replay: " << argv[i] << ": no input files; expected a corpus folder\n";
      return 2;
    }
    for (const auto& file : files) {
      std::cerr << "replay: " << file.string() << "\n";
      const std::vector<std::uint8_t> bytes = read_bytes(file);
      try {
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      } catch (const std::exception& e) {
        std::cerr << "replay: " << file.string() << ": uncaught exception: " << e.what() << "\n";
        return 1;
      } catch (...) {
        std::cerr << "replay: " << file.string() << ": uncaught exception of unknown type\n";
        return 1;
      }
      ++num_run;
    }
  }
  std::cout << "replay: " << num_run << " inputs ran\n";
  return 0;
}
