"""``t2t-bleu --translations_dir --event_dir``: T2T's BLEU of every checkpoint's translation as
TensorBoard scalars at that checkpoint's step (``tensor2tensor/bin/t2t_bleu.py``).

The translations are ``t2t-translate-all``'s ``<problem>-<step>`` files. Each is scored with
T2T's ``bleu_wrapper`` number (``metrics/bleu.py``, ``t2t_bleu``: mteval-v14 international
tokens, T2T's ``compute_bleu``) and written under T2T's tags ``BLEU_uncased`` and
``BLEU_cased`` (plus ``--tag_suffix``), dated like the file (a checkpoint's time, which
translate-all gives its translation), so TensorBoard's relative time is the training's.
``last_evaluated_step.txt`` in the event dir records the last step written; the next run
starts after it (T2T's started at it, writing that step twice). With ``report_zero`` (T2T's
default when starting from step 0) a BLEU of 0 at step 0 dated like the oldest file of the
translations dir (translate-all's copy of the run's flags.txt) anchors the time axis.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import uuid
from collections.abc import Callable

from t2t_repro import fileio
from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.data.text_files import DataError, ReadStats, read_lines
from t2t_repro.errors import UserError
from t2t_repro.metrics.bleu import t2t_bleu
from t2t_repro.step_files import follow_steps, numbered_files

LAST_STEP_FILE = "last_evaluated_step.txt"  # T2T's name
VARIANTS = {"both": (False, True), "uncased": (False,), "cased": (True,)}  # case_sensitive


def read_translation_pair(translation: str, reference: str) -> tuple[list[str], list[str], int]:
    """(hypotheses, references, undecodable bytes replaced); one line each, or a DataError."""
    stats = ReadStats()
    for path in (translation, reference):
        if not fileio.isfile(path):
            raise FileNotFoundError(f"{path!r} does not exist.")
    hyps = list(read_lines(translation, stats, drop_carriage_returns=False))
    refs = list(read_lines(reference, stats, drop_carriage_returns=False))
    if len(hyps) != len(refs):
        raise DataError(
            f"{translation} has {len(hyps)} lines but {reference} has {len(refs)}; "
            "BLEU needs one translation per reference line."
        )
    return hyps, refs, stats.replaced_bytes


def tag_names(bleu_variant: str, tag_suffix: str = "") -> list[tuple[str, bool]]:
    """(tag, case_sensitive) per T2T's ``--bleu_variant`` (cased, uncased or both)."""
    if bleu_variant not in VARIANTS:
        raise UserError(
            f"--bleu_variant={bleu_variant!r} with --translations_dir: one of "
            f"{', '.join(VARIANTS)}."
        )
    return [
        (f"BLEU_{'cased' if cased else 'uncased'}{tag_suffix}", cased)
        for cased in VARIANTS[bleu_variant]
    ]


class ScalarEventFile:
    """An ``events.out.tfevents.*`` file of scalar summaries with T2T's ``simple_value`` and a
    given wall time (TensorFlow 2's ``tf.summary`` stamps the current time). Opened at the
    first event; each event is flushed, and a new run writes a new file."""

    def __init__(self, event_dir: str):
        self.event_dir = event_dir
        self.path = ""
        self._writer = None

    def write(self, step: int, wall_time: float, values: dict[str, float]) -> None:
        import tensorflow as tf

        if self._writer is None:
            fileio.makedirs(self.event_dir)
            # Unique, so a run never writes over another's events (TensorBoard reads them all).
            name = f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}"
            self.path = os.path.join(self.event_dir, f"{name}.{uuid.uuid4().hex[:12]}.t2t-bleu")
            self._writer = tf.io.TFRecordWriter(self.path)
            header = tf.compat.v1.Event(wall_time=time.time(), file_version="brain.Event:2")
            self._writer.write(header.SerializeToString())
        summary = tf.compat.v1.Summary(
            value=[tf.compat.v1.Summary.Value(tag=t, simple_value=v) for t, v in values.items()]
        )
        event = tf.compat.v1.Event(wall_time=wall_time, step=step, summary=summary)
        self._writer.write(event.SerializeToString())
        self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def last_evaluated_step(event_dir: str) -> int | None:
    path = os.path.join(event_dir, LAST_STEP_FILE)
    if not fileio.isfile(path):
        return None
    with fileio.open(path, encoding="utf-8") as f:
        text = f.read().strip()
    if not text.isdigit():
        raise UserError(f"{path} holds {text[:40]!r}, not a step; delete it to start over.")
    return int(text)


def bleu_every_step(
    translations_dir: str,
    reference: str,
    event_dir: str,
    *,
    bleu_variant: str = "both",
    tag_suffix: str = "",
    min_steps: int = -1,
    wait_minutes: float = 0,
    report_zero: bool | None = None,
    log: Callable[[str], None] | None = None,
) -> list[tuple[int, dict[str, float]]]:
    """Scores each translation file (step >= ``min_steps``; -1: after the last step recorded
    in ``event_dir``) and writes its scalars; returns (step, {tag: BLEU}) of those written."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    tags = tag_names(bleu_variant, tag_suffix)
    if not fileio.isfile(reference):
        raise FileNotFoundError(f"--reference {reference!r} does not exist.")
    if min_steps == -1:
        last = last_evaluated_step(event_dir)
        min_steps = 0 if last is None else last + 1
    if report_zero is None:
        report_zero = min_steps == 0
    events, results = ScalarEventFile(event_dir), []
    follow = follow_steps(
        lambda: numbered_files(translations_dir),
        wait_minutes,
        min_steps,
        describe=f"translation in {translations_dir}",
        log=log,
    )
    try:
        for translation in follow:
            if report_zero:  # here: the translations dir exists now
                # T2T's: the oldest file's time (os.path.isfile: not a directory's)
                names = fileio.listdir(translations_dir)
                paths = [os.path.join(translations_dir, n) for n in names]
                start = min(fileio.getmtime(p) for p in paths if fileio.isfile(p))
                events.write(0, start, {tag: 0.0 for tag, _ in tags})
                report_zero = False
            hyps, refs, replaced = read_translation_pair(translation.path, reference)
            if replaced:
                log(f"warning: {replaced} undecodable bytes were replaced.")
            values = {tag: t2t_bleu(refs, hyps, case_sensitive=cased) for tag, cased in tags}
            events.write(translation.step, translation.mtime, values)
            write_text_atomically(os.path.join(event_dir, LAST_STEP_FILE), f"{translation.step}\n")
            for (_, cased), value in zip(tags, values.values(), strict=True):  # T2T's lines
                log(f"{translation.path}: BLEU_{'cased' if cased else 'uncased'} = {value:6.2f}")
            results.append((translation.step, values))
    finally:
        events.close()
    if not fileio.isdir(translations_dir):
        raise FileNotFoundError(f"--translations_dir {translations_dir!r} does not exist.")
    if not results:
        log(f"no translation at step >= {min_steps} in {translations_dir}; nothing written.")
    return results
