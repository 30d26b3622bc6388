#include "sim/io/kineto_reader.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

using Catch::Contains;
using trainsim::ConfigError;
using trainsim::Seconds;
using trainsim::io::parse_kineto_trace;
using trainsim::io::read_kineto_trace;
using trainsim::io::StepAssignment;
using trainsim::io::StepSelection;
using trainsim::io::summarize;
using trainsim::report::KernelCategory;

namespace {

const std::string kTraces = std::string(TRAINSIM_TEST_DATA_DIR) + "/traces/";

// Microseconds to Seconds, for expectations written in the fixtures' unit.
double us(double x) { return x * 1e-6; }

// The fixture's timestamps are near 4.46e12 us, where a double resolves about 0.001 us; every
// derived time below is exact to well under a nanosecond.
Approx near(double seconds) { return Approx(seconds).margin(1e-12); }

const std::string kStep =
    R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
        "ts": 0, "dur": 100})";
const std::string kKernel =
    R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7,
        "ts": 10, "dur": 20, "args": {"stream": 7, "device": 0}})";

std::string trace_of(const std::string& events) {
  return "{\"schemaVersion\": 1, \"traceEvents\": [" + events + "]}";
}

}  // namespace

// tp2_overlap.json: rank 0 of 2, three ProfilerSteps (#4 at T, #5 at T+1000 us, #6 at T+2000 us;
// CPU durations 1000, 1000, 1100 us). In each step, relative to its start S, launched from the
// CPU inside the step and linked by "correlation":
//   GEMM        stream 7   [S+100, S+400)   (step 4: [S+100, S+450), 350 us)
//   AllReduce   stream 20  [S+300, S+600)
//   flash fwd   stream 7   [S+450, S+650)
//   elementwise stream 7   [S+700, S+750)
//   AllGather   stream 20  [S+800, S+1050)
//   memcpy      stream 7   [S+1020, S+1040), launched at S+900
// plus a memset at T-50 launched at T-80, before any step.
TEST_CASE("kineto_reader: two streams with overlapping NCCL and GEMM, by correlation", "[io]") {
  const auto t = read_kineto_trace(kTraces + "tp2_overlap.json");
  REQUIRE(t.rank == 0);
  REQUIRE(t.world_size == 2);
  REQUIRE(t.streams == std::vector<std::int64_t>{7, 20});
  REQUIRE(t.devices == std::vector<std::int64_t>{0});
  // ProfilerStep#4 appears as user_annotation and as cpu_op: one step; the gpu_user_annotation
  // copies on the GPU are not steps.
  REQUIRE(t.steps.size() == 3);
  CHECK(t.steps[0].number == 4);
  CHECK(t.steps[2].number == 6);
  CHECK(t.steps[2].duration.value() == near(us(1100)));
  // 6 kernels x 3 steps + the early memset.
  REQUIRE(t.kernels.size() == 19);

  SECTION("classification") {
    int gemm = 0;
    int attention = 0;
    int memory_bound = 0;
    int memcpy = 0;
    int memset = 0;
    int nccl = 0;
    for (const auto& k : t.kernels) {
      switch (k.category) {
        case KernelCategory::Gemm:
          ++gemm;
          break;
        case KernelCategory::Attention:
          ++attention;
          break;
        case KernelCategory::MemoryBound:
          ++memory_bound;
          break;
        case KernelCategory::Memcpy:
          ++memcpy;
          break;
        case KernelCategory::Memset:
          ++memset;
          break;
        case KernelCategory::Communication:
          ++nccl;
          CHECK((k.op == "all_reduce" || k.op == "all_gather"));
          break;
      }
    }
    CHECK(gemm == 3);
    CHECK(attention == 3);  // "flash_fwd_kernel<... cutlass::bfloat16_t ...>": attention first
    CHECK(memory_bound == 3);
    CHECK(memcpy == 3);
    CHECK(memset == 1);
    CHECK(nccl == 6);
  }

  SECTION("steps come from the launch, not from when the kernel ran") {
    // Every kernel has a launch event; 18 launches lie inside a step, the memset's before all.
    CHECK(t.num_by_correlation == 18);
    CHECK(t.num_by_time == 0);
    CHECK(t.num_unassigned == 1);
    // The memcpy of step 4 runs at T+1020, after ProfilerStep#5 began on the CPU (T+1000):
    // by time it would be step 5's, by its launch at T+900 it is step 4's.
    const auto copy = std::find_if(t.kernels.begin(), t.kernels.end(), [](const auto& k) {
      return k.category == KernelCategory::Memcpy;
    });
    REQUIRE(copy != t.kernels.end());
    CHECK(copy->step == 0);
    CHECK(copy->assignment == StepAssignment::Correlation);
    // Its six GPU events, the copy among them: five kernels (copies and fills are no kernel).
    CHECK(t.step_breakdowns[0].num_kernels == 5);
  }

  SECTION("a steady step: overlap, exposed communication, idle") {
    const auto& b = t.step_breakdowns[1];  // ProfilerStep#5
    CHECK(b.step == 5);
    CHECK(b.cpu_duration.value() == near(us(1000)));
    // span: first start S+100, last end S+1050 -> 950 us.
    CHECK(b.span.value() == near(us(950)));
    // all: [100,650) u [700,750) u [800,1050) = 550 + 50 + 250 = 850 us; idle = 950 - 850.
    CHECK(b.busy.value() == near(us(850)));
    CHECK(b.idle.value() == near(us(100)));
    // compute (every non-NCCL kernel): 300 + 200 + 50 + 20 = 570 us, on one stream: sum = union.
    CHECK(b.compute.value() == near(us(570)));
    CHECK(b.compute_kernel_sum.value() == near(us(570)));
    // NCCL: 300 + 250 = 550 us, disjoint.
    CHECK(b.communication.value() == near(us(550)));
    CHECK(b.communication_kernel_sum.value() == near(us(550)));
    // AllReduce [300,600) meets GEMM on [300,400) (100) and flash on [450,600) (150); AllGather
    // [800,1050) meets the memcpy on [1020,1040) (20): 270 us overlapped, 550 - 270 exposed.
    CHECK(b.overlapped_communication.value() == near(us(270)));
    CHECK(b.exposed_communication.value() == near(us(280)));
    // TraceLens' identity: compute + exposed communication + idle = span (570 + 280 + 100).
    CHECK((b.compute + b.exposed_communication + b.idle).value() == near(b.span.value()));
    CHECK(b.categories.at(KernelCategory::Gemm).busy.value() == near(us(300)));
    CHECK(b.categories.at(KernelCategory::Attention).busy.value() == near(us(200)));
    CHECK(b.categories.at(KernelCategory::MemoryBound).busy.value() == near(us(50)));
    CHECK(b.categories.at(KernelCategory::Memcpy).busy.value() == near(us(20)));
    CHECK(b.categories.count(KernelCategory::Memset) == 0);
    CHECK(b.collectives.at("all_reduce").busy.value() == near(us(300)));
    CHECK(b.collectives.at("all_reduce").num_kernels == 1);
    CHECK(b.collectives.at("all_gather").busy.value() == near(us(250)));
  }

  SECTION("the warm-up step") {
    const auto& b = t.step_breakdowns[0];  // ProfilerStep#4, GEMM [100,450)
    // compute: 350 + 200 + 50 + 20 = 620 us. Overlap: AllReduce [300,600) with GEMM [300,450)
    // and flash [450,600): 300 us; AllGather with memcpy 20 us; 320 overlapped, 550 - 320 = 230
    // exposed. Union of all unchanged (the GEMM ends where flash starts): 850; idle 100.
    CHECK(b.compute.value() == near(us(620)));
    CHECK(b.overlapped_communication.value() == near(us(320)));
    CHECK(b.exposed_communication.value() == near(us(230)));
    CHECK(b.idle.value() == near(us(100)));
  }

  SECTION("summary: skip the first step by default") {
    const auto s = summarize(t, StepSelection::SkipFirst);
    CHECK(s.used == std::vector<std::int64_t>{5, 6});
    CHECK(s.skipped == std::vector<std::int64_t>{4});
    // Steps 5 and 6 have the same GPU work; CPU: (1000 + 1100) / 2 = 1050 us.
    CHECK(s.mean.cpu_duration.value() == near(us(1050)));
    CHECK(s.mean.compute.value() == near(us(570)));
    CHECK(s.mean.exposed_communication.value() == near(us(280)));
    CHECK(s.mean.collectives.at("all_gather").num_kernels == 1);
  }

  SECTION("summary: all steps") {
    const auto s = summarize(t, StepSelection::All);
    CHECK(s.used == std::vector<std::int64_t>{4, 5, 6});
    CHECK(s.skipped.empty());
    // (620 + 570 + 570) / 3 and (230 + 280 + 280) / 3 us.
    CHECK(s.mean.compute.value() == near(us(1760.0 / 3.0)));
    CHECK(s.mean.exposed_communication.value() == near(us(790.0 / 3.0)));
    // (1000 + 1000 + 1100) / 3 us.
    CHECK(s.mean.cpu_duration.value() == near(us(3100.0 / 3.0)));
  }
}

