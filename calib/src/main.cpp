// trainsim-calib: the measurement suite. It runs GEMM, attention, memory, launch, power and
// collective benchmarks on this machine's GPUs and writes one measurement document
// (docs/calibration-measurements.md) for `trainsim calibrate`.
//
// Exit codes: 0 every benchmark ran and every record passed its checks; 2 bad input (flags,
// scenario); 3 the document was written but a benchmark failed or a record was rejected
// (listed in the document's "notes" and "_rejected"); 1 anything else.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/version.hpp"

#include "sim/io/scenario_loader.hpp"

#include "calib/host/collective_plan.hpp"
#include "calib/host/document.hpp"
#include "calib/host/plan.hpp"
#include "calib/src/bench.hpp"
#include "calib/src/check.hpp"
#include "calib/src/collectives.hpp"

namespace {

using namespace trainsim::calib;

const std::vector<std::string> kBenchmarks = {"gemm",  "attention",   "memory", "launch",
                                              "power", "collectives", "overlap"};

// The GEMMs the overlap benchmark runs: the scenarios' (not the grid's), or one 8192^3 bf16.
std::vector<GemmCase> overlap_cases(const Plan& plan) {
  std::vector<GemmCase> out;
  for (const GemmCase& g : plan.gemms) {
    if (g.origin != "grid") out.push_back(g);
  }
  if (out.empty()) out.push_back({8192, 8192, 8192, trainsim::hardware::Dtype::Bf16, "square"});
  return out;
}

std::string cuda_version_text(int v) {
  // cudaRuntimeGetVersion: 1000 x major + 10 x minor.
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

Environment base_environment(int device, const Nvml& nvml) {
  cudaDeviceProp props{};
  CALIB_CHECK(cudaGetDeviceProperties(&props, device));
  int runtime = 0;
  CALIB_CHECK(cudaRuntimeGetVersion(&runtime));
  Environment e;
  e.device = props.name;
  e.driver = nvml.driver_version();
  e.cuda = cuda_version_text(runtime);
  e.nccl = nccl_version();
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  e.host = host.data();
  e.timestamp = utc_timestamp();
  e.clocks = nvml.clocks_text();
  return e;
}

std::string pci_bus_id(int device) {
  std::array<char, 32> id{};
  CALIB_CHECK(cudaDeviceGetPCIBusId(id.data(), static_cast<int>(id.size()), device));
  return id.data();
}

Plan build_plan(const std::vector<std::string>& scenarios, const std::string& grid) {
  Plan plan;
  for (const std::string& path : scenarios) {
    const auto scenario =
        trainsim::io::scenario_from_document(trainsim::io::read_scenario_file(path));
    trainsim::parallel::require_valid(scenario);
    merge_plans(plan, scenario_plan(scenario));
  }
  if (grid != "none") merge_plans(plan, grid_plan(grid == "quick"));
  return plan;
}

// Runs one sub-benchmark; a failure is noted in the document and printed, and the run goes on.
template <class F>
bool attempt(Document& doc, const std::string& name, F&& f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    doc.note(name + ": failed: " + e.what());
    std::fprintf(stderr, "trainsim-calib: %s: failed: %s\n", name.c_str(), e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainsim-calib " + std::string(trainsim::kVersion) +
               ": measure this machine's GPUs for `trainsim calibrate`"};
  std::string output;
  std::vector<std::string> scenarios;
  std::string grid = "full";
  std::vector<std::string> only;
  std::vector<std::string> skip;
  int device = 0;
  TimingOptions timing;
  double power_seconds = 5.0;
  CollectiveOptions collective;
  std::string rendezvous;
  bool list = false;
  app.add_option("-o,--output", output, "measurement document to write")->required();
  app.add_option("--scenario", scenarios,
                 "scenario JSON (as for `trainsim run`): measure the GEMMs and attention it runs")
      ->check(CLI::ExistingFile);
  app.add_option("--grid", grid, "general GEMM and attention grid")
      ->check(CLI::IsMember({"full", "quick", "none"}))
      ->capture_default_str();
  app.add_option("--only", only, "run only these benchmarks")
      ->check(CLI::IsMember(kBenchmarks))
      ->delimiter(',');
  app.add_option("--skip", skip, "skip these benchmarks")
      ->check(CLI::IsMember(kBenchmarks))
      ->delimiter(',');
  app.add_option("--device", device, "CUDA device of the single-GPU benchmarks")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--trials", timing.trials, "timed trials per case")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  app.add_option("--max-cv", timing.max_cv,
                 "largest coefficient of variation over the trials before a record is rejected")
      ->check(CLI::Range(0.001, 1.0))
      ->capture_default_str();
  app.add_option("--power-seconds", power_seconds, "seconds of each power reading")
      ->check(CLI::Range(2.0, 600.0))
      ->capture_default_str();
  app.add_option("--min-bytes", collective.min_bytes, "smallest collective size")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--max-bytes", collective.max_bytes, "largest collective size")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--factor", collective.factor, "size multiplier of the collective sweep")
      ->check(CLI::Range(2, 1024));
  app.add_option("--ops", collective.ops, "collective ops")
      ->check(CLI::IsMember(collective_op_names()))
      ->delimiter(',');
  app.add_option("--rendezvous", rendezvous,
                 "file on a shared file system through which the processes of a multi-node "
                 "launch meet (ranks from Slurm, Open MPI or TRAINSIM_CALIB_RANK/_WORLD)");
  app.add_flag("--list", list, "print what would be measured and exit, without a GPU");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (collective.min_bytes > collective.max_bytes) {
    std::fprintf(stderr, "trainsim-calib: --min-bytes %lld is above --max-bytes %lld\n",
                 static_cast<long long>(collective.min_bytes),
                 static_cast<long long>(collective.max_bytes));
    return 2;
  }
  collective.trials = timing.trials < 5 ? timing.trials : 5;
  collective.max_cv = timing.max_cv;
  std::set<std::string> selected(kBenchmarks.begin(), kBenchmarks.end());
  if (!only.empty()) selected = std::set<std::string>(only.begin(), only.end());
  for (const std::string& s : skip) selected.erase(s);

