"""Checks on a model's hparams, made before any work starts (one clear line each).

A value the model cannot use (heads that do not divide the width, a dropout of 1, a zero
batch, an unknown schedule) would otherwise fail deep inside TensorFlow, hang, or train
something else than asked. ``hparams.json`` files read back from disk are also checked for
missing or wrong-typed values, against the types of the ``transformer_base`` set.
"""

from __future__ import annotations

from t2t_repro import t2t_hparams
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.sizes import layer_counts
from t2t_repro.hparams_lib.unimplemented import check_implemented

REQUIRED = (
    "hidden_size",
    "num_heads",
    "num_hidden_layers",
    "filter_size",
    "input_vocab_size",
    "target_vocab_size",
)
# What T2T's transformer_base_v1 adds to basic_params1 and the model here reads without a
# fallback (T2T's transformer reads them too): a set built on basic_params1 for another T2T
# model (an LSTM's) lacks them.
TRANSFORMER_NAMES = (
    "filter_size",
    "num_heads",
    "num_encoder_layers",
    "num_decoder_layers",
    "attention_key_channels",
    "attention_value_channels",
    "attention_dropout",
    "relu_dropout",
    "pos",
    "use_target_space_embedding",
)
POSITIVE = (
    "hidden_size",
    "num_heads",
    "filter_size",
    "batch_size",
    "input_vocab_size",
    "target_vocab_size",
    "vocab_divisor",  # T2T's rounding divides by it (0 fails there too: ZeroDivisionError)
)


def check_types(hp: HParams, source: str, reference: HParams | None = None) -> None:
    """Every value of ``hp`` that ``reference`` also has must have its type (ints pass as
    floats); every REQUIRED name must be there."""
    if reference is None:
        from t2t_repro import registry

        reference = registry.hparams("transformer_base")
    missing = [name for name in REQUIRED if name not in hp]
    if missing:
        raise HParamsError(
            f"{source} lacks {', '.join(missing)}: it is not a complete t2t-trainer hparams file."
        )
    for name, value in hp.values().items():
        if name not in reference:
            continue
        expected = type(reference.get(name))
        ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise HParamsError(
                f"{source}: {name} is {value!r} ({type(value).__name__}); "
                f"expected {expected.__name__}."
            )


def check_transformer_names(hp: HParams, source: str = "hparams") -> None:
    """A whole set for the model (not a few values checked alone) has the transformer's
    names; one built on basic_params1 for another T2T model lacks them."""
    missing = [name for name in TRANSFORMER_NAMES if name not in hp]
    if missing:
        raise HParamsError(
            f"{source} lacks the transformer's {', '.join(missing)}: not a transformer set (a "
            "set for another T2T model?); build it on transformer.transformer_base() or "
            "add_hparam them, as T2T's transformer_base_v1 does."
        )


def _check_layers(hp: HParams, source: str, training: bool) -> None:
    """Layer counts as T2T reads them (``models/transformer.py``: ``num_encoder_layers or
    num_hidden_layers``, the same for the decoder): 0 layers is a model T2T builds (the
    embedding and the final layer norm), so only negative counts are refused. Training an
    encoder-decoder whose decoder has no layer is refused too: nothing reads the encoder, and
    T2T applies only the gradients that exist (``utils/optimize.py``, ``optimize``:
    ``ConditionalOptimizer.compute_gradients`` keeps a None gradient, and the
    ``apply_gradients`` that ``optimize_loss`` calls skips its weight; T2T 1.15.7's model run
    so leaves the encoder's layer norm and target-space embedding as they were), which this
    train step does not."""
    for name in ("num_hidden_layers", "num_encoder_layers", "num_decoder_layers"):
        if hp.get(name, 0) < 0:
            raise HParamsError(f"{source}: {name}={hp.get(name)!r} must be >= 0.")
    _, decoder_layers = layer_counts(hp)
    encoder_decoder = hp.get("has_input", True) and not hp.get("class_label_target", False)
    if training and encoder_decoder and decoder_layers == 0:
        raise HParamsError(
            f"{source}: the decoder has no layer (num_hidden_layers=0 and num_decoder_layers="
            f"{hp.get('num_decoder_layers', 0)}), so it never reads the encoder, whose weights "
            "would get no gradient; T2T's trainer leaves them untrained, this one refuses: "
            "give the decoder a layer (--hparams=num_decoder_layers=1)."
        )


