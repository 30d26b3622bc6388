// Names of collective ops, algorithms and protocols, as the CLI and the reports write them
// (ops after nccl-tests' binaries, all_reduce_perf ...; protocols as NCCL_PROTO spells them).
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"

#include "sim/io/spellcheck.hpp"

namespace trainsim::collective {
namespace {

constexpr std::array<std::pair<Op, std::string_view>, 7> kOps = {{
    {Op::AllReduce, "all_reduce"},
    {Op::AllGather, "all_gather"},
    {Op::ReduceScatter, "reduce_scatter"},
    {Op::Broadcast, "broadcast"},
    {Op::Reduce, "reduce"},
    {Op::AllToAll, "all_to_all"},
    {Op::SendRecv, "send_recv"},
}};
constexpr std::array<std::pair<Algorithm, std::string_view>, 7> kAlgorithms = {{
    {Algorithm::Tree, "tree"},
    {Algorithm::Ring, "ring"},
    {Algorithm::Nvls, "nvls"},
    {Algorithm::NvlsTree, "nvls_tree"},
    {Algorithm::Pat, "pat"},
    {Algorithm::P2p, "p2p"},
    {Algorithm::None, "none"},
}};
constexpr std::array<std::pair<Protocol, std::string_view>, 3> kProtocolNames = {{
    {Protocol::Ll, "LL"},
    {Protocol::Ll128, "LL128"},
    {Protocol::Simple, "Simple"},
}};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <class E, std::size_t N>
E parse_name(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name,
             const char* what) {
  std::vector<std::string> names;
  for (const auto& [e, n] : table) {
    if (n == name) return e;
    names.emplace_back(n);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError("unknown " + std::string(what) + " '" + std::string(name) + "'" +
                    io::did_you_mean(name, names) + "; expected one of " + list);
}

}  // namespace

std::string_view to_string(Op op) { return name_of(kOps, op); }
std::string_view to_string(Algorithm algorithm) { return name_of(kAlgorithms, algorithm); }
std::string_view to_string(Protocol protocol) { return name_of(kProtocolNames, protocol); }

Op parse_op(std::string_view name) { return parse_name(kOps, name, "collective op"); }
Algorithm parse_algorithm(std::string_view name) {
  return parse_name(kAlgorithms, name, "collective algorithm");
}
Protocol parse_protocol(std::string_view name) {
  return parse_name(kProtocolNames, name, "collective protocol");
}

}  // namespace trainsim::collective
