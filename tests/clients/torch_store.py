"""env:// and TCPStore on every torch the lanes test: torch 2.4 and later start a libuv
TCPStore unless told otherwise (USE_LIBUV=0 for env://, use_libuv=False for TCPStore),
and a torch built without libuv (Debian's 2.6) refuses that. Users' pip wheels have
libuv. Importing this module probes once, before init_process_group."""
import os

_HAS_USE_LIBUV = True  # whether TCPStore takes use_libuv (torch >= 2.2)


def use_plain_store_without_libuv():
    """Sets USE_LIBUV=0 only when this torch says it was built without libuv; any other
    failure of the probe is raised, so a real store problem still fails the test."""
    global _HAS_USE_LIBUV
    import torch.distributed as dist

    try:
        store = dist.TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
    except TypeError:  # torch < 2.2: no use_libuv argument, and no libuv default
        _HAS_USE_LIBUV = False
        return
    except RuntimeError as e:
        if "libuv" not in str(e):
            raise
        os.environ.setdefault("USE_LIBUV", "0")
        _agent_store_client_without_libuv()
        return
    del store


def _agent_store_client_without_libuv():
    """torch 2.6's env:// under TORCHELASTIC_USE_AGENT_STORE=True makes its TCPStore client
    without passing use_libuv, so it ignores USE_LIBUV and fails on a torch built without
    libuv (as Debian's torchrun 2.6 does). On such a torch only, that client gets
    use_libuv=False; a torch with libuv is left as it is."""
    import importlib

    # the module: torch.distributed.rendezvous as an attribute is a function of that name
    rendezvous = importlib.import_module("torch.distributed.rendezvous")

    make_store = rendezvous.TCPStore

    def plain_store(*args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        return make_store(*args, **kwargs)

    rendezvous.TCPStore = plain_store


def tcpstore_kwargs():
    """Keyword arguments for a hand-made TCPStore that follow USE_LIBUV like env:// does."""
    if not _HAS_USE_LIBUV:
        return {}
    return {"use_libuv": os.environ.get("USE_LIBUV", "1") == "1"}


use_plain_store_without_libuv()
