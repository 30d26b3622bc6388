#include "calib/src/collectives.hpp"

#include <stdexcept>

#if TRAINSIM_CALIB_HAVE_NCCL

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include <nccl.h>
#include <unistd.h>

#include "calib/src/check.hpp"

namespace trainsim::calib {
namespace {

void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess) fail(call, file, line, ncclGetErrorString(r));
}
#define NCCL_CHECK(call) check_nccl((call), #call, __FILE__, __LINE__)

// One rank this process drives: its GPU, communicator, stream, buffers and events.
struct Rank {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

void setup(Rank& r, std::size_t bytes) {
  CALIB_CHECK(cudaSetDevice(r.device));
  CALIB_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  CALIB_CHECK(cudaEventCreate(&r.start));
  CALIB_CHECK(cudaEventCreate(&r.stop));
  CALIB_CHECK(cudaMalloc(&r.send, bytes));
  CALIB_CHECK(cudaMalloc(&r.recv, bytes));
  CALIB_CHECK(cudaMemset(r.send, 0, bytes));
  CALIB_CHECK(cudaMemset(r.recv, 0, bytes));
}

void teardown(Rank& r) {
  cudaSetDevice(r.device);
  cudaFree(r.send);
  cudaFree(r.recv);
  cudaEventDestroy(r.start);
  cudaEventDestroy(r.stop);
  cudaStreamDestroy(r.stream);
  if (r.comm != nullptr) ncclCommDestroy(r.comm);
}

// Enqueues one call of `op` over `bytes` as nccl-tests sizes it (whole buffer for all_reduce,
// broadcast, reduce, send_recv and all_to_all; whole gathered output for all_gather; whole
// input for reduce_scatter), float32 and sum, root 0.
void enqueue(const std::string& op, const Rank& r, int nranks, std::int64_t bytes) {
  const auto count = static_cast<std::size_t>(bytes / 4);
  const auto part = count / static_cast<std::size_t>(nranks);
  if (op == "all_reduce") {
    NCCL_CHECK(ncclAllReduce(r.send, r.recv, count, ncclFloat, ncclSum, r.comm, r.stream));
  } else if (op == "all_gather") {
    NCCL_CHECK(ncclAllGather(r.send, r.recv, part, ncclFloat, r.comm, r.stream));
  } else if (op == "reduce_scatter") {
    NCCL_CHECK(ncclReduceScatter(r.send, r.recv, part, ncclFloat, ncclSum, r.comm, r.stream));
  } else if (op == "broadcast") {
    NCCL_CHECK(ncclBroadcast(r.send, r.recv, count, ncclFloat, 0, r.comm, r.stream));
  } else if (op == "reduce") {
    NCCL_CHECK(ncclReduce(r.send, r.recv, count, ncclFloat, ncclSum, 0, r.comm, r.stream));
  } else if (op == "all_to_all") {
    NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < nranks; ++p) {
      const auto offset = static_cast<std::size_t>(p) * part;
      NCCL_CHECK(ncclSend(r.send + offset, part, ncclFloat, p, r.comm, r.stream));
      NCCL_CHECK(ncclRecv(r.recv + offset, part, ncclFloat, p, r.comm, r.stream));
    }
    NCCL_CHECK(ncclGroupEnd());
  } else if (op == "send_recv") {
    // Each rank sends to the next and receives from the previous (nccl-tests sendrecv_perf).
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(r.send, count, ncclFloat, (r.rank + 1) % nranks, r.comm, r.stream));
    NCCL_CHECK(
        ncclRecv(r.recv, count, ncclFloat, (r.rank + nranks - 1) % nranks, r.comm, r.stream));
    NCCL_CHECK(ncclGroupEnd());
  } else {
    throw std::invalid_argument("unknown collective op \"" + op + "\"");
  }
}

// Per-call seconds of one trial: `calls` calls on every rank this process drives, timed by
// events on each; the slowest rank's time, as the op finishes when its last rank does.
double trial(std::vector<Rank>& ranks, const std::string& op, int nranks, std::int64_t bytes,
             int calls) {
  for (Rank& r : ranks) {
    CALIB_CHECK(cudaSetDevice(r.device));
    CALIB_CHECK(cudaEventRecord(r.start, r.stream));
  }
  for (int i = 0; i < calls; ++i) {
    NCCL_CHECK(ncclGroupStart());
    for (const Rank& r : ranks) enqueue(op, r, nranks, bytes);
    NCCL_CHECK(ncclGroupEnd());
  }
  double slowest = 0.0;
  for (Rank& r : ranks) {
    CALIB_CHECK(cudaSetDevice(r.device));
    CALIB_CHECK(cudaEventRecord(r.stop, r.stream));
  }
  for (Rank& r : ranks) {
    CALIB_CHECK(cudaEventSynchronize(r.stop));
    float ms = 0.0f;
    CALIB_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
    slowest = std::max(slowest, static_cast<double>(ms) * 1e-3 / calls);
  }
  return slowest;
}

// Across processes: every rank's value, the largest (an all-reduce with max on rank 0's GPU).
double max_over_processes(Rank& r, double value) {
  double* buffer = nullptr;
  CALIB_CHECK(cudaMalloc(&buffer, sizeof(double)));
  CALIB_CHECK(cudaMemcpy(buffer, &value, sizeof(double), cudaMemcpyHostToDevice));
  NCCL_CHECK(ncclAllReduce(buffer, buffer, 1, ncclDouble, ncclMax, r.comm, r.stream));
  CALIB_CHECK(cudaStreamSynchronize(r.stream));
  CALIB_CHECK(cudaMemcpy(&value, buffer, sizeof(double), cudaMemcpyDeviceToHost));
  cudaFree(buffer);
  return value;
}

