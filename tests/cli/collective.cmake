# trainsim collective: nccl-tests-style tables from the collective model, and bad input.
add_test(NAME cli.collective.table
         COMMAND trainsim collective --hardware h100-dgx --op all_reduce --nodes 1,4
                 --min-bytes 1GiB --max-bytes 1GiB)
# 8x H100 AllReduce of 1 GiB picks NVLS: NCCL's bus bandwidth 8 x 40 x 0.85 x 7/8 x 2 = 476 GB/s,
# algbw 476 x 8/14 = 272 GB/s. The profile's measured NVLS terms (fitted to nccl-tests#290 by
# scripts/refit-profiles): bandwidth x 0.9962 = 270.97 GB/s, latency 23 us (NCCL 2.20) + 104.1 us.
# time 127.1 us + 2^30 / 270.97e9 = 4089.7 us; busbw 2^30 / 4089.7 us x 14/8 = 459.4 GB/s.
set_tests_properties(cli.collective.table PROPERTIES PASS_REGULAR_EXPRESSION
  "1073741824 +268435456 +float +sum +-1 +[0-9.]+ +[0-9.]+ +459\\.[3-5][0-9] +nvls +Simple")
add_test(NAME cli.collective.all_gather_none_redop
         COMMAND trainsim collective --hardware a100-dgx --op all_gather --nodes 2 --min-bytes 1MiB
                 --max-bytes 1MiB --dtype bfloat16)
# AllGather prints redop none and the per-rank count: 1 MiB / (16 ranks x 2 B) = 32768.
set_tests_properties(cli.collective.all_gather_none_redop PROPERTIES PASS_REGULAR_EXPRESSION
  "1048576 +32768 +bfloat16 +none +-1 ")
add_test(NAME cli.collective.json
         COMMAND trainsim collective --hardware h100-dgx --op reduce_scatter --nodes 2,4
                 --min-bytes 8 --max-bytes 1MiB --format json)
set_tests_properties(cli.collective.json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"op\": \"reduce_scatter\",[^}]*\"nodes\": 4,[^}]*\"busbw_bytes_per_s\"")

trainsim_bad_input(collective unknown_op "--op: unknown collective op 'all_reduse'; did you mean 'all_reduce'"
  --hardware h100-dgx --op all_reduse --nodes 4)
trainsim_bad_input(collective zero_size "--min-bytes: expected a size of at least 1 byte"
  --hardware h100-dgx --op all_reduce --nodes 4 --min-bytes 0)
# A bare number that is no count in digits: the number is wrong, not a missing unit (the line
# said '"1e30" (no unit)', where a bare 8 is valid).
trainsim_bad_input(collective exponent_size "--max-bytes: expected a count of bytes in digits like 1048576, or a size with a unit like \"80 GiB\", got \"1e30\""
  --hardware h100-dgx --op all_reduce --nodes 4 --max-bytes 1e30)
trainsim_bad_input(collective negative_size "--max-bytes: expected a size of at least 1 byte like 8, 1MiB or 8GiB, got '-1MiB'"
  --hardware h100-dgx --op all_reduce --nodes 4 --max-bytes=-1MiB)
# 10^23 bytes is a size, but past int64: out of range, not "at least 1 byte".
trainsim_bad_input(collective huge_size "--max-bytes: out of range; expected a count of bytes of at most 9007199254740992 \\(2\\^53\\), got \"99999999999999999999999\""
  --hardware h100-dgx --op all_reduce --nodes 4 --max-bytes 99999999999999999999999)
# A count of bytes past 2^53 rounds as a double: 8999999999999999999 was taken, and echoed in the
# header, as 9000000000000000000. 2^53 itself is exact.
trainsim_bad_input(collective inexact_size "--max-bytes: out of range; expected a count of bytes of at most 9007199254740992 \\(2\\^53\\), got \"8999999999999999999\""
  --hardware h100-dgx --op all_reduce --nodes 1 --max-bytes 8999999999999999999)
# Compared as digits: 2^53 + 1 rounds to 2^53 as a double, and the unit B took the same path.
trainsim_bad_input(collective inexact_size_by_one "--min-bytes: out of range; expected a count of bytes of at most 9007199254740992 \\(2\\^53\\), got \"9007199254740993\""
  --hardware h100-dgx --op all_reduce --nodes 1 --min-bytes 9007199254740993 --max-bytes 9007199254740993)
