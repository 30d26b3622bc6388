#include <tuple>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/report_writer.hpp"
#include "sim/io/search_merge.hpp"
#include "sim/io/sweep_writer.hpp"

using namespace trainsim;
using namespace trainsim::io;

namespace {

// `rows` followed by the end record of shard k/n of a sweep of `scenarios` (spec digest 0xaa).
std::string shard(const std::string& rows, std::int64_t k, std::int64_t n, std::int64_t scenarios,
                  std::int64_t num_rows, SweepFormat format = SweepFormat::Csv,
                  std::uint64_t digest = 0xaa) {
  return rows + trailer_line(ShardTrailer{.shard_index = k,
                                          .shard_count = n,
                                          .scenarios = scenarios,
                                          .spec_digest = digest,
                                          .rows = num_rows},
                             format);
}

// The header and rows of a real sweep: row(i, tag) is an "invalid" row whose reason is `tag`,
// as csv_row writes it (43 columns: 20 of the scenario, 17 empty metrics, status, stack, an
// empty mfu_bf16, ep, recompute_layers and nodes_per_domain).
std::string row(std::int64_t i, const std::string& tag) {
  return std::to_string(i) +
         ",h100-dgx,llama2-7b,8,1,1,1,1,8,1,8,1024,bf16,adamw,none,,1f1b,1,none,false" +
         std::string(17, ',') + ",invalid: " + tag + ",pytorch-2.3-fsdp,,1,0,1\n";
}
const std::string kHeader = csv_header();

// A JSON line as json_line writes it for an "invalid" row, with `extra` keys before its end.
std::string json_row(std::int64_t i, const std::string& tag, const std::string& extra = "") {
  return "{\"index\":" + std::to_string(i) +
         ",\"scenario\":{\"cluster\":{\"gpus\":8,\"nodes\":1},\"hardware\":\"h100-dgx\","
         "\"model\":\"llama2-7b\",\"parallel\":{\"cp\":1,\"dp\":8,\"pipeline_schedule\":"
         "\"1f1b\",\"pp\":1,\"recompute\":\"none\",\"sequence_parallel\":false,\"sharding\":"
         "\"none\",\"tp\":1,\"virtual_stages\":1},\"stack\":\"pytorch-2.3-fsdp\",\"training\":"
         "{\"global_batch\":8,\"micro_batch\":1,\"optimizer\":\"adamw\",\"precision\":"
         "\"bf16\",\"seq_len\":1024}},\"status\":\"invalid: " +
         tag + "\"" + extra + "}\n";
}

}  // namespace

TEST_CASE("merge: the end record reads back, and only exactly as written", "[sweep][io]") {
  const ShardTrailer t{.shard_index = 3,
                       .shard_count = 8,
                       .scenarios = 10000,
                       .spec_digest = 0x5f1c0a9e12b4d7e3,
                       .rows = 1250};
  const std::string csv = trailer_line(t, SweepFormat::Csv);
  CHECK(csv == "# trainsim shard 3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, 1250 rows\n");
  const std::string json = trailer_line(t, SweepFormat::JsonLines);
  CHECK(json ==
        "{\"trainsim_shard\":\"3/8\",\"scenarios\":10000,\"spec\":\"5f1c0a9e12b4d7e3\","
        "\"rows\":1250}\n");
  for (const auto& [text, format] :
       {std::pair{csv, SweepFormat::Csv}, std::pair{json, SweepFormat::JsonLines}}) {
    const auto back = parse_trailer(std::string_view(text).substr(0, text.size() - 1), format);
    REQUIRE(back);
    CHECK(back->shard_index == 3);
    CHECK(back->shard_count == 8);
    CHECK(back->scenarios == 10000);
    CHECK(back->spec_digest == 0x5f1c0a9e12b4d7e3);
    CHECK(back->rows == 1250);
  }
  // Cut short (the last bytes a killed run wrote), padded, or out of range: not an end record.
  CHECK_FALSE(parse_trailer("# trainsim shard 3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, 12",
                            SweepFormat::Csv));
  CHECK_FALSE(
      parse_trailer("# trainsim shard  3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, "
                    "1250 rows",
                    SweepFormat::Csv));
  CHECK_FALSE(
      parse_trailer("# trainsim shard 8/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, "
                    "1250 rows",
                    SweepFormat::Csv));
}

