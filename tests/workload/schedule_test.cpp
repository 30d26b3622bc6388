#include <catch2/catch.hpp>

#include <set>

#include "trainsim/workload/schedule.hpp"

using namespace trainsim;
using namespace trainsim::workload;
using parallel::PipelineSchedule;

namespace {

std::string render(const std::vector<PassStep>& steps) {
  // Appends piece by piece: `"B" + std::to_string(...)` trips g++ 12's false
  // -Wstringop-overflow at -O3.
  std::string s;
  for (const auto& p : steps) {
    s.push_back(p.backward ? 'B' : 'F');
    s.append(std::to_string(p.microbatch));
    if (p.chunk != 0) {
      s.push_back('c');
      s.append(std::to_string(p.chunk));
    }
    s.push_back(' ');
  }
  return s;
}

}  // namespace

TEST_CASE("schedule: 1F1B warms up pp - stage - 1 forwards", "[workload]") {
  // 4 stages, 6 micro-batches. Stage 0 warms up with 3 forwards, then alternates
  // (Narayanan et al. 2021, Figure 4 top).
  REQUIRE(render(pipeline_order(PipelineSchedule::OneFOneB, 4, 0, 6, 1)) ==
          "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  // The last stage alternates from the start.
  REQUIRE(render(pipeline_order(PipelineSchedule::OneFOneB, 4, 3, 6, 1)) ==
          "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
}

TEST_CASE("schedule: GPipe runs every forward before any backward", "[workload]") {
  REQUIRE(render(pipeline_order(PipelineSchedule::GPipe, 2, 0, 3, 1)) == "F0 F1 F2 B0 B1 B2 ");
}

TEST_CASE("schedule: interleaved 1F1B visits every chunk of every micro-batch once each way",
          "[workload]") {
  // pp 2, 4 micro-batches, 2 chunks. Stage 0 warm-up: (2-0-1)*2 + (2-1)*2 = 4 forwards:
  // chunk 0 of micro-batches 0,1 then chunk 1 of 0,1 (Megatron's groups of pp micro-batches).
  const auto steps = pipeline_order(PipelineSchedule::Interleaved, 2, 0, 4, 2);
  REQUIRE(render(steps).substr(0, 16) == "F0 F1 F0c1 F1c1 ");
  std::set<std::tuple<bool, std::int64_t, std::int64_t>> seen;
  for (const auto& p : steps) seen.insert({p.backward, p.microbatch, p.chunk});
  REQUIRE(steps.size() == 16);
  REQUIRE(seen.size() == 16);
  // The first backward is the last chunk of micro-batch 0.
  auto first_b = std::find_if(steps.begin(), steps.end(), [](const PassStep& p) { return p.backward; });
  REQUIRE(first_b->microbatch == 0);
  REQUIRE(first_b->chunk == 1);
}

TEST_CASE("schedule: interleaved with as many micro-batches as stages runs every forward first",
          "[workload]") {
  // Megatron-LM's forward_backward_pipelining_with_interleaving: "Run all forward passes and
  // then all backward passes if number of microbatches is just the number of pipeline stages"
  // (num_warmup_microbatches = total_num_microbatches). pp 2, 2 micro-batches, 2 chunks: the
  // last stage ran F0 F1 F0c1 B0c1 F1c1 ... by the general count (2 - 1 - 1) x 2 + (2 - 1) x 2.
  for (std::int64_t stage = 0; stage < 2; ++stage) {
    INFO("stage " << stage);
    CHECK(interleaved_warmup(2, stage, 2, 4) == 4);
    CHECK(render(pipeline_order(PipelineSchedule::Interleaved, 2, stage, 2, 2)) ==
          "F0 F1 F0c1 F1c1 B0c1 B1c1 B0 B1 ");
  }
  // With more micro-batches the general count holds: stage 1 of pp 2 at 4 micro-batches.
  CHECK(interleaved_warmup(2, 1, 2, 8) == 2);
}

TEST_CASE("schedule: a backward never precedes its own forward", "[workload]") {
  for (auto sched : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
    for (std::int64_t stage = 0; stage < 4; ++stage) {
      std::set<std::int64_t> done;
      for (const auto& p : pipeline_order(sched, 4, stage, 8, 1)) {
        if (p.backward) {
          REQUIRE(done.count(p.microbatch) == 1);
        } else {
          done.insert(p.microbatch);
        }
      }
    }
  }
}
