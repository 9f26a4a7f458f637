// A DPO run's "dpo" metadata (no Torch): the JSON both ways, inside
// metadata.json and the identity line, bad objects refused by name, and the
// rule that decides whether a run may resume it.
#include <catch2/catch.hpp>

#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/dpo_meta.hpp"
#include "checkpoint/run_identity.hpp"
#include "checkpoint_meta_fixture.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;
using Catch::Matchers::Contains;

namespace {

DpoMeta frozen(double beta = 0.01, const std::string& fingerprint = std::string(64, 'f')) {
  DpoMeta d;
  d.settings.beta = beta;
  d.settings.loss = preference::DpoLoss::Robust;
  d.settings.label_smoothing = 0.1;
  d.reference = "frozen_copy";
  d.reference_source = "hf:/fsx/models/sft";
  d.reference_fingerprint = fingerprint;
  return d;
}

}  // namespace

TEST_CASE("dpo metadata round-trips, alone and in metadata.json", "[dpo_meta]") {
  const DpoMeta d = frozen();
  const DpoMeta back = dpo_meta_from_json(dpo_meta_json(d), "m");
  CHECK(dpo_mismatch(d, back).empty());
  CHECK(back.settings.label_smoothing == 0.1);
  CheckpointMeta m = test::two_rank_meta();
  m.dpo = d;
  const CheckpointMeta read = checkpoint_meta_from_json(to_json(m), "metadata.json");
  REQUIRE(read.dpo);
  CHECK(read.dpo->reference_source == "hf:/fsx/models/sft");
  CHECK_FALSE(checkpoint_meta_from_json(to_json(test::two_rank_meta()), "x").dpo);
  // The identity line: with "dpo", and an older line without it (not DPO).
  RunIdentity id{m.model, std::nullopt, d};
  const RunIdentity again = run_identity_from_json(to_json(id), "manifest");
  REQUIRE(again.dpo);
  CHECK(identity_mismatch(id, again).empty());
  std::string two_keys = to_json(RunIdentity{m.model, std::nullopt, std::nullopt});
  const std::string null_dpo = "\"dpo\":null,";
  REQUIRE(two_keys.find(null_dpo) != std::string::npos);
  two_keys.erase(two_keys.find(null_dpo), null_dpo.size());
  CHECK_FALSE(run_identity_from_json(two_keys, "manifest").dpo);
}

TEST_CASE("bad dpo metadata is refused, naming the file", "[dpo_meta]") {
  CHECK_THROWS_WITH(dpo_meta_from_json("{\"beta\": 0.1}", "meta.json"),
                    Contains("meta.json: dpo:"));
  DpoMeta d = frozen();
  d.reference = "mystery";
  CHECK_THROWS_WITH(dpo_meta_from_json(dpo_meta_json(d), "meta.json"),
                    Contains("reference 'mystery', expected adapters_off or frozen_copy"));
  d = frozen(-1);
  CHECK_THROWS_WITH(dpo_meta_from_json(dpo_meta_json(d), "meta.json"), Contains("--dpo_beta"));
}

TEST_CASE("a DPO checkpoint resumes only with its settings and reference", "[dpo_meta]") {
  CHECK(dpo_mismatch(std::nullopt, std::nullopt).empty());
  CHECK_THAT(dpo_mismatch(std::nullopt, frozen()), Contains("did not train DPO"));
  CHECK_THAT(dpo_mismatch(frozen(), std::nullopt), Contains("this run does not train DPO"));
  CHECK(dpo_mismatch(frozen(0.01), frozen(0.1)) == "saved with --dpo_beta 0.01, this run has 0.1");
  DpoMeta other = frozen();
  other.settings.loss = preference::DpoLoss::Sigmoid;
  other.settings.label_smoothing = 0;
  CHECK(dpo_mismatch(frozen(), other) == "saved with --dpo_loss robust, this run has sigmoid");
  other = frozen();
  other.reference_source = "seed:7";
  CHECK_THAT(dpo_mismatch(frozen(), other), Contains("saved against the reference frozen_copy"));
  CHECK_THAT(dpo_mismatch(frozen(), frozen(0.01, std::string(64, 'e'))),
             Contains("has changed since the checkpoint (fingerprint ffffffffffffffff, now eeee"));
}
