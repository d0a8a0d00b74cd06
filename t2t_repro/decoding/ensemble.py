"""Decoding with several models at once: their next-token probabilities are averaged.

Not in T2T. Independently trained models (other seeds, or other settings on the same problem)
make different mistakes, and on small data, where one model stops improving long before the
compute budget is spent (the parsing recipe, ``docs/parsing.md``), two models decoded together
beat one. The ensemble has the interface the searches use (``init_cache``, ``decode_step``,
``CONSTANT_CACHE_KEYS``, ``hparams``), so beam and greedy search, search constraints and XLA
work unchanged. Each step returns ``log(mean_k p_k)`` over the members (the usual ensemble of
neural MT systems: probabilities, not logits, are averaged), which is already a normalised
log-distribution; the search's own log-softmax leaves it as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorflow as tf

from t2t_repro.decoding.beam_search import log_prob_from_logits
from t2t_repro.errors import UserError
from t2t_repro.hparams_lib.sizes import logits_width


class EnsembleError(UserError, ValueError):
    """Members that cannot be decoded together."""


def member_key(index: int) -> str:
    return f"member_{index}"


class Ensemble:
    """``Ensemble([model_a, model_b])``: decodes like one model, averaging probabilities."""

    def __init__(self, models: Sequence) -> None:
        if len(models) < 2:
            raise EnsembleError("an ensemble needs at least two models.")
        first = models[0].hparams
        for k, model in enumerate(models[1:], start=1):
            for name in ("input_vocab_size", "target_vocab_size", "has_input"):
                if model.hparams.get(name, True) != first.get(name, True):
                    raise EnsembleError(
                        f"ensemble member {k + 1} has {name}={model.hparams.get(name)}, "
                        f"member 1 has {first.get(name)}: every member must be trained on "
                        "the same problem and vocabulary."
                    )
            if logits_width(model.hparams) != logits_width(first):  # vocab_divisor's padding
                raise EnsembleError(
                    f"ensemble member {k + 1} has {logits_width(model.hparams)} logits, member "
                    f"1 has {logits_width(first)} (another vocab_divisor): the members' "
                    "probabilities are averaged id by id, over one width."
                )
        self.models = list(models)
        # The decoders read the vocabulary sizes from here (the first member's; the input bound
        # is the smallest over self.models: LineDecoder).
        self.hparams = first
        self.CONSTANT_CACHE_KEYS = tuple(
            sorted({key for m in models for key in getattr(m, "CONSTANT_CACHE_KEYS", ())})
        )

    def init_cache(self, inputs: tf.Tensor, decode_length: int) -> dict:
        """Every member encodes ``inputs``; their caches live side by side."""
        return {
            member_key(k): model.init_cache(inputs, decode_length)
            for k, model in enumerate(self.models)
        }

    def decode_step(self, ids: tf.Tensor, i, cache: dict) -> tuple[tf.Tensor, dict]:
        """log of the members' mean next-token probability [N, V] (float32), and the cache."""
        log_probs, new_cache = [], {}
        for k, model in enumerate(self.models):
            logits, new_cache[member_key(k)] = model.decode_step(ids, i, cache[member_key(k)])
            log_probs.append(log_prob_from_logits(tf.cast(logits, tf.float32)))
        mean = tf.reduce_logsumexp(tf.stack(log_probs), axis=0) - math.log(len(self.models))
        return mean, new_cache
