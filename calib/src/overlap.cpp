// Compute beside communication on one GPU: how much longer a GEMM or a memory-bound kernel takes
// while a communication kernel holds some of the SMs, the quantity the profiles call
// gemm_comm_contention and comm_compute_contention (docs/calibration.md).
//
// NCCL will not put two ranks of one communicator on one GPU, so the collective is stood in for
// by hold_sms (kernels.hpp): blocks shaped as NCCL's (one per channel, 640 threads, 40 KiB of
// shared memory), resident for the whole measurement, either waiting (what holding SMs costs by
// itself) or copying through HBM at a paced rate (SMs and memory bandwidth, as a collective's
// traffic uses them). Each case is timed alone and then beside the holder, with the same
// algorithm; the holder starts before the timed calls and stops after them.
#include <chrono>
#include <cstdio>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "calib/src/bench.hpp"
#include "calib/src/check.hpp"
#include "calib/src/gemm.hpp"
#include "calib/src/kernels.hpp"

namespace trainsim::calib {
namespace {

// SMs held. NCCL runs one block per channel, 16 to 32 of them on Hopper nodes (NVLS's 16 CTAs on
// sm90, 24 ring channels on an 8 x H100 node: docs/sources.md A.2); 1 and 8 show the mechanism
// (does one held SM already cost a whole extra round of a persistent GEMM?).
constexpr int kHeld[] = {1, 8, 16, 24, 32};
constexpr int kFewestCollectiveSms = 16;
// The unpaced copy's blocks: NCCL's 24 ring channels on an 8 x H100 node (docs/sources.md A.2).
constexpr int kUnpacedBlocks = 24;
// The paced copies, bytes read plus written: 900 GB/s, what a ring collective at NVLink 4's
// 450 GB/s per direction reads from and writes to its GPU's HBM; 100 GB/s, one GPU's share of a
// collective across nodes over a 400 Gb/s NIC.
constexpr double kPacedBytesPerSecond[] = {100e9, 900e9};
constexpr std::size_t kHolderFloatsPerBlock = std::size_t{16} << 20;  // 64 MiB per block
constexpr double kHolderMaxSeconds = 30.0;  // a holder never outlives a stuck host by more

// The holder's blocks on their own stream: each reports its start in host-mapped memory, and all
// stop when a copy engine writes the stop flag in device memory.
class Holder {
 public:
  explicit Holder(Bench& bench) {
    CALIB_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CALIB_CHECK(cudaStreamCreateWithFlags(&control_, cudaStreamNonBlocking));
    CALIB_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), (1 + kMaxBlocks) * sizeof(int),
                              cudaHostAllocMapped));
    CALIB_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&started_), host_ + 1, 0));
    CALIB_CHECK(cudaMalloc(reinterpret_cast<void**>(&stop_), sizeof(int)));
    CALIB_CHECK(cudaMalloc(reinterpret_cast<void**>(&progress_),
                           2 * kMaxBlocks * sizeof(unsigned long long)));
    const std::size_t floats = kMaxBlocks * kHolderFloatsPerBlock;
    CALIB_CHECK(cudaMalloc(reinterpret_cast<void**>(&src_), floats * sizeof(float)));
    CALIB_CHECK(cudaMalloc(reinterpret_cast<void**>(&dst_), floats * sizeof(float)));
    fill(src_, Element::F32, floats, 1.0f, 9, bench.stream());
    CALIB_CHECK(cudaStreamSynchronize(bench.stream()));
  }
  ~Holder() {
    stop_quietly();
    cudaFree(dst_);
    cudaFree(src_);
    cudaFree(progress_);
    cudaFree(stop_);
    cudaFreeHost(host_);
    cudaStreamDestroy(control_);
    cudaStreamDestroy(stream_);
  }
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;

  // Starts `blocks` blocks and returns once every one of them runs. copy: paced copy at
  // `bytes_per_second` (0: unpaced); else they wait.
  void start(int blocks, bool copy, double bytes_per_second) {
    volatile int* started = host_ + 1;
    for (int i = 0; i < kMaxBlocks; ++i) started[i] = 0;
    CALIB_CHECK(cudaMemsetAsync(stop_, 0, sizeof(int), stream_));
    hold_sms(blocks, stop_, started_, copy ? src_ : nullptr, copy ? dst_ : nullptr,
             kHolderFloatsPerBlock, bytes_per_second, kHolderMaxSeconds, progress_, stream_);
    CALIB_CHECK(cudaGetLastError());
    running_ = true;
    blocks_ = blocks;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      int running = 0;
      for (int i = 0; i < blocks; ++i) running += started[i];
      if (running == blocks) break;
      if (std::chrono::steady_clock::now() > deadline) {
        throw CudaError("hold_sms: " + std::to_string(running) + " of " + std::to_string(blocks) +
                        " blocks running after 5 s");
      }
      std::this_thread::yield();
    }
  }

  // The stop flag is written by a copy engine, so that neither it nor the blocks' polling
  // (device memory, not host memory over PCIe) takes anything from the kernels measured.
  void stop() {
    running_ = false;
    host_[0] = 1;
    CALIB_CHECK(cudaMemcpyAsync(stop_, host_, sizeof(int), cudaMemcpyHostToDevice, control_));
    CALIB_CHECK(cudaStreamSynchronize(control_));
    CALIB_CHECK(cudaStreamSynchronize(stream_));
    CALIB_CHECK(cudaGetLastError());
  }

  // What the last run's blocks moved, bytes read plus written per second over each block's own
  // time, summed over the blocks; 0 for waiting blocks.
  [[nodiscard]] double rate() const {
    std::vector<unsigned long long> progress(2 * static_cast<std::size_t>(blocks_));
    CALIB_CHECK(cudaMemcpy(progress.data(), progress_, progress.size() * sizeof(unsigned long long),
                           cudaMemcpyDeviceToHost));
    double sum = 0.0;
    for (std::size_t i = 0; i + 1 < progress.size(); i += 2) {
      if (progress[i + 1] > 0) {
        sum += static_cast<double>(progress[i]) / (static_cast<double>(progress[i + 1]) * 1e-9);
      }
    }
    return sum;
  }

 private:
  void stop_quietly() {
    if (!running_) return;
    running_ = false;
    host_[0] = 1;
    cudaMemcpyAsync(stop_, host_, sizeof(int), cudaMemcpyHostToDevice, control_);
    cudaStreamSynchronize(control_);
    cudaStreamSynchronize(stream_);
  }

  static constexpr int kMaxBlocks = kHeld[std::size(kHeld) - 1];
  cudaStream_t stream_ = nullptr;
  cudaStream_t control_ = nullptr;
  int* host_ = nullptr;     // [0] the stop value to copy; [1 + i] block i started (mapped)
  int* started_ = nullptr;  // device address of host_ + 1
  int* stop_ = nullptr;     // device memory
  unsigned long long* progress_ = nullptr;  // per block: bytes moved, nanoseconds run
  int blocks_ = 0;                          // of the last run
  float* src_ = nullptr;
  float* dst_ = nullptr;
  bool running_ = false;
};

