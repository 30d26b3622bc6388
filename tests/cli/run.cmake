# `trainsim run` of the paper's scenario (README's main job) and its trace.
set(run_args --hardware h100-dgx --model llama2-7b --gpus 128 --sharding shard_grad_op
             --micro-batch 2 --seq-len 4096)
add_test(NAME cli.run.table COMMAND trainsim run ${run_args})
set_tests_properties(cli.run.table PROPERTIES
  PASS_REGULAR_EXPRESSION "iteration.*exposed communication.*MFU.*power.*collectives")
add_test(NAME cli.run.json COMMAND trainsim run ${run_args} --format json)
set_tests_properties(cli.run.json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"bubble_s\".*\"collectives\".*\"communication_s\".*\"compute_s\".*\"context\".*\"cost\".*\"exposed_communication_s\".*\"hfu\".*\"host_overhead_s\".*\"iteration_time_s\".*\"memory\".*\"mfu\".*\"model_flops_per_token\".*\"power\".*\"scenario\".*\"stages\".*\"tflops_per_gpu\".*\"tokens_per_s\".*\"tokens_per_s_per_gpu\"")
add_test(NAME cli.run.trace COMMAND trainsim run ${run_args} --pp 2 --global-batch 512
         --trace ${CMAKE_CURRENT_BINARY_DIR}/timeline.json)
set_tests_properties(cli.run.trace PROPERTIES FIXTURES_SETUP trace)
add_test(NAME cli.run.trace_content COMMAND ${CMAKE_COMMAND} -E cat
         ${CMAKE_CURRENT_BINARY_DIR}/timeline.json)
set_tests_properties(cli.run.trace_content PROPERTIES FIXTURES_REQUIRED trace
  PASS_REGULAR_EXPRESSION "\"traceEvents\".*\"thread_name\".*\"algorithm\":\"ring\".*\"ph\":\"X\"")
# A collective's bytes per call are a whole count, as in the report (they were written 262152192.0).
add_test(NAME cli.run.trace_bytes COMMAND ${CMAKE_COMMAND} -E cat
         ${CMAKE_CURRENT_BINARY_DIR}/timeline.json)
set_tests_properties(cli.run.trace_bytes PROPERTIES FIXTURES_REQUIRED trace
  PASS_REGULAR_EXPRESSION "\"bytes\":[0-9]+,\"group\""
  FAIL_REGULAR_EXPRESSION "\"bytes\":[0-9]+\\.")
# Each compute op names the rate it is priced at: the first layer's norm, QKV projection and
# attention core, in op order.
add_test(NAME cli.run.trace_kinds COMMAND ${CMAKE_COMMAND} -E cat
         ${CMAKE_CURRENT_BINARY_DIR}/timeline.json)
set_tests_properties(cli.run.trace_kinds PROPERTIES FIXTURES_REQUIRED trace
  PASS_REGULAR_EXPRESSION "\"kind\":\"memory_bound\"[^}]*},\"cat\":\"compute\",[^}]*\"name\":\"attn_norm\".*\"kind\":\"gemm\"[^}]*},\"cat\":\"compute\",[^}]*\"name\":\"qkv_proj\".*\"kind\":\"attention\"[^}]*},\"cat\":\"compute\",[^}]*\"name\":\"attn_core\"")
add_test(NAME cli.run.scenario_file COMMAND trainsim run
         ${CMAKE_CURRENT_SOURCE_DIR}/../data/scenario_tp2.json --format json)
set_tests_properties(cli.run.scenario_file PROPERTIES
  PASS_REGULAR_EXPRESSION "\"tp\": 2")
# A flag overrides the file; the error then names the flag.
trainsim_expect_exit(cli.run.flag_error 2 "^error: command line \\(--schedule\\): /parallel/pipeline_schedule: unknown value '1f2b'; did you mean '1f1b'"
  run ${CMAKE_CURRENT_SOURCE_DIR}/../data/scenario_tp2.json --schedule 1f2b)
# GPipe on one stage: no framework runs every forward before every backward there; the plan was
# simulated so (every micro-batch's activations held at once) without a word (exit 3, a plan
# problem, as the interleaved schedule at pp 1 is). The error names the flags of both keys.
trainsim_expect_exit(cli.run.gpipe_one_stage 3 "^error: command line \\(--schedule, --pp\\): /parallel/pipeline_schedule: the gpipe schedule needs pp >= 2 [^\n]*; expected pp > 1 or schedule \"1f1b\"\n$"
  run --hardware h100-dgx --model llama2-7b --gpus 8 --seq-len 4096 --global-batch 32 --pp 1
  --schedule gpipe)
# hybrid_shard's default shard_group (one node's data-parallel ranks, 8 / tp 2 = 4) against dp
# 72 / (2 x 2) = 18: said as the default, with the flags it comes from. It read "shard_group 4
# does not divide dp 18" naming no flag, for a key the command line never set.
trainsim_expect_exit(cli.run.hybrid_default_group 3 "^error: command line \\(--gpus, --pp, --sharding, --tp\\): /parallel/sharding: hybrid_shard's default shard_group, one node's data-parallel ranks \\(4 of 8 GPUs per node at tp 2 x cp 1\\), does not divide dp 18. expected dp a multiple of 4, or a shard_group that divides 18"
  run --hardware h100-dgx --model llama2-7b --gpus 72 --tp 2 --pp 2 --seq-len 4096 --sharding hybrid_shard)
# With tp 16 a node of 8 GPUs holds no whole data-parallel rank, so the default has none to
# take: it took 1, a replica per rank (sharding none's memory, 7.0 GB per GPU against
# full_shard's 3.8), without a word.
trainsim_expect_exit(cli.run.hybrid_default_group_none 3 "^error: command line \\(--sharding, --tp\\): /parallel/sharding: hybrid_shard's default shard_group, one node's data-parallel ranks, is none: tp 16 x cp 1 spans more than a node's 8 GPUs. expected a shard_group"
  run --hardware h100-dgx --model llama2-7b --gpus 32 --tp 16 --sequence-parallel --seq-len 1024 --sharding hybrid_shard)
# Checks of two keys name both flags: a tp from a file that --model makes wrong named neither
# --model, nor --cp its chunks of the sequence, nor --sharding its hybrid_shard beside ep.
trainsim_expect_exit(cli.run.cp_seq_flags 3 "^error: command line \\(--cp, --seq-len\\): /training/seq_len: seq_len 4100 does not split into 2 x cp = 8 chunks"
  run --hardware h100-dgx --model llama2-7b --gpus 8 --cp 4 --seq-len 4100)
trainsim_expect_exit(cli.run.ep_hybrid_flags 3 "^error: command line \\(--ep, --sharding\\): /parallel/ep: ep 8 with sharding hybrid_shard is not modelled"
  run --hardware h100-dgx --model mixtral-8x7b --gpus 64 --ep 8 --sharding hybrid_shard --seq-len 4096)
# ep must divide dp, which --gpus, --tp and --pp make: 144 / (2 x 2) = 36, which 8 does not
# divide; the error named --ep alone.
trainsim_expect_exit(cli.run.ep_dp_flags 3 "^error: command line \\(--gpus, --ep, --pp, --tp\\): /parallel/ep: ep 8 does not divide dp 36"
  run --hardware gb200-nvl72 --model mixtral-8x7b --gpus 144 --tp 2 --pp 2 --ep 8 --seq-len 4096
  --global-batch 288)