  Plan plan;
  Launch launch;
  try {
    plan = build_plan(scenarios, grid);
    launch = launch_from_environment(
        [](const std::string& name) -> std::optional<std::string> {
          const char* v = std::getenv(name.c_str());
          return v == nullptr ? std::nullopt : std::optional<std::string>(v);
        },
        rendezvous);
  } catch (const trainsim::ConfigError& e) {
    std::fprintf(stderr, "trainsim-calib: %s\n", e.what());
    return 2;
  } catch (const trainsim::PlanError& e) {
    std::fprintf(stderr, "trainsim-calib: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "trainsim-calib: %s\n", e.what());
    return 2;
  }
  if (list) {
    for (const auto& g : plan.gemms) {
      std::printf("gemm %lld x %lld x %lld %s  (%s)\n", static_cast<long long>(g.m),
                  static_cast<long long>(g.n), static_cast<long long>(g.k),
                  trainsim::parallel::to_string(g.dtype), g.origin.c_str());
    }
    for (const auto& a : plan.attention) {
      std::printf("attention b%lld h%lld s%lld d%lld%s %s  (%s)\n", static_cast<long long>(a.batch),
                  static_cast<long long>(a.heads), static_cast<long long>(a.seq_len),
                  static_cast<long long>(a.head_dim), a.causal ? " causal" : "",
                  trainsim::parallel::to_string(a.dtype), a.origin.c_str());
    }
    return 0;
  }
  if (launch.world > 1) selected = {"collectives"};

  try {
    const int local = launch.world > 1 ? launch.local_device : device;
    Nvml nvml(pci_bus_id(local));
    const Environment base = base_environment(local, nvml);
    Document doc(base);
    if (!nvml.available()) doc.note("NVML: " + nvml.why() + "; no clocks, throttle or power");
    bool ok = true;
    {
      Bench bench(local, timing, doc, nvml, base);
      if (selected.count("gemm") != 0U) {
        ok &= attempt(doc, "gemm", [&] { run_gemm(bench, plan.gemms); });
      }
      if (selected.count("attention") != 0U) {
        ok &= attempt(doc, "attention", [&] { run_attention_unfused(bench, plan.attention); });
      }
      if (selected.count("memory") != 0U) {
        ok &= attempt(doc, "memory", [&] { run_memory(bench, std::size_t{1} << 30); });
      }
      if (selected.count("launch") != 0U) ok &= attempt(doc, "launch", [&] { run_launch(bench); });
      if (selected.count("power") != 0U) {
        ok &= attempt(doc, "power", [&] { run_power(bench, power_seconds); });
      }
      if (selected.count("overlap") != 0U) {
        ok &= attempt(doc, "overlap", [&] { run_overlap(bench, overlap_cases(plan)); });
      }
    }
    if (selected.count("collectives") != 0U) {
      ok &= attempt(doc, "collectives", [&] { run_collectives(launch, collective, doc, base); });
    }
    if (launch.rank != 0) return ok ? 0 : 3;
    if (doc.points() == 0) {
      std::fprintf(stderr, "trainsim-calib: nothing was measured; %s not written\n",
                   output.c_str());
      return 3;
    }
    doc.write(output);
    std::fprintf(stderr, "trainsim-calib: wrote %zu points to %s (%zu rejected)\n", doc.points(),
                 output.c_str(), doc.rejections().size());
    return ok && doc.rejections().empty() ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim-calib: %s\n", e.what());
    return 1;
  }
}
