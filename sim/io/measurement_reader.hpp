// Reading of trainsim's own measurement documents ("schema": "trainsim-measurements", version 1;
// docs/calibration-measurements.md): the JSON the CUDA calibration suite (calib/) writes and
// `trainsim calibrate` fits to. Strict like every input: unknown keys, bare numbers for
// dimensional values and out-of-range values are ConfigErrors naming the file and JSON pointer.
#pragma once

#include <string>

#include "trainsim/calibrate/measurements.hpp"

namespace trainsim::io {

// Parses a measurement document; `source` names it in errors and anchors relative log paths.
// Every point's origin names `source`; log references are resolved but not opened.
// Throws: ConfigError for any problem (text over 64 MiB or holding NUL bytes, malformed JSON,
// nesting deeper than 64, a schema violation, a document with no measurements).
[[nodiscard]] calibrate::MeasurementDocument parse_measurement_document(const std::string& text,
                                                                        const std::string& source);

// The text of the file at `path`, bounded: ConfigError naming it if unreadable, a directory, over
// 64 MiB or holding NUL bytes.
[[nodiscard]] std::string read_measurement_text(const std::string& path);

// Reads the file (read_measurement_text) and parses it as parse_measurement_document does, with
// `path` as the source.
[[nodiscard]] calibrate::MeasurementDocument read_measurement_document(const std::string& path);

}  // namespace trainsim::io