TEST_CASE("merge: rows are joined by index, the header once, end records dropped", "[sweep][io]") {
  // Five scenarios in two shards: shard 0/2 holds 0, 2, 4 and shard 1/2 holds 1, 3.
  const std::string merged = merge_outputs(
      {{"b.csv", shard(kHeader + row(1, "b") + row(3, "d"), 1, 2, 5, 2)},
       {"a.csv", shard(kHeader + row(0, "a") + row(2, "c") + row(4, "e"), 0, 2, 5, 3)}},
      std::nullopt);
  CHECK(merged == kHeader + row(0, "a") + row(1, "b") + row(2, "c") + row(3, "d") + row(4, "e"));
  // JSON lines: no header.
  const SweepFormat j = SweepFormat::JsonLines;
  CHECK(merge_outputs({{"1", shard(json_row(1, "b"), 1, 2, 2, 1, j)},
                       {"0", shard(json_row(0, "a"), 0, 2, 2, 1, j)}},
                      2) == json_row(0, "a") + json_row(1, "b"));
  // A shard with no scenario (shard 2/3 of 2) is a header and its end record.
  CHECK(merge_outputs({{"a", shard(kHeader + row(0, "a"), 0, 3, 2, 1)},
                       {"b", shard(kHeader + row(1, "b"), 1, 3, 2, 1)},
                       {"c", shard(kHeader, 2, 3, 2, 0)}},
                      std::nullopt) == kHeader + row(0, "a") + row(1, "b"));
}