# llama2-70b with plain DDP on 8 H100 needs ~16 B/param of model state: far over 80 GiB. The
# error names where the scenario came from (here the flags that set it), lists the reserve and
# where its headroom fraction came from (the default stack's).
trainsim_expect_exit(cli.run.require_fit 3 "^error: command line \\(--gpus, --hardware, --model, --sharding, --seq-len\\): the plan needs .* per GPU, .* \\(reserved [^:]*: CUDA context [^,]*, NCCL buffers [^,]*, workspace [^,]*, headroom 0\\.00 B \\(0 of HBM, stack 'pytorch-2\\.3-fsdp' memory\\.headroom_fraction\\), fragmentation [^)]*\\); expected a plan that fits"
  run --hardware h100-dgx --model llama2-70b --gpus 8 --sharding none --seq-len 4096 --require-fit)
# The stage is named only where the plan has stages: "on stage 0" at pp 1 named a stage the plan
# does not split into.
trainsim_expect_exit(cli.run.require_fit_stage 3 "the plan needs [^,]* per GPU on stage [01], more than"
  run --hardware h100-dgx --model llama2-70b --gpus 8 --pp 2 --sharding none --seq-len 4096 --require-fit)
# Without a scenario file, a missing key names the flag that sets it.
trainsim_expect_exit(cli.run.missing_flag 2
  "^error: command line: /training: missing required key; expected --seq-len"
  run --hardware h100-dgx --model llama2-7b --gpus 8)
# --memory-headroom: the table and the JSON name the headroom used; the paper's plan (about
# 49 GiB of tensors) fits 75.2 GiB usable by default, (80 - 0.8125 - 0.5 x 80) x 0.95 = 37.2 GiB
# with half the HBM kept free, so --require-fit then exits 3; a fraction outside [0, 1) is bad
# input naming the flag. The stack that ran keeps its name in the table and the JSON context
# (the flag made it 'inline'): the echoed inline stack carries the built-in's id.
add_test(NAME cli.run.memory_headroom COMMAND trainsim run ${run_args} --memory-headroom 0.25)
set_tests_properties(cli.run.memory_headroom PROPERTIES PASS_REGULAR_EXPRESSION
  "\nstack +pytorch-2\\.3-fsdp \\(inline\\)\n.*memory/GPU [^\n]* usable \\(80(\\.0+)? GiB HBM\\)\n  reserved [^\n]*headroom 25\\.0 %")
add_test(NAME cli.run.memory_headroom_json
         COMMAND trainsim run ${run_args} --memory-headroom 0.25 --format json)
set_tests_properties(cli.run.memory_headroom_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"context\": \\{[^}]*\"stack\": \"pytorch-2\\.3-fsdp\".*\"headroom_fraction\": 0\\.25.*\"reserved_bytes\": [0-9]+,.*\"usable_bytes\": [0-9]+[,\n]")
# A stack given as a file keeps its path as its name too (it read 'inline').
add_test(NAME cli.run.memory_headroom_stack_file
         COMMAND trainsim run ${run_args} --stack ${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json
                 --memory-headroom 0.25)
set_tests_properties(cli.run.memory_headroom_stack_file PROPERTIES PASS_REGULAR_EXPRESSION
  "\nstack +[^\n]*stacks/megatron-lm\\.json \\(inline\\)\n")
# The error names the flag: 0.5 x 80 GiB = 40.0 GiB kept free.
trainsim_expect_exit(cli.run.memory_headroom_require_fit 3
  "^error: command line \\([^)]*\\): the plan needs .* usable of 80\\.0 GiB of HBM \\(reserved [^:]*:[^(]*headroom 40\\.0 GiB \\(0\\.5 of HBM, --memory-headroom\\)"
  run ${run_args} --memory-headroom 0.5 --require-fit)
# From a scenario file, the error names the file and the flags that changed it:
# scenario_tp2.json's plan (32 GPUs, tp 2) with
# llama2-70b and no sharding keeps ~16 B/param of 69B parameters over tp 2 (~514 GiB) on each
# GPU before its activations.
trainsim_expect_exit(cli.run.require_fit_file 3
  "^error: [^\n]*scenario_tp2\\.json, command line \\(--model, --sharding\\): the plan needs [^\n]*; expected a plan that fits\n$"
  run ${CMAKE_CURRENT_SOURCE_DIR}/../data/scenario_tp2.json --model llama2-70b --sharding none
  --require-fit)
# A headroom that keeps more free than the CUDA context (512 MiB), NCCL buffers (256 MiB) and
# workspace (64 MiB) leave of the H100's 80 GiB, 81920 - 832 = 81088 MiB or 0.98984375 of it (0.99999
# keeps 81919.2 MiB, 0.995 81510.4), is refused with the most it may be (it was cut to that in silence, the report giving the
# fraction asked beside the bytes kept). From a stack file, it is a plan problem naming the stack.
trainsim_expect_exit(cli.run.memory_headroom_above_reserve 2
  "^error: command line \\(--memory-headroom\\): 0\\.99999 of HBM keeps 81919\\.2 MiB free, more than the 81088\\.0 MiB the CUDA context \\(512 MiB\\), NCCL buffers \\(256 MiB\\) and workspace \\(64\\.0 MiB\\) leave of the 80\\.0 GiB HBM; expected at most 0\\.98984375\n$"
  run ${run_args} --memory-headroom 0.99999)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/run_tight_stack.json
  "{\"id\": \"tight\", \"extends\": \"pytorch-2.3-fsdp\", \"memory\": {\"headroom_fraction\": 0.995}}\n")
trainsim_expect_exit(cli.run.stack_headroom_above_reserve 3
  "^error: command line \\(--hardware, --stack\\): /stack: stack '[^']*run_tight_stack\\.json' memory\\.headroom_fraction 0\\.995 of HBM keeps 81510\\.4 MiB free, more than the 81088\\.0 MiB [^;]*; expected at most 0\\.98984375\n$"
  run ${run_args} --stack ${CMAKE_CURRENT_BINARY_DIR}/run_tight_stack.json)
trainsim_expect_exit(cli.run.memory_headroom_bad 2
  "^error: command line \\(--memory-headroom\\): expected a fraction of HBM from 0 to below 1, got 1.5\n$"
  run ${run_args} --memory-headroom 1.5)
# --recompute-layers: the plan line and the JSON scenario say how many layers each chunk
# recomputes (llama2-7b's 32 layers at pp 2: 16 per chunk); without --recompute full, or above
# a chunk's layers, it is a plan error naming the key (exit 3, as every plan that cannot run).
add_test(NAME cli.run.recompute_layers COMMAND trainsim run ${run_args} --pp 2
         --global-batch 512 --recompute full --recompute-layers 4)
set_tests_properties(cli.run.recompute_layers PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*recompute full \\(4 layers per chunk\\)")
add_test(NAME cli.run.recompute_layers_json COMMAND trainsim run ${run_args} --pp 2
         --global-batch 512 --recompute full --recompute-layers 4 --format json)
set_tests_properties(cli.run.recompute_layers_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"recompute\": \"full\",[^}]*\"recompute_layers\": 4")
trainsim_expect_exit(cli.run.recompute_layers_without_full 3
  "^error: command line \\(--recompute-layers\\): /parallel/recompute_layers: recompute_layers 4 applies only with recompute \"full\""
  run ${run_args} --recompute-layers 4)
trainsim_expect_exit(cli.run.recompute_layers_too_many 3
  "^error: command line \\(--model, --pp, --recompute-layers\\): /parallel/recompute_layers: recompute_layers 17 exceeds the 16 layers of a model chunk"
  run ${run_args} --pp 2 --global-batch 512 --recompute full --recompute-layers 17)
# The flags that set a pipeline check's keys, all of them: --virtual-stages was left out of the
# chunk count's line, --account-for-loss-in-pipeline-split out of the split's that counts it.
trainsim_expect_exit(cli.run.pp_chunks_name_every_flag 3
  "^error: command line \\(--model, --schedule, --pp, --virtual-stages\\): /parallel/pp: pp x virtual_stages = 64 exceeds the model's 32 layers"
  run --hardware h100-dgx --model llama2-7b --seq-len 4096 --gpus 4 --pp 4 --global-batch 8
  --schedule interleaved --virtual-stages 16)
trainsim_expect_exit(cli.run.pp_split_names_both_counts 3
  "^error: command line \\(--model, --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split, --pp\\): /parallel/account_for_embedding_in_pipeline_split: the 32 layers plus 2 counted"
  run --hardware h100-dgx --model llama2-7b --seq-len 4096 --gpus 3 --pp 3 --global-batch 3
  --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split)
# An impossible plan names where it came from: the scenario file, and the flags that set the
# offending keys.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plan_tp3.json [=[
{"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 8},
 "training": {"seq_len": 4096}, "parallel": {"tp": 3}}
]=])
trainsim_expect_exit(cli.run.plan_error_names_file 3
  "^error: [^\n]*plan_tp3.json: /parallel: gpus 8 do not split into tp x pp x cp = 3 x 1 x 1"
  run ${CMAKE_CURRENT_BINARY_DIR}/plan_tp3.json)
