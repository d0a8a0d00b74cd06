"""T2T's scheduled sampling: the decoder conditioned on a mix of gold and sampled tokens.

T2T (``utils/t2t_model.py``, ``T2TModel.maybe_scheduled_sampling``) runs it in training only,
after the usual forward pass, when ``scheduled_sampling_prob`` is 1 (it asserts 0 or 1):

* ``parallel`` (T2T's default): for pass ``i`` of ``scheduled_sampling_num_passes``, a token
  is drawn at every position from the previous pass's logits (``tf.multinomial``; the first
  pass's logits are the usual gold-conditioned ones), each position takes the draw with
  probability ``mixin_prob`` and the gold token otherwise, and positions before ``i`` keep what
  the previous pass gave them (``is_later_timestep``); the model runs again on those targets.
* ``sequential`` (``utils/scheduled_sampling.py``, ``sequential_scheduled_sampling``): the
  targets are built token by token from zeros, position ``i`` drawn from a full pass over the
  tokens so far and mixed with the gold one; then one more pass.

Either way the loss is the last pass's logits against the gold targets; the drawn targets are
constants (``tf.stop_gradient``), so only the last pass gets gradients. ``mixin_prob`` is
``scheduled_sampling.inverse_decay_mix_prob``: ``scheduled_sampling_gold_mixin_prob`` times a
warm-up from 0.001 to 1 over ``scheduled_sampling_warmup_steps`` global steps (T2T's
``common_layers.inverse_exp_decay``, ``inverse_lin_decay``, ``inverse_sigmoid_decay``).

Here the passes that only draw tokens run outside the gradient tape (their activations are not
kept); the trainer's loss then reads the last pass with the drawn targets as the decoder's input
and the gold ones as labels (``train_step.batch_loss_sums``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import tensorflow as tf

from t2t_repro.hparam import HParams
from t2t_repro.layers.dropout import replica_seed

PARALLEL, SEQUENTIAL = "parallel", "sequential"
MIN_VALUE = 0.001  # scheduled_sampling.inverse_decay_mix_prob's min_value


@dataclasses.dataclass(frozen=True)
class ScheduledSampling:
    """The ``scheduled_sampling_*`` hparams of a run that uses it."""

    method: str
    num_passes: int
    gold_mixin_prob: float
    warmup_schedule: str
    warmup_steps: int

    @classmethod
    def of(cls, hp: HParams) -> ScheduledSampling | None:
        """None when ``scheduled_sampling_prob`` is 0; a ``ValueError`` (one line) for what
        T2T refuses too (its asserts in ``maybe_scheduled_sampling``). The values of the
        prob, method and schedule are checked with the hparams (``t2t_hparams.TABLE``)."""
        if hp.get("scheduled_sampling_prob", 0.0) == 0.0:  # else 1: the table allows 0 or 1
            return None
        method = hp.get("scheduled_sampling_method", PARALLEL)
        passes = int(hp.get("scheduled_sampling_num_passes", 1))
        steps = hp.get("scheduled_sampling_warmup_steps", 50000)
        if passes < 1 or (method == SEQUENTIAL and passes != 1):
            raise ValueError(
                f"scheduled_sampling_num_passes={passes} must be "
                + ("1 with the sequential method, as in T2T." if passes >= 1 else "positive.")
            )
        if not steps > 0:
            raise ValueError(f"scheduled_sampling_warmup_steps={steps!r} must be positive.")
        return cls(
            method,
            passes,
            float(hp.get("scheduled_sampling_gold_mixin_prob", 0.5)),
            hp.get("scheduled_sampling_warmup_schedule", "exp"),
            int(steps),
        )

    def mixin_prob(self, step) -> tf.Tensor:
        """The chance that a position takes the drawn token at global step ``step``."""
        return self.gold_mixin_prob * warmup(self.warmup_schedule, self.warmup_steps, step)


def warmup(schedule: str, max_step: int, step) -> tf.Tensor:
    """From ``MIN_VALUE`` at step 0 to 1 at ``max_step``: T2T's ``common_layers``
    ``inverse_exp_decay``, ``inverse_lin_decay`` and ``inverse_sigmoid_decay``."""
    step = tf.cast(step, tf.float32)
    if schedule == "exp":
        inv_base = tf.exp(tf.math.log(MIN_VALUE) / float(max_step))
        return inv_base ** tf.maximum(float(max_step) - step, 0.0)
    progress = tf.minimum(step / float(max_step), 1.0)
    if schedule == "linear":
        return progress * (1.0 - MIN_VALUE) + MIN_VALUE
    y_min, y_max = MIN_VALUE, 1.0 - MIN_VALUE  # T2T's Python floats, in its order
    x_min = tf.math.log(y_min / (1 - y_min))
    x_max = tf.math.log(y_max / (1 - y_max))
    y = 1 / (1 + tf.exp(-(x_min + (x_max - x_min) * progress)))  # T2T's own sigmoid
    y = (y - y_min) / (y_max - y_min)
    return y * (1.0 - y_min) + y_min


def draw_tokens(logits: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
    """One token per position from the softmax of ``logits`` [..., V] (T2T's
    ``tf.multinomial``/``tf.random.categorical`` of the logits, no temperature)."""
    vocab = tf.shape(logits)[-1]
    flat = tf.reshape(tf.cast(logits, tf.float32), [-1, vocab])
    drawn = tf.random.stateless_categorical(flat, 1, seed, dtype=tf.int32)
    return tf.reshape(drawn, tf.shape(logits)[:-1])


def uniform_draws(shape: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
    return tf.random.stateless_uniform(shape, seed)


Draw = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]
_KEY = 0x55AA  # the seeds' first word (the draws of a run, like its dropout, seeded by step)


def scheduled_targets(
    model,
    batch: dict,
    ss: ScheduledSampling,
    step,
    draw: Draw = draw_tokens,
    uniform: Draw = uniform_draws,
    counter=None,
) -> tf.Tensor:
    """The targets [B, L] the last pass conditions on (no gradient), at global step ``step``.
    ``draw`` and ``uniform`` are the random draws, ``(logits or shape, seed)``; stateless,
    seeded by ``counter`` (default: the step; the trainer's counts its micro-batches) and the
    draw's place in it (and the replica, as dropout's), so a resumed run draws what an
    uninterrupted one would. A test gives deterministic ones."""
    gold = tf.cast(batch["targets"], tf.int32)
    p = ss.mixin_prob(step)
    counter = tf.cast(step if counter is None else counter, tf.int32)

    def seed(n):  # the n-th draw of this step
        return replica_seed(tf.stack([_KEY + 2 * tf.cast(n, tf.int32), counter]))

    def logits_of(targets):  # at every position, as T2T's (its draws there condition others)
        features = {**batch, "targets": targets}
        return model.output_logits(model.decoder_output(features, training=True, every_row=True))

    def mixed(n, logits, gold_tokens):
        sampled = draw(logits, seed(n))
        take = uniform(tf.shape(sampled), seed(n) + [1, 0]) < p
        return tf.where(take, sampled, gold_tokens)

    if ss.method == PARALLEL:
        logits, targets = logits_of(gold), gold
        for i in range(ss.num_passes):
            later = tf.range(tf.shape(gold)[1])[None, :] >= i
            targets = tf.where(later, mixed(i, logits, gold), targets)
            if i + 1 < ss.num_passes:
                logits = logits_of(targets)
        return tf.stop_gradient(targets)

    length = tf.shape(gold)[1]

    def body(i, tokens):
        logits = tf.gather(logits_of(tokens), i, axis=1)  # [B, V]: position i
        token = mixed(i, logits, tf.gather(gold, i, axis=1))
        at_i = tf.equal(tf.range(length), i)[None, :]
        return i + 1, tf.where(at_i, token[:, None], tokens)

    _, tokens = tf.while_loop(lambda i, _: i < length, body, (0, tf.zeros_like(gold)))
    return tf.stop_gradient(tokens)


def sampling_for(model, hp: HParams, training: bool = True) -> ScheduledSampling | None:
    """The run's scheduled sampling, None when off; a ``ValueError`` (one line) for hparams T2T
    refuses with it, or a model whose targets are not symbols (T2T asserts a symbol or image
    target modality in ``maybe_scheduled_sampling``, then, in training only, that
    ``vocab_divisor`` is 1)."""
    sampling = ScheduledSampling.of(hp)
    symbols = getattr(model, "pads_targets", False) and not getattr(model, "multi_label", False)
    if sampling is not None and not symbols:
        raise ValueError(
            "scheduled_sampling_prob=1 draws target tokens: this model's targets are a class "
            "label, not symbols (T2T asserts the same); set scheduled_sampling_prob=0."
        )
    divisor = hp.get("vocab_divisor", 1)
    if sampling is not None and training and divisor != 1:
        raise ValueError(
            f"scheduled_sampling_prob=1 with vocab_divisor={divisor}: T2T asserts "
            "vocab_divisor == 1 when it trains with scheduled sampling; set vocab_divisor=1."
        )
    return sampling
