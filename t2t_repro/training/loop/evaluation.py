"""Teacher-forced evaluation on the dev split, as T2T's eval
(``tensor2tensor/utils/t2t_model.py``, ``T2TModel.estimator_spec_eval``;
``tensor2tensor/utils/metrics.py``).

No dropout and no label smoothing: the loss is the plain per-token cross entropy, so
``perplexity = exp(loss)`` is the paper's per-wordpiece PPL. Accuracy counts non-PAD target
tokens whose argmax is right; per-sequence accuracy counts sequences with every token right.
"""

from __future__ import annotations

import math

import tensorflow as tf

from t2t_repro.losses import token_losses

SUM = tf.distribute.ReduceOp.SUM
_KEYS = ("xent", "tokens", "correct", "sequences", "correct_sequences")


def make_eval_fn(strategy: tf.distribute.Strategy, model):
    def replica_eval(batch):
        targets = batch["targets"]
        logits = model(batch, training=False)
        weights = tf.cast(targets > 0, tf.float32)
        xent = token_losses(logits, targets, 0.0)
        right = (
            tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), targets), tf.float32)
            * weights
        )
        wrong_per_seq = tf.reduce_sum(weights - right, axis=1)
        is_real = tf.cast(tf.reduce_sum(weights, axis=1) > 0, tf.float32)
        return {
            "xent": tf.reduce_sum(xent * weights),
            "tokens": tf.reduce_sum(weights),
            "correct": tf.reduce_sum(right),
            "sequences": tf.reduce_sum(is_real),
            "correct_sequences": tf.reduce_sum(tf.cast(wrong_per_seq == 0, tf.float32) * is_real),
        }

    # Buckets give many batch shapes: trace once with unknown dims instead of once per shape.
    # No tensor control flow: autograph (a costly rewrite at trace time) is not needed.
    @tf.function(reduce_retracing=True, autograph=False)
    def eval_step(batch):
        stats = strategy.run(replica_eval, args=(batch,))
        return {k: strategy.reduce(SUM, v, axis=None) for k, v in stats.items()}

    return eval_step


def evaluate(eval_step, dataset, max_steps: int = 0, loss_multiplier: float = 1.0) -> dict:
    """Metrics over ``dataset`` (a distributed dataset), at most ``max_steps`` batches.
    ``loss_multiplier`` (a problem's, T2T's problem hparam) scales the reported ``loss`` as T2T's
    eval loss is scaled (``utils/t2t_model.py``, ``_loss_single``); ``neg_log_perplexity`` and
    ``perplexity`` are T2T's metrics of the logits, never scaled."""
    # Traced once, for the dataset's spec (batch and length unknown): the first bucket's batch
    # would otherwise trace for its own shape and the second retrace without it.
    eval_step.get_concrete_function(dataset.element_spec)
    totals = dict.fromkeys(_KEYS, 0.0)
    for step, batch in enumerate(dataset):
        if max_steps and step >= max_steps:
            break
        for k, v in eval_step(batch).items():
            totals[k] += float(v)
    tokens = max(totals["tokens"], 1.0)
    loss = totals["xent"] / tokens
    return {
        "loss": loss * loss_multiplier if loss_multiplier != 1.0 else loss,
        "neg_log_perplexity": -loss,
        "perplexity": math.exp(min(loss, 50.0)),
        "accuracy": totals["correct"] / tokens,
        "accuracy_per_sequence": totals["correct_sequences"] / max(totals["sequences"], 1.0),
        "eval_tokens": totals["tokens"],
    }


def skipped(step: int, pattern: str) -> dict:
    """An evaluation that read no target token: the split's files hold no examples (a
    usr_dir dealing few pairs over many shards leaves every dev shard empty, as T2T's
    ``generate_files`` does). T2T's Estimator would report its metrics over nothing (loss
    0); here one line says so and nothing is recorded (no summaries, no early-stopping
    value, no dev decodes)."""
    print(
        f"eval at step {step}: skipped, {pattern} holds no examples (datagen dealt fewer "
        "pairs than the split has shards): generate the split with fewer shards or more "
        "data, or train with --schedule=train",
        flush=True,
    )
    return {"step": step, "eval_skipped": True}
