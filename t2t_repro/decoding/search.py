"""Runs beam or greedy search over a model's cached ``decode_step`` (digest §3.2).

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


class Searcher:
    """``searcher(inputs [B, L]) -> (ids [B, beams, L+extra+1], scores [B, beams])``."""

    def __init__(self, model, config: SearchConfig) -> None:
        self.model = model
        self.config = config
        self._functions: dict[int, object] = {}

    def _search_fn(self, input_length: int):
        if input_length not in self._functions:
            cfg = self.config
            decode_length = input_length + cfg.extra_length
            vocab_size = self.model.hparams.target_vocab_size

            def search(inputs):
                if cfg.use_cache:
                    step = self.model.decode_step
                    cache = self.model.init_cache(inputs, decode_length)
                else:
                    cache = uncached.init_state(self.model, inputs)
                    step = uncached.make_step(self.model, static_shapes=cfg.use_xla)
                initial_ids = tf.zeros([tf.shape(inputs)[0]], tf.int32)
                if cfg.beam_size == 1:
                    ids, log_probs = greedy_search(step, initial_ids, decode_length, cache)
                    return ids[:, None], log_probs[:, None]
                return beam_search(step, initial_ids, cfg.beam_size, decode_length, vocab_size,
                                   cfg.alpha, states=cache)

            self._functions[input_length] = tf.function(search, jit_compile=cfg.use_xla)
        return self._functions[input_length]

    def __call__(self, inputs) -> tuple[tf.Tensor, tf.Tensor]:
        inputs = tf.convert_to_tensor(inputs, tf.int32)
        return self._search_fn(int(inputs.shape[1]))(inputs)
