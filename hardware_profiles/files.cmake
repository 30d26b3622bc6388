# Built-in hardware profiles, embedded in the executable (see the top CMakeLists.txt). The nccl/
# files hold the collective-library constants of one NCCL version that profiles name.
set(TRAINSIM_HARDWARE_PROFILE_FILES
  hardware_profiles/v100-dgx.json
  hardware_profiles/a100-dgx.json
  hardware_profiles/h100-dgx.json
  hardware_profiles/h200-dgx.json
  hardware_profiles/h200-sxm.json
  hardware_profiles/b200-dgx.json
  hardware_profiles/gb200-nvl72.json
  hardware_profiles/h800-dgx.json
  hardware_profiles/nccl/nccl-2.20.json
  hardware_profiles/nccl/nccl-2.28.json)