TEST_CASE("merge: incomplete, foreign, duplicate and missing shards are errors", "[sweep][io]") {
  using Catch::Contains;
  const std::string a = shard(kHeader + row(0, "a") + row(2, "c"), 0, 2, 3, 2);
  const std::string b = shard(kHeader + row(1, "b"), 1, 2, 3, 1);
  REQUIRE(merge_outputs({{"a.csv", a}, {"b.csv", b}}, 3) ==
          kHeader + row(0, "a") + row(1, "b") + row(2, "c"));

  // Shard 1/3 of 12 scenarios holds rows 1, 4, 7 and 10. With row 4 gone, the stride its first
  // two rows show (6) is not the shard's: the row out of place is 7, where the end record's
  // order wants 4 (it was named as 10 after 7, expected 13), in CSV and in JSON lines.
  REQUIRE_THROWS_WITH(
      merge_outputs(
          {{"c.csv", shard(kHeader + row(1, "b") + row(7, "h") + row(10, "k"), 1, 3, 12, 4)}},
          std::nullopt),
      Contains("c.csv: line 3: row 7 out of place in shard 1/3; expected row 4 (rows i with i % "
               "3 == 1, in order; a row missing or moved?)"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"c.jsonl", shard(json_row(1, "b") + json_row(7, "h") + json_row(10, "k"), 1,
                                       3, 12, 4, SweepFormat::JsonLines)}},
                    std::nullopt),
      Contains("c.jsonl: line 2: row 7 out of place in shard 1/3; expected row 4"));

  // A run killed mid-row: the last line has no newline, and no end record follows.
  REQUIRE_THROWS_AS(merge_outputs({{"a.csv", a}, {"b.csv", kHeader + "1,"}}, std::nullopt),
                    ConfigError);
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", kHeader + "1,"}}, std::nullopt),
                      Contains("b.csv: line 2: incomplete: the last line has no line break"));
  // Killed between rows, or an unsharded output: whole lines but no end record.
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", kHeader + row(1, "b")}}, std::nullopt),
                      Contains("b.csv: line 2: incomplete: no end record"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", ""}}, std::nullopt),
                      Contains("b.csv: empty file"));
  // An end record cut short.
  REQUIRE_THROWS_WITH(
      merge_outputs(
          {{"a.csv", a}, {"b.csv", kHeader + row(1, "b") + "# trainsim shard 1/2 of 3\n"}},
          std::nullopt),
      Contains("b.csv: line 3: malformed end record"));
  // A row with the wrong field count before a complete end record (possible only if the
  // file was edited or concatenated; the row is checked anyway).
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard(kHeader + "1,b,c\n", 1, 2, 3, 1)}},
                    std::nullopt),
      Contains("b.csv: line 2: truncated or malformed row 1 (3 fields); expected 43 fields"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a", shard(json_row(0, "a"), 0, 2, 2, 1, SweepFormat::JsonLines)},
                     {"b", shard("{\"index\":1,\"v\":\n", 1, 2, 2, 1, SweepFormat::JsonLines)}},
                    std::nullopt),
      Contains("b: line 1: row 1 is not valid JSON"));
  // Rows missing from a shard whose end record survived (the count disagrees).
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard(kHeader + row(0, "a"), 0, 2, 3, 2)}, {"b.csv", b}},
                    std::nullopt),
      Contains("a.csv: line 3: 1 rows, but the end record says 2; expected 2 "
               "rows for shard 0/2 of 3 scenarios"));
  // An end record whose rows agree with the file but not with its own scenario count: shard 0/2
  // of 5 scenarios has rows 0, 2 and 4, three, not the two it lists.
  REQUIRE_THROWS_WITH(
      merge_outputs(
          {{"a.csv", shard(kHeader + row(0, "a") + row(2, "c"), 0, 2, 5, 2)}, {"b.csv", b}},
          std::nullopt),
      Contains("a.csv: line 4: the end record's 2 rows and 5 scenarios disagree: shard 0/2 of 5 "
               "scenarios has 3 rows; expected the end record `trainsim sweep --shard` wrote"));
  // A cell that is not UTF-8 (an edited shard): merge would copy the bytes into its output.
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard(kHeader + row(1, "b\xff"), 1, 2, 3, 1)}},
                    std::nullopt),
      Contains("b.csv: line 2: row 1: not valid UTF-8; expected UTF-8 text"));
  // A row of another shard.
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard(kHeader + row(2, "c"), 1, 2, 3, 1)}},
                    std::nullopt),
      Contains("b.csv: line 2: row 2 out of place in shard 1/2; expected row 1"));
  // Shards of another spec, another split or another sweep size.
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a},
                     {"b.csv", shard(kHeader + row(1, "b"), 1, 2, 3, 1, SweepFormat::Csv, 0xbb)}},
                    std::nullopt),
      Contains("b.csv: line 3: a shard of another sweep (spec 00000000000000bb, but a.csv's is "
               "00000000000000aa)"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard(kHeader + row(1, "b"), 1, 3, 3, 1)}},
                    std::nullopt),
      Contains("b.csv: line 3: shard 1/3 of 3 scenarios, but a.csv is a shard 0/2 of 3"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", a}}, std::nullopt),
                      "b.csv: line 4: shard 0/2 given twice, also in a.csv; expected each shard "
                      "once");
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}}, std::nullopt),
                      "merge: missing shard 1/2; expected all 2 shards of the sweep (0/2 to 1/2)");
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", b}}, 4),
                      Contains("--expect: the shards are of a sweep of 3 scenarios"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard("index,y\n1,b\n", 1, 2, 3, 1)}}, std::nullopt),
      Contains("b.csv: line 1: CSV header column 2 is 'y'; expected 'hardware'"));
  REQUIRE_THROWS_WITH(
      merge_outputs(
          {{"a.csv", a}, {"b.json", shard(json_row(1, "b"), 1, 2, 3, 1, SweepFormat::JsonLines)}},
          std::nullopt),
      Contains("b.json: format differs from the other inputs"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard(kHeader + "zero,a\n", 0, 1, 1, 1)}}, std::nullopt),
      Contains("a.csv: line 2: row without an index"));
  // The writer prints an index without sign or leading zero; merge copies rows as they are, so
  // "00" or "-0" would reach the output where an unsharded run writes "0".
  for (const char* index : {"00", "-0", "+0"}) {
    std::string edited = row(0, "a");
    edited.replace(0, 1, index);
    REQUIRE_THROWS_WITH(
        merge_outputs({{"a.csv", shard(kHeader + edited, 0, 1, 1, 1)}}, std::nullopt),
        Contains("a.csv: line 2: row without an index; expected a line starting with '<index>,' "
                 "(an integer without sign or leading zero)"));
  }
  // Anything after the end record, a blank line included: the end record is then a row.
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard(kHeader + row(0, "a"), 0, 1, 1, 1) + "\n"}}, std::nullopt),
      "a.csv: line 3: the end record is not the last line (line 4 follows it); expected it last, "
      "as trainsim sweep --shard K/N writes it");
}

TEST_CASE("merge: a row repeated at the largest index is an error, not an overflow",
          "[sweep][io]") {
  // Found by fuzz_sweep_merge: two rows of index 2^63 - 1 made the message compute the next
  // expected row as 2^63 - 1 + 1, a signed overflow (UBSan). With the end record, the first row
  // is out of place in shard 0/1; without one (a row after them, no end record), the rows are
  // out of place, and no row can follow the largest index.
  const std::string rows = kHeader + row(9223372036854775807, "a") + row(9223372036854775807, "b");
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", shard(rows, 0, 1, 1, 2)}}, std::nullopt),
                      Catch::Contains("a.csv: line 2: row 9223372036854775807 out of place in "
                                      "shard 0/1; expected row 0"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", rows + row(5, "c")}}, std::nullopt),
      Catch::Contains("a.csv: line 3: row 9223372036854775807 out of place after row "
                      "9223372036854775807; expected no row after it"));
}

