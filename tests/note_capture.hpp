// Collects the model loader's notes (io::set_model_note_sink) for the life of the object, and
// puts the previous sink back after: the notes a load printed on stderr, as lines.
#pragma once

#include <string>
#include <vector>

#include "sim/io/model_loader.hpp"

namespace trainsim::testing {

class NoteCapture {
 public:
  NoteCapture()
      : previous_(io::set_model_note_sink([this](const std::string& l) { lines.push_back(l); })) {}
  ~NoteCapture() { io::set_model_note_sink(previous_); }
  NoteCapture(const NoteCapture&) = delete;
  NoteCapture& operator=(const NoteCapture&) = delete;
  std::vector<std::string> lines;

 private:
  io::ModelNoteSink previous_;
};

}  // namespace trainsim::testing