trainsim_expect_exit(cli.run.plan_error_names_file_and_flag 3
  "^error: [^\n]*plan_tp3.json, command line \\(--tp\\): /parallel: gpus 8 do not split into tp x pp x cp = 5"
  run ${CMAKE_CURRENT_BINARY_DIR}/plan_tp3.json --tp 5)
# A problem of the global batch names the flags that set what its check read: --micro-batch and
# --gpus make dp x micro_batch = 4 x 3 = 12, which global batch 16 (--global-batch, read by
# the check) is not a multiple of; --sharding plays no part and is not named.
trainsim_expect_exit(cli.run.plan_error_names_related_flags 3
  "^error: [^\n]*plan_tp3.json, command line \\(--gpus, --tp, --global-batch, --micro-batch\\): /training/global_batch: global_batch 16 is not divisible by dp x micro_batch = 4 x 3 = 12"
  run ${CMAKE_CURRENT_BINARY_DIR}/plan_tp3.json --tp 2 --gpus 8 --micro-batch 3 --global-batch 16 --sharding zero1)
trainsim_expect_exit(cli.describe.plan_error_names_file 3
  "^error: [^\n]*plan_tp3.json: /parallel: gpus 8 do not split"
  describe ${CMAKE_CURRENT_BINARY_DIR}/plan_tp3.json)
