cmake_policy(SET CMP0007 NEW)  # keep the empty replacement of an edit
# A search shard's plans carry their scenario, which merge copies into its document: a value
# search cannot write there (io::echoed_scenario_problem) is refused (exit 2), naming the plan's
# key; the unedited shards merge.
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 0/2 OUTPUT_FILE ${WORK}-0.json RESULT_VARIABLE rc0)
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 1/2 OUTPUT_FILE ${WORK}-1.json RESULT_VARIABLE rc1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "the sharded searches failed (${rc0}, ${rc1})")
endif()
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0.json ${WORK}-1.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "merge of one search's shards: exit ${rc}, ${err}")
endif()
file(READ ${WORK}-0.json text)
# Each edit: the text of the first plan's scenario, its replacement, the error expected (a regular
# expression; "." for the message's ";", which would split the list).
set(edits
  "\"recompute\": \"none\"|\"recompute\": \"banana\"|/plans/0/scenario/parallel/recompute: 'scenario.parallel.recompute' is \"banana\". expected one of none, selective, full"
  "\"dp\": 16|\"dp\": 999|/plans/0/scenario/parallel/dp: 'scenario.parallel.dp' is 999. expected 16, gpus / \\(tp x pp x cp\\)"
  "\"tp\": 1,|\"tp\": 2.5,|/plans/0/scenario/parallel/tp: 'scenario.parallel.tp' is 2.5. expected a degree"
  "\"precision\": \"bf16\"|\"precision\": 5|/plans/0/scenario/training/precision: 'scenario.training.precision' is 5. expected one of bf16"
  "\"sequence_parallel\": false|\"sequence_parallel\": 0|'scenario.parallel.sequence_parallel' is 0. expected true or false"
  "\"pp\": 1,|\"pp\": null,|'scenario.parallel.pp' is null. expected a degree"
  "\"tp\": 1,||/plans/0/scenario/parallel/tp: 'scenario.parallel.tp' missing. expected a value"
  # One search runs one stack: a plan's edited stack differs from the other plans'.
  "\"stack\": \"pytorch-2.3-fsdp\"|\"stack\": \"megatron-core\"|/plans/1/scenario: hardware, model, stack, cluster or batch [^\n]*differ from")
if(MOE)
  # A mixture-of-experts search: every plan writes parallel.ep; one without it (edited out) is
  # not of the same search.
  set(edits "\"ep\": 8,||/plans/1/scenario: hardware, model, stack, cluster or batch \\(or parallel\\.ep's presence")
endif()
foreach(edit IN LISTS edits)
  string(REPLACE "|" ";" parts "${edit}")
  list(GET parts 0 from)
  list(GET parts 1 to)
  list(GET parts 2 expected)
  # In the plans: the document's context names the stack too.
  string(FIND "${text}" "\"plans\"" plans_at)
  string(SUBSTRING "${text}" ${plans_at} -1 plans)
  string(FIND "${plans}" "${from}" at)
  if(NOT at EQUAL -1)
    math(EXPR at "${at} + ${plans_at}")
  endif()
  if(at EQUAL -1)
    message(FATAL_ERROR "'${from}' not in the first shard")
  endif()
  string(SUBSTRING "${text}" 0 ${at} head)
  string(LENGTH "${from}" length)
  math(EXPR rest "${at} + ${length}")
  string(SUBSTRING "${text}" ${rest} -1 tail)
  file(WRITE ${WORK}-e.json "${head}${to}${tail}")
  execute_process(COMMAND ${TRAINSIM} merge ${WORK}-e.json ${WORK}-1.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*-e\\.json: [^\n]*${expected}")
    message(FATAL_ERROR "merge of a shard edited '${from}' -> '${to}': exit ${rc}, ${err}")
  endif()
endforeach()
# An unsharded search (no spec digest) needs no merge, and merge says so rather than that a key
# of search's output is missing.
if(NOT MOE)
  execute_process(COMMAND ${TRAINSIM} ${RUN} OUTPUT_FILE ${WORK}-whole.json RESULT_VARIABLE rc)
  execute_process(COMMAND ${TRAINSIM} merge ${WORK}-whole.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "-whole\\.json: /spec: missing: an unsharded search output, which needs no merge")
    message(FATAL_ERROR "merge of an unsharded search: exit ${rc}, ${err}")
  endif()
endif()
message("refused")
