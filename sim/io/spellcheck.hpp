// "Did you mean ...?" for unknown names, from edit distance (ninja's SpellcheckStringV).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::io {

// Levenshtein distance between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is within a third of its length (at least 2) edits,
// else nothing. Candidates that `word` (3 letters or more) begins come first, the shortest
// completion first, whatever the limit.
// Ties go to the first candidate, so the answer is deterministic.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trainsim::io
