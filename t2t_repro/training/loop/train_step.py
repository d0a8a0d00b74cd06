"""The distributed update: micro-batches, token-normalised gradients, one optimizer step.

Why this shape: T2T's loss is the mean over every non-PAD target token of the *global* batch
(``tensor2tensor/utils/t2t_model.py``, ``average_sharded_losses``). Each replica sums token losses
over its micro-batches (gradient accumulation); the gradient sums, the token counts and the logged
sums cross the devices in ONE all-reduce per update, and the gradients are divided by the global
count, so the update does not depend on how the batch is split across replicas or micro-batches.
T2T's weight decay and gradient noise are added to the reduced gradients
(``optimizers/regularization.py``). The optimizer applies them as they are (no second all-reduce
of its own), and it (and its learning-rate schedule) sees one step per update.

``make_train_loop`` runs ``n`` updates inside one ``tf.function`` and accumulates metrics in
variables, so the host pays Python overhead once per call, not once per step.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from t2t_repro.losses import (
    multi_label_loss,
    padded_cross_entropy,
    padded_cross_entropy_of_hidden,
)
from t2t_repro.optimizers.regularization import (
    add_weight_noise,
    micro_step_gradients,
    regularized_gradients,
)
from t2t_repro.training.loop.scheduled_sampling import sampling_for, scheduled_targets

SUM = tf.distribute.ReduceOp.SUM
# A mean per-token loss above this stops training like NaN: ~100x the loss of a uniform guess
# over a 32k vocabulary (ln 32768 = 10.4 nats) and >70x for any vocabulary under a million
# entries. Healthy runs start near ln(vocab) and go down; a run this far gone has exploded.
DIVERGED_LOSS = 1000.0


def _dense(grad):
    return tf.convert_to_tensor(grad) if grad is not None else None


def _already_reduced(grads_and_vars):
    return list(grads_and_vars)


def _apply_without_all_reduce(optimizer) -> None:
    """Makes ``optimizer`` apply the gradients it is given as they are: the update has
    all-reduced them already (with the logged sums), so Keras' own all-reduce before the
    update (``keras/src/backend/tensorflow/optimizer.py``, ``TFOptimizer._backend_update_step``
    calls ``_all_reduce_sum_gradients``) would move every gradient across devices a second
    time. A LossScaleOptimizer updates through its inner optimizer."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    if not callable(getattr(inner, "_all_reduce_sum_gradients", None)):
        raise RuntimeError(
            "This Keras version's TensorFlow optimizer has no _all_reduce_sum_gradients; "
            "t2t_repro's train step needs updating for it."
        )
    inner._all_reduce_sum_gradients = _already_reduced


class TrainMetrics:
    """Sums over the updates of one loop call (cross-replica variables)."""

    def __init__(self) -> None:
        self.names = (
            "loss_sum",
            "grad_norm_sum",
            "target_tokens",
            "target_padded",
            "input_tokens",
            "examples",
            "updates",
        )
        for name in self.names:
            setattr(self, name, tf.Variable(0.0, trainable=False, name=name))
        self.first_nonfinite = tf.Variable(-1, dtype=tf.int64, trainable=False)
        self.bad_loss = tf.Variable(0.0, trainable=False)  # the loss at first_nonfinite

    def reset(self) -> None:
        for name in self.names:
            getattr(self, name).assign(0.0)
        self.first_nonfinite.assign(-1)

    def read(self) -> dict:
        values = {name: float(getattr(self, name).numpy()) for name in self.names}
        values["first_nonfinite"] = int(self.first_nonfinite.numpy())
        values["bad_loss"] = float(self.bad_loss.numpy())
        return values


def batch_loss_sums(model: keras.Model, batch: dict, label_smoothing: float, decoder_targets=None):
    """(sum of token losses, non-PAD target count) of one batch in training mode: the model's
    decoder output projected to the vocabulary at the non-PAD targets only
    (``losses.padded_cross_entropy_of_hidden``; the same loss, to float32 rounding, as
    ``padded_cross_entropy(model(batch, training=True), ...)``). ``decoder_targets``: what the
    decoder reads instead of the gold targets, which stay the labels (scheduled sampling)."""
    if decoder_targets is None:
        hidden = model.decoder_output(batch, training=True)
    else:  # every position computed, as T2T's pass over targets that are not the labels
        features = {**batch, "targets": decoder_targets}
        hidden = model.decoder_output(features, training=True, every_row=True)
    if getattr(model, "multi_label", False):  # T2T's multi_label_loss: a mean per example
        return multi_label_loss(model.output_logits(hidden), batch["targets"], label_smoothing)
    if not getattr(model, "pads_targets", True):  # a class label: every target counts
        targets = batch["targets"]
        return padded_cross_entropy(
            model.output_logits(hidden), targets, label_smoothing, model.target_weights(targets)
        )
    return padded_cross_entropy_of_hidden(
        hidden, model.output_logits, batch["targets"], label_smoothing
    )


