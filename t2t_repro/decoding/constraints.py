"""Constrained search: what a problem hands the searches to restrict their choices.

Not T2T (its searches are unconstrained). A problem that restricts its outputs (the WSJ
problems' tree constraint, ``parsing/tree_constraint.py``) returns a ``SearchConstraint`` from
``Problem.search_constraint``; the decoder, the dev decodes and the exporter pass it to the
searches without knowing what it checks. It brings its own per-example inputs: built on the
host from a batch's id rows and source lines (``batch_inputs``), or in the graph from the
source strings (``graph_inputs``, for the SavedModel). Inputs with a position axis are
[B, L, ...] and get padded with the ids to the search's length bucket.

In the search, the constraint's state travels next to the model's cache and is gathered with
the beams (``constrained_step``). After each model step the constraint says which tokens are
allowed (``allowed_next``) and the search masks the rest with its minus infinity
(``mask_log_probs``): the constraint never touches scores, so it needs nothing of this package
and may live with its task.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.decoding.beam_search import INF

NEG_INF = -INF  # the searches' minus infinity (T2T beam_search.py's INF = 1e7)


class SearchConstraint:
    """The interface (subclass it and override what the task needs)."""

    def batch_inputs(
        self, rows: Sequence[Sequence[int]], lines: Sequence[str] | None, length: int
    ) -> tuple[np.ndarray, ...]:
        """Host side: the extra inputs for id ``rows`` (EOS included) padded to ``length``;
        ``lines`` are their source lines when known (None when decoding ids)."""
        return ()

    def export_resources(self) -> list:
        """Trackable objects ``graph_inputs`` uses (tables); the export keeps them."""
        return []

    def graph_inputs(self, sources: tf.Tensor, inputs: tf.Tensor) -> tuple[tf.Tensor, ...]:
        """In the graph: the extra inputs for ``sources`` [B] strings whose ids are
        ``inputs`` [B, L] (the exported model's)."""
        return ()

    def initial_state(self, *extra: tf.Tensor) -> dict:
        """The per-example state for the batch, from the extra inputs."""
        raise NotImplementedError

    def allowed_next(self, ids: tf.Tensor, i, state: dict, decode_length) -> tuple:
        """(allowed [N, V] bool, state): applies the token of step i-1 (column i of ``ids``)
        to ``state`` and says which tokens may come at step i."""
        raise NotImplementedError

    # Whether the allowed tokens' log-probabilities are renormalised to sum to one.
    renormalize = False

    def mask(self, log_probs: tf.Tensor, allowed: tf.Tensor) -> tf.Tensor:
        """The log-probs [N, V] the search goes on with (``mask_log_probs`` by default)."""
        return mask_log_probs(log_probs, allowed, self.renormalize)


def mask_log_probs(log_probs: tf.Tensor, allowed: tf.Tensor, renormalize: bool) -> tf.Tensor:
    """``log_probs`` [N, V] with what is not ``allowed`` pushed down by ``NEG_INF``; with
    ``renormalize``, the allowed ones renormalised over themselves (locally normalised)."""
    if renormalize:
        masked = tf.where(allowed, log_probs, NEG_INF)
        return masked - tf.reduce_logsumexp(masked, axis=-1, keepdims=True)
    return tf.where(allowed, log_probs, log_probs + NEG_INF)


def over_width(allowed: tf.Tensor, log_probs: tf.Tensor) -> tf.Tensor:
    """``allowed`` [N, V] over the logits' width: a constraint written over the problem's
    vocabulary does not allow the ids ``vocab_divisor`` pads it with (they have no text)."""
    width, have = log_probs.shape[-1], allowed.shape[-1]
    if width is None or have is None or width <= have:
        return allowed
    return tf.pad(allowed, [[0, 0], [0, width - have]])


def constrained_step(step, constraint: SearchConstraint, model_cache, extra, decode_length):
    """(step, states, constrain_fn) for a search: the model's cache and the constraint's
    state travel together as ``{"model": ..., "constraint": ...}``."""

    def wrapped_step(ids, i, states):
        logits, cache = step(ids, i, states["model"])
        return logits, {"model": cache, "constraint": states["constraint"]}

    def constrain_fn(log_probs, ids, i, states):
        allowed, state = constraint.allowed_next(ids, i, states["constraint"], decode_length)
        allowed = over_width(allowed, log_probs)
        mask = getattr(constraint, "mask", None)  # a constraint need not subclass the interface
        if mask is None:
            masked = mask_log_probs(log_probs, allowed, constraint.renormalize)
        else:
            masked = mask(log_probs, allowed)
        return masked, {"model": states["model"], "constraint": state}

    states = {"model": model_cache, "constraint": constraint.initial_state(*extra)}
    return wrapped_step, states, constrain_fn