TEST_CASE("format_number: shortest round trip, locale-independent", "[sweep][io]") {
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(0.0) == "0");
  CHECK(format_number(53828756480.0) == "53828756480");
  CHECK(std::stod(format_number(0.7695502713386605)) == 0.7695502713386605);
}

TEST_CASE("merge: a cell or key no sweep writes is an error", "[sweep][io]") {
  using Catch::Contains;
  // An "ok" row with every metric filled; `tokens` is its tokens_per_s cell (column 22).
  const auto ok_row = [](const std::string& tokens) {
    return "0,h100-dgx,llama2-7b,8,1,1,1,1,8,1,8,1024,bf16,adamw,none,,1f1b,1,none,false,"
           "1.5," +
           tokens +
           ",3,4,0.5,0.6,1,0.2,0.1,0,1000,true,700,5600,8400,1.2,3.4,ok,"
           "pytorch-2.3-fsdp,0.5,1,0,1\n";
  };
  const auto merge_csv = [](const std::string& rows) {
    return merge_outputs({{"a.csv", shard(kHeader + rows, 0, 1, 1, 1)}}, std::nullopt);
  };
  CHECK(merge_csv(ok_row("5.5")) == kHeader + ok_row("5.5"));
  // format_number never writes these for a report (no output holds NaN), nor a negative rate.
  for (const char* bad : {"nan", "inf", "-5", "hello", ""}) {
    REQUIRE_THROWS_WITH(
        merge_csv(ok_row(bad)),
        Contains(std::string("a.csv: line 2: row 0: column tokens_per_s is '") + bad +
                 "'; expected a finite number >= 0 in its shortest form "
                 "(an 'ok' row)"));
  }
  // Cells as the sweep writes them: its numbers are the shortest round trip (format_number),
  // never -0, and its counts have no sign or leading zero; merge copies cells as they are.
  for (const char* edited : {".5", "5.", "5.50", "1e308", "-0", "0x1p3"}) {
    REQUIRE_THROWS_WITH(merge_csv(ok_row(edited)),
                        Contains(std::string("column tokens_per_s is '") + edited +
                                 "'; expected a finite number >= 0"));
  }
  // The message says why a number the sweep could have meant is refused: not its shortest form.
  REQUIRE_THROWS_WITH(merge_csv(ok_row("2.0843404974500937e5")),
                      Contains("'; expected a finite number >= 0 in its shortest form (an "
                               "'ok' row)"));
  // Quotes where the sweep writes none: the cell reads as the same value, and merge copied the
  // quotes into a file an unsharded run does not write (csv_field quotes a cell only when it
  // holds a comma or a quote).
  REQUIRE_THROWS_WITH(merge_csv(ok_row("\"5.5\"")),
                      Contains("row 0: column tokens_per_s is quoted where the sweep writes "
                               "'5.5'; expected a cell quoted only when it holds a comma or a "
                               "quote"));
  std::string quoted_status = ok_row("5.5");
  quoted_status.replace(quoted_status.find(",ok,"), 4, ",\"ok\",");
  REQUIRE_THROWS_WITH(merge_csv(quoted_status), Contains("column status is quoted where"));
  for (const char* edited : {"-0", "08", "+8"}) {
    std::string gpus = ok_row("5.5");
    gpus.replace(gpus.find(",8,1,"), 3, std::string(",") + edited + ",");
    REQUIRE_THROWS_WITH(merge_csv(gpus), Contains(std::string("column gpus is '") + edited +
                                                  "'; expected an integer >= 0"));
  }
  // Metrics belong to "ok" rows only; an "invalid" row has none.
  std::string invalid = row(0, "x");
  invalid.replace(invalid.find("false,") + 6, 0, "1.5");
  REQUIRE_THROWS_WITH(merge_csv(invalid),
                      Contains("row 0: column iteration_time_s is '1.5'; expected nothing (an "
                               "'invalid' row)"));
  std::string status = ok_row("5.5");
  status.replace(status.find(",ok,"), 4, ",fine,");
  REQUIRE_THROWS_WITH(merge_csv(status),
                      Contains("row 0: column status is 'fine'; expected 'ok', 'invalid: "
                               "<reason>' or 'out_of_memory: <reason>'"));
  // One shard alone with a renamed column: nothing to compare it with but the writer's header.
  std::string header = kHeader;
  header.replace(header.find("tokens_per_s,"), 13, "tokens_per_sec,");
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard(header + ok_row("5.5"), 0, 1, 1, 1)}}, std::nullopt),
      Contains("a.csv: line 1: CSV header column 22 is 'tokens_per_sec'; expected "
               "'tokens_per_s'"));

  // JSON lines: the keys each status has, and the type of each value.
  const SweepFormat j = SweepFormat::JsonLines;
  const auto merge_json = [j](const std::string& line) {
    return merge_outputs({{"a", shard(line, 0, 1, 1, 1, j)}}, std::nullopt);
  };
  // The report's keys as the writer writes them: one stage (0) and one collective (on stage 1,
  // so that the first "stage":0 is the stage's).
  std::string report;
  {
    parallel::Scenario s;
    s.hardware.node.gpus_per_node = 8;
    report::Report r;
    r.mfu = 0.5;
    r.memory.total = Bytes(1000.0);
    r.memory.fits = true;
    r.memory.nccl_buffers = Bytes(8.0);
    r.memory.stage = 2;  // so that the first "stage":0 is the stage's, as below
    r.stages.emplace_back();
    report::CollectiveSummary& c = r.collectives.emplace_back();
    c.stage = 1;
    c.op = "all_gather";
    c.bytes = Bytes(1024.0);
    nlohmann::json doc = io::report_to_json(s, r);
    doc.erase("context");
    doc.erase("scenario");
    report = doc.dump();  // {...}: its keys follow the row's scenario and status
    report.front() = ',';
    report.pop_back();
  }
  std::string ok = json_row(0, "x", report);
  ok.replace(ok.find("invalid: x"), 10, "ok");
  CHECK(merge_json(ok) == ok);
  std::string text_metric = ok;
  text_metric.replace(text_metric.find("\"mfu\":0.5"), 9, "\"mfu\":\"abc\"");
  REQUIRE_THROWS_WITH(merge_json(text_metric),
                      Contains("a: line 1: row 0: 'mfu' is \"abc\"; expected a number >= 0"));
  REQUIRE_THROWS_WITH(merge_json(json_row(0, "x", ",\"mfu\":0.5")),
                      Contains("row 0: unknown key 'mfu'; expected only the keys of an "
                               "'invalid' row"));
  std::string no_scenario = json_row(0, "x");
  no_scenario.replace(no_scenario.find("\"scenario\""), 10, "\"scenari0\"");
  REQUIRE_THROWS_WITH(merge_json(no_scenario),
                      Contains("row 0: 'scenario' missing or not an object"));
  std::string no_mfu = ok;
  no_mfu.replace(no_mfu.find(",\"mfu\":0.5"), 10, "");
  REQUIRE_THROWS_WITH(merge_json(no_mfu),
                      Contains("row 0: 'mfu' missing; expected every key of an 'ok' row"));
  std::string bytes = ok;
  bytes.replace(bytes.find("\"total_bytes\":1000"), 18, "\"total_bytes\":\"1000\"");
  REQUIRE_THROWS_WITH(
      merge_json(bytes),
      Contains("row 0: 'memory.total_bytes' is \"1000\"; expected a count, an integer >= 0"));
  // `ok` with its first `from` replaced by `to`.
  const auto edit = [&ok](const std::string& from, const std::string& to) {
    std::string edited = ok;
    edited.replace(edited.find(from), from.size(), to);
    return edited;
  };
  // Counts are integers as written (whole bytes, io::byte_count; calls, ranks, stages), as the
  // CSV merge checks its count columns: a fraction is an edit.
  for (const auto& [from, to, key] :
       {std::tuple{"\"total_bytes\":1000", "\"total_bytes\":1.5", "memory.total_bytes"},
        std::tuple{"\"nccl_buffers_bytes\":8", "\"nccl_buffers_bytes\":8.5",
                   "memory.reserved.nccl_buffers_bytes"},
        std::tuple{"\"bytes\":1024", "\"bytes\":1024.25", "collectives[].bytes"},
        std::tuple{"\"stage\":0", "\"stage\":0.5", "stages[].stage"},
        std::tuple{"\"stage\":2", "\"stage\":2.5", "memory.stage"}}) {
    REQUIRE_THROWS_WITH(merge_json(edit(from, to)),
                        Contains(std::string("row 0: '") + key + "' is ") &&
                            Contains("expected a count, an integer >= 0"));
  }
  // A count in the scenario is an integer (not "1"), and fits a flag (not 1).
  REQUIRE_THROWS_WITH(merge_json(edit("\"tp\":1", "\"tp\":\"1\"")),
                      Contains("row 0: 'scenario.parallel.tp' is \"1\"; expected a degree"));
  REQUIRE_THROWS_WITH(merge_json(edit("\"fits\":true", "\"fits\":1")),
                      Contains("row 0: 'memory.fits' is 1; expected true or false"));
  // The keys inside objects and rows are the writer's: none unknown, none missing (an empty
  // collective '{}' and an extra key had passed and been copied into the merged file).
  REQUIRE_THROWS_WITH(merge_json(edit("\"algorithm\":\"\",", "")),
                      Contains("row 0: 'collectives[].algorithm' missing; expected every key of "
                               "'collectives[]'"));
  REQUIRE_THROWS_WITH(merge_json(edit("\"collectives\":[{", "\"collectives\":[{},{")),
                      Contains("row 0: 'collectives[].algorithm' missing"));
  REQUIRE_THROWS_WITH(merge_json(edit("\"stages\":[{", "\"stages\":[{\"note\":1,")),
                      Contains("row 0: unknown key 'stages[].note'; expected only the keys"));
  REQUIRE_THROWS_WITH(
      merge_json(edit("\"reserved\":{", "\"reserved\":{\"spare_bytes\":1,")),
      Contains("row 0: unknown key 'memory.reserved.spare_bytes'; expected only the keys"));
  REQUIRE_THROWS_WITH(merge_json(edit("\"tp\":1", "\"tp\":1,\"tpp\":1")),
                      Contains("row 0: unknown key 'scenario.parallel.tpp'; expected a "
                               "scenario's keys"));
  REQUIRE_THROWS_WITH(merge_json(edit("\"stack\":", "\"note\":1,\"stack\":")),
                      Contains("row 0: unknown key 'scenario.note'"));
  // The row as json_line writes it, values and all right: merge copies rows as they are, so a
  // row another JSON tool wrote again would make the merged file differ from the unsharded run.
  REQUIRE_THROWS_WITH(merge_json(edit("\"mfu\":0.5", "\"mfu\": 0.5")),
                      Contains("row 0: not written as the sweep writes it from column ") &&
                          Contains("(' 0.5,") && Contains("where the sweep writes '0.5,"));
  REQUIRE_THROWS_WITH(merge_json(edit("\"mfu\":0.5", "\"mfu\":0.50")),
                      Contains("row 0: not written as the sweep writes it"));
  // jq writes 0.0 as 0: the same number, not the writer's form (a count is an integer).
  REQUIRE_THROWS_WITH(merge_json(edit("\"bubble_s\":0.0", "\"bubble_s\":0")),
                      Contains("row 0: 'bubble_s' is 0, an integer where the sweep writes a number "
                               "with its fraction (0.0"));
  // Its index not first (keys sorted) or spaced: named as such, with the index the row has.
  REQUIRE_THROWS_WITH(merge_json(edit("{\"index\":0,", "{\"index\": 0,")),
                      Contains("a: line 1: row 0: not written as the sweep writes it (it starts "
                               "'{\"index\": 0,") &&
                          Contains("where the sweep writes '{\"index\":0,'"));
  // A report's keys after the status, in sorted order: "mfu" moved to the end is another order.
  std::string moved = edit(",\"mfu\":0.5", "");
  moved.insert(moved.rfind('}'), ",\"mfu\":0.5");
  REQUIRE_THROWS_WITH(merge_json(moved), Contains("row 0: not written as the sweep writes it"));
  // An inline hardware profile is echoed whole; the row is one the sweep writes.
  const std::string inline_hw = edit("\"hardware\":\"h100-dgx\"", "\"hardware\":{\"id\":\"x\"}");
  CHECK(merge_json(inline_hw) == inline_hw);
  std::string oom = json_row(0, "x");
  oom.replace(oom.find("invalid: x"), 10, "out_of_memory: x");
  REQUIRE_THROWS_WITH(merge_json(oom), Contains("row 0: 'memory' missing; expected every key of an "
                                                "'out_of_memory' row"));
}

