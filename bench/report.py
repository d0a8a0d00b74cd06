"""How every benchmark reports: JSON on stdout, and atomically to ``--out`` when given."""

import json
import os

from t2t_repro import atomic_write


def write_text_atomically(path: str, text: str) -> None:
    """A report file (its directory created), written with t2t_repro's atomic write."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write.write_text_atomically(path, text)


def cpu_model() -> str:
    """The CPU's model name as ``lscpu`` shows it (from /proc/cpuinfo), for every figure."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def emit(report: dict, out: str = "") -> None:
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        write_text_atomically(out, text)


def _events(log_dir: str):
    import glob

    import tensorflow as tf

    for path in sorted(glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))):
        yield from tf.compat.v1.train.summary_iterator(path)


Scalars = list[tuple[float, int, float]]


def _scalars_by_tag(log_dir: str, tags: tuple[str, ...]) -> dict[str, Scalars]:
    """One pass over ``log_dir``'s event files: ``(wall_time, step, value)`` per tag, by step."""
    import tensorflow as tf

    found: dict[str, Scalars] = {tag: [] for tag in tags}
    for event in _events(log_dir):
        for value in event.summary.value:
            if value.tag in found:
                found[value.tag].append(
                    (event.wall_time, event.step, float(tf.make_ndarray(value.tensor)))
                )
    return {tag: sorted(rows, key=lambda row: row[1]) for tag, rows in found.items()}


def event_scalars(log_dir: str, tag: str) -> Scalars:
    """``(wall_time, step, value)`` of every ``tag`` scalar in ``log_dir``'s event files, by
    step."""
    return _scalars_by_tag(log_dir, (tag,))[tag]


def first_event_time(log_dir: str) -> float | None:
    """Wall time of the first event (the file header, written when the trainer started)."""
    times = [event.wall_time for event in _events(log_dir)]
    return min(times) if times else None


def training_stats(train_dir: str) -> dict:
    """Steps reached and mean target tokens/s of a trainer run, from its event files."""
    scalars = _scalars_by_tag(train_dir, ("loss", "tokens_per_sec"))
    losses = scalars["loss"]
    rates = [value for _, _, value in scalars["tokens_per_sec"]]
    return {
        "steps": losses[-1][1] if losses else 0,
        "tokens_per_sec": sum(rates) / len(rates) if rates else 0.0,
    }