// array_time.json: the JSON array form, early Kineto spellings ("Operator", "Kernel",
// "Memset"), integer microseconds, no launch events, streams only in tid.
//   ProfilerStep#0 [1000, 1500), ProfilerStep#1 [1500, 2100)
//   GEMM [900, 950) before any step
//   step 0: GEMM t7 [1100,1300), AllReduce t13 [1250,1450), elementwise t7 [1450,1480)
//   step 1: memset t7 [1510,1515), GEMM t7 [1600,1900), ReduceScatter t13 [1700,2000),
//           SendRecv t13 [2000,2050)
TEST_CASE("kineto_reader: array form, early Kineto names, steps by time", "[io]") {
  const auto t = read_kineto_trace(kTraces + "array_time.json");
  CHECK_FALSE(t.rank.has_value());
  REQUIRE(t.steps.size() == 2);
  CHECK(t.streams == std::vector<std::int64_t>{7, 13});
  CHECK(t.num_by_correlation == 0);
  CHECK(t.num_by_time == 7);
  CHECK(t.num_unassigned == 1);  // the GEMM at 900 starts before ProfilerStep#0

  const auto& s0 = t.step_breakdowns[0];
  // span 1480 - 1100 = 380; one busy run [1100,1480): idle 0. compute 200 + 30 = 230;
  // AllReduce 200, overlapped with the GEMM on [1250,1300): 50; exposed 150.
  CHECK(s0.span.value() == near(us(380)));
  CHECK(s0.idle.value() == near(0.0));
  CHECK(s0.compute.value() == near(us(230)));
  CHECK(s0.overlapped_communication.value() == near(us(50)));
  CHECK(s0.exposed_communication.value() == near(us(150)));

  const auto& s1 = t.step_breakdowns[1];
  // span 2050 - 1510 = 540; busy 5 + [1600,2050) 450 = 455; idle 85. compute 5 + 300 = 305.
  // NCCL [1700,2000) u [2000,2050) = 350, overlapped with the GEMM on [1700,1900): 200.
  CHECK(s1.span.value() == near(us(540)));
  CHECK(s1.idle.value() == near(us(85)));
  CHECK(s1.compute.value() == near(us(305)));
  CHECK(s1.communication.value() == near(us(350)));
  CHECK(s1.exposed_communication.value() == near(us(150)));
  CHECK(s1.categories.at(KernelCategory::Memset).busy.value() == near(us(5)));
  CHECK(s1.collectives.at("reduce_scatter").busy.value() == near(us(300)));
  CHECK(s1.collectives.at("send_recv").busy.value() == near(us(50)));
  CHECK(s1.cpu_duration.value() == near(us(600)));

  // Two steps: skip-first keeps only ProfilerStep#1.
  const auto sum = summarize(t, StepSelection::SkipFirst);
  CHECK(sum.used == std::vector<std::int64_t>{1});
  CHECK(sum.mean.exposed_communication.value() == near(us(150)));
}

