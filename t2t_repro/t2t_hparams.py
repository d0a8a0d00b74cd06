"""The one table of T2T 1.15's hparams: each name once, with T2T's value, what it means here
and the module that reads it. Every path a T2T name takes into the project reads its rule
here: ``HParams`` (a usr_dir's hparams function, ``--hparams``, a saved ``hparams.json``),
the checks before a run (``hparams_lib/checks.py``), ``t2t-import`` (``t2t_import/
hparams_map.py``), the learning-rate schedule (``learning_rate.py``: ``read_by``).

Meanings:

* ``honoured``: T2T's meaning, read by the modules named (paths under ``t2t_repro/``; the
  first decides it; none for a name whose only implemented value is all the model does). The
  sets store it and ``hparams.json`` records it (``hparams/basic.py`` adds every honoured name
  the set does not write, at T2T's value). ``values``, when given, are the only ones
  implemented: any other is refused in one line.
* ``no effect``: nothing here reads it (bookkeeping, other models' and other optimizers'
  knobs, TPU and precision switches): any value is accepted and kept beside the hparams, never
  in ``hparams.json`` (``dropout``, which T2T's transformer never reads either, is stored as
  T2T's ``basic_params1`` has it).
* ``refused``: a feature this project does not implement: accepted at T2T's value (and any
  other of ``values`` that means the same here), refused in one line otherwise.

Making a name honoured is one edit of its line, e.g. ``"optimizer_momentum_nesterov":
honoured(False, "optimizers/momentum")``; ``tests/test_hparams_table.py`` then checks that
module reads it, and fails when any module reads a name whose line says ``no effect``.

Values are T2T 1.15.7's ``transformer_base`` ones (for the names only other sets of
``models/transformer.py`` add, the first such set's), recorded from T2T itself
(``tests/data/t2t_reference/t2t_1.15.7_hparams.json``, ``tests/test_t2t_hparams.py``);
``ABSENT``: no T2T set has the name (T2T's trainer or a user's set adds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HONOURED, NO_EFFECT, REFUSED = "honoured", "no effect", "refused"
ABSENT = object()  # no T2T 1.15 transformer set has it


@dataclass(frozen=True)
class Entry:
    default: Any  # T2T 1.15.7's value
    meaning: str  # HONOURED, NO_EFFECT or REFUSED
    readers: tuple[str, ...] = ()  # modules under t2t_repro/ that read it (honoured)
    values: tuple | None = None  # the values implemented; None: any
    why: str = ""  # why other values are refused (and what to use)
    stored: bool = False  # in the sets and hparams.json
    added_by: str = ""  # the set that adds it, when T2T's basic_params1 lacks it


def honoured(
    default: Any, *readers: str, values: tuple | None = None, why: str = "", added_by: str = ""
) -> Entry:
    return Entry(default, HONOURED, readers, values, why, stored=True, added_by=added_by)


def no_effect(default: Any, stored: bool = False) -> Entry:
    return Entry(default, NO_EFFECT, stored=stored)


def refused(default: Any, values: tuple = (), why: str = "") -> Entry:
    return Entry(default, REFUSED, (), values or (default,), why)


_MODEL = "models/transformer"
_BIASES = "models/attention_biases"
_CONFIGS = "models/layer_configs"  # the layers' settings from the hparams
_SIZES = "hparams_lib/sizes"  # the layer counts and attention channels the model is built with
_INPUT = "data/input_pipeline"
_LR = "learning_rate"
_LEGACY = "learning_rate_legacy"
_OPT = "optimizers/__init__"  # make_optimizer
_ADAM = "optimizers/adam"
_DECODE = "decoding/line_decoder"
_SS = "training/loop/scheduled_sampling"
_T = "transformer_base_v1"  # T2T's set that adds the transformer's own names

TABLE: dict[str, Entry] = {
    # -- honoured: the model ------------------------------------------------------------------
    "attention_dropout": honoured(0.1, _CONFIGS, added_by=_T),
    # comma-separated dims along which a dropout mask is shared (TPU sets: "0,1", "1")
    "attention_dropout_broadcast_dims": honoured("", _CONFIGS, added_by=_T),
    "attention_key_channels": honoured(0, _SIZES, added_by=_T),
    "attention_value_channels": honoured(0, _SIZES, added_by=_T),
    "ffn_layer": honoured(
        "dense_relu_dense",
        values=("dense_relu_dense", "conv_hidden_relu"),  # T2T's old name of the same layer
        why="only T2T's dense_relu_dense feed-forward layer is implemented",
        added_by=_T,
    ),
    "filter_size": honoured(2048, _CONFIGS, added_by=_T),
    "hidden_size": honoured(512, _MODEL, _LR, _LEGACY),
    "layer_postprocess_sequence": honoured("da", _CONFIGS),
    "layer_prepostprocess_dropout": honoured(0.1, _MODEL),
    "layer_prepostprocess_dropout_broadcast_dims": honoured("", _CONFIGS),
    "layer_preprocess_sequence": honoured("n", _CONFIGS),
    # T2T's default variable initializer (utils/optimize.py, get_variable_initializer):
    # layers/initializers.py says which variables take it
    "initializer": honoured(
        "uniform_unit_scaling",
        _CONFIGS,
        "hparams_lib/checks",
        # T2T's empty initializer is TensorFlow's default, glorot_uniform
        values=(
            "orthogonal",
            "uniform",
            "normal_unit_scaling",
            "uniform_unit_scaling",
            "xavier",
            "",
        ),
        why="T2T 1.15 has no other initializer",
    ),
    "initializer_gain": honoured(1.0, _CONFIGS, "hparams_lib/checks"),
    "max_relative_position": honoured(0, _CONFIGS),
    "multiply_embedding_mode": honoured("sqrt_depth", _MODEL),
    "norm_epsilon": honoured(1e-06, _CONFIGS),
    "norm_type": honoured("layer", values=("layer",), why="only T2T's layer norm is implemented"),
    "num_decoder_layers": honoured(0, _SIZES, added_by=_T),
    "num_encoder_layers": honoured(0, _SIZES, added_by=_T),
    "num_heads": honoured(8, _CONFIGS, added_by=_T),
    "num_hidden_layers": honoured(6, _SIZES),
    "pos": honoured("timing", _MODEL, added_by=_T),
    "relu_dropout": honoured(0.1, _CONFIGS, added_by=_T),
    "relu_dropout_broadcast_dims": honoured("", _CONFIGS, added_by=_T),
    "self_attention_type": honoured(
        "dot_product",
        _CONFIGS,
        values=("dot_product", "dot_product_relative"),
        why="T2T's other attention kinds (relative_v2, local, area...) are not implemented",
        added_by=_T,
    ),
    "shared_embedding": honoured(False, _MODEL),
    # T2T's choices of the attention biases (models/attention_biases.py) and its word dropout
    "causal_decoder_self_attention": honoured(True, _BIASES, added_by=_T),
    "proximity_bias": honoured(False, _BIASES, added_by=_T),
    "unidirectional_encoder": honoured(False, _BIASES, added_by=_T),
    "symbol_dropout": honoured(0.0, _MODEL),
    "shared_embedding_and_softmax_weights": honoured(True, _MODEL),
    # T2T's T2TModel rounds every vocabulary size up to a multiple of it (utils/t2t_model.py,
    # __init__, bottom, _top_single, _loss_single; models/transformer.py, _fast_decode): the
    # embeddings' rows, the logits' width, the loss and every search (hparams_lib/sizes.py)
    "vocab_divisor": honoured(
        1,
        "hparams_lib/sizes",
        "t2t_import/writer",
        "serving/ctranslate2_export",
        "training/loop/scheduled_sampling",
    ),
    "use_pad_remover": honoured(True, _CONFIGS, added_by=_T),
    "use_target_space_embedding": honoured(True, _MODEL, added_by=_T),
    # -- honoured: the input pipeline -----------------------------------------------------------
    "batch_shuffle_size": honoured(512, _INPUT),
    "batch_size": honoured(4096, _INPUT),
    "eval_drop_long_sequences": honoured(False, _INPUT),
    # T2T's data_reader.input_fn: each batch's targets cut into chunks (data/target_chunks.py)
    "split_targets_chunk_length": honoured(0, _INPUT),
    "split_targets_max_chunks": honoured(100, _INPUT),
    "split_targets_strided_training": honoured(False, "data/target_chunks"),
    "length_bucket_step": honoured(1.1, _INPUT),
    "max_input_seq_length": honoured(0, _INPUT),
    "max_length": honoured(256, _INPUT, _CONFIGS),  # the model's: pos=emb's table rows
    "max_target_seq_length": honoured(0, _INPUT),
    "min_length": honoured(0, _INPUT),
    "min_length_bucket": honoured(8, _INPUT),
    # T2T's on-the-fly packing (Problem.dataset), as its compiled op or its tf ops pack
    "pack_dataset": honoured(False, _INPUT),
    # T2T's preprocess_example_common: each example cut into examples of this many ids
    "split_to_length": honoured(0, _INPUT),
    "use_custom_ops": honoured(True, _INPUT),
    "use_fixed_batch_size": honoured(False, _INPUT),
    # -- honoured: training, the optimizer and the learning rate --------------------------------
    # T2T's bfloat16 or float16 activations over float32 variables (utils/t2t_model.py,
    # _custom_getter): Keras's mixed policy in training and decoding; float16 with T2T's loss
    # scaling (utils/optimize.py, ConditionalOptimizer: optimizers/loss_scale.py)
    "activation_dtype": honoured(
        "float32",
        "training/run_setup",
        "decoding/runner",
        "optimizers/loss_scale",
        values=("float32", "bfloat16", "float16"),
        why="T2T 1.15 has no other activation type",
    ),
    # T2T's optimize.py reads it (its trainer's --gpu_automatic_mixed_precision only sets it):
    # float16, as that flag here; kept beside the hparams, as the flag is not in hparams.json
    "gpu_automatic_mixed_precision": Entry(False, HONOURED, ("training/run_setup",)),
    # T2T's loss scaling of float16 activations (utils/optimize.py, ConditionalOptimizer):
    # "exponential" (its ExponentialUpdateLossScaleManager) or "" (none); read only then
    "mixed_precision_optimizer_init_loss_scale": honoured(32768, "optimizers/loss_scale"),
    "mixed_precision_optimizer_loss_scaler": honoured("exponential", "optimizers/loss_scale"),
    "label_smoothing": honoured(0.1, "training/loop/train_step"),
    "train_steps": honoured(ABSENT, _LR),  # set from --train_steps (training/run_hparams.py)
    "clip_grad_norm": honoured(0.0, _OPT),
    "grad_noise_scale": honoured(0.0, "optimizers/regularization"),
    "weight_noise": honoured(0.0, "training/loop/train_step"),
    "weight_decay": honoured(0.0, _ADAM, "optimizers/regularization"),
    "symbol_modality_num_shards": honoured(16, _OPT),
    "optimizer": honoured(
        "adam",
        _OPT,
        _LEGACY,
        _LR,  # which optimizer accumulates (t2t_steps_per_update)
        "training/trainer",
        # T2T 1.15's optimizer names are checked by t2t_repro/optimizer_names.py
    ),
    "optimizer_adam_beta1": honoured(0.9, _ADAM),
    "optimizer_adam_beta2": honoured(0.997, _ADAM),
    "optimizer_adam_epsilon": honoured(1e-09, _ADAM),
    # T2T's meaning (utils/learning_rate.py _global_step, utils/optimize.py multistep_adam):
    # the schedule's step is the global step divided by it, whatever the optimizer; only
    # optimizer=multistep_adam accumulates that many batches per update, and then the global
    # step (--train_steps, checkpoint names, every step-counted flag) counts batches.
    "optimizer_multistep_accumulate_steps": honoured(
        0, _LR, _ADAM, "training/trainer", "t2t_import/writer"
    ),
    "learning_rate": honoured(0.2, _LEGACY),
    "learning_rate_constant": honoured(2.0, _LR),
    "learning_rate_schedule": honoured("constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size", _LR),
    "learning_rate_warmup_steps": honoured(8000, _LR, _LEGACY),
    "learning_rate_decay_scheme": honoured("noam", _LEGACY),
    "learning_rate_decay_steps": honoured(5000, _LR, _LEGACY),
    "learning_rate_decay_rate": honoured(1.0, _LR, _LEGACY),
    "learning_rate_decay_staircase": honoured(False, _LR, _LEGACY),
    "learning_rate_cosine_cycle_steps": honoured(250000, _LEGACY),
    # lists, read by the "piecewise" decay scheme (T2T's distillation sets add them)
    "learning_rate_boundaries": honoured(ABSENT, _LEGACY),
    "learning_rate_multiples": honoured(ABSENT, _LEGACY),
    # -- honoured: decoding ---------------------------------------------------------------------
    "sampling_keep_top_k": honoured(-1, _DECODE),
    "sampling_method": honoured(
        "argmax",
        _DECODE,
        values=("argmax", "random"),
        why="random: draw each token from the softmax, with sampling_temp and sampling_keep_top_k",
    ),
    "sampling_temp": honoured(1.0, _DECODE),
    # T2T's preprocess_example_common: the inputs and a 0 prepended to the targets
    "prepend_mode": honoured(
        "none",
        _INPUT,
        "training/loop/evaluation",  # T2T's eval loss of the targets alone
        "decoding/runner",  # T2T's decodes of it are empty: refused
        values=None,
    ),
    # T2T's hard attention (layers/common_attention.py, harden_attention_weights)
    "hard_attention_k": honoured(0, _CONFIGS, added_by=_T),
    "gumbel_noise_weight": honoured(0.0, _CONFIGS, added_by=_T),
    # T2T's 3-D q/k/v/o variables, their draws and no run-time query scaling
    # (layers/common_attention.py, compute_attention_component, multihead_attention)
    "attention_variables_3d": honoured(False, _CONFIGS, added_by=_T),
    # -- honoured: T2T's scheduled sampling (utils/t2t_model.py, maybe_scheduled_sampling) ------
    "scheduled_sampling_prob": honoured(
        0.0, _SS, values=(0.0, 1.0), why="T2T asserts 0 (off) or 1 (on)"
    ),
    "scheduled_sampling_gold_mixin_prob": honoured(0.5, _SS),
    "scheduled_sampling_method": honoured(
        "parallel", _SS, values=("parallel", "sequential"), why="T2T's two methods"
    ),
    "scheduled_sampling_num_passes": honoured(1, _SS),
    "scheduled_sampling_warmup_schedule": honoured(
        "exp", _SS, values=("exp", "linear", "sigmoid"), why="T2T's three warm-ups"
    ),
    "scheduled_sampling_warmup_steps": honoured(50000, _SS),
    # -- refused unless at T2T's value: features not implemented here ---------------------------
    "input_modalities": refused("default"),
    "num_area_layers": refused(0),
    "position_features": refused(""),
    # Not a T2T 1.15 hparam: T2T before 1.15 skipped the softmax with it (SymbolModality.top),
    # and its train dirs' hparams.json hold it; T2T 1.15.7 defines and reads it nowhere (its
    # --hparams refuses the name; its create_hparams_from_json drops it): True is refused, as
    # the model it was trained as is not T2T 1.15's
    # (tools/t2t_reference/make_t2t_vocab_divisor_reference.py)
    "symbol_modality_skip_top": refused(
        False,
        why="T2T 1.15 has no such hparam: T2T before 1.15 skipped the softmax with it, "
        "T2T 1.15.7 ignores it",
    ),
    "target_modality": refused("default"),
    # Read by T2T's T2TModel (utils/t2t_model.py): per-feature overrides of the modalities'
    # bottom, top, loss and loss weights (_bottom/_top/_loss_single). Not implemented.
    "bottom": refused({}),
    "top": refused({}),
    "loss": refused({}),
    "weights_fn": refused({}),
    # T2T's evaluation by the model's own greedy decodes (utils/t2t_model.py,
    # estimator_model_fn -> eval_autoregressive)
    "eval_run_autoregressive": honoured(
        False, "training/loop/evaluation", "training/loop/eval_round"
    ),
    # -- no effect here -------------------------------------------------------------------------
    "dropout": no_effect(0.2, stored=True),  # T2T's transformer reads the *_dropout ones
    "add_relative_to_values": no_effect(False),
    "area_key_mode": no_effect("none"),
    "area_value_mode": no_effect("none"),
    "compress_steps": no_effect(0),
    "conv_first_kernel": no_effect(3),
    "daisy_chain_variables": no_effect(True),
    # T2T's memory-saving training loss (layers/modalities.py, symbol_top; common_layers.py,
    # padded_cross_entropy_factored): the same logits and loss, 16 slices at a time
    "factored_logits": no_effect(False),
    "force_full_predict": no_effect(False),
    "heads_share_relative_embedding": no_effect(False),
    "kernel_height": no_effect(3),
    "kernel_width": no_effect(1),
    "learning_rate_minimum": no_effect(None),  # T2T 1.15.7 reads it nowhere either
    "max_area_height": no_effect(1),
    "max_area_width": no_effect(1),
    "memory_height": no_effect(1),
    "mlperf_mode": no_effect(False),
    "moe_hidden_sizes": no_effect("2048"),
    "moe_k": no_effect(2),
    "moe_loss_coef": no_effect(0.001),
    "moe_num_experts": no_effect(16),
    "moe_overhead_eval": no_effect(2.0),
    "moe_overhead_train": no_effect(1.0),
    "multiproblem_fixed_train_length": no_effect(-1),
    "multiproblem_label_weight": no_effect(0.5),
    "multiproblem_max_input_length": no_effect(-1),
    "multiproblem_max_target_length": no_effect(-1),
    "multiproblem_mixing_schedule": no_effect("constant"),
    "multiproblem_per_task_threshold": no_effect(""),
    "multiproblem_reweight_label_loss": no_effect(False),
    "multiproblem_schedule_max_examples": no_effect(10000000.0),
    "multiproblem_schedule_threshold": no_effect(0.5),
    "multiproblem_target_eval_only": no_effect(False),
    "multiproblem_vocab_size": no_effect(-1),
    "name": no_effect({}),
    "nbr_decoder_problems": no_effect(1),
    "no_data_parallelism": no_effect(False),
    "optimizer_adafactor_beta1": honoured(0.0, _OPT),
    "optimizer_adafactor_beta2": honoured(0.999, _OPT),
    "optimizer_adafactor_clipping_threshold": honoured(1.0, _OPT),
    "optimizer_adafactor_decay_type": honoured("pow", _OPT),
    "optimizer_adafactor_factored": honoured(True, _OPT),
    "optimizer_adafactor_memory_exponent": honoured(0.8, _OPT),
    "optimizer_adafactor_multiply_by_parameter_scale": honoured(True, _OPT),
    "optimizer_momentum_momentum": honoured(0.9, _OPT),
    "optimizer_momentum_nesterov": honoured(False, _OPT),
    "optimizer_zero_grads": no_effect(False),
    "overload_eval_metric_name": honoured("", "training/loop/eval_round", added_by=_T),
    "pad_batch": no_effect(False),
    "parameter_attention_key_channels": no_effect(0),
    "parameter_attention_value_channels": no_effect(0),
    "pretrained_model_dir": no_effect(""),
    "summarize_grads": no_effect(False),
    "summarize_vars": no_effect(False),
    "tpu_enable_host_call": no_effect(False),
    "video_num_input_frames": no_effect(1),
    "video_num_target_frames": no_effect(1),
    "warm_start_from_second": no_effect(""),
    # T2T stores the weights in bfloat16 with it (Adafactor only): not implemented
    "weight_dtype": refused("float32"),
    # added by other sets of T2T's models/transformer.py (vector-quantised gating, memory,
    # supervised attention): read only by those models' code
    "beta": no_effect(0.25),
    "bottleneck_kind": no_effect("dvq"),
    "decay": no_effect(0.999),
    "ema": no_effect(False),
    "epsilon": no_effect(1e-05),
    "expected_attention_loss_multiplier": no_effect(1.0),
    "expected_attention_loss_type": no_effect("kl_divergence"),
    "gating_type": no_effect("vq"),
    "memory_type": no_effect("transformer_xl"),
    "noise_dev": no_effect(0.5),
    "num_blocks": no_effect(1),
    "num_memory_items": no_effect(384),
    "num_residuals": no_effect(1),
    "num_samples": no_effect(10),
    "random_top_k": no_effect(1),
    "recurrent_memory_batch_size": no_effect(64),
    "residual_centroids": no_effect(0),
    "soft_em": no_effect(False),
    "unconditional": no_effect(True),
    "use_scales": no_effect(1),
    "z_size": no_effect(4),
}

# T2T values this project's types cannot hold, as the value that means the same here: T2T's
# ``hparams.pos = None`` (models/transformer.py: transformer_relative) is "none", and so is
# ``--hparams=pos=None`` (the string "None": transformer_prepare_encoder adds no signal for it).
T2T_VALUES: dict[tuple[str, Any], Any] = {("pos", None): "none", ("pos", "None"): "none"}


def default(name: str) -> Any:
    """T2T's value of ``name`` (None when no T2T set has it)."""
    value = TABLE[name].default
    return None if value is ABSENT else value


