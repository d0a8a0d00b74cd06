"""The registry and ``sys.modules`` as they were before a test's usr_dirs registered names."""

import sys
from collections.abc import Iterator

from t2t_repro import registry


def restored_registry(usr_names: set[str]) -> Iterator[None]:
    """A fixture's body: after it, the registrations made meanwhile are gone and the usr_dir
    modules of the top-level names ``usr_names`` are unimported (a later import runs them)."""
    saved = {kind: dict(names) for kind, names in registry._REGISTRIES.items()}
    modules = set(sys.modules)
    yield
    for kind, names in saved.items():
        registry._REGISTRIES[kind].clear()
        registry._REGISTRIES[kind].update(names)
    for name in set(sys.modules) - modules:
        if name.split(".")[0] in usr_names:
            del sys.modules[name]