TEST_CASE("kineto_reader: a launch outside every step leaves its kernel unassigned", "[io]") {
  // Launch at ts 150 (after ProfilerStep#1 [0,100)), the kernel at 160: by correlation it
  // belongs to no step, even though by time it would fall in the last, open-ended one.
  const auto t = parse_kineto_trace(trace_of(kStep + "," + kKernel + R"(,
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 150, "dur": 3, "args": {"correlation": 9}},
        {"ph": "X", "cat": "kernel", "name": "flash_bwd_kernel", "pid": 0, "tid": 7,
         "ts": 160, "dur": 5, "args": {"stream": 7, "correlation": 9}})"),
                                    "mem.json");
  CHECK(t.num_unassigned == 1);
  CHECK(t.num_by_time == 1);  // the first kernel has no correlation
  CHECK(t.step_breakdowns[0].num_kernels == 1);
  // A single step: skip-first has nothing to skip.
  CHECK(summarize(t, StepSelection::SkipFirst).used == std::vector<std::int64_t>{1});
}

TEST_CASE("kineto_reader: a launch at a step boundary belongs to the step it opens", "[io]") {
  // Steps [0, 100) and [100, 200); a launch at 100 (correlation 9) and a kernel without one at
  // 100: both in step 2, as "[start of step i, start of step i+1)" (docs/compare.md). The launch
  // went to step 1, its range taken as closed.
  const auto t = parse_kineto_trace(trace_of(kStep + R"(,
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,
         "ts": 100, "dur": 100},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 100, "dur": 3, "args": {"correlation": 9}},
        {"ph": "X", "cat": "kernel", "name": "gemm_a", "pid": 0, "tid": 7,
         "ts": 120, "dur": 5, "args": {"stream": 7, "correlation": 9}},
        {"ph": "X", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7,
         "ts": 100, "dur": 5, "args": {"stream": 7}})"),
                                    "edge.json");
  REQUIRE(t.kernels.size() == 2);
  CHECK(t.num_by_correlation == 1);
  CHECK(t.num_by_time == 1);
  for (const auto& k : t.kernels) CHECK(k.step == 1);
}

TEST_CASE("kineto_reader: a kernel recorded twice is read once", "[io]") {
  // The same kernel (name, stream, start, duration) twice: one stream runs one kernel at a
  // time, so it is one kernel written twice, and its 20 us counted twice made the kernel sum 40.
  const auto t = parse_kineto_trace(trace_of(kStep + "," + kKernel + "," + kKernel), "dup.json");
  CHECK(t.duplicate_gpu_events == 1);
  REQUIRE(t.kernels.size() == 1);
  CHECK(t.step_breakdowns[0].compute_kernel_sum.value() == near(us(20)));
  // At another start it is another kernel.
  std::string later = kKernel;
  later.replace(later.find("\"ts\": 10"), 8, "\"ts\": 40");
  const auto u = parse_kineto_trace(trace_of(kStep + "," + kKernel + "," + later), "two.json");
  CHECK(u.duplicate_gpu_events == 0);
  CHECK(u.kernels.size() == 2);
}

TEST_CASE("kineto_reader: a step without kernels is left out of the summary", "[io]") {
  // ProfilerStep#1 [0, 100) holds the GEMM [10, 30) by time; #2 [100, 200) and #3 [200, 300)
  // hold none (a trace cut short). Their zeros are no measurement: the summary is #1's alone
  // (span 20 us), and skip-first has one step with kernels, so nothing to skip.
  const std::string step2 = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2",
        "pid": 1, "tid": 1, "ts": 100, "dur": 100})";
  const std::string step3 = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3",
        "pid": 1, "tid": 1, "ts": 200, "dur": 100})";
  const auto t =
      parse_kineto_trace(trace_of(kStep + "," + step2 + "," + step3 + "," + kKernel), "cut.json");
  for (const auto selection : {StepSelection::SkipFirst, StepSelection::All}) {
    const auto sum = summarize(t, selection);
    CHECK(sum.used == std::vector<std::int64_t>{1});
    CHECK(sum.skipped.empty());
    CHECK(sum.empty == std::vector<std::int64_t>{2, 3});
    CHECK(sum.mean.span.value() == near(us(20)));
  }
}

TEST_CASE("kineto_reader: a step that holds copies or fills alone holds no kernel", "[io]") {
  // ProfilerStep#1 [0, 100) holds the GEMM [10, 30); #2 [100, 200) a memset [150, 160) alone.
  // #2 is left out as a step without kernels: it was averaged in, its 10 us memset set beside
  // the whole simulated step.
  const std::string step2 = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2",
        "pid": 1, "tid": 1, "ts": 100, "dur": 100})";
  const std::string memset = R"J({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)",
        "pid": 0, "tid": 7, "ts": 150, "dur": 10, "args": {"stream": 7, "device": 0}})J";
  const auto t =
      parse_kineto_trace(trace_of(kStep + "," + step2 + "," + kKernel + "," + memset), "m.json");
  CHECK(t.step_kernels == std::vector<std::int64_t>{1, 0});
  const auto sum = summarize(t, StepSelection::All);
  CHECK(sum.used == std::vector<std::int64_t>{1});
  CHECK(sum.empty == std::vector<std::int64_t>{2});
  // The only kernel before every step, a memset inside one: no step holds a kernel.
  const std::string early = R"({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
        "ts": 0, "dur": 10, "args": {"stream": 7, "device": 0}})";
  const std::string late_step = R"({"ph": "X", "cat": "user_annotation",
        "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 100, "dur": 100})";
  REQUIRE_THROWS_WITH(
      parse_kineto_trace(trace_of(late_step + "," + early + "," + memset), "m.json"),
      "m.json: /traceEvents: none of the 1 GPU kernels falls in a ProfilerStep#N range (each "
      "starts before the first step, or was launched outside every step); expected a trace "
      "whose steps hold its kernels");
}