# Megatron-Core's pipeline split counting the embedding and the loss (tests/data/pipeline_split.json:
# llama2-7b's 32 layers + 2 = 34 slots over pp 2, 17 per stage, each stage building 16): the plan
# line and the JSON scenario carry it; a pp that the slots do not divide is a plan error naming
# the key (34 over 4).
set(split_scenario ${CMAKE_CURRENT_SOURCE_DIR}/../data/pipeline_split.json)
add_test(NAME cli.run.pipeline_split COMMAND trainsim run ${split_scenario})
set_tests_properties(cli.run.pipeline_split PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*embedding and loss counted in the pipeline split")
add_test(NAME cli.run.pipeline_split_json COMMAND trainsim run ${split_scenario} --format json)
set_tests_properties(cli.run.pipeline_split_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"account_for_embedding_in_pipeline_split\": true,[^}]*\"account_for_loss_in_pipeline_split\": true")
# The same keys as flags (every scenario key is also a flag): the scenario without them, then
# with both, gives the same plan line; an uneven split set by a flag names the flag.
add_test(NAME cli.run.pipeline_split_flags
  COMMAND trainsim run --hardware h100-dgx --gpus 64 --model llama2-7b --seq-len 4096
          --global-batch 64 --micro-batch 1 --pp 2 --sharding zero1
          --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split)
set_tests_properties(cli.run.pipeline_split_flags PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*embedding and loss counted in the pipeline split")
trainsim_expect_exit(cli.run.pipeline_split_flag_uneven 3
  "^error: command line \\(--model, --account-for-embedding-in-pipeline-split, --pp\\): /parallel/account_for_embedding_in_pipeline_split: the 32 layers plus 1 counted for the embedding, 33, do not split evenly"
  run --hardware h100-dgx --gpus 64 --model llama2-7b --seq-len 4096 --global-batch 64
      --micro-batch 1 --pp 2 --sharding zero1 --account-for-embedding-in-pipeline-split)
# A stack with Megatron-Core's FP8 parameters and precision-aware optimizer
# (tests/data/mla_fp8_params.json: fp8.param_gather, bf16 moments, mla_up_proj recomputation on
# a small latent-attention MoE model): the memory lines say why the parameters are small and
# what the optimizer keeps.
add_test(NAME cli.run.fp8_params_and_optimizer_state
  COMMAND trainsim run ${CMAKE_CURRENT_SOURCE_DIR}/../data/mla_fp8_params.json)
set_tests_properties(cli.run.fp8_params_and_optimizer_state PROPERTIES PASS_REGULAR_EXPRESSION
  "parameters [^\n]* \\(layers' weights in FP8, in buffers\\), gradients [^\n]*, optimizer [^\n]* \\(main weights 32-bit, moments 16/16-bit\\)")
# --pipeline-layout: layers per model chunk, in the plan line; text that is not a list of
# integers names the flag, a list that does not cover the model names the key.
add_test(NAME cli.run.pipeline_layout
  COMMAND trainsim run --hardware h100-dgx --gpus 64 --model llama2-7b --seq-len 4096
          --global-batch 64 --pp 4 --sharding zero1 --pipeline-layout 7,9,9,7)
set_tests_properties(cli.run.pipeline_layout PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*, layout 7\\|9\\|9\\|7 layers per chunk")
# GPipe is simulated whole (report/simulate.cpp): past the bound of a whole-iteration
# simulation (4,000,000 ops; 20,000 micro-batches of llama3.2-1b over 2 stages hold 7,280,022) a
# plan is refused, where it was extrapolated from runs on a line. A problem of the plan (exit 3),
# named by the flags that set it; with --full-simulation too, whose own bound would advise
# dropping the flag.
trainsim_expect_exit(cli.run.gpipe_whole_bound 3
  "^error: command line \\(--schedule, --global-batch\\): /parallel/pipeline_schedule: gpipe is simulated whole, and the whole iteration has 7280022 ops \\(20000 micro-batches per step\\); expected at most 4000000[^\n]*\\(fewer micro-batches, or 1f1b or interleaved, whose steady state is extrapolated\\)\n$"
  run --hardware a100-dgx --model llama3.2-1b --gpus 8 --pp 2 --schedule gpipe --seq-len 1024
      --global-batch 80000)
trainsim_expect_exit(cli.run.gpipe_whole_bound_full 3
  "^error: command line \\(--schedule, --global-batch\\): /parallel/pipeline_schedule: gpipe is simulated whole"
  run --hardware a100-dgx --model llama3.2-1b --gpus 8 --pp 2 --schedule gpipe --seq-len 1024
      --global-batch 80000 --full-simulation)
# The interleaved schedule with one virtual stage ran 1F1B to the last bit under the name
# "interleaved"; refused as search refuses --virtual-stages 1 with it.
trainsim_expect_exit(cli.run.interleaved_one_stage 3
  "^error: command line \\(--schedule\\): /parallel/virtual_stages: the interleaved schedule needs 2 or more virtual stages per pipeline rank, got 1\; expected virtual_stages of 2 or more, or pipeline_schedule \"1f1b\"\n$"
  run --hardware h100-dgx --model llama2-7b --gpus 4 --pp 4 --global-batch 16 --seq-len 2048
      --schedule interleaved)
# Blanks around the counts are allowed, as in search's lists (they were refused as text).
add_test(NAME cli.run.pipeline_layout_blanks
  COMMAND trainsim run --hardware h100-dgx --gpus 64 --model llama2-7b --seq-len 4096
          --global-batch 64 --pp 4 --sharding zero1 --pipeline-layout "7, 9, 9 ,7 ")
set_tests_properties(cli.run.pipeline_layout_blanks PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*, layout 7\\|9\\|9\\|7 layers per chunk")
trainsim_expect_exit(cli.run.pipeline_layout_text 2
  "^error: command line \\(--pipeline-layout\\): expected comma-separated layer counts like 7,9,9,7, got '7,9,x'"
  run --hardware h100-dgx --gpus 64 --model llama2-7b --seq-len 4096 --global-batch 64 --pp 4
      --sharding zero1 --pipeline-layout 7,9,x)
trainsim_expect_exit(cli.run.pipeline_layout_sum 3
  "^error: command line \\(--model, --pipeline-layout\\): /parallel/pipeline_layout: pipeline_layout's chunks hold 33 layers where the model has 32"
  run --hardware h100-dgx --gpus 64 --model llama2-7b --seq-len 4096 --global-batch 64 --pp 4
      --sharding zero1 --pipeline-layout 7,9,9,8)
# A layout's chunk count against pp x virtual_stages names the flag that set pp, not only the
# layout's (the file may say pp 4 where --pp 2 overrides it).
trainsim_expect_exit(cli.run.pipeline_layout_chunks_flag 3
  "^error: command line \\(--pipeline-layout, --pp\\): /parallel/pipeline_layout: pipeline_layout has 4 model chunks where pp x virtual_stages = 2\\; expected 2 entries"
  run --hardware h100-dgx --model llama2-7b --gpus 2 --seq-len 2048 --global-batch 8 --pp 2
      --pipeline-layout 8,8,8,8)
trainsim_expect_exit(cli.run.pipeline_split_uneven 3
  "/parallel/account_for_embedding_in_pipeline_split: the 32 layers plus 2 counted for the embedding and loss, 34, do not split evenly over pp x virtual_stages = 4"
  run ${split_scenario} --pp 4)

# The per-call collectives table gains a domains column where an NVLink domain spans hosts
# (docs/placement.md): llama2-7b, tp 16, pp 4 on 256 GB200 GPUs on full racks of 72, where the
# TP group of ranks 64-79 spans two racks; 8-GPU DGX profiles keep their columns.
add_test(NAME cli.run.collectives_domains COMMAND trainsim run --hardware gb200-nvl72
         --model llama2-7b --gpus 256 --tp 16 --pp 4 --seq-len 4096 --sequence-parallel)
set_tests_properties(cli.run.collectives_domains PROPERTIES PASS_REGULAR_EXPRESSION
  "ranks +nodes +domains +bytes[^\n]*\n  all_gather +tp +16 +4 +2 ")
add_test(NAME cli.run.collectives_no_domains COMMAND trainsim run --hardware h100-dgx
         --model llama2-7b --gpus 16 --seq-len 4096)
set_tests_properties(cli.run.collectives_no_domains PROPERTIES
  PASS_REGULAR_EXPRESSION "ranks +nodes +bytes +count"
  FAIL_REGULAR_EXPRESSION "domains")

# Numeric flags take decimal text: CLI11 alone would read "010" as 8 and "0x40" as 64.
trainsim_bad_input(run octal_flag "--tp: '010': expected a decimal number"
  --hardware h100-dgx --model llama2-7b --gpus 64 --tp 010 --seq-len 4096)
trainsim_bad_input(run hex_flag "--gpus: '0x40': expected a decimal number"
  --hardware h100-dgx --model llama2-7b --gpus 0x40 --seq-len 4096)
trainsim_bad_input(run hex_float_flag "--memory-headroom: '0x0.1p0': expected a decimal number"
  --hardware h100-dgx --model llama2-7b --gpus 8 --memory-headroom 0x0.1p0 --seq-len 4096)
# CLI11 alone saturates a number out of its type's range: 99999999999999999999 became 9223372036854775807
# in --tp's range error, a number nobody typed, and 1e999 became inf. Both are refused as
# written. An integer says which way it is off, as one past a narrower option type does (the
# 64-bit range it quoted was no option's own: --virtual-stages takes 1 and more); a number names
# the range a double holds.
trainsim_bad_input(run huge_int_flag
  "--tp: cannot convert '99999999999999999999'; expected a smaller integer \\(the value is past what the option holds\\)"
  --hardware h100-dgx --model llama2-7b --gpus 8 --tp 99999999999999999999 --seq-len 4096)
trainsim_bad_input(run huge_negative_int_flag "--pp: cannot convert '-99999999999999999999'; expected a larger integer"
  --hardware h100-dgx --model llama2-7b --gpus 8 --pp -99999999999999999999 --seq-len 4096)
trainsim_bad_input(run huge_float_flag
  "--memory-headroom: '1e999': out of range of a double; expected 0 or a magnitude from about 1e-308 to 1e308"
  --hardware h100-dgx --model llama2-7b --gpus 8 --memory-headroom 1e999 --seq-len 4096)

# A 5,000-byte hardware name is not echoed whole: the line keeps its head (file, key) and its
# tail (what was expected), leaving out the middle.
string(REPEAT "a" 5000 TRAINSIM_LONG_NAME)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/run_long_name.json
  "{\"hardware\": \"${TRAINSIM_LONG_NAME}\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}}\n")
trainsim_bad_input(run long_name "run_long_name.json: /hardware: unknown hardware profile 'a+ \\.\\.\\. \\([0-9]+ bytes left out\\) \\.\\.\\. a+' \\(built-in profiles: "
  ${CMAKE_CURRENT_BINARY_DIR}/run_long_name.json)
# A path on the command line resolves against the working directory; one in the scenario file
# beside the file. tests/data/flag_paths: cwd/m.json has 2 layers, scenario/m.json 4, and
# scenario/sc.json names "m.json".
add_test(NAME cli.run.flag_path_from_working_directory
         COMMAND trainsim describe ../scenario/sc.json --model m.json
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/../data/flag_paths/cwd)
set_tests_properties(cli.run.flag_path_from_working_directory PROPERTIES
  PASS_REGULAR_EXPRESSION "^model +m\\.json: 2 layers")
add_test(NAME cli.run.file_path_beside_the_file COMMAND trainsim describe ../scenario/sc.json
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/../data/flag_paths/cwd)
set_tests_properties(cli.run.file_path_beside_the_file PROPERTIES
  PASS_REGULAR_EXPRESSION "^model +m\\.json: 4 layers")

# A required key that is missing while the object holds a near miss of it: the line says which
# key is likely its misspelling ('modle' is two edits from 'model', 'gpu' one from 'gpus',
# io/spellcheck.hpp's bound being a third of the length, at least 2). Keys the scenario knows are
# never suggested.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/misspelled_model.json [=[
{"hardware": "h100-dgx", "modle": "llama2-7b", "cluster": {"gpus": 8},
 "training": {"seq_len": 4096}}
]=])
trainsim_expect_exit(cli.run.missing_key_near_miss 2
  "^error: [^\n]*misspelled_model.json: /model: missing required key \\(the object has 'modle': a misspelling of 'model'\\?\\); expected --model or the key in the scenario file"
  run ${CMAKE_CURRENT_BINARY_DIR}/misspelled_model.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/misspelled_gpus.json [=[
{"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpu": 8},
 "training": {"seq_len": 4096}}
]=])
trainsim_expect_exit(cli.run.missing_cluster_near_miss 2
  "^error: [^\n]*misspelled_gpus.json: /cluster: missing nodes or gpus \\(the object has 'gpu': a misspelling of 'gpus'\\?\\)"
  run ${CMAKE_CURRENT_BINARY_DIR}/misspelled_gpus.json)
