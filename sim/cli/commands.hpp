// The subcommands of the trainsim executable. Each registers itself on the CLI11 app; its
// callback does the work and leaves the process exit code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace trainsim::cli {

void register_describe(CLI::App& app, int& exit_code);
void register_run(CLI::App& app, int& exit_code);
void register_collective(CLI::App& app, int& exit_code);
void register_sweep(CLI::App& app, int& exit_code);
void register_search(CLI::App& app, int& exit_code);
void register_merge(CLI::App& app, int& exit_code);
void register_calibrate(CLI::App& app, int& exit_code);
void register_compare(CLI::App& app, int& exit_code);
void register_validate(CLI::App& app, int& exit_code);
void register_diff(CLI::App& app, int& exit_code);

}  // namespace trainsim::cli
