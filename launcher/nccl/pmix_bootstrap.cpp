#include "wireup/pmix_bootstrap.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "pmix/pmix_client.hpp"

namespace {

std::mutex g_mu;
std::unique_ptr<wireup::PmixClient> g_pmix;
unsigned g_round = 0;  // each broadcast uses a fresh key

wireup::PmixClient& session() {
  if (!g_pmix) g_pmix = std::make_unique<wireup::PmixClient>();
  return *g_pmix;
}

int fail(char* err, std::size_t errlen, const std::string& what) {
  if (err && errlen > 0) std::snprintf(err, errlen, "%s", what.c_str());
  return -1;
}

}  // namespace

extern "C" int wireup_pmix_rank(int* rank, int* size) {
  std::lock_guard<std::mutex> lock(g_mu);
  try {
    auto& p = session();
    *rank = static_cast<int>(p.rank());
    *size = static_cast<int>(p.job_size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup_pmix_rank: %s\n", e.what());
    return -1;
  }
}

extern "C" int wireup_pmix_broadcast(void* buf, size_t size, int root, char* err, size_t errlen) {
  std::lock_guard<std::mutex> lock(g_mu);
  try {
    auto& p = session();
    const std::uint32_t n = p.job_size();
    if (root < 0 || static_cast<std::uint32_t>(root) >= n)
      return fail(err, errlen,
                  "wireup_pmix_broadcast: root " + std::to_string(root) +
                      " is not a rank of this job of " + std::to_string(n));
    const std::string key = "wireup.bcast." + std::to_string(g_round++);
    if (p.rank() == static_cast<std::uint32_t>(root))
      p.put(key, std::string(static_cast<const char*>(buf), size));
    p.commit();
    p.fence_collect(600);
    const std::string got = p.get(static_cast<std::uint32_t>(root), key, 600);
    if (got.size() != size)
      return fail(err, errlen,
                  "wireup_pmix_broadcast: root sent " + std::to_string(got.size()) +
                      " bytes, this rank expected " + std::to_string(size));
    std::memcpy(buf, got.data(), size);
    // Nobody leaves before every rank has the value (PmixClient::barrier).
    p.barrier(600);
    return 0;
  } catch (const std::exception& e) {
    return fail(err, errlen, std::string("wireup_pmix_broadcast: ") + e.what());
  }
}

extern "C" void wireup_pmix_finalize(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_pmix) g_pmix->finalize();
  g_pmix.reset();
}
