# The published training runs `trainsim validate` checks by default, embedded in the executable
# (see the top CMakeLists.txt). README.md gives their sources and FLOP conventions.
set(TRAINSIM_VALIDATION_FILES
  validation/published_runs.json)
