"""T2T's ``hparams.json`` -> this project's hparams, as T2T 1.15.7 itself would resume it.

T2T (``utils/hparams_lib.py, create_hparams_from_json``) starts from the registered set named
by ``--hparams_set`` and overwrites every hparam that the saved JSON holds; a key the JSON
lacks (an older T2T) keeps the set's value. The import does the same with this project's
set of that name (T2T's renamed sets through ``T2T_SET_NAMES``).

Every T2T hparam is accounted for: ours take the JSON value; ``IGNORED`` ones do not change
the model or its training here (bookkeeping, other models' knobs, precision flags);
``NEUTRAL`` ones change the model unless at T2T's default, so any other value is an error
naming it, as is an hparam this module has never heard of (``--ignore_hparams`` overrides
both, for a user who accepts a model that differs from T2T's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from t2t_repro import registry
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.build import add_problem_hparams
from t2t_repro.t2t_import.errors import T2TImportError

# T2T 1.15.7 names its sets by their newest version; this project keeps the paper's under the
# plain names (README, hparams/transformer.py).
T2T_SET_NAMES = {
    "transformer_base": "transformer_base_v3",
    "transformer_big": "transformer_big_v3",
    "transformer_big_enfr": "transformer_big_enfr_v3",
}

# T2T hparams that do not change the transformer or how it trains here.
IGNORED = frozenset(
    """
    activation_dtype weight_dtype gpu_automatic_mixed_precision
    mixed_precision_optimizer_init_loss_scale
    mixed_precision_optimizer_loss_scaler bottom top loss name weights_fn daisy_chain_variables
    no_data_parallelism nbr_decoder_problems eval_run_autoregressive force_full_predict
    summarize_grads summarize_vars mlperf_mode tpu_enable_host_call use_custom_ops compress_steps
    overload_eval_metric_name pretrained_model_dir warm_start_from_second symbol_modality_num_shards
    vocab_divisor pack_dataset pad_batch split_to_length split_targets_chunk_length
    split_targets_max_chunks split_targets_strided_training kernel_height kernel_width
    conv_first_kernel parameter_attention_key_channels parameter_attention_value_channels
    moe_hidden_sizes moe_k moe_loss_coef moe_num_experts moe_overhead_eval moe_overhead_train
    learning_rate_cosine_cycle_steps learning_rate_decay_rate learning_rate_decay_staircase
    learning_rate_decay_steps learning_rate_minimum optimizer_adafactor_beta1
    optimizer_adafactor_beta2 optimizer_adafactor_clipping_threshold optimizer_adafactor_decay_type
    optimizer_adafactor_factored optimizer_adafactor_memory_exponent
    optimizer_adafactor_multiply_by_parameter_scale optimizer_momentum_momentum
    optimizer_momentum_nesterov optimizer_zero_grads
    gumbel_noise_weight scheduled_sampling_gold_mixin_prob scheduled_sampling_method
    scheduled_sampling_num_passes scheduled_sampling_warmup_schedule scheduled_sampling_warmup_steps
    heads_share_relative_embedding add_relative_to_values area_key_mode area_value_mode
    max_area_height max_area_width memory_height video_num_input_frames video_num_target_frames
    multiproblem_fixed_train_length multiproblem_label_weight multiproblem_max_input_length
    multiproblem_max_target_length multiproblem_mixing_schedule multiproblem_per_task_threshold
    multiproblem_reweight_label_loss multiproblem_schedule_max_examples
    multiproblem_schedule_threshold multiproblem_target_eval_only multiproblem_vocab_size
