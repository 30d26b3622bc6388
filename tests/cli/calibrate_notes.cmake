# A fit that changes a value leaves a mark on the notes that explain it. Three bf16 GEMMs of
# 8192 x 8192 x 8192 (and twice that along m or n) at 2.2 and 4.4 ms run at 2 x 8192^3 / 2.2 ms
# = 500 TFLOP/s, 0.505 of the H100's 989: h100-dgx's max_efficiency (0.756) falls to about 0.53
# (the GEMM model's shape terms put these shapes at about 0.95 of the ceiling), and
# /gpu/gemm/notes, which quotes "max_efficiency 0.756", is prefixed with the change. Fitting the
# written profile again to the same points writes the same values: its notes stay as they are.
# Fitting it to faster GEMMs (2.0 and 4.0 ms) replaces the mark, keeping 0.756, the value the
# text below it gives, on the left of the arrow.
file(WRITE ${OUT}-gemm.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"gemm\": [{\"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\", \"time\": \"2.2 ms\"},
               {\"m\": 16384, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\", \"time\": \"4.4 ms\"},
               {\"m\": 8192, \"n\": 16384, \"k\": 8192, \"dtype\": \"bf16\", \"time\": \"4.4 ms\"}]}\n")
set(base h100-dgx)
foreach(i 1 2)
  execute_process(COMMAND ${TRAINSIM} calibrate --base ${base} ${OUT}-gemm.json -o ${OUT}-${i}.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calibrate failed (${rc}): ${err}")
  endif()
  file(READ ${OUT}-${i}.json profile)
  string(JSON notes_${i} GET "${profile}" gpu gemm notes)
  set(base ${OUT}-1.json)
endforeach()
if(NOT notes_1 MATCHES "^\\[trainsim calibrate: max_efficiency 0\\.756 -> 0\\.5[23][0-9]*; /calibration/fitted says to what\\. Where the text below quotes these values, it gives the ones before the arrows\\.\\] max_efficiency 0\\.756: ")
  message(FATAL_ERROR "the first fit's /gpu/gemm/notes do not say what changed: ${notes_1}")
endif()
if(NOT notes_2 STREQUAL notes_1)
  message(FATAL_ERROR "a refit to the same values changed the notes again: ${notes_2}")
endif()
file(READ ${OUT}-gemm.json gemm)
string(REPLACE "2.2 ms" "2.0 ms" faster "${gemm}")
string(REPLACE "4.4 ms" "4.0 ms" faster "${faster}")
file(WRITE ${OUT}-faster.json "${faster}")
execute_process(COMMAND ${TRAINSIM} calibrate --base ${OUT}-1.json ${OUT}-faster.json -o ${OUT}-3.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate failed (${rc}): ${err}")
endif()
file(READ ${OUT}-3.json profile)
string(JSON notes_3 GET "${profile}" gpu gemm notes)
if(NOT notes_3 MATCHES "^\\[trainsim calibrate: max_efficiency 0\\.756 -> 0\\.5[6-9][0-9]*; [^[]*\\] max_efficiency 0\\.756: ")
  message(FATAL_ERROR "a refit of the refitted profile did not replace the mark: ${notes_3}")
endif()
message("notes marked once")

# The value's own source is marked too: a copy kernel moving 4 GiB in 2 ms runs at 2.15 TB/s,
# 0.64 of h100-dgx's 3.35 TB/s HBM, so memory_efficiency falls from the profile's 0.88, and
# /gpu/sources/memory_efficiency, which cites the STREAM-like measurements behind 0.88, is
# prefixed with the change (it read as the source of the new value).
file(WRITE ${OUT}-copy.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"memory\": [{\"kernel\": \"copy\", \"bytes\": \"4 GiB\", \"time\": \"2 ms\"}]}\n")
execute_process(COMMAND ${TRAINSIM} calibrate --base h100-dgx ${OUT}-copy.json -o ${OUT}-copy-fit.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate failed (${rc}): ${err}")
endif()
file(READ ${OUT}-copy-fit.json profile)
string(JSON source GET "${profile}" gpu sources memory_efficiency)
if(NOT source MATCHES "^\\[trainsim calibrate: memory_efficiency 0\\.88 -> 0\\.64[0-9]*; /calibration/fitted says to what\\. [^]]*\\] sources\\.md C\\.3: Azure STREAM-like")
  message(FATAL_ERROR "the fit did not mark the value's source: ${source}")
endif()
message("sources marked")