TEST_CASE("merge: a row's scenario holds only values the sweep writes, in both formats",
          "[sweep][io]") {
  using Catch::Contains;
  // The rows of row() and json_row(): 8 GPUs on 1 node, tp = pp = cp = 1, so dp = 8 / 1 = 8.
  const auto merge_csv = [](const std::string& r) {
    return merge_outputs({{"a.csv", shard(kHeader + r, 0, 1, 1, 1)}}, std::nullopt);
  };
  const auto merge_json = [](const std::string& r) {
    return merge_outputs({{"a", shard(r, 0, 1, 1, 1, SweepFormat::JsonLines)}}, std::nullopt);
  };
  REQUIRE(merge_csv(row(0, "x")) == kHeader + row(0, "x"));
  REQUIRE(merge_json(json_row(0, "x")) == json_row(0, "x"));
  const auto edit = [](std::string text, const std::string& from, const std::string& to) {
    REQUIRE(text.find(from) != std::string::npos);
    return text.replace(text.find(from), from.size(), to);
  };
  // JSON lines: the edits the scenario reader would refuse or never derive, each named.
  for (const auto& [from, to, message] :
       {std::tuple{"\"recompute\":\"none\"", "\"recompute\":\"banana\"",
                   "'scenario.parallel.recompute' is \"banana\"; expected one of none, "
                   "selective, full"},
        std::tuple{"\"precision\":\"bf16\"", "\"precision\":5",
                   "'scenario.training.precision' is 5; expected one of bf16, fp16, fp32, fp8"},
        std::tuple{"\"sequence_parallel\":false", "\"sequence_parallel\":0",
                   "'scenario.parallel.sequence_parallel' is 0; expected true or false"},
        // tp is 1: the reader turns sequence parallelism off.
        std::tuple{"\"sequence_parallel\":false", "\"sequence_parallel\":true",
                   "'scenario.parallel.sequence_parallel' is true; expected false where tp "
                   "is 1"},
        std::tuple{"\"dp\":8", "\"dp\":999",
                   "'scenario.parallel.dp' is 999; expected 8, gpus / (tp x pp x cp)"},
        // tp 3 does not divide 8 GPUs: dp is 0 (the row is an invalid one).
        std::tuple{"\"tp\":1", "\"tp\":3",
                   "'scenario.parallel.dp' is 8; expected 0, gpus / (tp x pp x cp) where that "
                   "is not a whole number"},
        std::tuple{"\"tp\":1,", "", "'scenario.parallel.tp' missing; expected a value"},
        std::tuple{"\"tp\":1", "\"tp\":0", "'scenario.parallel.tp' is 0; expected a degree"},
        std::tuple{"\"global_batch\":8", "\"global_batch\":-8",
                   "'scenario.training.global_batch' is -8; expected a count, an integer >= 1 (0 "
                   "only where dp is 0"},
        // 0 is an impossible plan's default global batch (dp 0), not a plan's of dp 8.
        std::tuple{"\"global_batch\":8", "\"global_batch\":0",
                   "'scenario.training.global_batch' is 0; expected a count, an integer >= 1 (0 "
                   "only where dp is 0, an impossible plan's default)"},
        std::tuple{"\"sharding\":\"none\"", "\"sharding\":\"hybrid_shard\",\"shard_group\":0",
                   "'scenario.parallel.shard_group' is 0; expected a count, an integer >= 1 (0 "
                   "only where dp is 0"},
        std::tuple{"\"sharding\":\"none\"", "\"sharding\":\"none\",\"shard_group\":2",
                   "'scenario.parallel.shard_group' is 2; expected no shard_group"},
        std::tuple{"\"sharding\":\"none\"", "\"sharding\":\"hybrid_shard\"",
                   "'scenario.parallel.shard_group' missing; expected the shard group"},
        std::tuple{"\"cp\":1", "\"cp\":1,\"account_for_loss_in_pipeline_split\":false",
                   "'scenario.parallel.account_for_loss_in_pipeline_split' is false; expected "
                   "true"},
        std::tuple{"\"cp\":1", "\"cp\":1,\"pipeline_layout\":[0]",
                   "'scenario.parallel.pipeline_layout' is [0]; expected a list of layer "
                   "counts"},
        std::tuple{"\"hardware\":\"h100-dgx\"", "\"hardware\":\"\"",
                   "'scenario.hardware' is \"\"; expected a name or an inline object"}}) {
    REQUIRE_THROWS_WITH(merge_json(edit(json_row(0, "x"), from, to)),
                        Contains(std::string("a: line 1: row 0: ") + message));
  }
  // CSV: the same check, naming the column. row() is "...,8,1,1,1,1,8,1,8,1024,bf16,adamw,none,,
  // 1f1b,1,none,false,..." (gpus, nodes, tp, pp, cp, dp, micro_batch, global_batch, seq_len,
  // precision, optimizer, sharding, shard_group, schedule, virtual_stages, recompute, sp).
  for (const auto& [from, to, message] :
       {std::tuple{",1f1b,1,none,", ",1f1b,1,banana,",
                   "column recompute is 'banana'; expected one of none, selective, full"},
        std::tuple{",1f1b,", ",zigzag,", "column schedule is 'zigzag'; expected one of gpipe"},
        std::tuple{",bf16,", ",bf17,", "column precision is 'bf17'; expected one of bf16"},
        std::tuple{",1,1,1,8,1,8,", ",1,1,1,999,1,8,",
                   "column dp is '999'; expected 8, gpus / (tp x pp x cp)"},
        std::tuple{",1,1,1,8,1,8,", ",0,1,1,8,1,8,", "column tp is '0'; expected a degree"},
        // 8 GPUs on 9 nodes; more GPUs than a scenario may have (2^24).
        std::tuple{",8,1,1,1,1,8,", ",8,9,1,1,1,8,",
                   "column nodes is '9'; expected at most gpus, 8"},
        std::tuple{",8,1,1,1,1,8,", ",16777217,1,1,1,1,8,",
                   "column gpus is '16777217'; expected a count, an integer from 1 to 16777216"},
        std::tuple{",none,,", ",none,4,", "column shard_group is '4'; expected no shard_group"},
        std::tuple{",none,false,", ",none,true,",
                   "column sequence_parallel is 'true'; expected false where tp is 1"}}) {
    REQUIRE_THROWS_WITH(merge_csv(edit(row(0, "x"), from, to)),
                        Contains(std::string("a.csv: line 2: row 0: ") + message));
  }
  // An invalid hybrid_shard row leaves its default group blank (csv_row): merged as written.
  const std::string hybrid = edit(row(0, "x"), ",none,,", ",hybrid_shard,,");
  CHECK(merge_csv(hybrid) == kHeader + hybrid);
}