TEST_CASE("kineto_reader: kernels go to their steps among many", "[io]") {
  // 1,000 steps of 10 us from 0, one kernel starting 1 us into each, and one launched (by
  // correlation) 2 us into step 500 that runs 3 us into step 501: each by time to its own step,
  // the launched one to 500 (the bisection that replaced a linear scan keeps both rules).
  std::string events;
  for (int i = 0; i < 1000; ++i) {
    events +=
        (i == 0 ? "" : ",") +
        std::string(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)") +
        std::to_string(i) + R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(10 * i) +
        R"(, "dur": 10}, {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
        std::to_string(10 * i + 1) + R"(, "dur": 1})";
  }
  events += R"(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                  "ts": 5002, "dur": 1, "args": {"correlation": 77}},
               {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 8, "ts": 5013,
                "dur": 1, "args": {"correlation": 77, "stream": 8, "device": 0}})";
  const auto t = parse_kineto_trace(trace_of(events), "many.json");
  REQUIRE(t.kernels.size() == 1001);
  std::int64_t late_step = -1;
  for (const auto& k : t.kernels) {
    if (k.name == "late") {
      late_step = k.step;
    } else {
      CHECK(k.step == static_cast<std::int64_t>(k.start.value() * 1e5 + 1e-6));
    }
  }
  CHECK(late_step == 500);
  CHECK(t.num_by_correlation == 1);
  CHECK(t.num_by_time == 1000);
}

TEST_CASE("kineto_reader: a correlation id on two launches that do not overlap is refused",
          "[io]") {
  // The runtime call and the driver call inside it may carry one id over one range: read once,
  // the kernel goes to step 1 by its launch at 50.
  const std::string runtime =
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
          "ts": 50, "dur": 6, "args": {"correlation": 9}})";
  const std::string driver =
      R"({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1,
          "ts": 51, "dur": 4, "args": {"correlation": 9}})";
  const std::string step2 =
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,
          "ts": 100, "dur": 100})";
  const std::string kernel =
      R"({"ph": "X", "cat": "kernel", "name": "flash_bwd_kernel", "pid": 0, "tid": 7,
          "ts": 120, "dur": 5, "args": {"stream": 7, "correlation": 9}})";
  const auto t = parse_kineto_trace(
      trace_of(kStep + "," + step2 + "," + runtime + "," + driver + "," + kernel), "t.json");
  CHECK(t.num_by_correlation == 1);
  CHECK(t.step_breakdowns[0].num_kernels == 1);
  CHECK(t.step_breakdowns[1].num_kernels == 0);
  // A driver call that starts where its runtime call ends (whole microseconds) is the same
  // launch.
  const std::string touching =
      R"({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1,
          "ts": 56, "dur": 1, "args": {"correlation": 9}})";
  CHECK(parse_kineto_trace(
            trace_of(kStep + "," + step2 + "," + runtime + "," + touching + "," + kernel), "t.json")
            .num_by_correlation == 1);
  // The same id launched again in step 2: which launch the kernel belongs to, and so its step,
  // cannot be told.
  const std::string again =
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
          "ts": 110, "dur": 6, "args": {"correlation": 9}})";
  REQUIRE_THROWS_WITH(
      parse_kineto_trace(trace_of(kStep + "," + step2 + "," + runtime + "," + again + "," + kernel),
                         "t.json"),
      "t.json: /traceEvents/3/args/correlation: correlation id 9 given to two launches that do "
      "not overlap (at 50.0 us and 110.0 us); expected each launch's id once (a launch recorded "
      "twice covers one range)");
}

TEST_CASE("kineto_reader: fields repeated in an event are read, not refused", "[io]") {
  // Chrome trace writers repeat fields of an event (catapult-project/catapult#4343); a profiler
  // trace is not a file the user wrote, so the trace reader keeps the last value, as nlohmann
  // does, where every other reader refuses a repeated key. The kernel repeats "stream" and
  // "name" in its args: it is still the one GEMM on stream 7 inside the step.
  const auto t = parse_kineto_trace(trace_of(kStep + R"(,
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7,
         "ts": 10, "dur": 20, "args": {"stream": 7, "name": "a", "name": "b", "stream": 7}})"),
                                    "dup.json");
  REQUIRE(t.steps.size() == 1);
  CHECK(t.streams == std::vector<std::int64_t>{7});
  CHECK(t.step_breakdowns[0].num_kernels == 1);
  CHECK(t.step_breakdowns[0].compute.value() == near(us(20)));
}

