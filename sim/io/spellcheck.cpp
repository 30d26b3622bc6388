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
  // Letters are compared without case ('BF16' is 'bf16', which 'fp16' is as near to by edit
  // distance with case; 'H100' a truncated 'h100-dgx'). Ranked by (not a truncation, edit
  // distance): a word of three or more letters that begins a candidate is a truncated name
  // ('bfloat' for 'bfloat16', 'h100' for 'h100-dgx') and beats any misspelling; the shortest
  // completion wins among truncations. A candidate equal to the word but for case beats both:
  // 'Megatron-LM' is 'megatron-lm', which a truncation ranking ahead of it turned into
  // 'megatron-lm-2019', another stack.
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
    const std::string name = lower(c);
    const bool truncated =
        folded.size() >= 3 && name.size() > folded.size() && name.starts_with(folded);
    const std::tuple<bool, bool, std::size_t> rank{name != folded, !truncated,
                                                   edit_distance(folded, name)};
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
