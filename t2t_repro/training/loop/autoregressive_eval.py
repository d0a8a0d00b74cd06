"""T2T's ``eval_run_autoregressive``: the evaluation's logits come from the model's own greedy
decode of each eval batch, not from teacher forcing (``utils/t2t_model.py``,
``estimator_model_fn`` -> ``eval_autoregressive`` -> ``_slow_greedy_infer``).

As T2T's slow greedy loop, every step runs the whole model (no cache, dropout off) on the
tokens drawn so far plus one PAD, and draws the token at that new position (``sample``:
``argmax`` or, with ``sampling_method=random``, a draw from ``logits / sampling_temp``); the
step's logits there are appended. A problem with inputs decodes ``inputs length + 50`` tokens
from nothing; one without (a language model) starts from the batch's own padded targets and
decodes 50 more; a class label decodes one. The loop stops early only for a batch of one row
whose last token is EOS, when the problem's ``stop_at_eos`` is set (T2T's
``Text2TextProblem``'s) and the worker has one replica (T2T pads a batch to a multiple of its
shards, ``data_reader.pad_batch``, so with several it never has one row). The eval ``loss``
is T2T's loss of the last step's call: its logits against the drawn tokens plus PAD as
targets (0 when no step ran). The metrics compare the decoded logits with the gold targets,
both padded with zeros to the longer length (T2T's ``pad_with_zeros``), so a position past
the decode counts as id 0.
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.data.target_chunks import real_length
from t2t_repro.losses import token_losses
from t2t_repro.metrics.multi_label import pad_with_zeros

EXTRA_STEPS = 50  # T2T's eval_autoregressive(decode_length=50)
EOS_ID = 1


def refusal(hparams, packed: bool, multi_label: bool = False) -> str:
    """Why this run cannot evaluate autoregressively (one line), or "". ``packed``: its eval
    records are; ``multi_label``: its model's targets are label lists."""
    if not hparams.get("eval_run_autoregressive", False):
        return ""
    if multi_label:
        return (  # _slow_greedy_infer decodes a label list for inputs+50 steps of one row
            "eval_run_autoregressive with a multi-label target: T2T's own evaluation fails "
            "there (it slices a step past its single row); evaluate teacher-forced"
        )
    if hparams.get("prepend_mode", "none") != "none":
        return (  # its decodes start from the inputs as partial targets (check_not_prepended)
            "eval_run_autoregressive with prepend_mode: T2T decodes such a model from its "
            "inputs as given targets, which this project does not reproduce"
        )
    if packed:
        return (  # T2T's loop feeds its drawn targets without their segmentation
            "eval_run_autoregressive on packed eval records: T2T's greedy loop cannot keep "
            "packed examples apart; evaluate the unpacked problem"
        )
    if hparams.get("sampling_method") == "random" and not hparams.get("sampling_temp", 1.0):
        return (
            "eval_run_autoregressive with sampling_method=random and sampling_temp=0: T2T "
            "divides the logits by 0; use sampling_method=argmax"
        )
    return ""


def make_decode(model, hparams, stop_at_eos: bool):
    """``decode(batch) -> (logits [B, T, V], targets [B, T], loss sums)``: the eval batch's
    greedy logits and gold targets padded to one length, and the last step's loss sums."""
    random_draws = hparams.get("sampling_method") == "random"
    temperature = float(hparams.get("sampling_temp", 1.0))
    # The logits' width and dtype (bfloat16 under that policy), as the model gives them.
    probe = model.output_logits(tf.zeros([1, 1, model.hparams.hidden_size]))
    vocab, dtype = probe.shape[-1], probe.dtype

    def draw(logits: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        """T2T's ``T2TModel.sample`` of the last position: argmax, or a draw at temperature
        (seeded by the batch and position here, so an evaluation repeats; T2T's is not)."""
        last = logits[:, -1]
        if not random_draws:
            return tf.argmax(last, -1, output_type=tf.int32)
        scaled = tf.cast(last, tf.float32) / temperature
        return tf.random.stateless_categorical(scaled, 1, seed=seed, dtype=tf.int32)[:, 0]

    def decode(batch: dict):
        # T2T's batches end at their longest example: a padded bucket's extra PAD columns
        # (padded_bucket_step) would lengthen the decode and a language model's prefix.
        batch = {k: batch[k][:, : real_length(batch[k])] for k in ("inputs", "targets")}
        gold = batch["targets"]
        batch_size = tf.shape(gold)[0]
        batch_seed = tf.reduce_sum(gold)
        if not getattr(model, "pads_targets", True):  # a class label: one step
            result, decode_length = tf.zeros([batch_size, 0], tf.int32), 1
        elif model.has_input:
            result = tf.zeros([batch_size, 0], tf.int32)
            decode_length = tf.shape(batch["inputs"])[1] + EXTRA_STEPS
        else:  # T2T's partial_targets: the targets themselves
            result, decode_length = gold, tf.shape(gold)[1] + EXTRA_STEPS

        def not_done(result, *unused):
            length = tf.shape(result)[1]
            going = length < decode_length
            if not stop_at_eos:
                return going
            one_row_started = tf.logical_and(tf.equal(batch_size, 1), length > 0)
            not_eos = tf.cond(
                one_row_started, lambda: tf.not_equal(result[0, -1], EOS_ID), lambda: True
            )
            return tf.logical_and(going, not_eos)

        def step(result, logits, unused_xent, unused_tokens):
            padded = tf.pad(result, [[0, 0], [0, 1]])
            step_logits = model(dict(batch, targets=padded), training=False)
            drawn = draw(step_logits, tf.stack([batch_seed, tf.shape(result)[1]]))
            weights = model.target_weights(padded)
            return (
                tf.concat([result, drawn[:, None]], 1),
                tf.concat([logits, step_logits[:, -1:]], 1),
                tf.reduce_sum(token_losses(step_logits, padded, 0.0) * weights),
                tf.reduce_sum(weights),
            )

        zero = tf.constant(0.0)
        _, logits, xent, tokens = tf.while_loop(
            not_done,
            step,
            (result, tf.zeros([batch_size, 0, vocab], dtype), zero, zero),
            shape_invariants=(
                tf.TensorShape([None, None]),
                tf.TensorShape([None, None, vocab]),
                tf.TensorShape([]),
                tf.TensorShape([]),
            ),
        )
        logits, targets = pad_with_zeros(logits, gold)
        return logits, targets, {"loss_xent": xent, "loss_tokens": tokens}

    return decode