TEST_CASE("kineto_reader: bad input", "[io]") {
  SECTION("not JSON") {
    REQUIRE_THROWS_WITH(parse_kineto_trace("{\"traceEvents\": [", "t.json"),
                        Contains("t.json: invalid JSON at line 1"));
  }
  SECTION("not a trace") {
    REQUIRE_THROWS_WITH(parse_kineto_trace(R"({"schemaVersion": 1})", "t.json"),
                        Contains("t.json: /: not a Chrome trace: no \"traceEvents\" key"));
    REQUIRE_THROWS_WITH(parse_kineto_trace("42", "t.json"),
                        Contains("t.json: /: not a Chrome trace; expected a PyTorch profiler "
                                 "trace") &&
                            Contains("got 42"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(R"({"traceEvents": {"a": 1}})", "t.json"),
                        Contains("/traceEvents: expected an array of trace events, got an "
                                 "object"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + ", 7"), "t.json"),
                        Contains("/traceEvents/1: expected a trace event (an object), got 7"));
  }
  SECTION("arguments compare reads, not as Kineto writes them") {
    // A kernel whose args cannot be read would have lost its correlation (moved to the time
    // assignment) or its stream without a word.
    const auto kernel_args = [](const std::string& args) {
      return trace_of(kStep + R"(, {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0,
          "tid": 7, "ts": 10, "dur": 20, "args": )" +
                      args + "}");
    };
    REQUIRE_THROWS_WITH(parse_kineto_trace(kernel_args("5"), "t.json"),
                        Contains("t.json: /traceEvents/1/args: expected an object of the "
                                 "event's arguments, got 5"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(kernel_args(R"({"correlation": 1.5})"), "t.json"),
                        Contains("/traceEvents/1/args/correlation: expected a correlation id (an "
                                 "integer from 0 to 2^63 - 1, or -1 for none, as Kineto writes "
                                 "it), got 1.5"));
    // Past int64, JSON reads them as unsigned; 2^64 - 1 wrapped to -1 ("none"), and the kernel
    // went to the time-based assignment, in another step, without a word.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(kernel_args(R"({"correlation": 18446744073709551615})"), "t.json"),
        Contains("/args/correlation: expected a correlation id") &&
            Contains("got 18446744073709551615"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(kernel_args(R"({"device": 9223372036854775808})"), "t.json"),
        Contains("/args/device: expected a device index") && Contains("9223372036854775808"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(kernel_args(R"({"correlation": "1"})"), "t.json"),
                        Contains("/args/correlation: expected a correlation id"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(kernel_args(R"({"stream": -2})"), "t.json"),
                        Contains("/args/stream: expected a stream id"));
    // A phase that is not a string: refused, where a kernel with "ph": 1 was counted among the
    // GPU events in other phases.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + R"(, {"ph": 1, "cat": "kernel", "name": "gemm",
            "pid": 0, "tid": 7, "ts": 10, "dur": 20})"),
                           "t.json"),
        Contains("t.json: /traceEvents/1/ph: expected the event's phase as a string (\"X\" for "
                 "a complete event), got 1"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(kernel_args(R"({"Collective name": 7})"), "t.json"),
                        Contains("/args/Collective name: expected a string, got 7"));
    // Every event has a phase: a kernel without one was read as complete.
    std::string no_ph = kKernel;
    no_ph.replace(no_ph.find("\"ph\": \"X\", "), 11, "");
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + "," + no_ph), "t.json"),
                        Contains("t.json: /traceEvents/1/ph: missing required key; expected the "
                                 "event's phase"));
    // A category that is not a string, or none on a complete event: refused. Such a kernel
    // was dropped in silence (a step's GEMM of 100 us out of its compute).
    for (const std::string cat : {R"("cat": ["kernel"], )", R"("cat": null, )", R"("cat": 3, )"}) {
      std::string bad = kKernel;
      bad.replace(bad.find(R"("cat": "kernel", )"), 17, cat);
      INFO(bad);
      REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + "," + bad), "t.json"),
                          Contains("t.json: /traceEvents/1/cat: expected the event's category "
                                   "as a string"));
    }
    std::string no_cat = kKernel;
    no_cat.replace(no_cat.find(R"("cat": "kernel", )"), 17, "");
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + "," + no_cat), "t.json"),
                        Contains("t.json: /traceEvents/1/cat: missing required key; expected "
                                 "the complete event's category"));
    // A trace none of whose events has a category: the legacy autograd profiler's.
    std::string legacy_step = kStep;
    legacy_step.replace(legacy_step.find(R"("cat": "user_annotation", )"), 26, "");
    REQUIRE_THROWS_WITH(
        parse_kineto_trace("[" + legacy_step + "," + no_cat + "]", "t.json"),
        Contains("t.json: /0/cat: missing required key: no complete event of the trace has a "
                 "category, as the legacy autograd profiler writes them"));
    // With use_cuda its flow events carry a category ("cpu_to_cuda"), its complete events none.
    const std::string flow = R"({"ph": "s", "cat": "cpu_to_cuda", "name": "launch", "id": 1,
                                 "pid": 1, "tid": 1, "ts": 10})";
    REQUIRE_THROWS_WITH(
        parse_kineto_trace("[" + legacy_step + "," + flow + "," + no_cat + "]", "t.json"),
        Contains("t.json: /0/cat: missing required key: no complete event of the trace has a "
                 "category"));
    // Metadata events (ph "M": process and thread names) carry no category, as Kineto writes
    // them.
    CHECK(parse_kineto_trace(trace_of(kStep + "," + kKernel +
                                      R"(, {"ph": "M", "name": "process_name", "pid": 0,
                                            "args": {"name": "GPU 0"}})"),
                             "t.json")
              .kernels.size() == 1);
    // -1 is none (HTA writes a missing stream so): the stream is then the tid's.
    const auto t =
        parse_kineto_trace(kernel_args(R"({"stream": -1, "correlation": -1})"), "t.json");
    REQUIRE(t.kernels.size() == 1);
    CHECK(t.kernels[0].stream == 7);
  }
  SECTION("no GPU kernels") {
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep), "t.json"),
                        Contains("t.json: /traceEvents: no GPU kernels (events with cat "
                                 "\"kernel\"); expected a trace recorded with "
                                 "ProfilerActivity.CUDA, got 1 events"));
    // Copies and fills alone are no step's GPU work: one memset was compared with a whole
    // simulated step.
    const std::string memset =
        R"j({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 10, "dur": 10,)j"
        R"j( "pid": 0, "tid": 7})j";
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + ", " + memset), "t.json"),
                        "t.json: /traceEvents: no GPU kernels (events with cat \"kernel\"); "
                        "expected a trace recorded with ProfilerActivity.CUDA, got 2 events and "
                        "1 GPU copies or fills, no kernel");
  }
  SECTION("steps repeated or overlapping") {
    // kStep (ProfilerStep#1 over [0, 100) us) and a cpu_op copy of it over [ts, ts + dur).
    const auto with_copy = [](const std::string& ts, const std::string& dur) {
      return trace_of(kStep + R"(, {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": )" +
                      ts + R"(, "dur": )" + dur + "}, " + kKernel);
    };
    // The same step recorded twice (cpu_op and user_annotation) over one range is read once.
    CHECK(parse_kineto_trace(with_copy("0", "100"), "t.json").steps.size() == 1);
    // The same number over another range is not that: its kernels would have been dropped.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(with_copy("100", "100"), "t.json"),
        "t.json: /traceEvents/1/name: ProfilerStep#1 given twice over ranges that do not "
        "overlap; expected each step number once (a step recorded twice covers one range)");
    // Copies over one range that differ by more than 1% of the step (here 100 us against 120)
    // would make the iteration time depend on which came first in the file.
    REQUIRE_THROWS_WITH(parse_kineto_trace(with_copy("0", "120"), "t.json"),
                        "t.json: /traceEvents/1/dur: ProfilerStep#1 given twice over different "
                        "ranges (100.0 us from 0.0 us, 120.0 us from 0.0 us); expected its "
                        "copies over one range, within 1% of the step");
    // A copy that starts 5 us later (5% of the step) is named at its start.
    REQUIRE_THROWS_WITH(parse_kineto_trace(with_copy("5", "100"), "t.json"),
                        Catch::StartsWith("t.json: /traceEvents/1/ts: ProfilerStep#1 given twice "
                                          "over different ranges"));
    // Within 1% (0.5 us of 100) they are one step, the first copy kept.
    const auto one = parse_kineto_trace(with_copy("0.5", "100.5"), "t.json");
    REQUIRE(one.steps.size() == 1);
    CHECK(one.steps[0].duration.value() == near(us(100)));
    // A step starting before the previous one ends would count the overlap's kernels twice; a
    // step starting where the previous ends is the usual case.
    const std::string overlapping =
        R"({"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#2", "ts": 50, "dur": 100})";
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + ", " + overlapping + ", " + kKernel), "t.json"),
        Contains("t.json: /traceEvents: ProfilerStep#2 starts at 50") &&
            Contains("before ProfilerStep#1 ends at 100") &&
            Contains("expected profiler steps one after another"));
    const std::string next =
        R"({"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#2", "ts": 100, "dur": 100})";
    CHECK(
        parse_kineto_trace(trace_of(kStep + ", " + next + ", " + kKernel), "t.json").steps.size() ==
        2);
  }
  SECTION("no ProfilerStep") {
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kKernel), "t.json"),
                        Contains("no ProfilerStep#N ranges; expected a trace recorded with a "
                                 "torch.profiler schedule and prof.step()"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(
            trace_of(kKernel + R"(, {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#x",
                                     "ts": 0, "dur": 1})"),
            "t.json"),
        Contains("/traceEvents/1/name: bad profiler step name; expected \"ProfilerStep#<N>\", "
                 "got \"ProfilerStep#x\""));
    // Steps that exist but are not read: the GPU copies alone (a trace cut to its GPU events),
    // CPU-side steps as begin/end pairs, and steps of another category. The message said
    // "none named so" of each.
    const std::string gpu_copy =
        R"({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1})";
    const std::string begin =
        R"({"ph": "B", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 0})";
    const std::string python =
        R"({"ph": "X", "cat": "python_function", "name": "ProfilerStep#3", "ts": 0, "dur": 1})";
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kKernel + ", " + gpu_copy + ", " + gpu_copy), "t.json"),
        Contains("got 3 events and 2 named so that are not read as steps: 2 GPU copies (cat "
                 "gpu_user_annotation); compare reads the complete events of cat "
                 "user_annotation or cpu_op"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kKernel + ", " + gpu_copy + ", " + begin + ", " + python),
                           "t.json"),
        Contains("got 4 events and 3 named so that are not read as steps: 1 GPU copy (cat "
                 "gpu_user_annotation), 1 not a complete event (\"ph\" other than \"X\"), 1 of "
                 "another category (the first: cat 'python_function')"));
    // Beside steps that are read, the CPU-side ones not read are counted (compare notes them);
    // the GPU copies every Kineto trace has are not.
    const auto read = parse_kineto_trace(
        trace_of(kStep + ", " + kKernel + ", " + gpu_copy + ", " + begin + ", " + python),
        "t.json");
    CHECK(read.steps.size() == 1);
    CHECK(read.skipped_step_events == 2);
    CHECK(parse_kineto_trace(trace_of(kStep + ", " + kKernel + ", " + gpu_copy), "t.json")
              .skipped_step_events == 0);
    // A negative step number, which from_chars reads (PyTorch numbers steps from 0).
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(
            trace_of(kKernel + R"(, {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#-1",
                                     "ts": 0, "dur": 1})"),
            "t.json"),
        Contains("/traceEvents/1/name: bad profiler step name"));
  }
  SECTION("a step of no duration, which holds no kernel") {
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(
            trace_of(kKernel + R"(, {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1",
                                     "ts": 0, "dur": 0})"),
            "t.json"),
        Contains("t.json: /traceEvents/1/dur: profiler step ProfilerStep#1 lasts 0") &&
            Contains("expected a step of at least 1 ns (0.001 us), the resolution Kineto writes"));
    // Shorter than Kineto's nanosecond: 1e-306 us made every difference of compare's table
    // +inf% and its JSON fraction null.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(
            trace_of(kKernel + R"(, {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1",
                                     "ts": 0, "dur": 1e-306})"),
            "t.json"),
        Contains("t.json: /traceEvents/1/dur: profiler step ProfilerStep#1 lasts 1e-306 us; "
                 "expected a step of at least 1 ns"));
    // One nanosecond is a step.
    CHECK_NOTHROW(parse_kineto_trace(
        trace_of(
            R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 0.001},
                 {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": 0, "dur": 0.001})"),
        "t.json"));
  }
  SECTION("ts and dur") {
    const std::string head = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )";
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + "," + head + R"("dur": 5})"), "t.json"),
                        Contains("t.json: /traceEvents/1/ts: missing required key; expected a "
                                 "timestamp in microseconds"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": 5})"), "t.json"),
                        Contains("/traceEvents/1/dur: missing required key; expected a duration"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": 5, "dur": -2})"), "t.json"),
        Contains("/traceEvents/1/dur: negative dur; expected a duration in microseconds >= 0, "
                 "got -2"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": -5, "dur": 2})"), "t.json"),
        Contains("/traceEvents/1/ts: negative ts; expected a timestamp in microseconds >= 0, "
                 "got -5"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": "5", "dur": 2})"), "t.json"),
        Contains("/traceEvents/1/ts: expected a timestamp in microseconds (a number), got \"5\""));
    // JSON has no infinity: a number too large for a double is refused while parsing.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": 1e400, "dur": 2})"), "t.json"),
        Contains("t.json: invalid JSON at line 2, column 98 (number overflow"));
    // Past the bounds (kineto_reader.cpp, time_field): sums would print as 300-digit numbers.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": 5, "dur": 1e307})"), "t.json"),
        Contains("/traceEvents/1/dur: dur too large; expected a duration in microseconds of at "
                 "most 1e12, got 1e+307"));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + "," + head + R"("ts": 2e17, "dur": 2})"), "t.json"),
        Contains("/traceEvents/1/ts: ts too large; expected a timestamp in microseconds of at "
                 "most 1e17, got 2e+17"));
    // A Unix-epoch clock in microseconds (2024) and an 11-day step are within them.
    CHECK_NOTHROW(parse_kineto_trace(
        trace_of(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1",
                     "ts": 1.7e15, "dur": 1e12},)" +
                 head + R"("ts": 1.7e15, "dur": 2})"),
        "t.json"));
    // The ProfilerStep itself is checked too.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(
            trace_of(
                kKernel +
                R"(, {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 1})"),
            "t.json"),
        Contains("/traceEvents/1/dur: missing required key"));
    // Events the reader does not use need no duration (metadata, instants, flows).
    CHECK_NOTHROW(parse_kineto_trace(
        trace_of(kStep + "," + kKernel +
                 R"(, {"ph": "i", "s": "g", "name": "Record Window End", "ts": 5},
                      {"ph": "s", "id": 1, "cat": "ac2g", "name": "ac2g", "ts": 1})"),
        "t.json"));
  }
  SECTION("distributedInfo") {
    const auto with_info = [](const std::string& info) {
      return "{\"distributedInfo\": " + info + ", \"traceEvents\": [" + kStep + "," + kKernel +
             "]}";
    };
    REQUIRE_THROWS_WITH(parse_kineto_trace(with_info(R"({"rank": 5, "world_size": 2})"), "t.json"),
                        Contains("t.json: /distributedInfo/rank: expected a rank from 0 to "
                                 "world_size - 1 (1), got 5"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(with_info(R"({"rank": -1})"), "t.json"),
                        Contains("/distributedInfo/rank: expected a rank from 0 to world_size - "
                                 "1, got -1"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(with_info(R"({"rank": 0, "world_size": 0})"), "t.json"),
                        Contains("/distributedInfo/world_size: expected 1 to 16777216 ranks, got "
                                 "0"));
    // Present but not an integer: an error, not a trace without a rank.
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(with_info(R"({"rank": "1", "world_size": 2})"), "t.json"),
        Contains("t.json: /distributedInfo/rank: expected an integer rank from 0 to "
                 "world_size - 1, got \"1\""));
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(with_info(R"({"rank": 1, "world_size": 2.5})"), "t.json"),
        Contains("/distributedInfo/world_size: expected an integer number of ranks, 1 to "
                 "16777216, got 2.5"));
    // Not an object: refused, where it was ignored.
    REQUIRE_THROWS_WITH(parse_kineto_trace(with_info("5"), "t.json"),
                        Contains("t.json: /distributedInfo: expected an object (rank, "
                                 "world_size), got 5"));
    // Past int64 (read as unsigned): refused in the same words, not wrapped to -1. (These said
    // "an integer from -2^63 to 2^63 - 1", the reader's type rather than what it accepts.)
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(with_info(R"({"rank": 18446744073709551615, "world_size": 2})"),
                           "t.json"),
        Contains("/distributedInfo/rank: expected an integer rank from 0 to world_size - 1, "
                 "got 18446744073709551615"));
    const auto t = parse_kineto_trace(with_info(R"({"rank": 1, "world_size": 2})"), "t.json");
    CHECK(t.rank == 1);
    CHECK(t.world_size == 2);
  }
  SECTION("no kernel inside any step") {
    // The step begins at ts 1000; the kernel ran at ts 10, before it, so no step holds it.
    const std::string late_step =
        R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
            "ts": 1000, "dur": 100})";
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(late_step + "," + kKernel), "t.json"),
        Contains("t.json: /traceEvents: none of the 1 GPU kernels falls in a ProfilerStep#N "
                 "range"));
  }
  SECTION("a kernel without a name") {
    REQUIRE_THROWS_WITH(
        parse_kineto_trace(trace_of(kStep + R"(, {"ph": "X", "cat": "kernel", "ts": 1, "dur": 1})"),
                           "t.json"),
        Contains("/traceEvents/1/name: missing required key"));
  }
  SECTION("gzip, binary, huge, deep") {
    const std::string gzip = std::string("\x1f\x8b\x08\x00", 4) + "rest";
    REQUIRE_THROWS_WITH(parse_kineto_trace(gzip, "rank0.json.gz"),
                        Contains("rank0.json.gz: gzip-compressed data; expected an uncompressed "
                                 "JSON trace") &&
                            Contains("gunzip -k rank0.json.gz"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(std::string("{\"a\":\0}", 7), "t.json"),
                        Contains("NUL byte at offset 5"));
    const std::string huge((std::size_t{64} << 20U) + 1, ' ');
    REQUIRE_THROWS_WITH(parse_kineto_trace(huge, "t.json"),
                        Contains("file too large; expected a trace of at most 64 MiB, got 67108865 "
                                 "bytes"));
    REQUIRE_THROWS_WITH(parse_kineto_trace(std::string(100, '['), "t.json"),
                        Contains("JSON nested too deeply"));
  }
  SECTION("files") {
    REQUIRE_THROWS_AS(read_kineto_trace(kTraces + "no_such_trace.json"), ConfigError);
    REQUIRE_THROWS_WITH(read_kineto_trace(kTraces + "no_such_trace.json"),
                        Contains("no_such_trace.json: cannot open file"));
    REQUIRE_THROWS_WITH(read_kineto_trace(kTraces), Contains("is a directory"));
  }
}

