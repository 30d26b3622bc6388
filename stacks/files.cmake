# Built-in software-stack profiles, embedded in the executable (see the top CMakeLists.txt).
set(TRAINSIM_STACK_FILES
  stacks/pytorch-2.3-fsdp.json
  stacks/torchtitan-fsdp2.json
  stacks/torchtitan-fsdp2-rmsnorm.json
  stacks/megatron-lm.json
  stacks/megatron-lm-2019.json
  stacks/megatron-core.json
  stacks/deepspeed-zero3-2021.json
  stacks/llm-foundry.json
  stacks/llm-foundry-torch21.json)
