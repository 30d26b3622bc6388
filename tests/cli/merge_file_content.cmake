# Shards of one sweep or search run against a model file edited between them priced their plans
# on two different models: the spec digest holds each named file's content, so merge refuses
# the second shard (exit 2), though the spec and the flags are the same.
file(MAKE_DIRECTORY ${WORK})
function(write_model layers)
  file(WRITE ${WORK}/tiny.json "{\"layers\": ${layers}, \"hidden\": 1024, \"heads\": 8, \"kv_heads\": 8,
 \"ffn_hidden\": 4096, \"vocab\": 32000, \"activation\": \"swiglu\", \"norm\": \"rmsnorm\",
 \"tied_embeddings\": false, \"position_embedding\": \"rope\"}")
endfunction()
file(WRITE ${WORK}/spec.json "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"tiny.json\",
 \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 1024, \"micro_batch\": 1, \"global_batch\": 8}},
 \"axes\": {\"parallel.tp\": [1, 2]}}")
set(SEARCH search --hardware h100-dgx --model ${WORK}/tiny.json --gpus 8 --global-batch 16
    --seq-len 1024 --format json)
write_model(8)
execute_process(COMMAND ${TRAINSIM} sweep ${WORK}/spec.json --shard 0/2
                OUTPUT_FILE ${WORK}/sweep-0.csv RESULT_VARIABLE rc0)
execute_process(COMMAND ${TRAINSIM} ${SEARCH} --shard 0/2
                OUTPUT_FILE ${WORK}/search-0.json RESULT_VARIABLE rc1)
# The same file unchanged: the shards merge.
execute_process(COMMAND ${TRAINSIM} sweep ${WORK}/spec.json --shard 1/2
                OUTPUT_FILE ${WORK}/sweep-1same.csv RESULT_VARIABLE rc2)
execute_process(COMMAND ${TRAINSIM} merge ${WORK}/sweep-0.csv ${WORK}/sweep-1same.csv
                RESULT_VARIABLE rc3 OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT rc3 EQUAL 0)
  message(FATAL_ERROR "shards of an unchanged file: exit ${rc0} ${rc1} ${rc2} ${rc3}, ${err}")
endif()
write_model(16)
execute_process(COMMAND ${TRAINSIM} sweep ${WORK}/spec.json --shard 1/2
                OUTPUT_FILE ${WORK}/sweep-1.csv RESULT_VARIABLE rc0)
execute_process(COMMAND ${TRAINSIM} ${SEARCH} --shard 1/2
                OUTPUT_FILE ${WORK}/search-1.json RESULT_VARIABLE rc1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "the second shards failed (${rc0}, ${rc1})")
endif()
foreach(kind sweep-0.csv/sweep-1.csv search-0.json/search-1.json)
  string(REPLACE "/" ";" pair ${kind})
  list(GET pair 0 first)
  list(GET pair 1 second)
  execute_process(COMMAND ${TRAINSIM} merge ${WORK}/${first} ${WORK}/${second}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${second}[^\n]*(another sweep|differs from)[^\n]*files")
    message(FATAL_ERROR "merge of ${first} and ${second} after the model changed: exit ${rc}, ${err}")
  endif()
endforeach()
message("refused")