TEST_CASE("kineto_reader: GPU work not written as complete events is counted, not read", "[io]") {
  // A begin/end pair of a kernel and of a copy (ph B and E; Kineto writes GPU work as X events
  // only) and a flow event: the pairs' four events are counted for compare's note, the flow
  // event (not GPU work) is not, and only the X kernel is read.
  const auto t = parse_kineto_trace(trace_of(kStep + "," + kKernel + R"(,
        {"ph": "B", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7, "ts": 40},
        {"ph": "E", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7, "ts": 50},
        {"ph": "B", "cat": "Memcpy", "name": "copy", "pid": 0, "tid": 7, "ts": 60},
        {"ph": "E", "cat": "Memcpy", "name": "copy", "pid": 0, "tid": 7, "ts": 70},
        {"ph": "s", "cat": "ac2g", "name": "flow", "pid": 0, "tid": 7, "ts": 10, "id": 1})"),
                                    "t.json");
  REQUIRE(t.kernels.size() == 1);
  REQUIRE(t.skipped_gpu_events == 4);
  REQUIRE(parse_kineto_trace(trace_of(kStep + "," + kKernel), "t.json").skipped_gpu_events == 0);
}

TEST_CASE("kineto: a kernel that starts where another ends does not overlap it, at absolute times",
          "[io]") {
  // Kineto writes absolute microseconds (about 4.46e12 in tp2_overlap.json), read as doubles to
  // about 1e-3 us: a GEMM at 4458677009100.251 lasting 66.173 ends at ...166.424 in decimal, and
  // the AllReduce starting there is read one spacing apart. That sliver (about 1e-10 s) was
  // summed as overlapped communication, "0.07 ns" against a simulated 0, -100%.
  const std::string events =
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 0, "tid": 1,
          "ts": 4458677009000.25, "dur": 1000},
         {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "pid": 0,
          "tid": 7, "ts": 4458677009100.251, "dur": 66.173, "args": {"stream": 7, "device": 0}},
         {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0,
          "tid": 8, "ts": 4458677009166.424, "dur": 100.0, "args": {"stream": 8, "device": 0}})";
  const auto t = parse_kineto_trace(trace_of(events), "t.json");
  REQUIRE(t.step_breakdowns.size() == 1);
  CHECK(t.step_breakdowns[0].overlapped_communication.value() == 0.0);
  CHECK(t.step_breakdowns[0].idle.value() == 0.0);
  CHECK(t.step_breakdowns[0].exposed_communication.value() == Approx(100e-6).epsilon(1e-6));
}

