#pragma once

namespace wireup {

class PmixClient;

// Exec mode: the launcher must PMIx_Finalize before it execs the program,
// which may then PMIx_Init again as the same rank. PMIx 4.2's server (inside
// orted and slurmstepd) mishandles the finalized connection closing while the
// job runs on:
//  - it drops the rank from every collective then open on the node, though
//    the rank reconnects and joins them (openpmix#3931): a fence completes
//    without it and the rank waits forever in the next one;
//  - when the close arrives before the server has marked the client
//    finalized (the server sets that flag after queueing the ack), it counts
//    one local process fewer for the rest of the job, and every later fence
//    on the node completes early.
// So the connection outlives the finalize: its socket stays open, inherited
// by the program, and closes when the task exits. Returns false, having
// finalized normally, where the socket cannot be found (no TCP server URI).
bool finalize_keeping_connection(PmixClient& pmix);

}  // namespace wireup