struct Condition {
  int held = 0;
  bool copy = false;
  double bytes_per_second = 0.0;  // the copy's pace; 0: unpaced
  double rate_alone = 0.0;        // what the copying holder moved alone (measured in run_overlap)
};

// A paced copy's rate as the records write it, "900 GB/s".
std::string pace_text(const Condition& c) {
  return std::to_string(static_cast<long long>(c.bytes_per_second / 1e9)) + " GB/s";
}

std::string describe(const Condition& c) {
  std::string text = std::to_string(c.held) + " SMs held";
  if (c.copy) text += c.bytes_per_second > 0.0 ? ", copying " + pace_text(c) : ", copying unpaced";
  return text;
}

// Times `call` beside the holder under `condition`; nullopt when the record was rejected.
std::optional<Summary> time_beside(Bench& bench, Holder& holder, const Condition& condition,
                                   const std::string& what, const std::function<void()>& call) {
  holder.start(condition.held, condition.copy, condition.bytes_per_second);
  std::vector<double> trials;
  try {
    trials = bench.time_calls(call);
  } catch (...) {
    holder.stop();
    throw;
  }
  holder.stop();
  const Summary s = summarize(trials);
  if (!bench.accept(what + " beside " + describe(condition), s)) return std::nullopt;
  return s;
}

// Whether a condition is what the profiles' one gemm_comm_contention stands for: a collective's
// blocks (16 or more) moving data at a collective's pace. Waiting holders, fewer blocks and
// unpaced copies are kept as comments.
bool stands_for_a_collective(const Condition& c) {
  return c.copy && c.bytes_per_second > 0.0 && c.held >= kFewestCollectiveSms;
}

std::string rate_text(double bytes_per_second) {
  char text[32];
  (void)std::snprintf(text, sizeof text, "%.1f GB/s", bytes_per_second / 1e9);
  return text;
}

// How long a holder runs alone to give the rate it moves data at by itself.
constexpr auto kHolderAloneTime = std::chrono::milliseconds(250);

nlohmann::json condition_json(const Condition& c) {
  nlohmann::json j = {{"held_sms", c.held}, {"holder", c.copy ? "copy" : "wait"}};
  if (c.copy && c.bytes_per_second > 0.0) j["holder_rate"] = pace_text(c);
  return j;
}

}  // namespace

