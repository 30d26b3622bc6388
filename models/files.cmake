# Built-in model architectures, embedded in the executable (see the top CMakeLists.txt).
set(TRAINSIM_MODEL_FILES
  models/deepseek-v3.json
  models/gpt-oss-120b.json
  models/gpt3-175b.json
  models/llama2-1b-32k.json
  models/llama2-7b.json
  models/llama2-13b.json
  models/llama2-70b.json
  models/llama3-8b.json
  models/llama3-70b.json
  models/llama3.1-405b.json
  models/llama3.2-1b.json
  models/mistral-7b.json
  models/mixtral-8x7b.json
  models/qwen2-7b.json
  models/qwen3-30b-a3b.json
  models/qwen3-235b-a22b.json)