trainsim_bad_input(collective inexact_size_unit "--max-bytes: out of range; expected a count of bytes of at most 9007199254740992 \\(2\\^53\\), got \"8999999999999999999B\""
  --hardware h100-dgx --op all_reduce --nodes 1 --max-bytes 8999999999999999999B)
# Past kMaxGpus = 2^24 ranks: out of range, not malformed (11 digits read as "not a list of
# positive integers"; 10^8 nodes x 8 GPUs passed); 2^21 nodes x 8 GPUs = 2^24 is the last that runs.
trainsim_bad_input(collective nodes_out_of_range "--nodes: 99999999999 is out of range; expected at most 16777216 ranks in all"
  --hardware h100-dgx --op all_reduce --nodes 99999999999)
trainsim_bad_input(collective nodes_times_gpus_out_of_range "--nodes: 2097153 nodes of 8 GPUs is out of range; expected at most 16777216 ranks in all \\(at most 2097152 nodes\\)"
  --hardware h100-dgx --op all_reduce --nodes 2097153)
trainsim_bad_input(collective one_rank "--nodes: 1 node of 1 GPU is a group of one rank, whose collective is a local copy the model does not price; expected at least 2 ranks"
  --hardware h100-dgx --op send_recv --nodes 1 --gpus-per-node 1)
trainsim_bad_input(collective min_above_max "--min-bytes: expected at most --max-bytes"
  --hardware h100-dgx --op all_reduce --nodes 4 --min-bytes 2GiB --max-bytes 1GiB)
trainsim_bad_input(collective bad_nodes "--nodes: expected a comma-separated list of positive integers"
  --hardware h100-dgx --op all_reduce --nodes 4,x)
trainsim_bad_input(collective zero_nodes "--nodes: expected a comma-separated list of positive integers"
  --hardware h100-dgx --op all_reduce --nodes 0)
trainsim_bad_input(collective too_many_gpus "--gpus-per-node: expected 1 to 8"
  --hardware h100-dgx --op all_reduce --nodes 4 --gpus-per-node 16)
trainsim_bad_input(collective bad_dtype "--dtype: unknown type 'bfloat'; did you mean 'bfloat16'"
  --hardware h100-dgx --op all_reduce --nodes 4 --dtype bfloat)
trainsim_bad_input(collective unknown_hardware "unknown hardware profile 'h100'; did you mean 'h100-dgx'"
  --hardware h100 --op all_reduce --nodes 4)

# NCCL_ALGO / NCCL_PROTO: 2 nodes forced to Ring Simple (nccl-tests#309 ran NCCL_ALGO=Ring).
add_test(NAME cli.collective.forced_ring
         COMMAND trainsim collective --hardware h100-dgx --op all_reduce --nodes 2 --algo Ring
                 --proto simple --min-bytes 1GiB --max-bytes 1GiB)
set_tests_properties(cli.collective.forced_ring PROPERTIES PASS_REGULAR_EXPRESSION
  "1073741824 +268435456 +float +sum +-1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +ring +Simple")
trainsim_bad_input(collective bad_algo "--algo: unknown algorithm 'rign'; did you mean 'ring'"
  --hardware h100-dgx --op all_reduce --nodes 2 --algo rign)
trainsim_bad_input(collective bad_proto "--proto: unknown protocol 'll64'; did you mean 'll'"
  --hardware h100-dgx --op all_reduce --nodes 2 --proto ll64)
# Multi-node NVLS needs IB SHARP, which h100-dgx does not have.
trainsim_bad_input(collective ineligible_algo "--algo: NCCL cannot run all_reduce with NCCL_ALGO=nvls on 16 ranks over 2 nodes"
  --hardware h100-dgx --op all_reduce --nodes 2 --algo nvls)
# All-to-all and send/receive are point-to-point transfers, which NCCL_ALGO does not select:
# "NCCL cannot run all_to_all with NCCL_ALGO=ring" said alltoall_perf fails under it.
trainsim_bad_input(collective algo_for_p2p "--algo: NCCL runs all_to_all as point-to-point sends and receives, which NCCL_ALGO does not select. expected no --algo for all_to_all and send_recv"
  --hardware h100-dgx --op all_to_all --nodes 2 --algo ring)

