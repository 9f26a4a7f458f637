#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace wireup {

// A PMIx call that failed: names the call, the key and PMIx's own reason.
class PmixError : public std::runtime_error {
 public:
  explicit PmixError(const std::string& what) : std::runtime_error(what) {}
};

// One PMIx client session: init in the constructor, finalize at most once.
// Only the keys known to resolve under both Slurm and Open MPI are used
// (see docs/launcher.md).
class PmixClient {
 public:
  // A PMIx server started this process (srun --mpi=pmix, mpirun).
  static bool server_present();

  PmixClient();  // PMIx_Init; throws PmixError
  ~PmixClient();
  PmixClient(const PmixClient&) = delete;
  PmixClient& operator=(const PmixClient&) = delete;

  std::uint32_t rank() const {
    return rank_;
  }  // from PMIx_Init's proc (PMIX_RANK is not served by mpirun)
  const std::string& nspace() const { return nspace_; }

  std::uint32_t job_size();               // PMIX_JOB_SIZE (wildcard)
  std::uint32_t local_size();             // PMIX_LOCAL_SIZE (wildcard)
  std::uint32_t local_rank();             // PMIX_LOCAL_RANK (own)
  std::uint32_t node_id();                // PMIX_NODEID (own)
  std::optional<std::string> hostname();  // PMIX_HOSTNAME (own); absent on huge jobs

  // Publish under `key` for every rank, then fence with data collection.
  void put(const std::string& key, const std::string& bytes);
  void commit();
  void fence_collect(int timeout_s);
  // A fence that collects nothing: every rank has reached it. After reading its
  // peers' records each rank waits here, so none exits (and takes its data with
  // it) while another still asks for that data: under PRRTE (Open MPI 5) a
  // PMIx_Get of a rank that had already exited waited forever.
  void barrier(int timeout_s);
  // After fence_collect: what `rank` put under `key`; an error after timeout_s.
  std::string get(std::uint32_t rank, const std::string& key, int timeout_s);

  // Tears down the whole job or step (every node) with `status`.
  void abort(int status, const std::string& message);
  void finalize();  // before exec: a PMIx client must not exec unfinalized

 private:
  std::uint32_t get_u32(bool wildcard, const char* key);
  void fence(bool collect, int timeout_s);

  std::string nspace_;
  std::uint32_t rank_ = 0;
  bool live_ = false;
};

}  // namespace wireup
