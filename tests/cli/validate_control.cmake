# A runs file's text can reach a skip reason (an unknown GPU's name); the table and the CSV write
# its control characters escaped, as JSON does, where they went out raw (a TAB and a 0x01 byte).
# And a measured value too small for the table's decimals is shown in significant digits.
# cmake -DTRAINSIM=... -DRUNS=... -DWORK=... -P validate_control.cmake
file(READ ${RUNS} text)
string(JSON row GET "${text}" 0)
string(JSON row SET "${row}" id "\"ctrl\"")
string(JSON row SET "${row}" hardware "{\"gpu\": \"TPU\\t\\u0001x\", \"memory_gb\": 80}")
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/runs.json "[${row}]\n")
string(ASCII 1 soh)
foreach(format table csv)
  execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs.json --format ${format}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  # Every row skipped: exit 2, after the reasons.
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${format}: expected exit 2, got ${rc}\n${err}")
  endif()
  string(FIND "${out}" "${soh}" raw_soh)
  string(FIND "${out}" "\t" raw_tab)
  if(NOT raw_soh EQUAL -1 OR NOT raw_tab EQUAL -1)
    message(FATAL_ERROR "${format}: a raw control character in the output:\n${out}")
  endif()
  if(NOT out MATCHES "TPU\\\\u0009\\\\u0001x")
    message(FATAL_ERROR "${format}: the GPU's name is not in the output, escaped:\n${out}")
  endif()
endforeach()
# The first row measured at 0.001 TFLOP/s (the reader takes 0.001 to 1e5): "0.0 TFLOP/s".
file(READ ${RUNS} text)
string(JSON row GET "${text}" 0)
string(JSON row SET "${row}" tflops_per_gpu "0.001")
file(WRITE ${WORK}/tiny.json "[${row}]\n")
execute_process(COMMAND ${TRAINSIM} validate ${WORK}/tiny.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES " 0\\.001 TFLOP/s ")
  message(FATAL_ERROR "a measured 0.001 TFLOP/s is not shown as such (${rc}):\n${out}${err}")
endif()
message("validate control checks passed")
