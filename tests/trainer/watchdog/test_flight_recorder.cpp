#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "watchdog/flight_recorder.hpp"

using namespace wireup::train;

TEST_CASE("the flight recorder keeps the last 64 collectives, oldest first") {
  FlightRecorder fr;
  CHECK(fr.records().empty());
  CHECK(fr.last_completed() == 0);
  for (int i = 0; i < 100; ++i) {
    const auto seq = fr.begin("all_gather", "world", 1024, 3);
    fr.end(seq, CollectiveState::Completed);
  }
  const auto s = fr.begin("all_reduce", "shard", 8);
  const auto r = fr.records();
  REQUIRE(r.size() == FlightRecorder::kCapacity);
  CHECK(r.front().seq == 101 - 63);
  CHECK(r.back().seq == 101);
  CHECK(r.back().state == CollectiveState::Started);
  CHECK(r.back().end_us == 0);
  CHECK(std::string(r.back().kind) == "all_reduce");
  CHECK(r[0].unit == 3);
  CHECK(r[0].end_us >= r[0].start_us);
  CHECK(fr.last_completed() == 100);
  fr.end(s, CollectiveState::TimedOut);
  CHECK(fr.records().back().state == CollectiveState::TimedOut);
  CHECK(fr.last_completed() == 100);
  fr.end(1, CollectiveState::Completed);  // long overwritten: ignored
  CHECK(fr.records().front().seq == 38);
}

TEST_CASE("the flight record is JSON with every field of every collective") {
  FlightRecorder fr;
  fr.end(fr.begin("barrier", "world", 0), CollectiveState::Completed);
  fr.end(fr.begin("broadcast", "replicate", 16), CollectiveState::Failed);
  fr.begin("reduce_scatter", "shard", 4096);
  const auto j = nlohmann::json::parse(flight_record_json(1, "node\"a", fr.records(), 1));
  CHECK(j["rank"] == 1);
  CHECK(j["host"] == "node\"a");
  CHECK(j["last_completed"] == 1);
  REQUIRE(j["collectives"].size() == 3);
  CHECK(j["collectives"][0]["kind"] == "barrier");
  CHECK(j["collectives"][1]["state"] == "failed");
  CHECK(j["collectives"][2]["state"] == "started");
  CHECK(j["collectives"][2]["bytes"] == 4096);
  CHECK(j["collectives"][2]["group"] == "shard");
  CHECK(j["collectives"][2]["unit"] == -1);
  CHECK(j["collectives"][2]["end_us"] == 0);
}

TEST_CASE("the stall line names the collective and every rank not arrived") {
  CollectiveRecord c;
  c.seq = 812;
  c.kind = "all_reduce";
  c.group = "world";
  c.bytes = 8;
  CHECK(format_stall_line(0, "host a", c, 5.04, {{1, "host a"}, {7, "node 3"}}) ==
        "wireup-train: peer stalled: rank 0 (host a) waited 5.0 s in all_reduce #812 (group "
        "world, 8 bytes); not arrived: rank 1 (host a), rank 7 (node 3)");
  CHECK_THAT(format_stall_line(2, "host b", c, 100, {}), Catch::EndsWith("not arrived: unknown"));
}

TEST_CASE("a stalled rank's exit status") { CHECK(kExitPeerStalled == 3); }
