// `trainsim merge` for sharded plan searches: the JSON documents of `trainsim search --format
// json --shard K/N` joined into exactly the document one unsharded search writes.
//
// Each shard ranks only its own plans and keeps its best `top`, so the union of the shards'
// lists holds the overall best `top`; merging re-ranks them by the objective (ties by plan
// index, as the search does), sums the counts and checks that every shard is there once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/sweep_writer.hpp"

namespace trainsim::io {

// What the start of an output file is: a search document (`trainsim search --format json`, one
// JSON object, however re-indented: "{" and white space, or a first key that is one of a search
// document's, "context" as written, another where another JSON tool reordered them), sweep rows
// (CSV, whose header starts with `index,` and whose end record with `#`, or JSON lines: an object
// whose first key follows its "{" and is any other, as a row written again with its keys sorted
// starts with "bubble_s"), something else (`Other`: a search's table, or any text), or nothing
// to tell by (an empty file or only white space).
enum class OutputKind { Search, Sweep, Other, Empty };
[[nodiscard]] OutputKind output_kind(std::string_view head);

struct MergedSearch {
  std::string text;       // the unsharded search's document, with its final newline
  std::size_t plans = 0;  // plans it lists (0: nothing of the space runs and fits)
};

// Joins the shards' documents. Throws ConfigError naming the file and key for: text that is not
// a search document, a missing key, a different trainsim version, objective, top, space size or
// space digest ("spec", which `trainsim search --shard` writes), a shard given twice or missing,
// and a plan index that appears twice.
[[nodiscard]] MergedSearch merge_search_outputs(const std::vector<SweepOutput>& outputs);

}  // namespace trainsim::io
