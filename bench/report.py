"""How every benchmark reports: JSON on stdout, and atomically to ``--out`` when given."""

import json
import os


def write_text_atomically(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def emit(report: dict, out: str = "") -> None:
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        write_text_atomically(out, text)
