#include "sim/io/spellcheck.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

namespace trainsim::io {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  // Ranked by (not the word in other case, not a truncation, edit distance): the same letters
  // in another case ('BF16' for 'bf16', which 'fp16' is as near to by edit distance) beat
  // anything else; a word of three or more letters that begins a candidate is a truncated name
  // ('bfloat' for 'bfloat16', 'h100' for 'h100-dgx') and beats any misspelling; the shortest
  // completion wins among truncations.
  const auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& ch : out) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    return out;
  };
  const std::string folded = lower(word);
  std::tuple<bool, bool, std::size_t> best_rank{true, true, limit + 1};
  for (const auto& c : candidates) {
    const bool truncated = word.size() >= 3 && c.size() > word.size() && c.starts_with(word);
    const bool other_case = lower(c) == folded;
    const std::tuple<bool, bool, std::size_t> rank{!other_case, !truncated,
                                                   other_case ? 0 : edit_distance(word, c)};
    if (rank < best_rank) {
      best_rank = rank;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto c = closest(word, candidates)) return "; did you mean '" + *c + "'?";
  return "";
}

}  // namespace trainsim::io