TEST_CASE("kineto: an overlap of two timestamp spacings counts, at epoch times", "[io]") {
  // Unix-epoch microseconds near 1.7e15 read to 0.25 us: a GEMM of [T+10, T+110) and an
  // AllReduce of [T+109.5, T+159.5) overlap by 0.5 us, two spacings. The intersection dropped
  // it as rounding (below twice the spacing) while the union kept it: compute 100 + exposed 50
  // + idle 0 made 150 us of a 149.5 us span. An end and a start at one instant differ by at
  // most 1.5 spacings: 0.5 us is an overlap, and the sum is the span.
  const std::string events =
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1,
          "ts": 1700000000000000, "dur": 1000},
         {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7,
          "ts": 1700000000000010, "dur": 100, "args": {"device": 0, "stream": 7}},
         {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
          "pid": 0, "tid": 20, "ts": 1700000000000109.5, "dur": 50,
          "args": {"device": 0, "stream": 20}})";
  const auto t = parse_kineto_trace(trace_of(events), "t.json");
  REQUIRE(t.timestamp_resolution_us == 0.25);
  REQUIRE(t.step_breakdowns.size() == 1);
  const auto& b = t.step_breakdowns[0];
  CHECK(b.overlapped_communication.value() == Approx(us(0.5)).margin(1e-15));
  CHECK(b.exposed_communication.value() == Approx(us(49.5)).margin(1e-15));
  CHECK(b.idle.value() == 0.0);
  CHECK(b.span.value() == Approx(us(149.5)).margin(1e-15));
  CHECK((b.compute + b.exposed_communication + b.idle).value() ==
        Approx(b.span.value()).margin(1e-15));
}