# The same in a model file given by path (and in hardware profiles and stacks): the loaders find the missing
# key before the unknown one, and name the unknown key when, given under the missing key's name
# too, the loader calls it unknown (io::with_near_miss_note; tests/io/near_miss_test.cpp tries
# every key of every built-in document).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/misspelled_layers.json [=[
{"layer": 32, "hidden": 4096, "heads": 32, "kv_heads": 32, "ffn_hidden": 11008, "vocab": 32000,
 "activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false, "position_embedding": "rope"}
]=])
trainsim_expect_exit(cli.run.model_file_missing_key_near_miss 2
  "^error: [^\n]*misspelled_layers.json: /layers: missing required key \\(the object has 'layer': a misspelling of 'layers'\\?\\)\; expected an integer in \\[1, 65536\\]\n$"
  run --model ${CMAKE_CURRENT_BINARY_DIR}/misspelled_layers.json --hardware h100-dgx --gpus 8)
# A report given where a scenario is expected is named as one.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/a_report.json [=[
{"context": {}, "scenario": {"hardware": "h100-dgx"}, "iteration_time_s": 1.0}
]=])
trainsim_expect_exit(cli.run.report_as_scenario 2
  "^error: [^\n]*a_report.json: a trainsim report, not a scenario; expected a scenario document, such as the report's \"scenario\" object"
  run ${CMAKE_CURRENT_BINARY_DIR}/a_report.json)
# So is a sweep spec (it failed on a missing /hardware, its base's key).
trainsim_expect_exit(cli.run.sweep_spec_as_scenario 2
  "^error: [^\n]*fig4_scaling.json: a sweep spec, not a scenario\; expected a scenario document, such as the spec's \"base\" object"
  run ${PROJECT_SOURCE_DIR}/examples/fig4_scaling.json)
# A model file or Hugging Face config.json given where the scenario goes failed on a missing
# /hardware; each flag added for the key named led to the next missing key, and then to its
# own keys ('/architectures: unknown key'). So did a hardware profile, a stack and a diff
# report (on its "a"). Each is named for what it is, flags or not.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/hf_config.json [=[
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
 "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 14336,
 "vocab_size": 128256}
]=])
trainsim_expect_exit(cli.run.hf_config_as_scenario 2
  "^error: [^\n]*hf_config.json: a model, not a scenario\; expected a scenario document, which names a model file as its \"model\" [(]or --model FILE on the command line[)]\n$"
  run ${CMAKE_CURRENT_BINARY_DIR}/hf_config.json --hardware h100-dgx --model llama3-8b --gpus 8 --seq-len 4096)
trainsim_expect_exit(cli.run.model_file_as_scenario 2
  "^error: [^\n]*llama2-7b.json: a model, not a scenario"
  run ${PROJECT_SOURCE_DIR}/models/llama2-7b.json)
trainsim_expect_exit(cli.run.profile_as_scenario 2
  "^error: [^\n]*h100-dgx.json: a hardware profile, not a scenario\; expected a scenario document, which names a hardware profile file as its \"hardware\""
  run ${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json)
trainsim_expect_exit(cli.run.stack_as_scenario 2
  "^error: [^\n]*megatron-core.json: a software stack, not a scenario\; expected a scenario document, which names a software stack file as its \"stack\""
  run ${PROJECT_SOURCE_DIR}/stacks/megatron-core.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/a_diff.json [=[
{"a": {"scenario": {}}, "b": {"scenario": {}}, "deltas": {}}
]=])
trainsim_expect_exit(cli.run.diff_report_as_scenario 2
  "^error: [^\n]*a_diff.json: a trainsim diff report, not a scenario\; expected a scenario document, such as the report's \"a\" or \"b\" \"scenario\" object"
  run ${CMAKE_CURRENT_BINARY_DIR}/a_diff.json)

# A boolean flag given with =false sets its key false, over the scenario file's true.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sp_true.json [=[
{"hardware": "h100-dgx", "model": "llama3.2-1b", "cluster": {"gpus": 8},
 "training": {"seq_len": 1024}, "parallel": {"tp": 2, "sequence_parallel": true}}
]=])
add_test(NAME cli.run.flag_false_overrides_file
         COMMAND trainsim run ${CMAKE_CURRENT_BINARY_DIR}/sp_true.json --sequence-parallel=false)
set_tests_properties(cli.run.flag_false_overrides_file PROPERTIES PASS_REGULAR_EXPRESSION
  "plan +tp 2, pp 1, cp 1, dp 4, sharding [a-z_0-9]+, schedule 1f1b, recompute none\n")
# Sequence parallelism splits the sequence over the TP ranks: 4097 tokens do not split over 8.
trainsim_expect_exit(cli.run.sequence_parallel_split 3
  "^error: command line \\(--sequence-parallel, --tp, --seq-len\\): /training/seq_len: seq_len 4097 does not split over tp 8 under sequence parallelism; expected a multiple of 8"
  run --hardware h100-dgx --model llama2-7b --gpus 8 --tp 8 --sequence-parallel --seq-len 4097)
# A stack's relative "extends" path is looked for beside the stack file first (it was looked for
# from the working directory only, so the pair loaded from one folder and failed from another):
# run from the test's working directory, the stack two folders down extends its neighbour.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stack_pair/inner)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_pair/inner/derived.json
  "{\"extends\": \"base.json\", \"id\": \"derived\", \"name\": \"derived\"}\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_pair/inner/base.json
  "{\"extends\": \"megatron-lm\", \"id\": \"base\", \"name\": \"base\", \"memory\": {\"headroom_fraction\": 0.25}}\n")
add_test(NAME cli.run.stack_extends_beside
         COMMAND trainsim run ${run_args} --stack stack_pair/inner/derived.json)
set_tests_properties(cli.run.stack_extends_beside PROPERTIES
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
  PASS_REGULAR_EXPRESSION "stack +stack_pair/inner/derived\\.json\n.*headroom 25\\.0 %")
# Where the stack's folder and the working directory both hold the relative base, the two rules
# would read different files: refused naming both. The fix it names is an absolute path: the
# natural './base.json' is relative too and failed the same way.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stack_ambiguous/inner)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_ambiguous/base.json
  "{\"extends\": \"megatron-lm\", \"id\": \"outer\", \"name\": \"outer\"}\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_ambiguous/inner/base.json
  "{\"extends\": \"megatron-lm\", \"id\": \"inner\", \"name\": \"inner\"}\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_ambiguous/inner/derived.json
  "{\"extends\": \"base.json\", \"id\": \"derived\", \"name\": \"derived\"}\n")
add_test(NAME cli.run.bad.stack_extends_ambiguous
         COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2
                 "-DEXPECTED_STDERR=^error: inner/derived\\.json: /extends: 'base\\.json' names two files, inner/base\\.json beside this stack and base\\.json in the working directory\\; expected one \\(an absolute path tells them apart: './base\\.json' is relative too and names both\\)"
                 "-DCOMMAND=$<TARGET_FILE:trainsim>;run;${run_args};--stack;inner/derived.json"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
set_tests_properties(cli.run.bad.stack_extends_ambiguous PROPERTIES
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stack_ambiguous)
# A name read from a file reaches the table escaped, as it reaches the CSV and error lines: an
# inline model named with an ESC sequence and a line break must not drive the terminal or break
# the scenario line (both were printed raw).
file(READ ${PROJECT_SOURCE_DIR}/models/llama2-7b.json control_model)
string(JSON control_model SET "${control_model}" name "\"we\\u001b[31mird\\nx\"")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/run_control_name.json
  "{\"hardware\": \"h100-dgx\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 2048},
    \"model\": ${control_model}}\n")
add_test(NAME cli.run.control_characters_in_name
         COMMAND trainsim run ${CMAKE_CURRENT_BINARY_DIR}/run_control_name.json)
set_tests_properties(cli.run.control_characters_in_name PROPERTIES
  PASS_REGULAR_EXPRESSION "scenario     we\\\\u001b\\[31mird\\\\u000ax \\(inline\\) on 8 x h100-dgx")