void run_overlap(Bench& bench, const std::vector<GemmCase>& cases) {
  int sms = 0;
  int device = 0;
  CALIB_CHECK(cudaGetDevice(&device));
  CALIB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  Holder holder(bench);

  const LtSession lt;

  // cuBLASLt's own choice beside every holder, waiting or copying at each pace; then the choice
  // for the SMs each holder leaves (Transformer Engine's sm_margin), beside that holder waiting.
  std::vector<std::pair<int, std::vector<Condition>>> choices(1);
  for (const int h : kHeld) {
    choices.front().second.push_back({h, false, 0.0});
    for (const double rate : kPacedBytesPerSecond)
      choices.front().second.push_back({h, true, rate});
  }
  choices.front().second.push_back({kUnpacedBlocks, true, 0.0});
  for (const int h : kHeld) choices.push_back({sms - h, {{h, false, 0.0}}});

  // The holder's own rate alone under each copying condition of cuBLASLt's own choice: against
  // it, the rate it keeps beside each GEMM says whether a collective's blocks would slow beside
  // compute (the engine assumes they do not).
  for (Condition& condition : choices.front().second) {
    if (!condition.copy) continue;
    holder.start(condition.held, true, condition.bytes_per_second);
    std::this_thread::sleep_for(kHolderAloneTime);
    holder.stop();
    condition.rate_alone = holder.rate();
  }

  // Clocks and power up before the first record: the first case's trials would otherwise vary.
  if (!cases.empty()) {
    const LtGemm warm(bench, lt.handle(), lt.workspace(), cases.front());
    if (warm.available()) (void)bench.time_calls([&] { warm(bench.stream()); });
    bench.release_all();
  }
  for (const GemmCase& c : cases) {
    for (const auto& [target, conditions] : choices) {
      const LtGemm gemm(bench, lt.handle(), lt.workspace(), c, target);
      if (!gemm.available()) continue;
      const auto call = [&] { gemm(bench.stream()); };
      std::string what = describe(c);
      if (target > 0) what += " for " + std::to_string(target) + " SMs";
      const Summary alone = summarize(bench.time_calls(call));
      if (!bench.accept(what, alone)) continue;
      for (const Condition& condition : conditions) {
        const auto beside = time_beside(bench, holder, condition, what, call);
        if (!beside) continue;
        if (condition.copy) {  // (only cuBLASLt's own choice runs beside copying holders)
          nlohmann::json own = {{"kernel", "holder"},
                                {"beside", what},
                                {"rate_alone", rate_text(condition.rate_alone)},
                                {"rate", rate_text(holder.rate())}};
          own.update(condition_json(condition));
          bench.doc().add_overlap(std::move(own), *beside, bench.now(), false);
        }
        nlohmann::json record = {{"kernel", "gemm"},
                                 {"m", c.m},
                                 {"n", c.n},
                                 {"k", c.k},
                                 {"dtype", parallel::to_string(c.dtype)},
                                 {"sm_count_target", target},
                                 {"time_alone", time_text(alone.median)},
                                 {"time", time_text(beside->median)},
                                 {"notes", c.origin}};
        record.update(condition_json(condition));
        bench.doc().add_overlap(std::move(record), *beside, bench.now(),
                                target == 0 && stands_for_a_collective(condition));
      }
    }
    bench.release_all();
  }

  // The STREAM triad (memory.cpp) beside the holder: what a memory-bound kernel loses.
  const std::size_t count = (std::size_t{1} << 30) / sizeof(float);
  auto* a = static_cast<float*>(bench.allocate(count * sizeof(float)));
  auto* b = static_cast<float*>(bench.allocate(count * sizeof(float)));
  auto* cc = static_cast<float*>(bench.allocate(count * sizeof(float)));
  fill(b, Element::F32, count, 1.0f, 7, bench.stream());
  fill(cc, Element::F32, count, 1.0f, 8, bench.stream());
  const auto triad = [&] { stream_triad(a, b, cc, 3.0f, count, bench.stream()); };
  const Summary alone = summarize(bench.time_calls(triad));
  if (bench.accept("memory triad", alone)) {
    std::vector<Condition> conditions;
    for (const int h : kHeld) conditions.push_back({h, false, 0.0});
    for (const double rate : kPacedBytesPerSecond) {
      for (const int h : kHeld) conditions.push_back({h, true, rate});
    }
    conditions.push_back({kUnpacedBlocks, true, 0.0});
    for (const Condition& condition : conditions) {
      const auto beside = time_beside(bench, holder, condition, "memory triad", triad);
      if (!beside) continue;
      nlohmann::json record = {{"kernel", "triad"},
                               {"bytes", std::to_string(3 * count * sizeof(float)) + " B"},
                               {"time_alone", time_text(alone.median)},
                               {"time", time_text(beside->median)}};
      record.update(condition_json(condition));
      bench.doc().add_overlap(std::move(record), *beside, bench.now(), false);
    }
  }
  bench.release_all();
}

}  // namespace trainsim::calib
