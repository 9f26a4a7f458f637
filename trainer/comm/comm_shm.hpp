#pragma once
#include <c10/util/intrusive_ptr.h>

#include <memory>
#include <string>

#include "comm/comm.hpp"

namespace c10d {
class Store;
}

namespace wireup::train {

// Whether CPU groups whose ranks share a node use shared memory
// (shm_group.hpp) instead of Gloo: WIREUP_CPU_COMM=shm (the default) or gloo.
// Throws InputError on any other value.
bool shm_comm_wanted();

// A Comm over one shared-memory segment, set up through `store` (its keys
// under the store's prefix). Every rank of the group calls it at the same
// point and all get the same answer: the group, or nullptr with the reason in
// `why` when any rank could not make or attach the segment (then all fall
// back to Gloo together). CPU tensors, contiguous; sums in fp32 or fp64.
// Collectives run in the calling thread (their Pending is already done), one
// thread at a time.
std::shared_ptr<Comm> make_shm_comm(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                    int size, std::string* why);

}  // namespace wireup::train