# An inline model named like a built-in is marked inline: llama2-7b cut to 16 layers read as the
# built-in llama2-7b in the table (the report's context and scenario name it as given).
string(JSON half_model SET "${control_model}" name "\"llama2-7b\"")
string(JSON half_model SET "${half_model}" layers 16)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/run_inline_builtin_name.json
  "{\"hardware\": \"h100-dgx\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 2048},
    \"model\": ${half_model}}\n")
add_test(NAME cli.run.inline_model_named_as_builtin
         COMMAND trainsim run ${CMAKE_CURRENT_BINARY_DIR}/run_inline_builtin_name.json)
set_tests_properties(cli.run.inline_model_named_as_builtin PROPERTIES
  PASS_REGULAR_EXPRESSION "^scenario     llama2-7b \\(inline\\) on 8 x h100-dgx \\(1 node\\)\nstack        pytorch-2\\.3-fsdp\n")
# The stack's host time per step sits in the bubble, and the table says how much of it:
# llm-foundry-torch21's iteration_overhead is 171 ms (stacks/llm-foundry-torch21.json).
add_test(NAME cli.run.bubble_names_host_overhead COMMAND trainsim run --model llama2-7b
         --hardware h100-dgx --gpus 64 --sharding full_shard --micro-batch 4 --global-batch 512
         --seq-len 2048 --stack llm-foundry-torch21)
set_tests_properties(cli.run.bubble_names_host_overhead PROPERTIES PASS_REGULAR_EXPRESSION
  "\n  bubble +[0-9.]+ ms +\\([0-9.]+ %\\), of it host overhead 171 ms \\(stack iteration_overhead\\)\n")
# A profile's NICs bound its multi-node channel graphs (NCCL's search takes each channel's
# bandwidth off the NICs): h100-dgx's ring graph carries 8 x 48 GB/s = 384 GB/s, so 8 NICs of
# 1 Gb/s (1 GB/s in all) are refused at the graph; 8 NICs of 800 Gb/s (800 GB/s) run, with one
# note that the graphs, not the NICs, set collective times (384 < 0.9 x 800).
file(READ ${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json h100_profile)
string(JSON h100_slow_nics SET "${h100_profile}" fabric nic_bandwidth "\"1 Gb/s\"")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/h100_slow_nics.json "${h100_slow_nics}")
string(JSON h100_fast_nics SET "${h100_profile}" fabric nic_bandwidth "\"800 Gb/s\"")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/h100_fast_nics.json "${h100_fast_nics}")
trainsim_bad_input(run nics_below_graphs
  "h100_slow_nics.json: /collective/graphs/ring/multi_node/bw_inter: 8 channels x 48.0 GB/s = 384 GB/s across nodes, more than the node's 8 NICs of 125 MB/s carry \\(1.00 GB/s\\)"
  --model llama2-7b --hardware ${CMAKE_CURRENT_BINARY_DIR}/h100_slow_nics.json --gpus 16)
trainsim_expect_exit(cli.run.nics_beyond_graphs_note 0
  "^note: [^\n]*h100_fast_nics.json: the node's 8 NICs of 100 GB/s carry 800 GB/s, its multi-node ring graph 384 GB/s \\(8 channels x 48.0 GB/s\\): collective times follow the graphs"
  run --model llama2-7b --hardware ${CMAKE_CURRENT_BINARY_DIR}/h100_fast_nics.json --gpus 16
  --sharding full_shard
  --seq-len 4096)
# A file of another kind where a model, a hardware profile or a stack is expected is named as
# such; the loader would report a missing key of the kind it expected (/layers, /id, /fsdp).
trainsim_bad_input(run stack_as_model
  "stacks/megatron-core.json: the file is a software stack, not a model\\; expected a model\n"
  --model ${PROJECT_SOURCE_DIR}/stacks/megatron-core.json --hardware h100-dgx --gpus 8)
trainsim_bad_input(run model_as_hardware
  "models/llama2-7b.json: the file is a model, not a hardware profile\\; expected a hardware profile\n"
  --model llama2-7b --hardware ${PROJECT_SOURCE_DIR}/models/llama2-7b.json --gpus 8)
trainsim_bad_input(run hardware_as_stack
  "hardware_profiles/h100-dgx.json: the file is a hardware profile, not a software stack\\; expected a software stack\n"
  --model llama2-7b --hardware h100-dgx --gpus 8
  --stack ${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_extends_profile.json
  "{\"extends\": \"${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json\", \"id\": \"x\"}\n")
trainsim_bad_input(run stack_extends_hardware
  "stack_extends_profile.json: /extends: '[^']*h100-dgx.json' is a hardware profile, not a software stack\\; expected a software stack\n"
  --model llama2-7b --hardware h100-dgx --gpus 8
  --stack ${CMAKE_CURRENT_BINARY_DIR}/stack_extends_profile.json)
# Model FLOPs count causal attention in full (twice what the kernels execute): llama3-8b at
# sequence 131072 on 8 A100s (cp 8, full recomputation) reports an HFU of 1.018, and attention is
# 82.1% of the model FLOPs (12 x 32 x 4096 x 131072 = 206.16 GFLOP per token beside
# 6 N = 6 x 7,504,924,672 = 45.03 GFLOP, N as describe prints it).
# run says why on one line, exit 0.
trainsim_expect_exit(cli.run.utilization_above_one 0
  "^note: HFU 1\\.021 exceeds 1: model FLOPs count causal attention in full [^\n]*twice what the causal kernels execute, and attention is 82\\.1% of them at sequence 131072\n$"
  run --hardware a100-dgx --model llama3-8b --gpus 8 --cp 8 --seq-len 131072
  --sharding full_shard --recompute full)
# A hardware profile that names another to extend: only stacks do, so the file is told that first,
# where it was told the keys it lacks one after another (/name, then /gpu/name, ...).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/hardware_extends.json
  "{\"extends\": \"h100-dgx\", \"id\": \"x\", \"gpu\": {\"sms\": 100}}\n")
trainsim_bad_input(run hardware_extends
  "hardware_extends.json: /extends: hardware profiles do not extend one another \\(stacks do\\)\\; expected a whole profile[^\n]*\n$"
  --model llama2-7b --hardware ${CMAKE_CURRENT_BINARY_DIR}/hardware_extends.json --gpus 8
  --seq-len 4096)
# A stack that extends a built-in one, given where a hardware profile goes: named as the stack it
# is, not told to become a whole profile.
trainsim_bad_input(run hardware_is_extending_stack
  "torchtitan-fsdp2-rmsnorm.json: /extends: 'torchtitan-fsdp2' is a software stack, so this file, which extends it, is a stack, not a hardware profile\\; expected a hardware profile\n$"
  --model llama2-7b --hardware ${PROJECT_SOURCE_DIR}/stacks/torchtitan-fsdp2-rmsnorm.json
  --gpus 8 --seq-len 4096)
# MXFP8 block scaling needs Blackwell's tensor cores (Transformer Engine's support matrix:
# MXFP8BlockScaling on compute capability 10.x only): on H100 the recipe is refused, where it
# ran priced as if it could; on B200 it runs.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_mxfp8.json
  "{\"extends\": \"megatron-core\", \"id\": \"mc-mxfp8\", \"fp8\": {\"recipe\": \"mxfp8\"}}\n")
trainsim_expect_exit(cli.run.mxfp8_needs_blackwell 3
  "^error: [^\n]*/stack: stack '[^']*stack_mxfp8\\.json' fp8\\.recipe mxfp8 \\(MXFP8 block scaling\\) needs Blackwell tensor cores, and hardware 'h100-dgx' is not Blackwell"
  run --model llama3-8b --hardware h100-dgx --gpus 8 --seq-len 4096 --precision fp8
  --stack ${CMAKE_CURRENT_BINARY_DIR}/stack_mxfp8.json)
