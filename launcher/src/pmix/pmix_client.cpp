#include "pmix/pmix_client.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "wireup/pmix_server_uri.hpp"

namespace wireup {

namespace {

std::string why(pmix_status_t rc) { return std::string(PMIx_Error_string(rc)); }

pmix_proc_t proc_of(const std::string& nspace, pmix_rank_t rank) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), rank);
  return p;
}

}  // namespace

bool PmixClient::server_present() {
  // Every PMIx server sets these for its clients.
  if (std::getenv("PMIX_NAMESPACE") != nullptr) return true;
  for (const char* var : kPmixServerUriVars)
    if (std::getenv(var) != nullptr) return true;
  return false;
}

PmixClient::PmixClient() {
  pmix_proc_t me;
  const pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS) throw PmixError("PMIx_Init failed: " + why(rc));
  nspace_ = me.nspace;
  rank_ = me.rank;
  live_ = true;
}

PmixClient::~PmixClient() {
  if (live_) PMIx_Finalize(nullptr, 0);
}

std::uint32_t PmixClient::get_u32(bool wildcard, const char* key) {
  const pmix_proc_t p = proc_of(nspace_, wildcard ? PMIX_RANK_WILDCARD : rank_);
  pmix_value_t* v = nullptr;
  const pmix_status_t rc = PMIx_Get(&p, key, nullptr, 0, &v);
  if (rc != PMIX_SUCCESS || v == nullptr)
    throw PmixError(std::string("PMIx_Get(") + key + ") failed: " + why(rc));
  std::uint64_t out = 0;
  bool ok = true;
  switch (v->type) {
    case PMIX_UINT32:
      out = v->data.uint32;
      break;
    case PMIX_UINT16:
      out = v->data.uint16;
      break;
    case PMIX_UINT64:
      out = v->data.uint64;
      break;
    case PMIX_INT:
      ok = v->data.integer >= 0;
      out = static_cast<std::uint64_t>(v->data.integer);
      break;
    case PMIX_PROC_RANK:
      out = v->data.rank;
      break;
    default:
      ok = false;
  }
  const auto type = v->type;
  PMIX_VALUE_RELEASE(v);
  if (!ok || out > UINT32_MAX)
    throw PmixError(std::string("PMIx_Get(") + key + "): unexpected value type " +
                    PMIx_Data_type_string(type));
  return static_cast<std::uint32_t>(out);
}

std::uint32_t PmixClient::job_size() { return get_u32(true, PMIX_JOB_SIZE); }
std::uint32_t PmixClient::local_size() { return get_u32(true, PMIX_LOCAL_SIZE); }
std::uint32_t PmixClient::local_rank() { return get_u32(false, PMIX_LOCAL_RANK); }
std::uint32_t PmixClient::node_id() { return get_u32(false, PMIX_NODEID); }

std::optional<std::string> PmixClient::hostname() {
  const pmix_proc_t p = proc_of(nspace_, rank_);
  pmix_value_t* v = nullptr;
  if (PMIx_Get(&p, PMIX_HOSTNAME, nullptr, 0, &v) != PMIX_SUCCESS || v == nullptr)
    return std::nullopt;
  std::optional<std::string> out;
  if (v->type == PMIX_STRING && v->data.string != nullptr) out = v->data.string;
  PMIX_VALUE_RELEASE(v);
  return out;
}

void PmixClient::put(const std::string& key, const std::string& bytes) {
  pmix_value_t val;
  PMIX_VALUE_CONSTRUCT(&val);
  val.type = PMIX_BYTE_OBJECT;
  val.data.bo.bytes = const_cast<char*>(bytes.data());  // PMIx_Put copies
  val.data.bo.size = bytes.size();
  const pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &val);
  if (rc != PMIX_SUCCESS) throw PmixError("PMIx_Put(" + key + ") failed: " + why(rc));
}

void PmixClient::commit() {
  const pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) throw PmixError("PMIx_Commit failed: " + why(rc));
}

void PmixClient::fence_collect(int timeout_s) { fence(true, timeout_s); }
void PmixClient::barrier(int timeout_s) { fence(false, timeout_s); }

void PmixClient::fence(bool collect, int timeout_s) {
  const pmix_proc_t all = proc_of(nspace_, PMIX_RANK_WILDCARD);
  pmix_info_t info[2];
  int timeout = timeout_s;
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
  const pmix_status_t rc = PMIx_Fence(&all, 1, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc != PMIX_SUCCESS)
    throw PmixError(std::string("PMIx_Fence (") + (collect ? "collect" : "barrier") + ", timeout " +
                    std::to_string(timeout_s) + " s) failed: " + why(rc));
}

std::string PmixClient::get(std::uint32_t rank, const std::string& key, int timeout_s) {
  const pmix_proc_t p = proc_of(nspace_, rank);
  pmix_value_t* v = nullptr;
  pmix_info_t info;
  int timeout = timeout_s;
  PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
  const pmix_status_t rc = PMIx_Get(&p, key.c_str(), &info, 1, &v);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS || v == nullptr)
    throw PmixError("PMIx_Get(" + key + " of rank " + std::to_string(rank) + ", timeout " +
                    std::to_string(timeout_s) + " s) failed: " + why(rc));
  std::string out;
  const bool ok = v->type == PMIX_BYTE_OBJECT;
  if (ok) out.assign(v->data.bo.bytes, v->data.bo.size);
  PMIX_VALUE_RELEASE(v);
  if (!ok) throw PmixError("PMIx_Get(" + key + "): expected a byte object");
  return out;
}

void PmixClient::abort(int status, const std::string& message) {
  if (!live_) return;
  const pmix_proc_t all = proc_of(nspace_, PMIX_RANK_WILDCARD);
  PMIx_Abort(status, message.c_str(), const_cast<pmix_proc_t*>(&all), 1);
}

void PmixClient::finalize() {
  if (!live_) return;
  live_ = false;
  PMIx_Finalize(nullptr, 0);
}

}  // namespace wireup