def validate(hp: HParams, source: str = "hparams", training: bool = False) -> None:
    """Values the model, the input pipeline and the optimizer can run with; values of T2T's
    hparams not implemented here are refused (``unimplemented.py``); ``training``: also what
    only training needs (a decoder layer, the optimizer's own checks)."""
    check_implemented(hp, source)
    for name in POSITIVE:
        if name in hp and not hp.get(name) > 0:
            raise HParamsError(f"{source}: {name}={hp.get(name)!r} must be positive.")
    _check_layers(hp, source, training)
    for name in ("hidden_size", "attention_key_channels", "attention_value_channels"):
        channels = hp.get(name)  # 0 key/value channels: hidden_size, checked first
        if "num_heads" in hp and channels and channels % hp.num_heads:
            raise HParamsError(
                f"{source}: num_heads={hp.num_heads} does not divide "
                f"{name}={channels}; each head gets an equal share of it."
            )
    for name, value in hp.values().items():
        if name == "dropout" or name.endswith("_dropout"):
            if not 0.0 <= value < 1.0:
                raise HParamsError(
                    f"{source}: {name}={value!r} must be in [0, 1) (the fraction of units dropped)."
                )
    if hp.get("max_length", 0) < 0:
        raise HParamsError(f"{source}: max_length={hp.max_length} must be >= 0 (0: batch_size).")
    longest = hp.get("max_length", 0) or hp.get("batch_size", 0)
    if "min_length" in hp and longest and hp.min_length > longest:
        raise HParamsError(  # T2T's data_reader.batching_scheme refuses it too
            f"{source}: min_length={hp.min_length} is above max_length (or batch_size) "
            f"{longest}: every example would be dropped; lower min_length."
        )
    step = hp.get("padded_bucket_step", 0)
    if step and not step > 1:
        raise HParamsError(
            f"{source}: padded_bucket_step={step!r} must be > 1 (e.g. 1.2: padded lengths "
            "8, 12, 16, 20, 24, 32, 40, ...) or 0 (T2T's buckets)."
        )
    if hp.get("word_dropout_alpha", 0) < 0:
        raise HParamsError(
            f"{source}: word_dropout_alpha={hp.word_dropout_alpha!r} must be >= 0 (0: off; "
            "e.g. 0.25 replaces a word seen twice by its class 11% of the time)."
        )
    if hp.get("prepend_mode", "none") == "prepend_inputs_full_attention":
        raise HParamsError(  # models/transformer.py, transformer_prepare_decoder; t2t_model.py
            f"{source}: prepend_mode='prepend_inputs_full_attention' (T2T's decoder attention "
            "over the whole prepended inputs, and a loss of the targets alone) is not "
            "implemented here; use prepend_inputs_masked_attention."
        )
    if hp.get("prepend_mode", "none") != "none" and hp.get("has_input") is False:
        raise HParamsError(  # T2T's preprocess_example_common reads example["inputs"]
            f"{source}: prepend_mode={hp.prepend_mode!r} prepends the inputs to the targets: "
            "this problem has no inputs (T2T fails with a KeyError); set prepend_mode=none."
        )
    check_sampling(hp, source)
    check_relative_attention(hp, source)
    check_broadcast_dims(hp, source)
    check_initializer(hp, source)
    if "optimizer" in hp:  # T2T's optimizer names (t2t_repro/optimizer_names.py)
        from t2t_repro.optimizer_names import check_optimizer_name

        check_optimizer_name(hp.optimizer)
    if "learning_rate_schedule" in hp:
        from t2t_repro.learning_rate import check_schedule

        check_schedule(hp.values())
    if training:
        check_training_only(hp, source)
    if training and "optimizer" in hp:  # T2T's optimizer and its own checks, before any file
        from t2t_repro.optimizers import check_optimizer

        check_optimizer(hp)