add_test(NAME cli.run.mxfp8_on_blackwell COMMAND trainsim run --model llama3-8b
         --hardware b200-dgx --gpus 8 --seq-len 4096 --precision fp8
         --stack ${CMAKE_CURRENT_BINARY_DIR}/stack_mxfp8.json)
set_tests_properties(cli.run.mxfp8_on_blackwell PROPERTIES PASS_REGULAR_EXPRESSION
  "^scenario     llama3-8b on 8 x b200-dgx")
# '-' is standard output in sweep -o; run's stdout carries the report, so --trace - is refused
# (it wrote a file named '-' in the working directory).
trainsim_bad_input(run trace_dash "command line \\(--trace\\): '-' would be standard output, which carries the report\\; expected a file path"
  ${PROJECT_SOURCE_DIR}/examples/paper_fsdp_128.json --trace -)
# So is a path to the pipe standard output is here (the test captures it): the trace ran into the
# report, and redirected to a file, replaced it with the trace.
trainsim_bad_input(run trace_stdout_path "command line \\(--trace\\): '/dev/stdout' is standard output, which carries the report\\; expected a file path"
  ${PROJECT_SOURCE_DIR}/examples/paper_fsdp_128.json --trace /dev/stdout)
# Block scaling (Float8BlockScaling, Megatron's --fp8-recipe blockwise) runs on Hopper.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stack_blockwise.json
  "{\"extends\": \"megatron-core\", \"id\": \"mc-blockwise\", \"fp8\": {\"recipe\": \"blockwise\"}}\n")
add_test(NAME cli.run.fp8_blockwise_on_hopper COMMAND trainsim run --model llama3-8b
         --hardware h100-dgx --gpus 8 --seq-len 4096 --precision fp8
         --stack ${CMAKE_CURRENT_BINARY_DIR}/stack_blockwise.json)
set_tests_properties(cli.run.fp8_blockwise_on_hopper PROPERTIES PASS_REGULAR_EXPRESSION
  "^scenario     llama3-8b on 8 x h100-dgx")
# The collectives table's group column is as wide as its longest name: 'expert_shard' pushed
# its rows' ranks, nodes, bytes and later cells two columns right of their headers.
add_test(NAME cli.run.expert_shard_columns
         COMMAND trainsim run --hardware h100-dgx --model qwen3-30b-a3b --gpus 32 --seq-len 4096
                 --global-batch 64 --ep 8 --sharding full_shard --micro-batch 2)
set_tests_properties(cli.run.expert_shard_columns PROPERTIES PASS_REGULAR_EXPRESSION
  "  op              group         ranks  nodes        bytes  count       time  algorithm\n  all_gather      shard            32      4  [^\n]*\n[^\n]*\n  all_gather      expert_shard      4      4      144 MiB")
# A flag given a value takes true or false only: CLI11 also read numbers and yes/no, so
# --sequence-parallel=2 turned sequence parallelism on without a word.
trainsim_bad_input(run flag_value_number "--sequence-parallel: '2': expected true or false"
  --hardware h100-dgx --model llama2-7b --gpus 16 --seq-len 4096 --tp 2 --sequence-parallel=2)
trainsim_bad_input(run flag_value_word "--full-simulation: 'yes': expected true or false"
  --hardware h100-dgx --model llama2-7b --gpus 16 --seq-len 4096 --full-simulation=yes)
# Spaces around a number are dropped, both sides alike (a leading one was taken, a trailing one
# refused). (A script runs it: a -D list given to add_test loses the space.)
add_test(NAME cli.run.number_spaces
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/trailing_space.cmake)
set_tests_properties(cli.run.number_spaces PROPERTIES PASS_REGULAR_EXPRESSION
  "spaces around a number read as the number")
# A built-in id is the built-in wherever it is written: a file named h100-dgx (no extension)
# beside a scenario was read in its place while the report named the built-in (a copy with
# another GEMM efficiency ran at twice the iteration time, labelled h100-dgx). Here the file is
# not even JSON, and the scenario runs on the built-in.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/shadowed)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/shadowed/h100-dgx "not a profile\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/shadowed/s.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama3.2-1b\", \"cluster\": {\"gpus\": 8},
    \"training\": {\"seq_len\": 2048, \"global_batch\": 8}}\n")
trainsim_expect_exit(cli.run.builtin_id_not_shadowed 0 "^$"
  run ${CMAKE_CURRENT_BINARY_DIR}/shadowed/s.json)
# trainsim's other documents given as a profile, model or stack were refused on a missing /id
# ('add an id' to a scenario): named for what they are.
trainsim_expect_exit(cli.run.scenario_as_stack 2
  "^error: [^\n]*paper_fsdp_128.json: the file is a scenario, not a software stack\\; expected a software stack\n$"
  run --hardware h100-dgx --model llama2-7b --gpus 16 --seq-len 2048
  --stack ${PROJECT_SOURCE_DIR}/examples/paper_fsdp_128.json)
trainsim_expect_exit(cli.run.nccl_constants_as_profile 2
  "^error: [^\n]*nccl-2.20.json: the file is NCCL's constants \\(hardware_profiles/nccl/\\), not a hardware profile"
  run --hardware ${PROJECT_SOURCE_DIR}/hardware_profiles/nccl/nccl-2.20.json --model llama2-7b
  --gpus 16 --seq-len 2048)
trainsim_expect_exit(cli.run.sweep_spec_as_model 2
  "^error: [^\n]*fig4_scaling.json: the file is a sweep spec, not a model"
  run --hardware h100-dgx --model ${PROJECT_SOURCE_DIR}/examples/fig4_scaling.json --gpus 16
  --seq-len 2048)
add_test(NAME cli.run.headroom_echoed
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/headroom_echo
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/headroom_echo.cmake)
# A "schema" that is not a string in a stack (or profile, or model) is an ordinary unknown key:
# the document check read it as a string and crashed ('internal error: type must be string').
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/schema_number_stack.json "{\"schema\": 5, \"id\": \"x\"}\n")
trainsim_expect_exit(cli.run.stack_schema_number 2
  "^error: [^\n]*schema_number_stack.json: /[a-z_]+: missing required key"
  run --hardware h100-dgx --model llama2-7b --gpus 8 --seq-len 4096
  --stack ${CMAKE_CURRENT_BINARY_DIR}/schema_number_stack.json)
# A plan problem names a file whose name holds a newline escaped, as a ConfigError does: it said
# 'bad; plan.json' (exit 3), a file that does not exist.
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/bad\nplan.json"
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8},
    \"training\": {\"seq_len\": 4096}, \"parallel\": {\"tp\": 3}}\n")
trainsim_expect_exit(cli.run.plan_problem_newline_name 3
  "^error: [^\n]*bad.u000aplan.json: /parallel: gpus 8 do not split"
  run "${CMAKE_CURRENT_BINARY_DIR}/bad\nplan.json")

# tp x pp x cp against the GPUs reads --tp, --pp, --cp and the cluster's size: those flags are
# named, where every flag under /parallel was (--recompute and --sharding too).
trainsim_expect_exit(cli.run.model_parallel_flags_named 3
  "^error: command line \\(--gpus, --pp, --tp\\): /parallel: tp x pp x cp = 8 x 8 x 1 exceeds the 8 gpus"
  run --model llama2-7b --hardware h100-dgx --gpus 8 --tp 8 --pp 8 --seq-len 4096
  --recompute full --sharding zero1)
# nodes and gpus that disagree, counted in words that agree with their numbers: 8 GPUs of h100-dgx
# fill 1 node ("1 nodes" before).
trainsim_bad_input(run nodes_disagree "scenario_nodes_disagree\\.json: /cluster: nodes 2 and gpus 8 disagree: 8 GPUs fill 1 node of 8\\; expected"
  ${CMAKE_CURRENT_SOURCE_DIR}/../data/scenario_nodes_disagree.json)
