#pragma once
// The supervision loop's core, shared by the agent and exec mode: each round
// names the fds to watch and the handler of each, polls them together and
// calls the handlers of those that are ready.
#include <functional>
#include <vector>

namespace wireup {

class FdDispatch {
 public:
  using Handler = std::function<void()>;

  // Watches `fd` for input, its end or an error; a negative fd is left out.
  void watch(int fd, Handler on_ready);

  // Polls every watched fd for up to `timeout_ms` (-1: no limit), then calls
  // the handlers of the ready ones in the order they were watched, until one
  // calls end_round(). False, with no handler called, when a signal
  // interrupted the poll. Throws std::runtime_error on any other poll error.
  // Every fd is forgotten after it: the next round watches afresh.
  bool dispatch(int timeout_ms);

  // From a handler that changed what is watched (a link closed): the rest of
  // this round's handlers are not called; their fds are polled again next round.
  void end_round() { ended_ = true; }

 private:
  struct Watch {
    int fd;
    Handler on_ready;
  };
  std::vector<Watch> watches_;
  bool ended_ = false;
};

}  // namespace wireup
