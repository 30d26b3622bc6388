# Hostile inputs on every path into trainsim: each is one line "error: ..." and exit 2 (bad
# input) or 3 (impossible plan), never a crash, a hang or exit 1. Files with out-of-range values
# are written at configure time from the built-in data, so the tests carry no fixtures.
set(robust_dir ${CMAKE_CURRENT_BINARY_DIR}/robustness)
file(MAKE_DIRECTORY ${robust_dir})
set(robust_base --hardware h100-dgx --model llama2-7b --seq-len 4096)

# Command-line format: CLI11's own errors become one "error:" line; unknown commands get a
# suggestion.
trainsim_expect_exit(cli.robust.unknown_command 2
  "^error: unknown command 'swep'; did you mean 'sweep'\\?; expected one of describe, run"
  swep spec.json)
trainsim_expect_exit(cli.robust.unknown_option 2
  "^error: command line \\(--no-such-flag\\): unexpected argument; expected"
  run --no-such-flag)
# Several unexpected arguments, in the order typed: CLI11 lists them from its argument stack,
# backwards ("2 --stage x.json --trace").
trainsim_expect_exit(cli.robust.unexpected_arguments_in_order 2
  "^error: command line \\(--trace x\\.json --stage 2\\): unexpected argument; expected"
  diff a.json b.json --trace x.json --stage 2)
# An option's value that reads like the unexpected arguments backwards is not taken for them.
trainsim_expect_exit(cli.robust.unexpected_arguments_not_a_value 2
  "^error: command line \\(x y\\): unexpected argument; expected"
  diff a.json b.json x y --stack "y x")
trainsim_expect_exit(cli.robust.option_not_a_number 2 "^error: .*--tp"
  describe ${robust_base} --gpus 8 --tp two)
trainsim_expect_exit(cli.robust.missing_required_option 2
  "^error: command line \\(--hardware\\): missing required option. expected it"
  search --model llama2-7b --gpus 8 --global-batch 8 --seq-len 4096)
# A flag given last without its value: CLI11's "--gpus: 1 required INT missing", in the
# project's shape, with what the value must be.
trainsim_expect_exit(cli.robust.option_without_value 2
  "^error: command line \\(--gpus\\): no value given. expected an integer after it \\(see"
  run ${robust_base} --gpus)
trainsim_expect_exit(cli.robust.no_command 2
  "^error: a subcommand is required; expected one of describe, run, collective, sweep")

# --gpus and --nodes together, as a scenario file and `search` already refuse.
trainsim_expect_exit(cli.robust.run_gpus_and_nodes 2
  "^error: command line \\(--gpus, --nodes\\): both --gpus and --nodes given; expected one of them"
  run ${robust_base} --gpus 8 --nodes 1)
trainsim_expect_exit(cli.robust.describe_gpus_and_nodes 2 "both --gpus and --nodes given"
  describe ${robust_base} --gpus 8 --nodes 1)

# Integer overflow: counts above their documented bounds (include/trainsim/parallel/scenario.hpp,
# model/model_spec.hpp) name the flag or key and the bound.
trainsim_expect_exit(cli.robust.gpus_int64_max 2
  "^error: command line \\(--gpus\\): /cluster/gpus: 9223372036854775807: out of range; expected at most 16777216"
  describe ${robust_base} --gpus 9223372036854775807)
trainsim_expect_exit(cli.robust.gpus_beyond_int64 2 "^error: .*--gpus"
  describe ${robust_base} --gpus 99999999999999999999)
# 2^24 nodes of 8 GPUs = 2^27 GPUs.
trainsim_expect_exit(cli.robust.nodes_times_gpus_per_node 2
  "^error: command line \\(--nodes\\): /cluster/nodes: 16777216 nodes of 8 GPUs: out of range"
  run ${robust_base} --nodes 16777216)
# tp, pp and cp are at most 2^20 each (io::kMaxDegree), so their product always fits an int64.
trainsim_expect_exit(cli.robust.tp_out_of_range 2
  "^error: command line \\(--tp\\): /parallel/tp: 16777216: out of range; expected at most 1048576"
  run ${robust_base} --gpus 8 --tp 16777216 --pp 16777216 --cp 16777216)
