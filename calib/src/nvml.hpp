// Board power, energy, clocks and throttle reasons through NVML, loaded at run time
// (libnvidia-ml.so.1 ships with the driver, not with the toolkit), so the suite runs, without
// power figures, where NVML is missing. The entry points and constants are those of NVIDIA's
// NVML API reference (nvml.h): nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2,
// nvmlDeviceGetPowerUsage (mW), nvmlDeviceGetTotalEnergyConsumption (mJ since the driver
// loaded, Volta and later), nvmlDeviceGetClockInfo, nvmlDeviceGetCurrentClocksThrottleReasons,
// nvmlSystemGetDriverVersion.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace trainsim::calib {

// Throttle reasons that mean a measurement ran slower than the GPU can (NVML's
// nvmlClocksThrottleReason* bits): thermal and hardware slowdowns. The software power cap
// (0x4) is how a GPU normally runs heavy GEMMs and is reported, not rejected.
inline constexpr std::uint64_t kThrottleSwPowerCap = 0x4;
inline constexpr std::uint64_t kThrottleSlowdown = 0x8 | 0x20 | 0x40 | 0x80;  // Hw, SwThermal,
                                                                              // HwThermal, Brake

class Nvml {
 public:
  // Loads NVML and finds the device with the given PCI bus id ("0000:18:00.0"). When either
  // fails, available() is false and why() says why.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  [[nodiscard]] bool available() const { return device_ != nullptr; }
  [[nodiscard]] const std::string& why() const { return why_; }

  [[nodiscard]] std::optional<double> power_watts() const;
  [[nodiscard]] std::optional<double> energy_joules() const;
  [[nodiscard]] std::optional<unsigned> sm_clock_mhz() const;
  [[nodiscard]] std::optional<unsigned> memory_clock_mhz() const;
  [[nodiscard]] std::optional<std::uint64_t> throttle_reasons() const;
  [[nodiscard]] std::string driver_version() const;
  // "sm 1980 MHz, memory 3201 MHz" (empty without NVML).
  [[nodiscard]] std::string clocks_text() const;

 private:
  struct Api;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
  std::string why_;
};

}  // namespace trainsim::calib