def read_by(module: str) -> tuple[str, ...]:
    """The honoured names ``module`` (a path under t2t_repro/, no .py) reads."""
    return tuple(n for n, e in TABLE.items() if e.meaning == HONOURED and module in e.readers)


def stored_defaults(added_by: str = "") -> dict[str, Any]:
    """{name: T2T's value} of every name the sets store that T2T's set ``added_by`` adds
    ("": T2T's basic_params1; ``hparams/basic.py`` adds those it does not write)."""
    return {
        n: e.default
        for n, e in TABLE.items()
        if e.stored and e.default is not ABSENT and e.added_by == added_by
    }


def refusal(name: str, value: Any) -> str | None:
    """Why ``name=value`` is refused (one line), or None: accepted, or not in the table."""
    entry = TABLE.get(name)
    if entry is None or entry.values is None or value in entry.values:
        return None
    allowed = " or ".join(repr(v) for v in entry.values)
    if entry.meaning == REFUSED:
        return (
            f"hparam {name}={value!r} asks for a T2T feature this project does not implement "
            f"(only {name}={entry.default!r}, T2T's default, is): leave it at that value"
            + (f"; {entry.why}." if entry.why else ".")
        )
    return f"{name}={value!r} is not supported ({entry.why}); use {allowed}."


def check_t2t_only(name: str, value: Any) -> str | None:
    """Why ``name=value`` is refused (one line), or None when it is accepted; ``name`` is one
    the sets do not store (``is_t2t_only``)."""
    return refusal(name, value)


def is_t2t_only(name: str) -> bool:
    """A T2T 1.15 name the project's sets do not store: kept beside the hparams."""
    entry = TABLE.get(name)
    return entry is not None and not entry.stored


def no_effect_names() -> frozenset[str]:
    return frozenset(n for n, e in TABLE.items() if e.meaning == NO_EFFECT)


# The former names of the two groups of unstored names (tests and t2t-import read them).
IGNORED = {n: e.default for n, e in TABLE.items() if e.meaning == NO_EFFECT and not e.stored}
NEUTRAL = {n: e.default for n, e in TABLE.items() if e.meaning == REFUSED and not e.stored}
