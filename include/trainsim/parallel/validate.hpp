// Checks a scenario for plans that cannot run. A sweep turns problems into rows; the command
// line turns the first into one error line.
#pragma once

#include <string>
#include <vector>

#include "trainsim/parallel/scenario.hpp"

namespace trainsim::parallel {

struct Problem {
  std::string key;      // scenario key at fault, as a JSON pointer: "/parallel/tp"
  std::string message;  // "tp 3 does not divide heads 32; expected a divisor of 32"
  // Other keys (or objects) whose values the check read, so that a caller can say who set them:
  // a global batch not divisible by dp x micro_batch reads the micro-batch, tp, pp, cp and the
  // cluster's size. Keys under `key` narrow it: a problem about /parallel that lists
  // /parallel/tp, /parallel/pp and /parallel/cp read those keys of the object alone.
  std::vector<std::string> also;
};

// Every problem of `scenario` (empty when it can run). Fills nothing in: dp must already be
// derived (io/scenario_loader does it). Memory fit is a separate, simulated check.
[[nodiscard]] std::vector<Problem> validate(const Scenario& scenario);

// What is wrong with the stack's memory headroom on this hardware, or "": a fraction of HBM that
// keeps more free than the CUDA context, NCCL buffers and workspace leave ("0.99999 of HBM keeps
// 80.0 GiB free, more than the 79.2 GiB ...; expected at most 0.9898"). Without this check the
// memory model cut it to what they leave, and the report gave the fraction beside other bytes.
[[nodiscard]] std::string headroom_problem(const Scenario& scenario);
// The problem of a stack's memory.workspace that, with the hardware's CUDA context and NCCL
// buffers, takes the whole HBM (no memory left for any plan), or "".
[[nodiscard]] std::string workspace_problem(const Scenario& scenario);

// Throws PlanError with the first problem ("<key>: <message>") when there is one.
void require_valid(const Scenario& scenario);

}  // namespace trainsim::parallel