# A range that holds no whole counted unit (16 bytes per rank for AllGather, as nccl-tests counts
# it) gives no table: an error, where nccl-tests would print rows of 0 bytes. AllGather of 32 B
# over 16 ranks: 2 B per rank; 16 B per rank over 16 ranks is 256 B.
trainsim_bad_input(collective no_size "--max-bytes: no size from 8 to 32 holds 16 bytes of float elements per rank on 16 ranks; expected --max-bytes of at least 256 bytes"
  --hardware h100-dgx --op all_gather --nodes 2 --max-bytes 32)
# The size to ask for is the first of the sequence that holds one: from 3 bytes by 2 the sizes
# are 3, 6, ..., 192, 384, so 256 bytes (16 ranks x 16 B) is never printed and 384 is the first.
# The message said 'at least 64 bytes' to a --max-bytes of 64.
trainsim_bad_input(collective no_size_off_sequence "--max-bytes: no size from 3 to 64 holds 16 bytes of float elements per rank on 16 ranks; expected --max-bytes of at least 384 bytes"
  --hardware h100-dgx --op all_gather --nodes 2 --min-bytes 3 --max-bytes 64)
# Per-rank counts in whole 16-byte units, as nccl-tests' all_gather.cu takes them
# (`(count/nranks) & -(16/eltSize)`): on 24 ranks, 512 B is 5 floats a rank, 4 counted (384 B),
# 1 KiB 10, 8 counted (768 B), 1 GiB 11,184,810, 11,184,808 counted (1,073,741,568 B). The table
# printed 480 B (5) and 960 B (10) and 1,073,741,760 B, rows no all_gather_perf log holds.
add_test(NAME cli.collective.per_rank_16_bytes
         COMMAND trainsim collective --hardware h100-dgx --op all_gather --nodes 3
                 --max-bytes 1GiB)
set_tests_properties(cli.collective.per_rank_16_bytes PROPERTIES PASS_REGULAR_EXPRESSION
  "\n +384 +4 +float +none +-1 [^\n]*\n +768 +8 +float [^\n]*\n.*\n +1073741568 +11184808 +float ")
# On GB200 NVL72 a rack (18 trays of 4) is one NVLink domain: 19 trays put 72 ranks in the first
# rack and 4 in the second, whose 4 NICs carry the all-to-all between them, as run prices such a
# group (docs/placement.md). The table said 109 us for 64 MiB, faster than 18 trays in one rack;
# run says 1.347 ms (a 76-rank expert group). 18 trays stay in one domain, of which the header
# says nothing.
add_test(NAME cli.collective.gb200_domains
         COMMAND trainsim collective --hardware gb200-nvl72 --op all_to_all --nodes 18,19
                 --min-bytes 64MiB --max-bytes 64MiB)
set_tests_properties(cli.collective.gb200_domains PROPERTIES PASS_REGULAR_EXPRESSION
  "# nodes 18, ranks 72 \\(4 per node\\)\n.*# nodes 19, ranks 76 \\(4 per node\; 2 NVLink domains of 18 nodes, 4 ranks in the least-held\\)\n#\n[^\n]*\n[^\n]*\n +67108608 +[0-9]+ +float +none +-1 +1346\\.91 ")
# A negative size is no missing unit, and a node count given twice would print its table twice.
trainsim_bad_input(collective negative_min_bytes
  "--min-bytes: expected a size of at least 1 byte like 8, 1MiB or 8GiB, got '-5'"
  --hardware h100-dgx --op all_reduce --nodes 1 --min-bytes -5)
trainsim_bad_input(collective nodes_twice
  "--nodes: 2 given twice\\; expected each node count once, got '2,1,2'"
  --hardware h100-dgx --op all_reduce --nodes 2,1,2)
trainsim_bad_input(collective nodes_leading_zero "--nodes: '04' has a zero before its first digit\\; expected a comma-separated list of positive integers like 4,8,16, got '1,04'"
  --hardware h100-dgx --op all_reduce --nodes 1,04)
trainsim_bad_input(collective proto_for_p2p "--proto: trainsim prices all_to_all's point-to-point transfers with NCCL's Simple protocol only. expected --proto simple or no --proto"
  --hardware h100-dgx --op all_to_all --nodes 2 --proto ll128)