TEST_CASE("kineto: streams are counted per device, copies apart from kernels", "[io]") {
  // Stream 7 of device 0 and stream 7 of device 1 are two streams (the count merged them: "6
  // kernels on 1 streams"); a memcpy is a GPU event but no kernel.
  const std::string events = kStep + "," + kKernel + R"J(,
      {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 1, "tid": 7,
       "ts": 40, "dur": 20, "args": {"stream": 7, "device": 1}},
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
       "tid": 7, "ts": 70, "dur": 5, "args": {"stream": 7, "device": 0}})J";
  const auto t = parse_kineto_trace(trace_of(events), "t.json");
  CHECK(t.kernels.size() == 3);
  CHECK(t.num_copies_and_fills == 1);
  CHECK(t.num_streams == 2);
  CHECK(t.streams == std::vector<std::int64_t>{7});
  REQUIRE(t.step_breakdowns.size() == 1);
  CHECK(t.step_breakdowns[0].num_kernels == 2);
}

TEST_CASE("kineto: a GPU event without a device or a stream is refused", "[io]") {
  // It was counted as a GPU of its own, "devices -1, 0", and a stream "-1".
  const std::string no_device =
      R"({"ph": "X", "cat": "kernel", "name": "gemm2", "ts": 40, "dur": 10})";
  REQUIRE_THROWS_WITH(
      parse_kineto_trace(trace_of(kStep + "," + kKernel + "," + no_device), "t.json"),
      "t.json: /traceEvents/2/pid: a GPU event without its device; expected "
      "args.device or pid, an integer >= 0, as Kineto writes on every GPU event");
  const std::string no_stream =
      R"({"ph": "X", "cat": "kernel", "name": "gemm2", "pid": 0, "ts": 40, "dur": 10})";
  REQUIRE_THROWS_WITH(
      parse_kineto_trace(trace_of(kStep + "," + kKernel + "," + no_stream), "t.json"),
      Contains("/traceEvents/2/tid: a GPU event without its stream"));
  // Kernels in begin/end pairs only: the error says they were skipped, not that the GPU ran
  // nothing.
  REQUIRE_THROWS_WITH(
      parse_kineto_trace(trace_of(kStep + R"(,
          {"ph": "B", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7, "ts": 40},
          {"ph": "E", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7, "ts": 50})"),
                         "t.json"),
      Contains("2 GPU events in another phase (\"ph\" other than \"X\") were skipped"));
}

TEST_CASE("kineto: a kernel named memset is a kernel", "[io]") {
  // The names "Memcpy ..." and "Memset ..." are those of the copy and fill categories; a kernel
  // of cat "kernel" named memset_zero_kernel counted as a fill, and a step holding it alone was
  // left out as holding no kernel.
  const std::string events = kStep + R"(,
      {"ph": "X", "cat": "kernel", "name": "memset_zero_kernel", "pid": 0, "tid": 7,
       "ts": 10, "dur": 20, "args": {"stream": 7, "device": 0}})";
  const auto t = parse_kineto_trace(trace_of(events), "t.json");
  REQUIRE(t.kernels.size() == 1);
  CHECK(t.kernels[0].category == KernelCategory::MemoryBound);
  CHECK(t.num_copies_and_fills == 0);
  REQUIRE(t.step_breakdowns.size() == 1);
  CHECK(t.step_breakdowns[0].num_kernels == 1);
}
