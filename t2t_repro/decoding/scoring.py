"""``t2t-decoder --score_file``: the teacher-forced score of given source/target pairs
(``tensor2tensor/bin/t2t_decoder.py``, ``score_file``).

Each line of the file is ``source<TAB>target``. Both sides are normalised as the decoder's
lines (``data/source_lines.py``), encoded and given EOS; the model runs teacher-forced
(no dropout, no label smoothing: T2T builds it in EVAL mode, which zeroes both) and the
per-token cross entropy is ``losses.token_losses``, the one the eval loss sums. What a line's
score is (``SCORE_TYPES``):

- ``loss`` (T2T's ``losses["training"]``): the mean cross entropy of the target's tokens, EOS
  included, i.e. ``-log p(target | source) / tokens``, times the problem's ``loss_multiplier``
  (T2T's ``T2TModel._loss_single``: 2 for a character-level problem), written ``%.6f``;
- ``log_prob``: ``log p(target | source)``, the sum of the tokens' log-probabilities.

One score a line, in input order. A line that cannot be scored (no tab or more than one,
an empty side, bytes that are not UTF-8) gets ``nan`` in its place, so the output stays
aligned with the input, and one line on stderr saying which and why; T2T stops at a line
with two tabs and, for a model with inputs, reads a line without one as a target alone (with
the previous line's source). A language model (no inputs) scores a line as its target, or
the text after its one tab, as T2T's ``score_file`` reads it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.losses import token_losses
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

SCORE_TYPES = ("loss", "log_prob")
BAD_LINE_SCORE = float("nan")


def parse_pair(raw: bytes, has_input: bool = True) -> tuple[str, str]:
    """(source, target) of one raw line; ValueError saying what is wrong with it. Without
    inputs (a language model) the source is "" and the target the line or its second field."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not valid UTF-8 (byte {e.start + 1})") from None
    sides = text.rstrip("\r\n").split("\t")
    if not has_input and len(sides) <= 2:
        target = normalize_source_line(sides[-1])
        if not target:
            raise ValueError("empty target")
        return "", target
    if len(sides) != 2:
        found = "no tab" if len(sides) == 1 else f"{len(sides) - 1} tabs"
        raise ValueError(f"{found}; a line is source<TAB>target")
    source, target = (normalize_source_line(side) for side in sides)
    for name, side in (("source", source), ("target", target)):
        if not side:
            raise ValueError(f"empty {name}")
    return source, target


class PairScorer:
    """``scorer(raw_lines) -> [score or nan]``, the model run on ``batch_size`` pairs at once
    (pairs of similar lengths together)."""

    def __init__(
        self,
        model,
        input_encoder,
        target_encoder,
        batch_size: int = 32,
        score_type: str = "loss",
        log: Callable[[str], None] = print,
        has_input: bool = True,
        loss_multiplier: float = 1.0,
    ) -> None:
        """``has_input``: the model's (False: a language model); ``loss_multiplier``: the
        problem's, which T2T's loss (the ``loss`` score) is multiplied by."""
        if score_type not in SCORE_TYPES:
            raise ValueError(f"score_type {score_type!r}: one of {', '.join(SCORE_TYPES)}")
        self.model = model
        self.input_encoder = input_encoder
        self.target_encoder = target_encoder
        self.batch_size = max(1, batch_size)
        self.score_type = score_type
        self.log = log
        self.has_input = has_input
        self.loss_multiplier = loss_multiplier
        spec = tf.TensorSpec([None, None], tf.int32)
        # No tensor control flow (the model's forward is traced as written in training and
        # evaluation too): autograph's rewrite of the model's code is not needed.
        self._sums = tf.function(self._token_sums, input_signature=[spec, spec], autograph=False)

    def _token_sums(self, inputs: tf.Tensor, targets: tf.Tensor) -> tf.Tensor:
        """[B] sums of the targets' token cross entropies (PAD not counted)."""
        logits = self.model({"inputs": inputs, "targets": targets}, training=False)
        weights = tf.cast(targets > 0, tf.float32)
        return tf.reduce_sum(token_losses(logits, targets, 0.0) * weights, axis=1)

    def __call__(self, raw_lines: Sequence[bytes], name: str = "the score file") -> list[float]:
        scores = [BAD_LINE_SCORE] * len(raw_lines)
        pairs = []
        for index, raw in enumerate(raw_lines):
            try:
                source, target = parse_pair(raw, self.has_input)
            except ValueError as e:
                self.log(f"line {index + 1} of {name}: {e}; its score is nan.")
                continue
            # a language model reads no source: EOS alone stands for it
            source_ids = (self.input_encoder.encode(source) if source else []) + [EOS_ID]
            target_ids = self.target_encoder.encode(target) + [EOS_ID]
            pairs.append((index, source_ids, target_ids))
        pairs.sort(key=lambda p: (-len(p[2]), -len(p[1])))
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start : start + self.batch_size]
            sums = self._sums(_padded([p[1] for p in chunk]), _padded([p[2] for p in chunk]))
            for (index, _, target_ids), total in zip(chunk, sums.numpy(), strict=True):
                total = float(total)
                if self.score_type == "log_prob":
                    scores[index] = -total
                else:
                    scores[index] = total / len(target_ids) * self.loss_multiplier
        return scores


def _padded(rows: list[list[int]]) -> np.ndarray:
    out = np.zeros([len(rows), max(len(r) for r in rows)], np.int32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def format_score(score: float) -> str:
    """T2T's ``%.6f``; ``nan`` marks a line that could not be scored."""
    return "nan" if math.isnan(score) else f"{score:.6f}"
