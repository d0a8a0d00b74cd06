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


def search(model, config: SearchConfig, inputs: tf.Tensor, decode_length):
    """(ids [B, beams, decode_length + 1], scores [B, beams]) for ``inputs`` [B, L].

    ``decode_length`` may be a Python int (static shapes, XLA-compilable) or a scalar tensor
    (one graph for every input length, as the SavedModel export needs).
    """
    if config.use_cache:
        step = model.decode_step
        cache = model.init_cache(inputs, decode_length)
    else:
        cache = uncached.init_state(model, inputs)
        step = uncached.make_step(model, static_shapes=config.use_xla)
    initial_ids = tf.zeros([tf.shape(inputs)[0]], tf.int32)
    if config.beam_size == 1:
        ids, log_probs = greedy_search(step, initial_ids, decode_length, cache)
        return ids[:, None], log_probs[:, None]
    return beam_search(step, initial_ids, config.beam_size, decode_length,
                       model.hparams.target_vocab_size, config.alpha, states=cache,
                       stop_early=not config.return_beams)


class Searcher:
    """``searcher(inputs [B, L]) -> (ids [B, beams, L+extra+1], scores [B, beams])``."""

    def __init__(self, model, config: SearchConfig) -> None:
        self.model = model
        self.config = config
        self._functions: dict[int, object] = {}

    def _search_fn(self, input_length: int):
        if input_length not in self._functions:
            decode_length = input_length + self.config.extra_length
            self._functions[input_length] = tf.function(
                lambda inputs: search(self.model, self.config, inputs, decode_length),
                jit_compile=self.config.use_xla)
        return self._functions[input_length]

    def __call__(self, inputs) -> tuple[tf.Tensor, tf.Tensor]:
        inputs = tf.convert_to_tensor(inputs, tf.int32)
        return self._search_fn(int(inputs.shape[1]))(inputs)
