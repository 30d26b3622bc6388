# A report made with --memory-headroom runs again as it is from its "scenario" (README: "a
# report's scenario runs again as it is"): the headroom, which overrides the stack's, was not in
# the echoed scenario, and the second run had the stack's own (0): 72,615,146,291 usable bytes
# became 80,775,584,154. Runs llama2-7b on 8 H100 with 0.1 of HBM kept free, then its scenario.
# cmake -DTRAINSIM=... -DWORK=... -P headroom_echo.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TRAINSIM} run --hardware h100-dgx --model llama2-7b --gpus 8
                        --seq-len 4096 --sharding full_shard --memory-headroom 0.1 --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE first ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "first run: exit ${rc}\n${err}")
endif()
string(JSON scenario GET "${first}" scenario)
file(WRITE ${WORK}/scenario.json "${scenario}\n")
execute_process(COMMAND ${TRAINSIM} run ${WORK}/scenario.json --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE second ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "second run: exit ${rc}\n${err}")
endif()
string(JSON usable_first GET "${first}" memory usable_bytes)
string(JSON usable_second GET "${second}" memory usable_bytes)
string(JSON headroom_second GET "${second}" memory headroom_fraction)
if(NOT usable_first EQUAL 72615146291 OR NOT usable_second EQUAL usable_first OR
   NOT headroom_second EQUAL 0.1)
  message(FATAL_ERROR "usable bytes ${usable_first} then ${usable_second}, headroom ${headroom_second}")
endif()
# The whole report is the same, its context (which names the stack "inline" both times) too.
if(NOT first STREQUAL second)
  message(FATAL_ERROR "the scenario's run differs from the first:\n${first}\n${second}")
endif()

# A stack file beside the scenario: the echo names it as the scenario wrote it ("my.json"), which
# resolves beside the saved scenario as the plain echo does. It wrote the path as read from the
# working directory ("sc/my.json"), which the saved scenario, run in sc/, did not find.
file(MAKE_DIRECTORY ${WORK}/sc)
file(WRITE ${WORK}/sc/my.json "{\"extends\": \"pytorch-2.3-fsdp\", \"id\": \"mine\", \"name\": \"mine\"}\n")
file(WRITE ${WORK}/sc/scen.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8},
    \"training\": {\"seq_len\": 4096}, \"parallel\": {\"sharding\": \"full_shard\"},
    \"stack\": \"my.json\"}\n")
execute_process(COMMAND ${TRAINSIM} run sc/scen.json --memory-headroom 0.1 --format json
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE first ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run of sc/scen.json: exit ${rc}\n${err}")
endif()
string(JSON scenario GET "${first}" scenario)
string(JSON extends GET "${scenario}" stack extends)
if(NOT extends STREQUAL "my.json")
  message(FATAL_ERROR "the echoed stack extends '${extends}'")
endif()
file(WRITE ${WORK}/sc/again.json "${scenario}\n")
execute_process(COMMAND ${TRAINSIM} run again.json --format json
                WORKING_DIRECTORY ${WORK}/sc RESULT_VARIABLE rc OUTPUT_VARIABLE second ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run of sc/again.json in sc/: exit ${rc}\n${err}")
endif()