# T2T names its training reads that this trainer does not implement (t2t-import still takes a
# T2T run's hparams.json holding them, as they shape no weight).
TRAINING_ONLY_REFUSALS = {
    # utils/trainer_lib.py, T2TExperiment.train_eval_and_decode; data_generators/translate.py
    "mlperf_mode": "T2T's MLPerf mode (train_eval_and_decode stops once the dev BLEU reaches "
    "mlperf_threshold, with MLPerf log lines) is not implemented here: drop it",
    # utils/t2t_model.py, estimator_spec_train -> initialize_from_ckpt
    "warm_start_from_second": "T2T's second warm start (a fresh run's trainable variables "
    "found in that checkpoint) is not implemented here: give the checkpoint as "
    "--warm_start_from instead",
}


def check_training_only(hp: HParams, source: str = "hparams") -> None:
    """Refuses, in one line, a value of a T2T name that T2T's training acts on and this
    trainer does not (they were taken and did nothing)."""
    for name, why in TRAINING_ONLY_REFUSALS.items():
        value = getattr(hp, name, None)
        if value and value != t2t_hparams.default(name):
            raise HParamsError(f"{source}: {name}={value!r}: {why}.")


def check_initializer(hp: HParams, source: str = "hparams") -> None:
    """T2T's initializer with its gain (``layers/initializers.py``): a variance-scaling one
    refuses a gain that is not positive, as T2T's does when the model is built."""
    if "initializer" not in hp:
        return
    from t2t_repro.layers.initializers import t2t_initializer

    try:
        t2t_initializer(hp.get("initializer"), hp.get("initializer_gain", 1.0))
    except ValueError as e:
        raise HParamsError(f"{source}: {e}") from None


def check_relative_attention(hp: HParams, source: str = "hparams") -> None:
    """T2T's ``dot_product_relative`` needs a clipping distance (T2T raises on 0,
    ``layers/common_attention.py, dot_product_attention_relative``) and, since both of its
    tables have the key depth, equal key and value channels."""
    if hp.get("self_attention_type", "dot_product") != "dot_product_relative":
        return
    if not hp.get("max_relative_position", 0) > 0:
        raise HParamsError(
            f"{source}: self_attention_type='dot_product_relative' needs "
            f"max_relative_position > 0 (got {hp.get('max_relative_position', 0)!r}; T2T's "
            "transformer_relative uses 20)."
        )
    keys = hp.get("attention_key_channels", 0) or hp.hidden_size
    values = hp.get("attention_value_channels", 0) or hp.hidden_size
    if keys != values:
        raise HParamsError(
            f"{source}: relative self-attention needs attention_key_channels == "
            f"attention_value_channels (got {keys} and {values}); T2T gives both of its "
            "position tables the key depth."
        )


BROADCAST_DIMS = (
    "attention_dropout_broadcast_dims",
    "relu_dropout_broadcast_dims",
    "layer_prepostprocess_dropout_broadcast_dims",
)


def check_broadcast_dims(hp: HParams, source: str = "hparams") -> None:
    """T2T's dropout broadcast dims are comma-separated integers ("0,1"; "" for none)."""
    for name in BROADCAST_DIMS:
        if hp.get(name, ""):
            from t2t_repro.layers.dropout import parse_broadcast_dims

            try:
                parse_broadcast_dims(name, hp.get(name))
            except ValueError as e:
                raise HParamsError(f"{source}: {e}") from None


SAMPLING_METHODS = t2t_hparams.TABLE["sampling_method"].values


def check_sampling(hp: HParams, source: str = "hparams") -> None:
    """T2T's sampling hparams (used by greedy decoding, ``decoding/sampling.py``)."""
    method = hp.get("sampling_method", "argmax")
    if method not in SAMPLING_METHODS:
        raise HParamsError(
            f"{source}: sampling_method={method!r} must be one of {', '.join(SAMPLING_METHODS)} "
            "(random: draw each token from the softmax, with sampling_temp and "
            "sampling_keep_top_k)."
        )
    if hp.get("sampling_temp", 1.0) < 0:
        raise HParamsError(
            f"{source}: sampling_temp={hp.sampling_temp!r} must be >= 0 (0: argmax, 1: the "
            "model's softmax)."
        )
    top_k = hp.get("sampling_keep_top_k", -1)
    if top_k != -1 and top_k < 1:
        raise HParamsError(
            f"{source}: sampling_keep_top_k={top_k!r} must be -1 (every token) or positive "
            "(sample among the k most likely)."
        )