def make_replica_update(
    model: keras.Model, optimizer, hparams, num_replicas: int, jit_gradients: bool = False
):
    """The per-replica function: takes the micro-batches of one update. ``jit_gradients``: each
    micro-batch's forward and backward pass compiled with XLA, the all-reduce and the update
    outside it (a strategy that synchronises replicas with ``merge_call`` cannot run them in
    a nested function)."""
    label_smoothing = hparams.label_smoothing
    # A problem's loss multiplier scales the summed loss, as T2T scales its numerator
    # (``utils/t2t_model.py``, ``T2TModel._loss_single``: ``loss_num *= loss_multiplier``), so
    # the gradients and the logged loss; 1.0 (every problem but T2T's CHARACTER ones) leaves
    # the graph as it was.
    loss_multiplier = float(hparams.get("loss_multiplier", 1.0))
    loss_scale = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    _apply_without_all_reduce(optimizer)

    # T2T's multistep_adam (utils/multistep_optimizer.py) averages n micro-steps' gradients,
    # each the mean over its own tokens, decayed, noised and clipped as T2T's optimize_loss
    # treats every step; the other optimizers take the update's global token mean.
    per_micro_step = getattr(optimizer, "t2t_multistep", False) or getattr(
        getattr(optimizer, "inner_optimizer", None), "t2t_multistep", False
    )

    # T2T's scheduled sampling (utils/t2t_model.py, maybe_scheduled_sampling): the passes that
    # draw the decoder's targets run before the tape; the global step is T2T's.
    sampling = sampling_for(model, hparams)

    def micro_batch_gradients(batch, step, micro_batch):
        decoder_targets = None
        if sampling is not None:  # its draws seeded by micro-batch, T2T's step its schedule's
            decoder_targets = scheduled_targets(model, batch, sampling, step, counter=micro_batch)
        with tf.GradientTape() as tape:
            batch_loss, batch_tokens = batch_loss_sums(
                model, batch, label_smoothing, decoder_targets
            )
            if loss_multiplier != 1.0:
                batch_loss = batch_loss * loss_multiplier
            # float16: scale the per-token loss (a token sum times the loss scale would
            # overflow the activations' gradients), then turn the float32 variable
            # gradients back into the sum's so accumulation and normalisation still hold.
            count = tf.maximum(batch_tokens, 1.0)
            scaled = optimizer.scale_loss(batch_loss / count) if loss_scale else batch_loss
        batch_grads = [_dense(g) for g in tape.gradient(scaled, model.trainable_variables)]
        if loss_scale:
            batch_grads = [g * count for g in batch_grads]
        return batch_grads, batch_loss, batch_tokens

    if jit_gradients:
        micro_batch_gradients = tf.function(
            micro_batch_gradients, jit_compile=True, autograph=False
        )

    def replica_update(*micro_batches):
        ctx = tf.distribute.get_replica_context()
        variables = model.trainable_variables
        scale = optimizer.dynamic_scale if loss_scale else 1.0
        grads, loss_sum, tokens = None, 0.0, 0.0
        for index, batch in enumerate(micro_batches):
            micro_batch = optimizer.iterations * len(micro_batches) + index
            # T2T's global step: the update's, or multistep_adam's micro-steps
            step = micro_batch if per_micro_step else tf.convert_to_tensor(optimizer.iterations)
            batch_grads, batch_loss, batch_tokens = micro_batch_gradients(batch, step, micro_batch)
            if per_micro_step:
                batch_grads = t2t_micro_step(ctx, batch_grads, batch_tokens, variables, step, scale)
            grads = (
                batch_grads
                if grads is None
                else [a + b for a, b in zip(grads, batch_grads, strict=True)]
            )
            loss_sum += batch_loss
            tokens += batch_tokens
        # Local sums of what is logged, reduced with the gradients: one all-reduce per update.
        sums = tf.stack(
            [
                loss_sum,
                tokens,
                tf.cast(sum(tf.size(b["targets"]) for b in micro_batches), tf.float32),
                sum(tf.reduce_sum(tf.cast(b["inputs"] > 0, tf.float32)) for b in micro_batches),
                tf.cast(sum(tf.shape(b["targets"])[0] for b in micro_batches), tf.float32),
            ]
        )
        if per_micro_step:  # reduced micro-step by micro-step already
            if num_replicas > 1:
                sums = ctx.all_reduce(SUM, sums)
        elif num_replicas > 1:
            *grads, sums = ctx.all_reduce(SUM, [*grads, sums])
        # Built once, not once a gradient (a slice and a maximum each: ~400 ops of a toy model's
        # training graph); every gradient is divided by this same value, as before.
        global_tokens = tf.maximum(sums[1], 1.0)
        if per_micro_step:
            grads = [g / float(len(micro_batches)) for g in grads]
        else:
            grads = [g / global_tokens for g in grads]
            # T2T's weight decay and gradient noise, before clipping (off: the same list).
            grads = regularized_gradients(grads, variables, hparams, optimizer.iterations, scale)
        norm = tf.linalg.global_norm(grads)
        if loss_scale:
            norm = norm / scale
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        return {
            "loss": sums[0] / global_tokens,
            "grad_norm": norm,
            "target_tokens": global_tokens,
            "target_padded": sums[2],
            "input_tokens": sums[3],
            "examples": sums[4],
        }

    def t2t_micro_step(ctx, grads, tokens, variables, step, scale):
        """One T2T step's gradient: its own global token mean, then ``micro_step_gradients``."""
        if num_replicas > 1:
            *grads, tokens = ctx.all_reduce(SUM, [*grads, tokens])
        tokens = tf.maximum(tokens, 1.0)  # once, not once a gradient
        grads = [g / tokens for g in grads]
        return micro_step_gradients(grads, variables, hparams, step, scale)

    return replica_update


