// The decisions of memory snapshots as pure functions: retention, and the
// resume source over what each node reports (no files, no Torch).
#include <catch2/catch.hpp>
#include <functional>

#include "checkpoint/memory_snapshot_plan.hpp"

using namespace wireup::train;
using Catch::Matchers::Contains;

namespace {

const std::string kSum(32, 'e');

SnapshotManifest manifest(std::int64_t step, const std::vector<std::string>& rank_node,
                          const std::string& job = "9") {
  SnapshotManifest m{job, 1000, step, rank_node, {}, {}, {}};
  for (std::size_t r = 0; r < rank_node.size(); ++r)
    m.parts.push_back({static_cast<int>(r), rank_node[r], 8, kSum});
  return m;
}

// A node's report: for each step, a good snapshot holding its own ranks'
// parts and the replicas named.
NodeMemory node(const std::string& name, const std::vector<std::string>& rank_node,
                const std::vector<std::int64_t>& steps, const std::vector<int>& replicas = {}) {
  NodeMemory n{name, true, "", {}};
  for (const std::int64_t step : steps) {
    SnapshotState s{step, "", manifest(step, rank_node), {}, replicas};
    for (std::size_t r = 0; r < rank_node.size(); ++r)
      if (rank_node[r] == name) s.parts.push_back(static_cast<int>(r));
    n.snapshots.push_back(s);
  }
  return n;
}

ResumeInputs inputs(std::vector<NodeMemory> nodes, std::vector<std::string> rank_node,
                    std::vector<std::int64_t> disk) {
  return {std::move(nodes), std::move(disk), std::move(rank_node), "9", 1000, {}, {}};
}

const std::vector<std::string> kLayout{"a1", "a1", "a2", "a2"};

}  // namespace

TEST_CASE("retention keeps exactly the newest complete snapshot and the one in progress") {
  using V = std::vector<std::int64_t>;
  CHECK(snapshots_to_delete({}, 10).empty());
  CHECK(snapshots_to_delete({{10, true}}, 20).empty());
  CHECK(snapshots_to_delete({{10, true}, {20, true}}, 30) == V{10});
  // An incomplete newer one (cut short) goes; the newest complete one stays.
  CHECK(snapshots_to_delete({{10, true}, {20, true}, {30, false}}, 40) == V{10, 30});
  // Only incomplete ones: all go.
  CHECK(snapshots_to_delete({{10, false}, {20, false}}, 30) == V{10, 20});
  // An earlier attempt at the same step starts afresh; newer ones (a resume
  // went back past them) go.
  CHECK(snapshots_to_delete({{10, true}, {20, true}, {30, true}}, 20) == V{20, 30});
}

TEST_CASE("the resume source: newest usable state, memory before disk at the same step") {
  SECTION("memory, newer than disk") {
    const auto c = choose_resume_source(
        inputs({node("a1", kLayout, {40, 20}), node("a2", kLayout, {40, 20})}, kLayout, {30}));
    CHECK(c.source == ResumeSource::memory);
    CHECK(c.step == 40);
  }
  SECTION("disk, newer than memory: memory is not even examined") {
    const auto c = choose_resume_source(
        inputs({node("a1", kLayout, {20}), node("a2", kLayout, {20})}, kLayout, {30, 10}));
    CHECK(c.source == ResumeSource::disk);
    CHECK(c.step == 30);
    CHECK(c.skipped.empty());
  }
  SECTION("the same step on disk and in memory: memory") {
    const auto c = choose_resume_source(
        inputs({node("a1", kLayout, {30}), node("a2", kLayout, {30})}, kLayout, {30}));
    CHECK(c.source == ResumeSource::memory);
  }
  SECTION("nothing anywhere: none") {
    const auto c = choose_resume_source(inputs({}, kLayout, {}));
    CHECK(c.source == ResumeSource::none);
    CHECK(resume_lines(c)[0] == "[resume] step=0 source=none");
  }
}