""".split()
)

# T2T hparams this project does not implement: importable only at the value that disables them.
NEUTRAL = {
    "attention_variables_3d": False,
    "causal_decoder_self_attention": True,
    "unidirectional_encoder": False,
    "proximity_bias": False,
    "hard_attention_k": 0,
    "num_area_layers": 0,
    "factored_logits": False,
    "prepend_mode": "none",
    "position_features": "",
    "symbol_modality_skip_top": False,
    "target_modality": "default",
    "input_modalities": "default",
    "symbol_dropout": 0.0,
    "scheduled_sampling_prob": 0.0,
    "weight_noise": 0.0,
    "grad_noise_scale": 0.0,
    "attention_dropout_broadcast_dims": "",
    "relu_dropout_broadcast_dims": "",
    "layer_prepostprocess_dropout_broadcast_dims": "",
}

# T2T values JSON cannot give in this project's types: T2T's ``hparams.pos = None``
# (``transformer_relative``) is "none" here.
T2T_VALUES = {("pos", None): "none"}

# Hparams this project has, but with fewer choices than T2T.
SUPPORTED_VALUES = {
    "norm_type": ("layer",),
    "pos": ("timing", "none", None),  # None: T2T's no positional signal ("none" here)
    "ffn_layer": ("dense_relu_dense", "conv_hidden_relu"),  # T2T's legacy name, same layer.
    "optimizer": ("adam", "Adam", "lazy_adam", "true_adam"),
    "sampling_method": ("argmax", "random"),
    "self_attention_type": ("dot_product", "dot_product_relative"),
}


@dataclass(frozen=True)
class ImportedHParams:
    hparams: HParams
    hparams_set: str  # This project's set the hparams are expressed against.
    overrides: str  # --hparams for t2t-trainer: set + these == hparams.
    ignored: tuple[str, ...]  # T2T hparams dropped (IGNORED or --ignore_hparams).


def our_set_name(t2t_set: str, requested: str = "") -> str:
    name = requested or T2T_SET_NAMES.get(t2t_set, t2t_set)
    if not name:
        raise T2TImportError(
            "flags.txt names no --hparams_set; pass --hparams_set=<a set of "
            "this project> (e.g. transformer_base_v3) to import against."
        )
    if name not in registry.list_names(registry.HPARAMS):
        raise T2TImportError(
            f"hparams set {name!r} (from the T2T flags) is not registered here; "
            "pass --hparams_set= with the nearest set of this project (every "
            "value in hparams.json is applied over it)."
        )
    return name


def _unsupported(t2t_values: dict[str, Any], ours: HParams, ignore: set[str]) -> list[str]:
    problems = []
    for name, value in sorted(t2t_values.items()):
        if name in ignore or name in IGNORED:
            continue
        if name in NEUTRAL and value != NEUTRAL[name]:
            problems.append(f"{name}={value!r} (only {NEUTRAL[name]!r} is implemented)")
        elif name in SUPPORTED_VALUES and value not in SUPPORTED_VALUES[name]:
            problems.append(
                f"{name}={value!r} (supported: {', '.join(map(str, SUPPORTED_VALUES[name]))})"
            )
        elif name not in NEUTRAL and name not in ours:
            problems.append(f"{name}={value!r} (unknown to this importer)")
    relative = t2t_values.get("self_attention_type") == "dot_product_relative"
    if relative and "self_attention_type" not in ignore:
        if not t2t_values.get("max_relative_position", 0) > 0:
            problems.append(
                "self_attention_type='dot_product_relative' with max_relative_position="
                f"{t2t_values.get('max_relative_position', 0)!r} (T2T refuses it too: the "
                "distance must be > 0)"
            )
    for name in ("layer_preprocess_sequence", "layer_postprocess_sequence"):
        value = t2t_values.get(name, "none")
        if name not in ignore and value != "none" and set(value) - set("nda"):
            problems.append(f"{name}={value!r} (only steps n, d, a are implemented)")
    return problems


def _overrides(base: HParams, target: HParams) -> str:
    items = []
    for name, (_, value) in base.diff(target).items():
        text = str(value)
        if "," in text:
            raise T2TImportError(
                f"hparam {name}={text!r} holds a comma and cannot be passed "
                "to --hparams; this T2T setting is not importable."
            )
        items.append(f"{name}={text}")
    return ",".join(items)


def map_hparams(
    t2t_values: dict[str, Any],
    t2t_set: str,
    problem_values: dict[str, int],
    requested_set: str = "",
    ignore: Iterable[str] = (),
) -> ImportedHParams:
    """Our hparams for a T2T run; ``problem_values`` are the vocabulary sizes and space id."""
    ignore = set(ignore)
    set_name = our_set_name(t2t_set, requested_set)
    base = registry.hparams(set_name)
    add_problem_hparams(
        base,
        problem_values["input_vocab_size"],
        problem_values["target_vocab_size"],
        problem_values["target_space_id"],
    )
    problems = _unsupported(t2t_values, base, ignore)
    if problems:
        raise T2TImportError(
            "T2T hparams that change the model are not supported: "
            + "; ".join(problems)
            + ". Pass --ignore_hparams=NAME,... to import anyway "
            "(the model will differ from T2T's)."
        )
    hp = base.copy()
    for name, value in sorted(t2t_values.items()):
        if name in ignore or name not in hp or name in problem_values:
            continue
        if name == "ffn_layer":
            value = "dense_relu_dense"
        value = T2T_VALUES.get((name, value), value)
        try:
            hp.set_hparam(name, value)
        except HParamsError as e:
            raise T2TImportError(f"hparams.json: {e}") from e
    if "target_space_vocab_size" in problem_values:
        hp.set_hparam("target_space_vocab_size", problem_values["target_space_vocab_size"])
    dropped = tuple(sorted(n for n in t2t_values if n not in hp))
    return ImportedHParams(hp, set_name, _overrides(base, hp), dropped)