# 2^20 each = 2^60 GPUs in the model-parallel group: a plan problem, exit 3.
trainsim_expect_exit(cli.robust.tp_pp_cp_exceed_gpus 3
  "^error: command line \\(--gpus, --cp, --pp, --tp\\): /parallel: tp x pp x cp = 1048576 x 1048576 x 1048576 exceeds the 8 gpus"
  run ${robust_base} --gpus 8 --tp 1048576 --pp 1048576 --cp 1048576)
# A sweep combining the largest degrees used to wrap tp x pp x cp to 0 and divide by it
# (SIGFPE); every axis value is now bounded when the spec is read.
file(WRITE ${robust_dir}/degree_sweep.json [=[
{"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 8},
          "training": {"seq_len": 4096}},
 "axes": {"parallel.tp": [1, 16777216], "parallel.pp": [1, 16777216],
          "parallel.cp": [1, 16777216]}}
]=])
trainsim_expect_exit(cli.robust.sweep_degree_product 2
  "^error: .*degree_sweep.json: /axes/parallel.tp/1: 16777216: out of range; expected at most 1048576"
  sweep ${robust_dir}/degree_sweep.json)
# 2^30 sequences of one per micro-batch on dp 8: 2^27 micro-batches, above 2^16.
trainsim_expect_exit(cli.robust.too_many_microbatches 3
  "^error: command line \\(--gpus, --global-batch\\): /training/global_batch: global_batch 1073741824 makes 134217728 micro-batches"
  run ${robust_base} --gpus 8 --global-batch 1073741824)
trainsim_expect_exit(cli.robust.global_batch_times_seq_len 2
  "^error: command line \\(--global-batch\\): /training/global_batch: 9223372036854775807: out of range"
  run ${robust_base} --gpus 8 --global-batch 9223372036854775807)
trainsim_expect_exit(cli.robust.micro_batch_tokens 3
  "^error: command line \\(--micro-batch, --seq-len\\): /training/micro_batch: micro_batch 4294967296 sequences of 4096 tokens = 17592186044416 tokens. expected micro_batch x seq_len at most 4294967296 tokens"
  run ${robust_base} --gpus 8 --micro-batch 4294967296 --global-batch 8)
trainsim_expect_exit(cli.robust.micro_batch_above_bound 2
  "^error: command line \\(--micro-batch\\): /training/micro_batch: 4294967297: out of range. expected at most 4294967296"
  run ${robust_base} --gpus 8 --micro-batch 4294967297)
trainsim_expect_exit(cli.robust.search_degree_overflow 2
  "^error: --tp: 9223372036854775807: out of range; expected at most 1048576"
  search ${robust_base} --gpus 8 --global-batch 8 --tp 9223372036854775807)
trainsim_expect_exit(cli.robust.search_degree_beyond_int64 2
  "^error: --pp: 99999999999999999999: out of range"
  search ${robust_base} --gpus 8 --global-batch 8 --pp 99999999999999999999)
# 60 tp values x 4 pp x (2 schedules x 1 + 1) x 60 micro-batches x 3 shardings x 3 recomputes
# = 388,800 plans > 100,000.
set(sixty "1")
foreach(i RANGE 2 60)
  string(APPEND sixty ",${i}")
endforeach()
trainsim_expect_exit(cli.robust.search_space_too_large 2
  "^error: .*search space of up to 388800 plans: too large; expected at most 100000"
  search ${robust_base} --gpus 8 --global-batch 8 --tp ${sixty} --micro-batch ${sixty})

# A model whose parameter count overflows int64 (and one layer count beyond any bound).
file(WRITE ${robust_dir}/huge_model.json [=[
{"layers": 65536, "hidden": 1048576, "heads": 64, "kv_heads": 64, "ffn_hidden": 16777216,
 "vocab": 4294967296, "activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false,
 "position_embedding": "rope"}
]=])
trainsim_expect_exit(cli.robust.model_parameter_overflow 2
  "^error: .*huge_model.json: /layers: the model has about .* parameters: out of range; expected at most 2\\^50"
  describe --hardware h100-dgx --model ${robust_dir}/huge_model.json --gpus 8 --seq-len 4096)
file(WRITE ${robust_dir}/layers_1e12.json [=[
{"layers": 1e12, "hidden": 4096, "heads": 32, "kv_heads": 32, "ffn_hidden": 11008,
 "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false,
 "position_embedding": "rope"}
]=])
trainsim_expect_exit(cli.robust.model_layers_1e12 2
  "^error: .*layers_1e12.json: /layers: 1000000000000.0: out of range; expected at most 65536"
  describe --hardware h100-dgx --model ${robust_dir}/layers_1e12.json --gpus 8 --seq-len 4096)