TEST_CASE("the resume source: a node that lost its memory, and the limits of replicas") {
  const std::vector<std::string> now{"a1", "a1", "b7", "b7"};
  const NodeMemory a1 = node("a1", kLayout, {40}, {2, 3});
  const NodeMemory gone{"b7", false, "", {}};
  SECTION("its ranks' replicas on another node: peer, naming the holders") {
    const auto c = choose_resume_source(inputs({a1, gone}, now, {30}));
    CHECK(c.source == ResumeSource::peer);
    CHECK(c.holder == std::vector<std::string>{"a1", "a1", "a1", "a1"});
  }
  SECTION("a node missing from the reports counts as missing too") {
    CHECK(choose_resume_source(inputs({a1}, now, {})).source == ResumeSource::peer);
  }
  SECTION("a replica missing: disk, naming the rank") {
    const auto c = choose_resume_source(inputs({node("a1", kLayout, {40}, {2}), gone}, now, {30}));
    CHECK(c.source == ResumeSource::disk);
    REQUIRE(c.skipped.size() == 1);
    CHECK(c.skipped[0] ==
          "memory snapshot step 40: rank 3 on node b7: the node's memory is gone and no other "
          "node holds a replica of its part");
  }
  SECTION("a node whose memory is there but lacks its part is not rescued by a replica") {
    NodeMemory a2 = node("a2", kLayout, {40}, {0, 1});
    a2.snapshots[0].parts = {2};  // rank 3's part failed its check
    a2.snapshots[0].problem = "part of rank 3 (rank-00003.bin) fails its checksum";
    const auto c =
        choose_resume_source(inputs({node("a1", kLayout, {40}, {2, 3}), a2}, kLayout, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK_THAT(c.skipped[0], Contains("on node a2: part of rank 3"));
  }
}

TEST_CASE("the resume source: another run's snapshot is never memory's") {
  SECTION("another layout: ranks moved between surviving nodes") {
    const std::vector<std::string> now{"a1", "a2", "a1", "a2"};
    const auto c = choose_resume_source(
        inputs({node("a1", kLayout, {40}), node("a2", kLayout, {40})}, now, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK(c.skipped[0] ==
          "memory snapshot step 40: layout differs: rank 1 was on node a1, now on a2");
  }
  SECTION("two lost nodes folded onto one new node") {
    const std::vector<std::string> was{"a1", "a2", "a3", "a4"};
    const std::vector<std::string> now{"a1", "b1", "b1", "a4"};
    const auto c = choose_resume_source(
        inputs({node("a1", was, {40}, {1, 2}), node("a4", was, {40})}, now, {}));
    CHECK(c.source == ResumeSource::none);
    CHECK_THAT(c.skipped[0], Contains("layout differs: rank 2 was on node a3, now on b1"));
  }
  SECTION("another job or user") {
    NodeMemory a1 = node("a1", kLayout, {40});
    NodeMemory a2 = node("a2", kLayout, {40});
    a1.snapshots[0].manifest->job_id = a2.snapshots[0].manifest->job_id = "8";
    auto c = choose_resume_source(inputs({a1, a2}, kLayout, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK(c.skipped[0] == "memory snapshot step 40: written by job 8, this is job 9");
    ResumeInputs in = inputs({node("a1", kLayout, {40}), node("a2", kLayout, {40})}, kLayout, {});
    in.uid = 1001;
    c = choose_resume_source(in);
    CHECK(c.source == ResumeSource::none);
    CHECK_THAT(c.skipped[0], Contains("written by uid 1000"));
  }
  SECTION("another identity: family, shape, head split, rope scaling, adapters") {
    // What a durable checkpoint's resume refuses (identity_mismatch), named
    // field by field with both values; the snapshot is passed over for disk.
    const auto why = [](const std::function<void(RunIdentity&)>& change) {
      ResumeInputs in =
          inputs({node("a1", kLayout, {40}), node("a2", kLayout, {40})}, kLayout, {30});
      change(in.identity);
      const auto c = choose_resume_source(in);
      CHECK(c.source == ResumeSource::disk);
      CHECK(c.step == 30);
      REQUIRE(c.skipped.size() == 1);
      return c.skipped[0];
    };
    CHECK(why([](RunIdentity& r) { r.model.layers = 2; }) ==
          "memory snapshot step 40: saved from a different model shape: layers 4, this run 2");
    CHECK(why([](RunIdentity& r) { r.model.hidden = 256; }) ==
          "memory snapshot step 40: saved from a different model shape: hidden 512, this run 256");
    CHECK_THAT(why([](RunIdentity& r) { r.model.kv_heads = 8; }),
               Contains("kv_heads 4, this run 8"));
    CHECK_THAT(why([](RunIdentity& r) { r.model.vocab = 9000; }),
               Contains("vocab 8000, this run 9000"));
    CHECK_THAT(why([](RunIdentity& r) { r.model.head_width = 32; }),
               Contains("head_dim 64, this run 32"));
    CHECK_THAT(why([](RunIdentity& r) { r.model.family = "qwen3"; }),
               Contains("saved from a llama model, this run is qwen3"));
    CHECK_THAT(
        why([](RunIdentity& r) { r.model.rope_scaling = parse_rope_scaling("llama3:8,1,4,64"); }),
        Contains("saved with --rope_scaling none, this run has llama3:8,1,4,64"));
    CHECK_THAT(why([](RunIdentity& r) {
                 r.lora = AdapterMeta{{}, "/b", "f"};
               }),
               Contains("it holds a full model, this run trains LoRA adapters"));
    // The same identity: memory.
    ResumeInputs same = inputs({node("a1", kLayout, {40}), node("a2", kLayout, {40})}, kLayout, {});
    same.identity.model.rope_theta = 5e5;  // recorded, not compared (as on disk)
    CHECK(choose_resume_source(same).source == ResumeSource::memory);
  }
  SECTION("nodes that disagree on the manifest") {
    NodeMemory a2 = node("a2", kLayout, {40});
    a2.snapshots[0].manifest->parts[0].bytes = 9;
    const auto c = choose_resume_source(inputs({node("a1", kLayout, {40}), a2}, kLayout, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK_THAT(c.skipped[0], Contains("on node a2: its manifest differs"));
  }
}

namespace {

// Both nodes of kLayout holding `steps`, each manifest recording every rank's
// replica on the other node (rank r's on the node of rank (r + 2) % 4).
std::vector<NodeMemory> replicated(const std::vector<std::int64_t>& steps) {
  std::vector<NodeMemory> nodes{node("a1", kLayout, steps, {2, 3}),
                                node("a2", kLayout, steps, {0, 1})};
  for (NodeMemory& n : nodes)
    for (SnapshotState& s : n.snapshots)
      for (int r = 0; r < 4; ++r)
        s.manifest->replicas.push_back({r, kLayout[(r + 2) % 4], 8, kSum});
  return nodes;
}

}  // namespace

TEST_CASE("a load that fails falls back as the scan does: replica, then the next state") {
  const ResumeChoice c = choose_resume_source(inputs(replicated({40, 20}), kLayout, {10}));
  REQUIRE(c.source == ResumeSource::memory);
  CHECK(c.replica == std::vector<std::string>{"a2", "a2", "a1", "a1"});
  SECTION("a part that failed at the load: the same step, that rank from its replica") {
    const auto next = replica_fallback(c, {1});
    REQUIRE(next);
    CHECK(next->source == ResumeSource::peer);
    CHECK(next->step == 40);
    CHECK(next->holder == std::vector<std::string>{"a1", "a2", "a2", "a2"});
    CHECK(next->expected[1].checksum == c.expected[1].checksum);  // the same bytes are expected
    // Parts of both nodes: each from the other node.
    CHECK(replica_fallback(c, {1, 2})->holder == std::vector<std::string>{"a1", "a2", "a1", "a2"});
    // The replica failed too: nothing more in this step.
    CHECK_FALSE(replica_fallback(*next, {1}));
    CHECK_FALSE(replica_fallback(*next, {0, 1}));
  }
  SECTION("no replica recorded (one node, or a manifest without one): no fallback in the step") {
    const ResumeChoice bare = choose_resume_source(
        inputs({node("a1", kLayout, {40}), node("a2", kLayout, {40})}, kLayout, {}));
    REQUIRE(bare.source == ResumeSource::memory);
    CHECK(bare.replica == std::vector<std::string>(4));
    CHECK_FALSE(replica_fallback(bare, {0}));
  }
  SECTION("nothing failed, a rank out of range, or a disk choice: no fallback") {
    CHECK_FALSE(replica_fallback(c, {}));
    CHECK_FALSE(replica_fallback(c, {4}));
    CHECK_FALSE(replica_fallback(c, {-1}));
    ResumeChoice disk;
    disk.source = ResumeSource::disk;
    CHECK_FALSE(replica_fallback(disk, {0}));
  }
  SECTION("the failed step passed over: the next newest state, memory or disk") {
    ResumeInputs in = inputs(replicated({40, 20}), kLayout, {10});
    in.failed_steps = {40};
    ResumeChoice again = choose_resume_source(in);
    CHECK(again.source == ResumeSource::memory);
    CHECK(again.step == 20);
    CHECK(again.skipped.empty());  // the load's line named why 40 failed
    in.disk_steps = {30};
    again = choose_resume_source(in);
    CHECK(again.source == ResumeSource::disk);
    CHECK(again.step == 30);
    in.disk_steps = {};
    in.failed_steps = {40, 20};
    CHECK(choose_resume_source(in).source == ResumeSource::none);
  }
}
