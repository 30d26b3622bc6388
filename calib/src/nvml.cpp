#include "calib/src/nvml.hpp"

#include <array>

#include <dlfcn.h>

namespace trainsim::calib {

// NVML's C signatures (nvml.h): every call returns nvmlReturn_t, 0 on success; nvmlDevice_t is
// an opaque pointer.
struct Nvml::Api {
  using Device = void*;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*energy)(Device, unsigned long long*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*throttle)(Device, unsigned long long*) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
};

namespace {

constexpr int kClockSm = 1;      // NVML_CLOCK_SM
constexpr int kClockMemory = 2;  // NVML_CLOCK_MEM

template <class F>
bool bind(void* library, const char* name, F& f) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) return false;
  // dlsym returns an object pointer; POSIX guarantees it converts to the function's type.
  f = reinterpret_cast<F>(symbol);
  return true;
}

}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    why_ = "libnvidia-ml.so.1 not found (NVML comes with the NVIDIA driver)";
    return;
  }
  api_ = std::make_unique<Api>();
  const bool bound = bind(library_, "nvmlInit_v2", api_->init) &&
                     bind(library_, "nvmlShutdown", api_->shutdown) &&
                     bind(library_, "nvmlDeviceGetHandleByPciBusId_v2", api_->by_pci) &&
                     bind(library_, "nvmlDeviceGetPowerUsage", api_->power) &&
                     bind(library_, "nvmlDeviceGetClockInfo", api_->clock) &&
                     bind(library_, "nvmlSystemGetDriverVersion", api_->driver);
  if (!bound) {
    why_ = "libnvidia-ml.so.1 lacks an entry point the suite needs";
    return;
  }
  // Optional entry points: older drivers lack the energy counter.
  (void)bind(library_, "nvmlDeviceGetTotalEnergyConsumption", api_->energy);
  (void)bind(library_, "nvmlDeviceGetCurrentClocksThrottleReasons", api_->throttle);
  if (api_->init() != 0) {
    why_ = "nvmlInit failed";
    return;
  }
  Api::Device device = nullptr;
  if (api_->by_pci(pci_bus_id.c_str(), &device) != 0) {
    why_ = "NVML does not know the device at PCI bus " + pci_bus_id;
    api_->shutdown();
    return;
  }
  device_ = device;
}

Nvml::~Nvml() {
  if (device_ != nullptr) api_->shutdown();
  api_.reset();
  if (library_ != nullptr) dlclose(library_);
}

std::optional<double> Nvml::power_watts() const {
  unsigned milliwatts = 0;
  if (device_ == nullptr || api_->power(device_, &milliwatts) != 0) return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<double> Nvml::energy_joules() const {
  unsigned long long millijoules = 0;
  if (device_ == nullptr || api_->energy == nullptr || api_->energy(device_, &millijoules) != 0) {
    return std::nullopt;
  }
  return static_cast<double>(millijoules) / 1000.0;
}

std::optional<unsigned> Nvml::sm_clock_mhz() const {
  unsigned mhz = 0;
  if (device_ == nullptr || api_->clock(device_, kClockSm, &mhz) != 0) return std::nullopt;
  return mhz;
}

std::optional<unsigned> Nvml::memory_clock_mhz() const {
  unsigned mhz = 0;
  if (device_ == nullptr || api_->clock(device_, kClockMemory, &mhz) != 0) return std::nullopt;
  return mhz;
}

std::optional<std::uint64_t> Nvml::throttle_reasons() const {
  unsigned long long reasons = 0;
  if (device_ == nullptr || api_->throttle == nullptr || api_->throttle(device_, &reasons) != 0) {
    return std::nullopt;
  }
  return reasons;
}

std::string Nvml::driver_version() const {
  std::array<char, 96> buffer{};
  if (device_ == nullptr || api_->driver(buffer.data(), static_cast<unsigned>(buffer.size())) != 0)
    return "";
  return buffer.data();
}

std::string Nvml::clocks_text() const {
  const auto sm = sm_clock_mhz();
  const auto memory = memory_clock_mhz();
  if (!sm || !memory) return "";
  return "sm " + std::to_string(*sm) + " MHz, memory " + std::to_string(*memory) + " MHz";
}

}  // namespace trainsim::calib