# Non-finite after unit scaling: 1e300 TB/s is finite as written, infinite in B/s.
file(READ ${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json h100_text)
string(REGEX REPLACE "\"hbm_bandwidth\": \"[^\"]*\"" "\"hbm_bandwidth\": \"1e300 TB/s\""
       huge_bw "${h100_text}")
file(WRITE ${robust_dir}/huge_bandwidth.json "${huge_bw}")
trainsim_expect_exit(cli.robust.bandwidth_overflows_after_scaling 2
  "^error: .*huge_bandwidth.json: /gpu/hbm_bandwidth: value overflows in SI units; expected a bandwidth"
  describe --hardware ${robust_dir}/huge_bandwidth.json --model llama2-7b --gpus 8 --seq-len 4096)
string(REGEX REPLACE "\"hbm_bandwidth\": \"[^\"]*\"" "\"hbm_bandwidth\": \"1e-320 GB/s\""
       denormal_bw "${h100_text}")
file(WRITE ${robust_dir}/denormal_bandwidth.json "${denormal_bw}")
trainsim_expect_exit(cli.robust.denormal_bandwidth 2
  "^error: .*denormal_bandwidth.json: /gpu/hbm_bandwidth: out of range; expected a bandwidth"
  describe --hardware ${robust_dir}/denormal_bandwidth.json --model llama2-7b --gpus 8
  --seq-len 4096)

# HBM that holds no more than the CUDA context and NCCL buffers: a profile of 512 MiB loaded
# and every plan failed on the stack ("memory.workspace 64.0 MiB ... expected a workspace below
# -256 MiB", exit 3). The profile's hbm_capacity is named (h100-dgx writes the default reserve,
# which the line says it wrote). Without reserved_memory the line says the defaults hold.
string(REGEX REPLACE "\"hbm_capacity\": \"80 GiB\"" "\"hbm_capacity\": \"512 MiB\""
       tiny_hbm "${h100_text}")
file(WRITE ${robust_dir}/tiny_hbm.json "${tiny_hbm}")
trainsim_expect_exit(cli.robust.hbm_below_reserve 2
  "^error: .*tiny_hbm.json: /gpu/hbm_capacity: 512 MiB holds no more than the CUDA context and NCCL buffers reserved \\(512 MiB \\+ 256 MiB, /gpu/reserved_memory\\)\; expected more HBM than that\n$"
  run --hardware ${robust_dir}/tiny_hbm.json --model llama2-7b --gpus 16 --seq-len 2048)
string(REGEX REPLACE "\"reserved_memory\": {[^}]*}," "" tiny_hbm_default "${tiny_hbm}")
file(WRITE ${robust_dir}/tiny_hbm_default.json "${tiny_hbm_default}")
trainsim_expect_exit(cli.robust.hbm_below_default_reserve 2
  "^error: .*tiny_hbm_default.json: /gpu/hbm_capacity: 512 MiB holds no more than the CUDA context and NCCL buffers reserved \\(512 MiB \\+ 256 MiB, the defaults\; /gpu/reserved_memory sets them\\)\; expected more HBM than that\n$"
  run --hardware ${robust_dir}/tiny_hbm_default.json --model llama2-7b --gpus 16 --seq-len 2048)

# gpus_per_node's bound is its key's range, so a near miss's note states the same one: it said
# [1, 65536] where 1024 is the most a profile may give.
string(REGEX REPLACE "\"gpus_per_node\": 8" "\"gpus_per_nod\": 8" gpn_typo "${h100_text}")
file(WRITE ${robust_dir}/gpn_typo.json "${gpn_typo}")
trainsim_expect_exit(cli.robust.gpus_per_node_bound_stated 2
  "^error: .*gpn_typo.json: /node/gpus_per_node: missing required key \\(the object has 'gpus_per_nod': a misspelling of 'gpus_per_node'\\?\\)\; expected an integer in \\[1, 1024\\]\n$"
  describe --hardware ${robust_dir}/gpn_typo.json --model llama2-7b --gpus 8 --seq-len 4096)

# Library exceptions: a JSON number beyond double range (nlohmann out_of_range) is bad input.
file(WRITE ${robust_dir}/number_overflow.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 1e400},\n"
  " \"training\": {\"seq_len\": 4096}}\n")
