"""Refuses, in one line, a collective issued inside work only the chief does.

Why: while the chief works alone (``chief_work.py``: its checkpoint write, dev decodes, split
decodes), the other workers wait in polls that a thread of the chief answers. A collective
the chief's work issued would have no partner: it would wait until
``--collective_timeout_secs`` and then blame a peer that did nothing wrong (or wait forever
with 0), and it would shift the keys of every later collective. So, in the thread that runs
chief-only work, TensorFlow's collective ops (``tensorflow/python/ops/collective_ops.py``:
every reduce, gather, broadcast of a ``tf.distribute`` strategy is made there, eagerly or
when a function is traced) and calls of traced functions whose graph holds a collective op
raise ``ChiefOnlyCollectiveError``. Other threads (the chief's poll-answering thread) are
not affected, nor is anything outside chief-only work.

Not seen: a collective issued through ``gen_collective_ops`` directly, which no strategy does.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator

from t2t_repro.training.run_setup import TrainingError

_LOCAL = threading.local()
_INSTALLED = []
# The graph ops that exchange tensors between workers (CollectiveReduceV2, CollectiveGatherV2,
# CollectiveBcastSendV2, CollectiveAllToAllV3, ...).
_PREFIX = "Collective"
_NOT_EXCHANGES = ("CollectiveAssignGroupV2",)
_OPS = (
    "all_reduce",
    "all_reduce_v2",
    "all_reduce_v3",
    "all_gather",
    "all_gather_v2",
    "broadcast_send",
    "broadcast_send_v2",
    "broadcast_recv",
    "broadcast_recv_v2",
    "all_to_all_v2",
    "all_to_all_v3",
)


class ChiefOnlyCollectiveError(TrainingError):
    """Chief-only work issued a collective that the other workers would never join."""


@contextlib.contextmanager
def chief_only(stage: str) -> Iterator[None]:
    """Refuses collectives in this thread while it runs the chief's ``stage`` alone."""
    install()
    outer = getattr(_LOCAL, "stage", None)
    _LOCAL.stage, _LOCAL.refused = stage, None
    try:
        yield
    except Exception:
        if _LOCAL.refused is not None:  # the refusal itself, not what tracing wrapped it in
            raise _LOCAL.refused from None
        raise
    finally:
        _LOCAL.stage = outer


def install() -> None:
    """Wraps TensorFlow's collective ops and function calls once (cheap outside chief work:
    one thread-local read)."""
    if _INSTALLED:
        return
    from tensorflow.python.eager.polymorphic_function import concrete_function
    from tensorflow.python.ops import collective_ops

    for name in _OPS:
        if hasattr(collective_ops, name):
            setattr(collective_ops, name, _refusing(getattr(collective_ops, name), name))
    call_flat = concrete_function.ConcreteFunction._call_flat
    has_collective: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def guarded_call_flat(self, *args, **kwargs):
        stage = getattr(_LOCAL, "stage", None)
        if stage is not None:
            if self not in has_collective:
                has_collective[self] = _collective_in(self)
            if has_collective[self]:
                raise _refusal(stage, f"{has_collective[self]} in {self.name}")
        return call_flat(self, *args, **kwargs)

    concrete_function.ConcreteFunction._call_flat = guarded_call_flat
    _INSTALLED.append(True)


def _refusing(op, name: str):
    def refusing(*args, **kwargs):
        stage = getattr(_LOCAL, "stage", None)
        if stage is not None:
            raise _refusal(stage, f"collective_ops.{name}")
        return op(*args, **kwargs)

    return refusing


def _collective_in(function) -> str:
    """The first collective op in ``function``'s graph or the functions it calls ("": none)."""
    try:
        graph_def = function.graph.as_graph_def()
    except Exception:  # noqa: BLE001 (a graph that cannot be read: the call goes on)
        return ""
    nodes = list(graph_def.node)
    for f in graph_def.library.function:
        nodes.extend(f.node_def)
    for node in nodes:
        if node.op.startswith(_PREFIX) and node.op not in _NOT_EXCHANGES:
            return node.op
    return ""


def _refusal(stage: str, what: str) -> ChiefOnlyCollectiveError:
    _LOCAL.refused = ChiefOnlyCollectiveError(
        f"the chief's {stage} issued a collective ({what}) that the other workers, waiting "
        "for the chief, would never join; the cluster stops instead of hanging. Work only the "
        "chief does must not reduce, gather or broadcast (t2t_repro/training/cluster/"
        "chief_work.py): this is a bug of the code that runs there (t2t_repro's, or a "
        "--t2t_usr_dir's); report it."
    )
    return _LOCAL.refused
