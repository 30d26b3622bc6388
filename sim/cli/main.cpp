// trainsim's entry point: parses the command line, runs one subcommand and turns exceptions
// into one line on stderr and an exit code: 2 bad input, 3 impossible plan, 1 internal error.
#include <cstdio>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "trainsim/error.hpp"
#include "trainsim/version.hpp"

#include "sim/cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"trainsim: performance simulator for distributed LLM training"};
  app.set_version_flag("--version", std::string("trainsim ") + trainsim::kVersion);
  app.require_subcommand(1);
  spdlog::set_level(spdlog::level::warn);
  int exit_code = 0;
  trainsim::cli::register_describe(app, exit_code);
  trainsim::cli::register_run(app, exit_code);
  trainsim::cli::register_collective(app, exit_code);
  trainsim::cli::register_sweep(app, exit_code);
  trainsim::cli::register_search(app, exit_code);
  trainsim::cli::register_merge(app, exit_code);
  trainsim::cli::register_calibrate(app, exit_code);
  trainsim::cli::register_compare(app, exit_code);
  trainsim::cli::register_validate(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // CLI11 uses 0 for --help/--version; every other parse problem is bad input.
    return code == 0 ? 0 : 2;
  } catch (const trainsim::ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const trainsim::PlanError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
  return exit_code;
}