ncclUniqueId rendezvous(const Launch& launch) {
  ncclUniqueId id{};
  if (launch.rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string partial = launch.rendezvous + ".partial";
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      out.write(id.internal, sizeof(id.internal));
      if (!out) throw std::runtime_error(partial + ": cannot write the rendezvous file");
    }
    if (std::rename(partial.c_str(), launch.rendezvous.c_str()) != 0) {
      throw std::runtime_error(launch.rendezvous + ": cannot move the rendezvous file in place");
    }
    return id;
  }
  // The other ranks wait up to two minutes for rank 0's file.
  for (int attempt = 0; attempt < 1200; ++attempt) {
    std::ifstream in(launch.rendezvous, std::ios::binary);
    if (in.read(id.internal, sizeof(id.internal))) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error(launch.rendezvous +
                           ": rank 0's rendezvous file did not appear in 120 s");
}

// Distinct host names over all ranks, and the most ranks on one host.
std::pair<int, int> count_nodes(Rank& r, int nranks) {
  constexpr std::size_t kName = 64;
  std::array<char, kName> name{};
  gethostname(name.data(), kName - 1);
  char* device = nullptr;
  CALIB_CHECK(cudaMalloc(&device, kName * static_cast<std::size_t>(nranks)));
  CALIB_CHECK(cudaMemcpy(device, name.data(), kName, cudaMemcpyHostToDevice));
  NCCL_CHECK(ncclAllGather(device, device, kName, ncclChar, r.comm, r.stream));
  CALIB_CHECK(cudaStreamSynchronize(r.stream));
  std::vector<char> all(kName * static_cast<std::size_t>(nranks));
  CALIB_CHECK(cudaMemcpy(all.data(), device, all.size(), cudaMemcpyDeviceToHost));
  cudaFree(device);
  std::map<std::string, int> hosts;
  for (int i = 0; i < nranks; ++i) {
    ++hosts[std::string(all.data() + static_cast<std::size_t>(i) * kName)];
  }
  int fullest = 0;
  for (const auto& [host, n] : hosts) fullest = std::max(fullest, n);
  return {static_cast<int>(hosts.size()), fullest};
}

}  // namespace

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "";
  // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9 (nccl.h).
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

void run_collectives(const Launch& launch, const CollectiveOptions& options, Document& doc,
                     const Environment& base) {
  std::vector<Rank> ranks;
  int nranks = 0;
  std::size_t buffer_bytes = static_cast<std::size_t>(options.max_bytes);
  if (launch.world == 1) {
    int devices = 0;
    CALIB_CHECK(cudaGetDeviceCount(&devices));
    nranks = devices;
    ranks.resize(static_cast<std::size_t>(devices));
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(devices));
    std::vector<int> list(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d) list[static_cast<std::size_t>(d)] = d;
    NCCL_CHECK(ncclCommInitAll(comms.data(), devices, list.data()));
    for (int d = 0; d < devices; ++d) {
      Rank& r = ranks[static_cast<std::size_t>(d)];
      r.device = d;
      r.rank = d;
      r.comm = comms[static_cast<std::size_t>(d)];
      setup(r, buffer_bytes);
    }
  } else {
    nranks = launch.world;
    ranks.resize(1);
    Rank& r = ranks[0];
    r.device = launch.local_device;
    r.rank = launch.rank;
    setup(r, buffer_bytes);
    const ncclUniqueId id = rendezvous(launch);
    NCCL_CHECK(ncclCommInitRank(&r.comm, nranks, id, launch.rank));
  }
  struct Cleanup {
    std::vector<Rank>& ranks;
    ~Cleanup() {
      for (Rank& r : ranks) teardown(r);
    }
  } cleanup{ranks};

  const auto [nodes, per_node] =
      launch.world == 1 ? std::pair<int, int>{1, nranks} : count_nodes(ranks[0], nranks);
  for (const std::string& op : options.ops) {
    const std::int64_t granule = 4LL * nranks;
    for (const std::int64_t bytes :
         sweep_sizes(options.min_bytes, options.max_bytes, options.factor, granule)) {
      const std::string what =
          op + " " + std::to_string(bytes) + " B on " + std::to_string(nranks) + " ranks";
      for (int i = 0; i < options.warmups; ++i) (void)trial(ranks, op, nranks, bytes, 1);
      std::vector<double> times;
      for (int t = 0; t < options.trials; ++t) {
        double seconds = trial(ranks, op, nranks, bytes, options.iterations);
        if (launch.world > 1) seconds = max_over_processes(ranks[0], seconds);
        times.push_back(seconds);
      }
      const Summary s = summarize(times);
      if (!steady(s, options.max_cv)) {
        std::array<char, 96> b{};
        std::snprintf(b.data(), b.size(), "coefficient of variation %.3f above %.3f", s.cv,
                      options.max_cv);
        if (launch.rank == 0) {
          std::fprintf(stderr, "trainsim-calib: %s: rejected: %s\n", what.c_str(), b.data());
        }
        doc.reject({what, b.data()});
        continue;
      }
      Environment at = base;
      at.timestamp = utc_timestamp();
      doc.add_collective(op, nranks, nodes, per_node, bytes, s, at);
    }
  }
}

}  // namespace trainsim::calib

#else  // NCCL not built in

namespace trainsim::calib {

std::string nccl_version() { return ""; }

void run_collectives(const Launch&, const CollectiveOptions&, Document&, const Environment&) {
  throw std::runtime_error("collectives: this trainsim-calib was built without NCCL");
}

}  // namespace trainsim::calib

#endif
