"""Runs beam or greedy search over a model's cached ``decode_step``
(``tensor2tensor/models/transformer.py``, ``_fast_decode``).

The model is encoded once per batch; the search then calls ``model.decode_step`` one position
at a time. The maximum output length is T2T's: the batch's padded input length (EOS
included) plus ``extra_length``. The cache and the search loop have static shapes, so each
input length would need its own traced (and XLA-compiled) function: ``Searcher`` instead pads
a batch with PAD up to the next of a few ``LENGTH_BUCKETS`` and passes the true decode
length as a tensor. The padding is masked everywhere (encoder attention, pad remover,
encoder-decoder bias) and the search stops at T2T's decode length, so the ids are the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import tensorflow as tf

from t2t_repro.decoding import uncached
from t2t_repro.decoding.beam_search import beam_search
from t2t_repro.decoding.constant_cache import hoist_constants
from t2t_repro.decoding.constraints import SearchConstraint, constrained_step
from t2t_repro.decoding.greedy import greedy_search
from t2t_repro.decoding.sampling import batch_occurrences, make_sampler, row_keys
from t2t_repro.hparams_lib.sizes import logits_width
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

LENGTH_BUCKETS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def bucket_length(length: int, buckets: tuple[int, ...]) -> int:
    """The smallest bucket that holds ``length``; ``length`` itself past the largest."""
    return next((b for b in sorted(buckets) if b >= length), length)


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
    # An id the model never emits (e.g. -1) forces every step (benchmarks, like the peers').
    eos_id: int = EOS_ID
    # Input lengths are rounded up to one of these (longer ones keep their own length), so
    # a long file traces a few functions instead of one per length. () = one per length.
    length_buckets: tuple[int, ...] = LENGTH_BUCKETS
    # T2T's hparams sampling_method / sampling_temp / sampling_keep_top_k: with beam_size 1,
    # "random" samples instead of the argmax (decoding/sampling.py); temperature 0 = argmax.
    sampling_method: str = "argmax"
    sampling_temp: float = 1.0
    sampling_keep_top_k: int = -1
    # Outputs per input (decode hparam num_samples): the search's second axis, as beams.
    num_samples: int = 1
    random_seed: int = 0  # the samples' seed (--random_seed)

    @property
    def samples(self) -> bool:
        """Whether the search draws tokens (else beam search or the plain argmax)."""
        return self.beam_size == 1 and self.sampling_method == "random" and self.sampling_temp > 0


def search(
    model,
    config: SearchConfig,
    inputs: tf.Tensor,
    decode_length,
    constraint: SearchConstraint | None = None,
    buffer_length: int | None = None,
    constraint_inputs: tuple = (),
    occurrences: tf.Tensor | None = None,
    stop_early: tf.Tensor | None = None,
):
    """(ids [B, beams, buffer_length + 1], scores [B, beams]) for ``inputs`` [B, L].

    ``decode_length`` may be a Python int (static shapes, XLA-compilable) or a scalar tensor
    (one graph for every input length, as the SavedModel export needs). ``buffer_length``
    (default ``decode_length``), if given, is a static length at least ``decode_length`` that
    sizes the cache and the output; the search still runs ``decode_length`` steps and the
    columns after them stay 0. ``constraint`` (``decoding/constraints.py``), if given,
    restricts the search; ``constraint_inputs`` are its extra inputs for the batch.
    ``occurrences`` [B]: when sampling, how many earlier lines of the file have each row's
    ids, so repeated lines draw their own samples (None: counted within the batch).
    ``stop_early``: a scalar bool tensor for the beam search's stop rule (None: the rule
    ``config.return_beams`` asks for), so one traced search serves both.
    """
    max_steps = decode_length
    decode_length = decode_length if buffer_length is None else buffer_length
    samples = max(1, config.num_samples) if config.beam_size == 1 else 1
    if config.use_cache:
        cache = model.init_cache(inputs, decode_length)
        if samples > 1:  # encoded once; each input's rows follow one another, as beams
            cache = tf.nest.map_structure(lambda t: repeat_rows(t, samples), cache)
        step, cache = hoist_constants(
            model.decode_step,
            cache,
            getattr(model, "CONSTANT_CACHE_KEYS", ()),
            config.beam_size,
        )
    else:
        cache = uncached.init_state(model, repeat_rows(inputs, samples))
        step = uncached.make_step(model, static_shapes=config.use_xla)
    batch_size = tf.shape(inputs)[0]
    if samples > 1:
        constraint_inputs = tuple(repeat_rows(x, samples) for x in constraint_inputs)
    constrain_fn = None
    if constraint is not None:
        step, cache, constrain_fn = constrained_step(
            step, constraint, cache, constraint_inputs, max_steps
        )
    initial_ids = tf.zeros([batch_size * samples], tf.int32)
    if config.beam_size == 1:
        choose_fn = None
        if config.samples:
            choose_fn = make_sampler(
                config.random_seed,
                repeat_rows(row_keys(inputs, _occurrences(inputs, occurrences)), samples),
                tf.tile(tf.range(samples), [batch_size]),
                config.sampling_temp,
                config.sampling_keep_top_k,
            )
        ids, log_probs = greedy_search(
            step,
            initial_ids,
            decode_length,
            cache,
            eos_id=config.eos_id,
            constrain_fn=constrain_fn,
            max_steps=max_steps,
            choose_fn=choose_fn,
        )
        return (
            tf.reshape(ids, [batch_size, samples, -1]),
            tf.reshape(log_probs, [batch_size, samples]),
        )
    return beam_search(
        step,
        initial_ids,
        config.beam_size,
        decode_length,
        logits_width(model.hparams),  # vocab_divisor's padded ids too, as T2T's _fast_decode
        config.alpha,
        states=cache,
        eos_id=config.eos_id,
        stop_early=not config.return_beams if stop_early is None else stop_early,
        constrain_fn=constrain_fn,
        max_steps=max_steps,
        # In place under XLA only (there a reordered cache costs an extra copy per step).
        position_keys=getattr(model, "POSITION_CACHE_KEYS", ()) if config.use_xla else (),
    )


def _occurrences(inputs: tf.Tensor, given) -> tf.Tensor:
    return batch_occurrences(inputs) if given is None else tf.convert_to_tensor(given)


def repeat_rows(x: tf.Tensor, times: int) -> tf.Tensor:
    """[B, ...] -> [B * times, ...], each row ``times`` times in a row."""
    return x if times == 1 else tf.repeat(x, times, axis=0)


class Searcher:
    """``searcher(inputs [B, L]) -> (ids [B, beams, L+extra+1], scores [B, beams])``; with a
    ``SearchConstraint``, ``searcher(inputs, *constraint_inputs)`` (inputs with a position
    axis, [B, L, ...], are padded like ``inputs``).

    One traced function per length bucket (``SearchConfig.length_buckets``) and batch size."""

    def __init__(
        self, model, config: SearchConfig, constraint: SearchConstraint | None = None
    ) -> None:
        self.model = model
        self.config = config
        self.constraint = constraint
        self._functions: dict[int, object] = {}

    def with_config(self, **changes) -> Searcher:
        """The same model and constraint searched with ``changes`` to the configuration
        (``SearchConfig``'s fields), in functions of its own."""
        return Searcher(self.model, replace(self.config, **changes), self.constraint)

    @property
    def traces(self) -> int:
        """Functions TensorFlow has traced so far (each one also an XLA compile)."""
        return sum(f.experimental_get_tracing_count() for f in self._functions.values())

    def _search_fn(self, bucket: int):
        if bucket not in self._functions:
            buffer_length = bucket + self.config.extra_length

            def fn(inputs, decode_length, occurrences, *extra):
                return search(
                    self.model,
                    self.config,
                    inputs,
                    decode_length,
                    self.constraint,
                    buffer_length,
                    constraint_inputs=extra,
                    occurrences=occurrences,
                )

            # The searches are explicit tf.while_loops: autograph (a costly rewrite of every
            # function the trace calls) would change nothing.
            self._functions[bucket] = tf.function(
                fn, jit_compile=self.config.use_xla, autograph=False
            )
        return self._functions[bucket]

    def __call__(self, inputs, *constraint_inputs, occurrences=None) -> tuple[tf.Tensor, tf.Tensor]:
        """``occurrences`` [B]: see ``search`` (only sampling reads them)."""
        inputs = np.asarray(inputs, np.int32)
        length = inputs.shape[1]
        bucket = bucket_length(length, self.config.length_buckets)

        def padded(x):  # [B, L, ...] -> [B, bucket, ...]; [B] as it is
            x = np.asarray(x)
            if x.ndim < 2:
                return tf.constant(x)
            return tf.constant(np.pad(x, [[0, 0], [0, bucket - length]] + [[0, 0]] * (x.ndim - 2)))

        decode_length = length + self.config.extra_length  # T2T's, from the unpadded length
        if occurrences is not None and self.config.samples:
            occurrences = tf.constant(np.asarray(occurrences, np.int32))
        else:  # a Python None: one trace for every batch
            occurrences = None
        ids, scores = self._search_fn(bucket)(
            padded(inputs),
            tf.constant(decode_length),
            occurrences,
            *map(padded, constraint_inputs),
        )
        return ids[:, :, : decode_length + 1], scores
