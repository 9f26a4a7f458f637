#pragma once
#include <memory>

namespace wireup {

// The agent store (`--agent-store`): a key-value server on agent 0 that speaks
// PyTorch's TCPStore wire protocol, so workers started with
// TORCHELASTIC_USE_AGENT_STORE=True connect to it as clients (rank 0 too)
// instead of racing rank 0's own server. It listens before any worker exists,
// so no client's connect is refused (torch 1.13 sleeps 1 s after a refusal).
//
// Both numberings of the protocol are served, chosen per connection: torch's
// original one (1.x to 2.2: SET=0 ... DELETE_KEY=8, APPEND..CANCEL_WAIT), and the
// one that opens every connection with VALIDATE and a magic number (later 2.x:
// VALIDATE=0, SET=1 ..., PING). Tested against torch 1.13.1's client; the newer
// numbering follows torch's source. A connection that sends anything else is
// closed with a message on stderr, so its client fails instead of hanging.
class AgentStore {
 public:
  // Serves `listen_fd` (a listening TCP socket, owned from now on) on a thread.
  explicit AgentStore(int listen_fd);
  ~AgentStore();  // stops the thread and closes every connection
  AgentStore(const AgentStore&) = delete;
  AgentStore& operator=(const AgentStore&) = delete;

  // Drops every key (StoreProtocol::clear_keys) before it returns; call it
  // between attempts, once no worker of the last one is left.
  void clear_keys();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wireup
