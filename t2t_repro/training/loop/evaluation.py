"""Teacher-forced evaluation on the dev split, as T2T's eval
(``tensor2tensor/utils/t2t_model.py``, ``T2TModel.estimator_spec_eval``;
``tensor2tensor/utils/metrics.py``).

No dropout and no label smoothing: a batch's loss is the plain per-token cross entropy, and
the reported ``loss`` is the mean of the batches' losses, as T2T's Estimator reports it (a
short batch weighs as much as a full one); ``neg_log_perplexity`` is over all tokens (T2T's
metric), and ``perplexity = exp(-neg_log_perplexity)`` the paper's per-wordpiece PPL.
Accuracy counts non-PAD target tokens whose argmax is right; per-sequence accuracy counts
sequences with every token right.
A problem that lists them (``Problem.teacher_forced_metrics``) also gets T2T's
``accuracy_top5`` and its ROUGE-2 F, ROUGE-L F and approximate BLEU of the argmax ids
(``metrics/rouge.py``, ``metrics/bleu.py``), averaged as T2T's ``tf.metrics.mean`` averages
them: top-5 over tokens, the others over batches (each batch's value of its rows, padding
included, weight 1). On several replicas each
replica's batch counts as one batch. A multi-label model's (``model.multi_label``) loss is T2T's
``multi_label_loss`` and its metrics are T2T's on its zero-padded logits
(``metrics/multi_label.py``), with ``accuracy_multilabel_match3`` when the problem lists it.
With ``prepend_mode=prepend_inputs_masked_attention`` the ``loss`` counts only the targets
after the prepended inputs and their 0, as T2T weighs its eval loss then
(``utils/t2t_model.py``, ``T2TModel.__init__``: ``weights_prepend_inputs_to_targets``); the
metrics count the whole sequence, as T2T's.
With ``eval_run_autoregressive`` the logits are the model's own greedy decode's and the loss
its last step's (``autoregressive_eval.py``).
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from t2t_repro.losses import multi_label_loss, token_losses
from t2t_repro.metrics import bleu, multi_label, rouge
from t2t_repro.metrics.eval_metrics import (
    ACCURACY_TOP5,
    APPROX_BLEU,
    EDIT_DISTANCE,
    ROUGE_2_F,
    ROUGE_L_F,
    ROW_METRICS,
)
from t2t_repro.training.loop import autoregressive_eval

SUM = tf.distribute.ReduceOp.SUM
_KEYS = ("xent", "tokens", "correct", "sequences", "correct_sequences")
_ROW_FNS = {
    ROUGE_2_F: rouge.rouge_2_fscore,
    ROUGE_L_F: rouge.rouge_l_fscore,
    APPROX_BLEU: bleu.approx_bleu,
}


def _on_request(logits, targets, weights, metrics: tuple, unpadded=None) -> dict:
    """The sums of the metrics a problem asked for (``eval_metrics.ON_REQUEST``); ``unpadded``:
    a multi-label model's logits [B, 1, C] before ``pad_with_zeros``, which T2T's ROUGE, BLEU
    and ``multilabel_accuracy_matchk`` read (``metrics/multi_label.py``)."""
    sums = {}
    argmax_logits = logits if unpadded is None else unpadded
    if multi_label.ACC_MULTILABEL_MATCH3 in metrics:
        scores = multi_label.accuracy_matchk(argmax_logits, targets, 3)
        sums["match3"] = tf.reduce_sum(scores)
        sums["match3_examples"] = tf.cast(tf.shape(scores)[0], tf.float32)
    if ACCURACY_TOP5 in metrics:  # T2T's padded_accuracy_topk: top_k's indices, k <= vocab
        k = tf.minimum(5, tf.shape(logits)[-1])
        top = tf.math.top_k(logits, k=k).indices
        hits = tf.reduce_sum(tf.cast(tf.equal(top, targets[..., None]), tf.float32), -1)
        sums["correct_top5"] = tf.reduce_sum(hits * weights)
    if EDIT_DISTANCE in metrics:  # T2T's sequence_edit_distance: argmax ids against targets,
        # each without its 0 (PAD) entries; its mean weighted by the reference tokens
        predicted = tf.sparse.from_dense(tf.argmax(argmax_logits, -1))
        reference = tf.sparse.from_dense(tf.cast(targets, tf.int64))
        distances = tf.edit_distance(predicted, reference, normalize=False)
        sums["edit_distance"] = tf.reduce_sum(distances)
        sums["edit_distance_reference"] = tf.cast(tf.size(reference.values), tf.float32)
    asked = [m for m in ROW_METRICS if m in metrics]
    if asked:  # T2T's py_funcs of the argmax ids against the padded targets
        outputs = tf.argmax(argmax_logits, -1, output_type=tf.int32)
        scores = tf.numpy_function(
            lambda o, t: [_ROW_FNS[m](o, t) for m in asked],
            [outputs, targets],
            [tf.float32] * len(asked),
            stateful=False,
        )
        sums.update({m: tf.reshape(v, []) for m, v in zip(asked, scores, strict=True)})
        sums["row_metric_batches"] = tf.constant(1.0)
    return sums


def weights_prepend_inputs_to_targets(labels: tf.Tensor) -> tf.Tensor:
    """T2T's (``layers/common_layers.py``): 1 at the non-zero labels after a row's first 0."""
    past_first_zero = tf.cumsum(tf.cast(tf.equal(labels, 0), tf.float32), axis=1)
    return tf.cast(tf.not_equal(past_first_zero * tf.cast(labels, tf.float32), 0), tf.float32)


def make_eval_fn(
    strategy: tf.distribute.Strategy, model, metrics: tuple = (), stop_at_eos: bool = True
):
    """The eval step: per-batch sums, reduced over replicas. ``metrics``: the problem's
    ``teacher_forced_metrics`` (``eval_metrics.ON_REQUEST``) to compute as well;
    ``stop_at_eos``: the problem's, read when the hparams ask for ``eval_run_autoregressive``
    (``autoregressive_eval.py``)."""

    multi = getattr(model, "multi_label", False)
    # T2T names this mode there; another value but "none" prepends with T2T's usual weights
    hparams = getattr(model, "hparams", None) or {}
    prepended = hparams.get("prepend_mode") == "prepend_inputs_masked_attention"
    greedy = None
    if hparams.get("eval_run_autoregressive", False):
        greedy = autoregressive_eval.make_decode(model, hparams, stop_at_eos)

    def replica_eval(batch):
        targets = batch["targets"]
        loss_sums = {}  # T2T's eval loss when it is not the metrics' cross entropy
        if greedy is None:
            logits = model(batch, training=False)
        else:  # the model's own greedy decode, and the loss of its last step
            logits, targets, loss_sums = greedy(batch)
        extra = {}
        unpadded = None
        if multi:  # T2T's multi_label_loss, and its metrics on zero-padded logits
            loss_sum, examples = multi_label_loss(logits, targets, 0.0)
            extra = {"example_loss": loss_sum, "loss_examples": examples}
            unpadded = logits
            logits, targets = multi_label.pad_with_zeros(logits, targets)
        weights = model.target_weights(targets)  # T2T's weights_fn of the target modality
        xent = token_losses(logits, targets, 0.0)
        right = (
            tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), targets), tf.float32)
            * weights
        )
        wrong_per_seq = tf.reduce_sum(weights - right, axis=1)
        is_real = tf.cast(tf.reduce_sum(weights, axis=1) > 0, tf.float32)
        if multi:  # padded_sequence_accuracy weighs every example 1, label-less ones too
            is_real = tf.ones_like(is_real)
        if prepended:  # T2T's eval loss: the targets after the first 0 alone
            loss_weights = weights_prepend_inputs_to_targets(targets)
            extra = {
                "loss_xent": tf.reduce_sum(xent * loss_weights),
                "loss_tokens": tf.reduce_sum(loss_weights),
            }
        return {
            "xent": tf.reduce_sum(xent * weights),
            "tokens": tf.reduce_sum(weights),
            "correct": tf.reduce_sum(right),
            "sequences": tf.reduce_sum(is_real),
            "correct_sequences": tf.reduce_sum(tf.cast(wrong_per_seq == 0, tf.float32) * is_real),
            **_on_request(logits, targets, weights, metrics, unpadded),
            **extra,
            **loss_sums,
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
    batch_losses = []  # each batch's own loss: T2T's eval loss is their mean
    for step, batch in enumerate(dataset):
        if max_steps and step >= max_steps:
            break
        sums = {k: np.asarray(v) for k, v in eval_step(batch).items()}
        batch_losses.append(_batch_loss(sums))
        for k, v in sums.items():
            if k in ROW_METRICS:  # T2T's tf.metrics.mean keeps a float32 total
                totals[k] = np.float32(totals.get(k, 0.0)) + np.float32(v)
            else:
                totals[k] = totals.get(k, 0.0) + float(v)
    tokens = max(totals["tokens"], 1.0)
    token_loss = totals["xent"] / tokens
    loss = sum(batch_losses) / max(len(batch_losses), 1)
    extra = {}
    if "match3" in totals:
        extra[multi_label.ACC_MULTILABEL_MATCH3] = totals["match3"] / max(
            totals["match3_examples"], 1.0
        )
    if "correct_top5" in totals:
        extra[ACCURACY_TOP5] = totals["correct_top5"] / tokens
    if "edit_distance" in totals:
        extra[EDIT_DISTANCE] = totals["edit_distance"] / max(totals["edit_distance_reference"], 1.0)
    for name in ROW_METRICS:
        if name in totals:
            batches = np.float32(max(totals["row_metric_batches"], 1.0))
            extra[name] = float(totals[name] / batches)
    return {
        "loss": loss * loss_multiplier if loss_multiplier != 1.0 else loss,
        "neg_log_perplexity": -token_loss,
        "perplexity": math.exp(min(token_loss, 50.0)),
        "accuracy": totals["correct"] / tokens,
        "accuracy_per_sequence": totals["correct_sequences"] / max(totals["sequences"], 1.0),
        **extra,
        "eval_tokens": totals["tokens"],
    }


def _batch_loss(sums: dict) -> float:
    """One eval batch's loss as T2T's model reports it (``utils/t2t_model.py``,
    ``average_sharded_losses``: the sum over the batch, all replicas, by its weight, at least
    1; a multi-label batch's, a mean over its examples). Estimator's ``loss`` metric is the
    plain mean of these over the batches (``estimator.py``, ``_evaluate_build_graph``:
    ``metrics.mean(loss)``): a short last batch counts as much as a full one."""
    if "loss_examples" in sums:
        return float(sums["example_loss"]) / max(float(sums["loss_examples"]), 1.0)
    if "loss_tokens" in sums:  # prepend_mode's
        return float(sums["loss_xent"]) / max(float(sums["loss_tokens"]), 1.0)
    return float(sums["xent"]) / max(float(sums["tokens"]), 1.0)


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