TEST_CASE("merge: a search document is told from sweep rows by its first key, however indented",
          "[sweep][io]") {
  // trainsim search --format json writes "{\n  \"context\": ..."; the same document written
  // again by another JSON tool may be on one line, as JSON lines are, but no sweep row starts
  // with its first key.
  CHECK(output_kind("{\n  \"context\": {}") == OutputKind::Search);
  CHECK(output_kind("{\"context\": {\"tool\": \"trainsim\"}}") == OutputKind::Search);
  CHECK(output_kind("  {\"objective\":\"tokens_per_s\"}") == OutputKind::Search);
  // Sweep rows: CSV (header or end record) and JSON lines (a row or the end record first).
  CHECK(output_kind("index,hardware,model\n") == OutputKind::Sweep);
  CHECK(output_kind("# trainsim shard 0/2 of 4 scenarios") == OutputKind::Sweep);
  CHECK(output_kind("{\"index\":0,\"scenario\":{}}\n") == OutputKind::Sweep);
  CHECK(output_kind("{\"trainsim_shard\":\"0/2\"}\n") == OutputKind::Sweep);
  // A row written again with its keys sorted starts with a report key: a sweep row (which the
  // sweep merge then refuses as a row without an index), where it was taken for a search; a
  // search document with its keys sorted starts with "bounded", one of its own.
  CHECK(output_kind("{\"bubble_s\": 0.0, \"collectives\": []") == OutputKind::Sweep);
  CHECK(output_kind("{\"bounded\":0,\"context\":{}") == OutputKind::Search);
  // A row written again with a space after its "{" is still a row on its line (it was taken for
  // a search document, which starts "{" and a line break).
  CHECK(output_kind("{ \"index\": 1, \"scenario\": {}}\n") == OutputKind::Sweep);
  // Neither: a search's table; an indented run or describe report (a run report beside sweep
  // shards was taken for a search document, and the shards named as the odd ones out).
  CHECK(output_kind("Plans for llama2-7b on 16 x h100-dgx GPUs") == OutputKind::Other);
  CHECK(output_kind("{\n  \"bubble_s\": 0.0,\n  \"collectives\": [") == OutputKind::Other);
  CHECK(output_kind("{\n  \"context\": {\n    \"hardware\": \"h100-dgx\"\n  },\n  "
                    "\"matmul_parameters\": 1") == OutputKind::Other);
  CHECK(output_kind("{\n  \"context\": {\n    \"schema_version\": 1\n  },\n  "
                    "\"objective\": \"tokens_per_s\"") == OutputKind::Search);
  // Nothing to tell by: the merge of the other inputs' kind names the file as empty.
  CHECK(output_kind("") == OutputKind::Empty);
  CHECK(output_kind(" \n\t\r\n") == OutputKind::Empty);
}
