"""Runs beam or greedy search over a model's cached ``decode_step``
(``tensor2tensor/models/transformer.py``, ``_fast_decode``).

The model is encoded once per batch; the search then calls ``model.decode_step`` one position
at a time. The maximum output length is T2T's: the batch's padded input length (EOS
included) plus ``extra_length``. Each distinct padded length gets its own traced (optionally
XLA-compiled) function, because the cache and the search loop have static shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

import tensorflow as tf

from t2t_repro.decoding import uncached
from t2t_repro.decoding.beam_search import beam_search
from t2t_repro.decoding.greedy import greedy_search
from t2t_repro.decoding.tree_constraint import TreeConstraint, constrained_step


@dataclass(frozen=True)
class SearchConfig:
    beam_size: int = 4
    alpha: float = 0.6
    extra_length: int = 100
    use_xla: bool = False
    use_cache: bool = True  # False: rerun the decoder on the whole prefix (benchmarks, checks)
    # All beams are wanted: as T2T (models/transformer.py, fast_decode: stop_early=(top_beams
    # == 1)) the search then runs until the worst finished beam beats every alive one.
    return_beams: bool = False


def search(model, config: SearchConfig, inputs: tf.Tensor, decode_length, tree=None):
    """(ids [B, beams, decode_length + 1], scores [B, beams]) for ``inputs`` [B, L].

    ``decode_length`` may be a Python int (static shapes, XLA-compilable) or a scalar tensor
    (one graph for every input length, as the SavedModel export needs). ``tree``, if given, is
    ``(TreeConstraint, word_classes [B, L], num_words [B])``: tree-constrained search.
    """
    if config.use_cache:
        step = model.decode_step
        cache = model.init_cache(inputs, decode_length)
    else:
        cache = uncached.init_state(model, inputs)
        step = uncached.make_step(model, static_shapes=config.use_xla)
    constrain_fn = None
    if tree is not None:
        constraint, word_classes, num_words = tree
        step, cache, constrain_fn = constrained_step(
            step, constraint, cache, word_classes, num_words, decode_length
        )
    initial_ids = tf.zeros([tf.shape(inputs)[0]], tf.int32)
    if config.beam_size == 1:
        ids, log_probs = greedy_search(
            step, initial_ids, decode_length, cache, constrain_fn=constrain_fn
        )
        return ids[:, None], log_probs[:, None]
    return beam_search(
        step,
        initial_ids,
        config.beam_size,
        decode_length,
        model.hparams.target_vocab_size,
        config.alpha,
        states=cache,
        stop_early=not config.return_beams,
        constrain_fn=constrain_fn,
    )


class Searcher:
    """``searcher(inputs [B, L]) -> (ids [B, beams, L+extra+1], scores [B, beams])``; with a
    ``TreeConstraint``, ``searcher(inputs, word_classes [B, L], num_words [B])``."""

    def __init__(
        self, model, config: SearchConfig, constraint: TreeConstraint | None = None
    ) -> None:
        self.model = model
        self.config = config
        self.constraint = constraint
        self._functions: dict[int, object] = {}

    def _search_fn(self, input_length: int):
        if input_length not in self._functions:
            decode_length = input_length + self.config.extra_length
            if self.constraint is None:

                def fn(inputs):
                    return search(self.model, self.config, inputs, decode_length)
            else:

                def fn(inputs, classes, words):
                    tree = (self.constraint, classes, words)
                    return search(self.model, self.config, inputs, decode_length, tree=tree)

            self._functions[input_length] = tf.function(fn, jit_compile=self.config.use_xla)
        return self._functions[input_length]

    def __call__(self, inputs, word_classes=None, num_words=None) -> tuple[tf.Tensor, tf.Tensor]:
        inputs = tf.convert_to_tensor(inputs, tf.int32)
        tree_inputs = (
            ()
            if self.constraint is None
            else (
                tf.convert_to_tensor(word_classes, tf.int32),
                tf.convert_to_tensor(num_words, tf.int32),
            )
        )
        return self._search_fn(int(inputs.shape[1]))(inputs, *tree_inputs)