# An option given twice is refused, an on/off flag as a value option: "--require-fit
# --require-fit=false" kept the last in silence and ran a plan that does not fit with exit 0.
trainsim_bad_input(run repeated_value "command line .--tp.: given 2 times. expected it once"
  ${run_args} --tp 2 --tp 4)
trainsim_bad_input(run repeated_flag "command line .--require-fit.: given 2 times. expected it once"
  ${run_args} --require-fit --require-fit=false)
trainsim_bad_input(run repeated_switch
  "command line .--sequence-parallel.: given 2 times. expected it once"
  ${run_args} --sequence-parallel=true --sequence-parallel=false)
trainsim_bad_input(run pipeline_layout_leading_zero
  "command line .--pipeline-layout.: expected comma-separated layer counts like 7,9,9,7, got '016,16'"
  --hardware h100-dgx --model llama2-7b --gpus 8 --seq-len 4096 --pp 2 --pipeline-layout 016,16)
# In a scenario file a whole number written 8.0 is 8 in pipeline_layout, as in pp, cp and every
# other integer key (it was refused there alone); 8.5 is not.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layout_float.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}, \"parallel\": {\"pp\": 4.0, \"pipeline_layout\": [8, 8, 8, 8.0]}}\n")
add_test(NAME cli.run.pipeline_layout_whole_float
  COMMAND trainsim run ${CMAKE_CURRENT_BINARY_DIR}/layout_float.json)
set_tests_properties(cli.run.pipeline_layout_whole_float PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*, layout 8\\|8\\|8\\|8 layers per chunk")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layout_fraction.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}, \"parallel\": {\"pp\": 4, \"pipeline_layout\": [8, 8, 8, 8.5]}}\n")
trainsim_bad_input(run pipeline_layout_fraction
  "layout_fraction.json: /parallel/pipeline_layout/3: expected an integer from 1 to [0-9]+ .a model chunk's transformer layers., got 8.5"
  ${CMAKE_CURRENT_BINARY_DIR}/layout_fraction.json)
# Layers the chunks do not divide are split as evenly as they can, the first chunks taking one
# more (parallel::chunk_layers): llama2-7b's 32 layers on pp 3 run as 11, 11 and 10, which the
# plan line now says (Megatron-LM would refuse the plan; nothing said it ran uneven).
add_test(NAME cli.run.uneven_layers
  COMMAND trainsim run --hardware h100-dgx --model llama2-7b --seq-len 4096 --gpus 3 --pp 3
          --global-batch 12)
set_tests_properties(cli.run.uneven_layers PROPERTIES PASS_REGULAR_EXPRESSION
  "plan [^\n]*, recompute none, layers 11\\|11\\|10 per chunk\n")
# Where the headroom and what is left round to one MiB figure, the message gives bytes: 0.98984376
# of 80 GiB keeps 85,026,931,547 B, 859 more than the 85,026,930,688 left (it read "keeps 81088.0
# MiB free, more than the 81088.0 MiB").
trainsim_bad_input(run headroom_bytes
  "0\\.98984376 of HBM keeps 85026931547 bytes free, more than the 85026930688 bytes the CUDA context"
  ${run_args} --memory-headroom 0.98984376)
# The same in a scenario, through the flag or a file: DeepSpeed's and PyTorch's names for the
# modes (README, `sharding`) are said as trainsim's.
trainsim_expect_exit(cli.run.sharding_alias 2 "^error: command line \\(--sharding\\): /parallel/sharding: unknown value 'ZeRO-3'. it is 'full_shard' here. expected one of none, zero1, shard_grad_op, full_shard, hybrid_shard\n$"
  run --hardware h100-dgx --model llama2-7b --gpus 16 --seq-len 4096 --sharding ZeRO-3)
# With a pipeline the warning names the stage that needs most, as --require-fit's error does.
add_test(NAME cli.run.unfit_warning_stage COMMAND trainsim run --hardware h100-dgx --model llama2-70b
         --gpus 8 --pp 2 --seq-len 4096 --global-batch 16)
set_tests_properties(cli.run.unfit_warning_stage PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: the plan does not fit in memory \\([0-9.]+ GiB of 75.2 GiB usable per GPU on stage 0\\)")
# --nodes-per-domain changes where ranks sit, not the degrees: a global batch that dp x
# micro-batch does not divide named it among the flags that set the problem.
trainsim_expect_exit(cli.run.batch_flags_without_placement 3 "^error: command line \\(--gpus, --pp, --tp, --global-batch\\): /training/global_batch: global_batch 64 is not divisible by dp x micro_batch = 12 x 1 = 12"
  run --hardware gb200-nvl72 --model llama2-7b --gpus 96 --tp 2 --pp 4 --nodes-per-domain 16 --seq-len 4096 --global-batch 64)
# Under sequence parallelism the backward gathers each column-parallel GEMM's input again
# (Korthikanti et al. 2022 §4.2.2; Megatron-LM's linear layers): llama2-7b, tp 8, one
# micro-batch, 32 layers x (2 forward + 2 row-parallel backward + 2 input re-gathers) + the LM
# head's input gather, forward and again backward, and the embedding's backward gather = 195
# AllGathers of 4096 x 4096 x 2 B = 32 MiB, against 130 ReduceScatters (32 x 4 + the
# embedding's and the head's).
add_test(NAME cli.run.sp_backward_regather COMMAND trainsim run --hardware h100-dgx --model llama2-7b
         --gpus 8 --seq-len 4096 --tp 8 --sequence-parallel --stack megatron-lm)
set_tests_properties(cli.run.sp_backward_regather PROPERTIES PASS_REGULAR_EXPRESSION
  "reduce_scatter +tp +8 +1 +32.0 MiB +130 [^\n]*\n +all_gather +tp +8 +1 +32.0 MiB +195 ")
# Under FP8 with the stack's FP8 TP communication (megatron-core) the layers' input gathers move
# the 1-byte cast, 16 MiB, the second one too (Transformer Engine gathers ln_out again with the
# input quantizer): 32 x (2 + 2) = 128 of 16 MiB; the row-parallel backward gathers, the head's
# two and the embedding's stay 16-bit: 32 x 2 + 3 = 67 of 32 MiB. The second gathers moved
# 32 MiB (64 forward gathers of 16 MiB and 130 of 32 MiB).
add_test(NAME cli.run.sp_backward_regather_fp8 COMMAND trainsim run --hardware h100-dgx
         --model llama2-7b --gpus 8 --seq-len 4096 --tp 8 --sequence-parallel --stack megatron-core
         --precision fp8)
set_tests_properties(cli.run.sp_backward_regather_fp8 PROPERTIES PASS_REGULAR_EXPRESSION
  "all_gather +tp +8 +1 +16.0 MiB +128 [^\n]*\n +all_gather +tp +8 +1 +32.0 MiB +67 ")
# A multi-token-prediction module's projection is column-parallel too: its 2h-wide input (1024
# tokens / 2 x 2048 x 2 B x 2 ranks = 4 MiB gathered) is gathered in forward and again beside
# its backward, 2 calls, against 1 ReduceScatter of its input gradient (tests/data/
# window_mtp_model.json, tp 2, one micro-batch).
add_test(NAME cli.run.sp_backward_regather_mtp COMMAND trainsim run --hardware h100-dgx
         --model ${CMAKE_CURRENT_SOURCE_DIR}/../data/window_mtp_model.json --gpus 2 --tp 2
         --sequence-parallel --seq-len 1024 --global-batch 1)
set_tests_properties(cli.run.sp_backward_regather_mtp PROPERTIES PASS_REGULAR_EXPRESSION
  "all_gather +tp +2 +1 +4.00 MiB +2 [^\n]*\n[^\n]*\n[^\n]*\n +reduce_scatter +tp +2 +1 +4.00 MiB +1 ")
