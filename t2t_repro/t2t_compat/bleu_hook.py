"""T2T's ``utils/bleu_hook.py`` for a usr_dir or a script that imports it: its corpus BLEU,
tokenizer and step-file iterator are this project's (``metrics/bleu.py``, ``step_files.py``),
with T2T's signatures and return types (``compute_bleu`` a ``np.float32`` in [0, 1],
``bleu_wrapper`` uncased by default, ``stepfiles_iterator`` yielding ``StepFile`` tuples,
``bleu_score`` the in-graph approximate BLEU of argmax ids that the trainer reports as
``approx_bleu_score``: ``metrics/bleu.py``, ``approx_bleu``)."""

from __future__ import annotations

import collections
import glob
import os
import re
from collections.abc import Iterator, Sequence

import numpy as np

from t2t_repro import step_files
from t2t_repro.metrics import bleu as _bleu

StepFile = collections.namedtuple("StepFile", "filename mtime ctime steps")


def bleu_score(predictions, labels, **unused_kwargs):
    """T2T's metric fn: (the batch's approximate BLEU, weight 1.0) of the argmax ids of
    ``predictions`` [B, L, 1, 1, V] against ``labels`` [B, L, 1, 1], padding included."""
    import tensorflow as tf

    del unused_kwargs
    outputs = tf.squeeze(tf.argmax(predictions, axis=-1, output_type=tf.int32), axis=[-1, -2])
    labels = tf.squeeze(labels, axis=[-1, -2])
    bleu = tf.numpy_function(_bleu.approx_bleu, [outputs, labels], tf.float32, stateful=False)
    return bleu, tf.constant(1.0)


def compute_bleu(
    reference_corpus: Sequence[Sequence],
    translation_corpus: Sequence[Sequence],
    max_order: int = 4,
    use_bp: bool = True,
) -> np.float32:
    """T2T's corpus BLEU in [0, 1] of token (or id) sequences, as ``np.float32``."""
    return np.float32(_bleu.compute_bleu(reference_corpus, translation_corpus, max_order, use_bp))


class UnicodeRegex:
    """T2T's punctuation and symbol patterns of ``bleu_tokenize``."""

    def __init__(self) -> None:
        self.nondigit_punct_re, self.punct_nondigit_re, self.symbol_re = (
            _bleu._t2t_tokenizer_patterns()
        )


uregex = UnicodeRegex()


def bleu_tokenize(string: str) -> list[str]:
    """T2T's mteval-v14 international tokenization."""
    return _bleu.bleu_tokenize(string)


def bleu_wrapper(ref_filename: str, hyp_filename: str, case_sensitive: bool = False) -> np.float32:
    """T2T's BLEU of two files, line by line (lowercased unless ``case_sensitive``)."""
    from t2t_repro.metrics.bleu_per_step import read_translation_pair

    hyps, refs, _ = read_translation_pair(hyp_filename, ref_filename)
    if not case_sensitive:
        refs, hyps = [r.lower() for r in refs], [h.lower() for h in hyps]
    return compute_bleu([bleu_tokenize(r) for r in refs], [bleu_tokenize(h) for h in hyps])


def stepfiles_iterator(
    path_prefix: str,
    wait_minutes: float = 0,
    min_steps: int = 0,
    path_suffix: str = ".index",
    sleep_sec: float = 10,
) -> Iterator[StepFile]:
    """T2T's: the files ``path_prefix*-<steps><path_suffix>``, oldest step first, then each
    new one until none came for ``wait_minutes`` (``step_files.follow_steps``)."""
    if not path_prefix.endswith(os.sep) and os.path.isdir(path_prefix):
        path_prefix += os.sep
    pattern = re.compile(r"-(\d+)$")

    def listing() -> list[step_files.StepFile]:
        found = []
        for name in glob.glob(glob.escape(path_prefix) + "*-[0-9]*" + path_suffix):
            base = name[: -len(path_suffix)] if path_suffix else name
            match = pattern.search(base)
            if match and int(match.group(1)) >= min_steps and os.path.exists(name):
                found.append(
                    step_files.StepFile(
                        base, os.path.getmtime(name), int(match.group(1)), os.path.getctime(name)
                    )
                )
        return sorted(found, key=lambda f: f.step)

    del sleep_sec  # step_files polls every POLL_SECONDS (T2T's default 10)
    for found in step_files.follow_steps(listing, wait_minutes, min_steps, describe=path_prefix):
        yield StepFile(found.path, found.mtime, found.ctime or found.mtime, found.step)