def make_train_loop(
    strategy: tf.distribute.Strategy,
    model: keras.Model,
    optimizer,
    hparams,
    metrics: TrainMetrics,
    accumulate_steps: int = 1,
    jit_compile: bool = False,
):
    """``loop(iterator, n)``: runs n updates; metrics accumulate in ``metrics``."""
    # Replicas synchronised by merge_call (MirroredStrategy on CPUs, MultiWorkerMirrored) cannot
    # all-reduce or update inside a nested XLA function: only the passes are compiled there.
    merge_call = getattr(strategy.extended, "_use_merge_call", lambda: False)()
    split_xla = jit_compile and strategy.num_replicas_in_sync > 1 and merge_call
    replica_update = make_replica_update(
        model, optimizer, hparams, strategy.num_replicas_in_sync, jit_gradients=split_xla
    )
    # Only the loop itself has tensor control flow: autograph stays out of the update (the
    # model, loss and optimizer), which it would otherwise rewrite function by function at every
    # trace (a third of a tiny model's start-up) into the same graph; the XLA-compiled update
    # too (its own tf.function would convert it: ~2 of a tiny model's 10 core-s of --xla).
    if jit_compile and not split_xla:
        replica_update = tf.function(replica_update, jit_compile=True, autograph=False)
    update = tf.autograph.experimental.do_not_convert(replica_update)
    accumulate_steps = max(1, accumulate_steps)
    loss_scale = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    weight_noise = float(hparams.get("weight_noise", 0.0) or 0.0)

    def one_update(iterator) -> None:
        if weight_noise:  # T2T's weight noise, before the step (regularization.py)
            with strategy.scope():  # the same draw into every replica's copy
                add_weight_noise(
                    model.trainable_variables,
                    weight_noise,
                    optimizer.learning_rate,
                    optimizer.iterations,
                )
        micro_batches = tuple(next(iterator) for _ in range(accumulate_steps))
        stats = strategy.run(update, args=micro_batches)
        stats = {k: strategy.experimental_local_results(v)[0] for k, v in stats.items()}
        finite = tf.logical_and(tf.math.is_finite(stats["loss"]), stats["loss"] < DIVERGED_LOSS)
        if not loss_scale:  # With loss scaling an overflow only skips the update.
            finite = tf.logical_and(finite, tf.math.is_finite(stats["grad_norm"]))

        def note_first_nonfinite() -> None:
            metrics.first_nonfinite.assign(optimizer.iterations)
            metrics.bad_loss.assign(stats["loss"])

        tf.cond(
            tf.logical_and(tf.logical_not(finite), metrics.first_nonfinite < 0),
            note_first_nonfinite,
            lambda: None,
        )
        metrics.loss_sum.assign_add(stats["loss"])
        norm = stats["grad_norm"]  # A skipped (overflowed) loss-scaled step counts as 0.
        metrics.grad_norm_sum.assign_add(tf.where(tf.math.is_finite(norm), norm, 0.0))
        for name in ("target_tokens", "target_padded", "input_tokens", "examples"):
            getattr(metrics, name).assign_add(stats[name])
        metrics.updates.assign_add(1.0)

    # The loop's control flow is written out (a tf.while_loop and a tf.cond), so tracing skips
    # autograph's rewrite of this function's source (~0.1-0.2 s at every process's first
    # trace); the graph is the one autograph made of the Python loop and branch before.
    @tf.function(autograph=False)
    def loop(iterator, n):
        def body(i):
            one_update(iterator)
            return (i + 1,)

        tf.while_loop(lambda i: i < n, body, (tf.constant(0, n.dtype),))

    return loop
