"""T2T 1.15's hparams that this project does not store, in one table: which are accepted and
which are refused, wherever T2T's names reach the project (a usr_dir's hparams function,
``--hparams``, an imported T2T ``hparams.json``: ``t2t_import/hparams_map.py``).

T2T 1.15's ``transformer_base`` has 153 hparams (``tensor2tensor/layers/common_hparams.py,
basic_params1`` and ``tensor2tensor/models/transformer.py, transformer_base_v1``); the project's
sets store the ones its model, input pipeline and optimizer read, under T2T's names and with
T2T's values. Every other one is here:

* ``IGNORED``: nothing here depends on it (bookkeeping, other models' and optimizers' knobs,
  TPU and precision switches): any value is accepted and kept beside the hparams, never in
  ``hparams.json``. (``dropout``, which T2T's transformer never reads either, is stored by
  the sets, as T2T's ``basic_params1`` has it, and takes any value too);
* ``NEUTRAL``: a feature of T2T's transformer that this project does not implement: accepted
  at the value that leaves it off (T2T's default), refused in one line otherwise.

Values are T2T 1.15.7's ``transformer_base`` ones (for the names only other sets of
``models/transformer.py`` add, the first such set's), recorded from T2T itself
(``tests/data/t2t_reference/t2t_1.15.7_hparams.json``, ``tests/test_t2t_hparams.py``).
"""

from __future__ import annotations

from typing import Any

# T2T hparams nothing here depends on: name -> T2T's value.
IGNORED: dict[str, Any] = {
    "activation_dtype": "float32",
    "add_relative_to_values": False,
    "area_key_mode": "none",
    "area_value_mode": "none",
    "bottom": {},
    "compress_steps": 0,
    "conv_first_kernel": 3,
    "daisy_chain_variables": True,
    "eval_run_autoregressive": False,
    "force_full_predict": False,
    "gpu_automatic_mixed_precision": False,
    "gumbel_noise_weight": 0.0,
    "heads_share_relative_embedding": False,
    "kernel_height": 3,
    "kernel_width": 1,
    "learning_rate_cosine_cycle_steps": 250000,
    "learning_rate_decay_rate": 1.0,
    "learning_rate_decay_staircase": False,
    "learning_rate_decay_steps": 5000,
    "learning_rate_minimum": None,
    "loss": {},
    "max_area_height": 1,
    "max_area_width": 1,
    "memory_height": 1,
    "mixed_precision_optimizer_init_loss_scale": 32768,
    "mixed_precision_optimizer_loss_scaler": "exponential",
    "mlperf_mode": False,
    "moe_hidden_sizes": "2048",
    "moe_k": 2,
    "moe_loss_coef": 0.001,
    "moe_num_experts": 16,
    "moe_overhead_eval": 2.0,
    "moe_overhead_train": 1.0,
    "multiproblem_fixed_train_length": -1,
    "multiproblem_label_weight": 0.5,
    "multiproblem_max_input_length": -1,
    "multiproblem_max_target_length": -1,
    "multiproblem_mixing_schedule": "constant",
    "multiproblem_per_task_threshold": "",
    "multiproblem_reweight_label_loss": False,
    "multiproblem_schedule_max_examples": 10000000.0,
    "multiproblem_schedule_threshold": 0.5,
    "multiproblem_target_eval_only": False,
    "multiproblem_vocab_size": -1,
    "name": {},
    "nbr_decoder_problems": 1,
    "no_data_parallelism": False,
    "optimizer_zero_grads": False,
    "overload_eval_metric_name": "",
    "pad_batch": False,
    "parameter_attention_key_channels": 0,
    "parameter_attention_value_channels": 0,
    "pretrained_model_dir": "",
    "scheduled_sampling_gold_mixin_prob": 0.5,
    "scheduled_sampling_method": "parallel",
    "scheduled_sampling_num_passes": 1,
    "scheduled_sampling_warmup_schedule": "exp",
    "scheduled_sampling_warmup_steps": 50000,
    "split_targets_chunk_length": 0,
    "split_targets_max_chunks": 100,
    "split_targets_strided_training": False,
    "summarize_grads": False,
    "summarize_vars": False,
    "top": {},
    "tpu_enable_host_call": False,
    "use_custom_ops": True,
    "video_num_input_frames": 1,
    "video_num_target_frames": 1,
    "warm_start_from_second": "",
    "weight_dtype": "float32",
    "weights_fn": {},
    # Added by other sets of T2T's models/transformer.py (vector-quantised gating, memory,
    # supervised attention): read only by those models' code.
    "beta": 0.25,
    "bottleneck_kind": "dvq",
    "decay": 0.999,
    "ema": False,
    "epsilon": 1e-05,
    "expected_attention_loss_multiplier": 1.0,
    "expected_attention_loss_type": "kl_divergence",
    "gating_type": "vq",
    "memory_type": "transformer_xl",
    "noise_dev": 0.5,
    "num_blocks": 1,
    "num_memory_items": 384,
    "num_residuals": 1,
    "num_samples": 10,
    "random_top_k": 1,
    "recurrent_memory_batch_size": 64,
    "residual_centroids": 0,
    "soft_em": False,
    "unconditional": True,
    "use_scales": 1,
    "z_size": 4,
}

# T2T transformer features not implemented here: name -> the value that leaves them off.
NEUTRAL: dict[str, Any] = {
    "attention_dropout_broadcast_dims": "",
    "attention_variables_3d": False,
    "causal_decoder_self_attention": True,
    "factored_logits": False,
    "hard_attention_k": 0,
    "input_modalities": "default",
    "layer_prepostprocess_dropout_broadcast_dims": "",
    "num_area_layers": 0,
    "pack_dataset": False,
    "position_features": "",
    "prepend_mode": "none",
    "proximity_bias": False,
    "relu_dropout_broadcast_dims": "",
    "scheduled_sampling_prob": 0.0,
    "split_to_length": 0,
    "symbol_dropout": 0.0,
    "symbol_modality_skip_top": False,
    "target_modality": "default",
    "unidirectional_encoder": False,
    "vocab_divisor": 1,
}


# T2T values this project's types cannot hold, as the value that means the same here: T2T's
# ``hparams.pos = None`` (models/transformer.py: transformer_relative) is "none".
T2T_VALUES: dict[tuple[str, Any], Any] = {("pos", None): "none"}


def check_t2t_only(name: str, value: Any) -> str | None:
    """Why ``name=value`` is refused (one line), or None when it is accepted; ``name`` is one
    of ``IGNORED`` or ``NEUTRAL``."""
    if name in NEUTRAL and value != NEUTRAL[name]:
        return (
            f"hparam {name}={value!r} asks for a T2T feature this project does not implement "
            f"(only {name}={NEUTRAL[name]!r}, T2T's default, is): leave it at that value."
        )
    return None


def is_t2t_only(name: str) -> bool:
    """A T2T 1.15 hparam the project's sets do not store (``IGNORED`` or ``NEUTRAL``)."""
    return name in IGNORED or name in NEUTRAL