trainsim_expect_exit(cli.robust.json_number_overflow 2
  "^error: .*number_overflow.json: invalid JSON at line [0-9]+, column [0-9]+ \\(number overflow parsing '1e400'\\)"
  run ${robust_dir}/number_overflow.json)

# Unbounded input: endless streams and directories are refused, not read forever.
trainsim_expect_exit(cli.robust.scenario_dev_zero 2
  "^error: /dev/zero: file too large; expected a JSON document of at most 64 MiB"
  run /dev/zero)
trainsim_expect_exit(cli.robust.sweep_dev_zero 2
  "^error: /dev/zero: file too large; expected a sweep spec of at most 64 MiB" sweep /dev/zero)
trainsim_expect_exit(cli.robust.scenario_directory 2
  "^error: ${robust_dir}: is a directory; expected a JSON document" describe ${robust_dir})
trainsim_expect_exit(cli.robust.sweep_directory 2
  "^error: ${robust_dir}: is a directory; expected a sweep spec" sweep ${robust_dir})
trainsim_expect_exit(cli.robust.runs_dev_zero 2
  "^error: /dev/zero: file too large; expected a published-runs JSON file" validate /dev/zero)
# 100,000 nested arrays: refused at 64 levels, before any recursion.
string(REPEAT "[" 100000 deep)
file(WRITE ${robust_dir}/deep.json "${deep}")
trainsim_expect_exit(cli.robust.deep_nesting 2
  "^error: .*deep.json: JSON nested too deeply at line 1; expected at most 64 levels"
  run ${robust_dir}/deep.json)
trainsim_expect_exit(cli.robust.model_directory 2
  "^error: ${robust_dir}: is a directory; expected a model JSON file"
  describe --hardware h100-dgx --model ${robust_dir} --gpus 8 --seq-len 4096)
trainsim_expect_exit(cli.robust.hardware_directory 2
  "^error: ${robust_dir}: is a directory; expected a hardware profile JSON file"
  describe --hardware ${robust_dir} --model llama2-7b --gpus 8 --seq-len 4096)
# A trainsim model file with one Hugging Face key: named as a mix of the two formats, not read as
# a config.json missing num_hidden_layers.
file(WRITE ${robust_dir}/mixed_model.json
  "{\"layers\": 2, \"hidden_size\": 256, \"heads\": 4, \"ffn_hidden\": 1024, \"vocab\": 512}\n")
trainsim_expect_exit(cli.robust.model_mixed_formats 2
  "^error: [^\n]*mixed_model.json: /hidden_size: a Hugging Face key in a model that has the trainsim key 'layers'"
  describe --hardware h100-dgx --model ${robust_dir}/mixed_model.json --gpus 8 --seq-len 128)
# Anything that exists but a folder is read as a file (a device, a pipe, a shell's <(...)):
# /dev/null is an empty document, not "no such file"; a stack extending a folder says so.
trainsim_expect_exit(cli.robust.hardware_device 2
  "^error: /dev/null: invalid JSON at line 1, column 1 \\(the file is empty\\); expected a JSON document"
  describe --hardware /dev/null --model llama2-7b --gpus 8 --seq-len 4096)
file(WRITE ${robust_dir}/extends_folder.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8},
    \"training\": {\"seq_len\": 128}, \"stack\": {\"extends\": \"${robust_dir}\"}}\n")
trainsim_expect_exit(cli.robust.stack_extends_folder 2
  "^error: [^\n]*extends_folder.json: /stack/extends: '[^']*' is a directory; expected a software stack JSON file"
  run ${robust_dir}/extends_folder.json)

# cluster.nodes_per_domain: at most the hosts of one NVLink domain (1 on h100-dgx), a plan
# problem (exit 3) so that a sweep across hardware profiles keeps its other rows.
trainsim_expect_exit(cli.robust.nodes_per_domain_above_domain 3
  "^error: command line \\(--nodes-per-domain\\): /cluster/nodes_per_domain: nodes_per_domain 2 exceeds the hosts of one NVLink domain of this hardware \\(1 of 8 GPUs each\\); expected 1 to 1"
  run ${robust_base} --gpus 64 --nodes-per-domain 2)
