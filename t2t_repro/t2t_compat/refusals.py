"""T2T 1.15's public names that the T2T edge does not provide, and what to use here instead.

Every public function and class of the ``tensor2tensor`` modules a usr_dir imports exists in
``t2t_compat/`` (``tests/test_t2t_surface.py`` checks it against T2T 1.15.7's own source,
``tests/data/t2t_1.15.7_public_names.json``). What the edge maps onto this project's API is
defined in its module; the rest is this table, T2T name -> what to use here, and each module's
``__getattr__`` (``module_getattr``) turns a name of the table into a stand-in that imports and
can be named, subclassed or used as a decorator's name, and raises one line (``T2TApiError``)
when it is called. A constant cannot be called, so the few constants not provided refuse when
they are read (``REFUSED_CONSTANTS``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from t2t_repro.errors import UserError


class T2TApiError(UserError):
    """A T2T name that imports here but that this project does not provide. Not an
    ``AttributeError``: ``from m import name`` would turn it into a vaguer "cannot import
    name"."""


def refusal_message(t2t_name: str, instead: str) -> str:
    """The one line every refused T2T name gives."""
    return (
        f"{t2t_name} is not provided by this project's tensor2tensor API: {instead} "
        "(docs/porting.md)."
    )


_TRAIN = (
    "train with t2t-trainer (--model=transformer, or --model=transformer_encoder for a class "
    "label, with an hparams set)"
)
_LAYERS = "T2T's layer functions are not provided: only this project's own transformer runs"
_PACKED = (
    "T2T's packer class is not provided: pack a dataset with generator_utils.pack_dataset or "
    "the pack_dataset hparam (docs/packing.md)"
)
_RANGES = (
    "hyperparameter tuning with ranges is not supported: run one t2t-trainer per --hparams "
    "setting (a ranged-hparams function registers, but is never called)"
)
# T2T 1.15's sets of models/transformer.py that are not registered here, by what they need.
_START_FROM = (
    "start from transformer.transformer_base() (T2T 1.15's) and set the fields in your own "
    "@registry.register_hparams set, or use --hparams_set=transformer_base with --hparams "
    "(t2t-trainer --registry_help lists the sets)"
)
_SET_BF16 = (
    "it stores its weights in bfloat16 (weight_dtype), which this project does not "
    "implement (its bfloat16 activations, activation_dtype, are: transformer_tpu_bf16_activation); "
    + _START_FROM
)
_SET_MLPERF = (
    "it sets mlperf_mode (T2T's MLPerf compliance logging and stopping at the target BLEU), "
    "not implemented here; " + _START_FROM
)
_SET_MEMORY = (
    "it is for T2T's TransformerMemory (memory_type, recurrent memory over chunks of "
    "split targets), not provided here; " + _START_FROM
)
_SET_FFN = (
    "it needs a feed-forward layer not implemented here (local_moe, "
    "conv_relu_conv or parameter_attention: only dense_relu_dense is); " + _START_FROM
)

# T2T module -> {what to use instead: "names T2T defines there"}.
_TABLE: dict[str, dict[str, str]] = {
    "tensor2tensor.utils.registry": {
        "the optimizer is chosen by hparams (optimizer, optimizer_adam_beta1, ...) in an "
        "hparams set or --hparams": "optimizer list_optimizers register_optimizer",
        "reinforcement-learning env problems are not supported": (
            "env_problem list_env_problems register_env_problem"
        ),
        "adversarial attacks are not supported": (
            "attack list_attacks register_attack attack_params list_attack_params "
            "register_attack_params"
        ),
        "model pruning is not supported": (
            "pruning_params list_pruning_params register_pruning_params pruning_strategy "
            "list_pruning_strategies register_pruning_strategy"
        ),
        "use the registry's functions (registry.problem(name), registry.hparams(name), "
        "list_hparams(), ...)": "Registry Registries",
    },
    "tensor2tensor.utils.hparam": {
        "parse hparams strings with HParams.parse (or HParams.override_from_dict)": (
            "parse_values"
        ),
    },
    "tensor2tensor.layers.common_hparams": {_RANGES: "RangedHParams basic_range1 basic_moe_range"},
    "tensor2tensor.data_generators.problem": {
        "a problem's hparams(defaults, model_hparams) hook sets the problem hparams; the "
        "features are the project's": "problem_hparams_to_features",
    },
    "tensor2tensor.data_generators.text_problems": {
        "datagen runs in one process here (T2T's DistributedText2TextProblem splits it over "
        "tasks): subclass Text2TextProblem": "DistributedText2TextProblem",
    },
    "tensor2tensor.data_generators.translate": {
        "subclass TranslateProblem and give it distillation targets as its targets": (
            "TranslateDistillProblem"
        ),
        "the trainer reports T2T's approx_bleu_score (and dev BLEU of decodes) when "
        "eval_metrics includes it, and t2t-bleu scores decodes": "compute_bleu_summaries",
    },
    "tensor2tensor.data_generators.text_encoder": {
        "one-hot class labels, real values and images are not model outputs here (a class "
        "label is: ClassLabelEncoder)": ("OneHotClassLabelEncoder RealEncoder ImageEncoder"),
    },
    "tensor2tensor.data_generators.generator_utils": {_PACKED: "SequenceDatasetPacker"},
    "tensor2tensor.models.transformer": {
        _TRAIN: "TransformerScorer TransformerEncoder TransformerRegressor TransformerMemory",
        _LAYERS: (
            "fast_decode fast_decode_tpu features_to_nonpadding transformer_decode "
            "transformer_decoder transformer_decoder_layer transformer_encode "
            "transformer_encoder transformer_ffn_layer transformer_prepare_decoder "
            "transformer_prepare_encoder transformer_self_attention_layer"
        ),
        _RANGES: "transformer_base_range transformer_tiny_tpu_range transformer_tpu_range",
        _SET_BF16: "transformer_tpu_1b",
        _SET_MLPERF: "transformer_mlperf_tpu",
        _SET_MEMORY: (
            "transformer_cifar10_memory_v0 transformer_imagenet64_memory_v0 "
            "transformer_wikitext103_l16k_memory_v0 transformer_wikitext103_l4k_memory_v0"
        ),
        _SET_FFN: (
            "transformer_base_vq1_16_nb1_packed_dan_b01_scales "
            "transformer_base_vq1_16_nb1_packed_nda_b01_scales "
            "transformer_base_vq1_16_nb1_packed_nda_b01_scales_dialog "
            "transformer_base_vq_ada_32ex_packed transformer_common_voice "
            "transformer_common_voice_tpu transformer_librispeech transformer_librispeech_tpu "
            "transformer_librispeech_tpu_v1 transformer_librispeech_tpu_v2 "
            "transformer_librispeech_v2 transformer_librispeech_with_area_attention "
            "transformer_parameter_attention_a transformer_parameter_attention_b "
            "transformer_topk_16_packed transformer_tpu_with_conv"
        ),
    },
    "tensor2tensor.layers.modalities": {
        "T2T's modality functions are not provided: this project's transformer has its own "
        "symbol embedding and softmax (name a modality with ModalityType in the problem's "
        "hparams hook)": (
            "audio_bottom audio_spectral_bottom class_label_bottom class_label_targets_bottom "
            "class_label_top convert_rgb_to_real ctc_symbol_loss generic_l2_loss generic_loss "
            "get_bottom get_loss get_name get_targets_bottom get_top get_weights "
            "get_weights_fn identity_bottom identity_top image_bottom "
            "image_channel_compress_bottom image_channel_compress_targets_bottom "
            "image_channel_compress_top image_channel_embeddings_bottom "
            "image_channel_embeddings_top image_targets_bottom image_top is_pointwise "
            "make_targets_bottom multi_label_loss one_hot_class_label_loss real_bottom "
            "real_l2_loss real_log_poisson_loss real_top sigmoid_class_label_loss "
            "sigmoid_max_pooling_class_label_loss sigmoid_max_pooling_class_label_top "
            "softmax_average_pooling_class_label_top softmax_last_timestep_class_label_top "
            "softmax_max_pooling_class_label_top speech_recognition_bottom symbol_bottom "
            "symbol_one_hot_bottom symbol_one_hot_loss symbol_one_hot_top "
            "symbol_targets_bottom symbol_top video_bitwise_bottom "
            "video_bitwise_targets_bottom video_bottom video_identity_bottom "
            "video_identity_loss video_identity_targets_bottom video_l1_internal_loss "
            "video_l1_loss video_l1_raw_loss video_l1_top video_l2_internal_loss "
            "video_l2_loss video_l2_raw_loss video_loss video_pixel_noise_bottom "
            "video_raw_bottom video_raw_targets_bottom video_raw_top video_targets_bottom "
            "video_top"
        ),
    },
    "tensor2tensor.utils.metrics": {
        "the trainer computes its own eval metrics (loss, accuracy, per-sequence accuracy, "
        "those eval_metrics names, dev BLEU of decodes with approx_bleu_score): name them "
        "with Metrics in eval_metrics": (
            "abs_error create_eager_metrics create_eager_metrics_for_problem "
            "create_eager_metrics_internal create_evaluation_metrics dmol_neg_log_perplexity "
            "image_rmse image_summary multilabel_accuracy_match3 multilabel_accuracy_matchk "
            "padded_accuracy padded_accuracy_top5 padded_accuracy_topk padded_log_poisson "
            "padded_neg_log_perplexity padded_neg_log_perplexity_with_masking padded_rmse "
            "padded_sequence_accuracy padded_variance_explained "
            "pearson_correlation_coefficient prefix_accuracy roc_auc rounding_accuracy "
            "rounding_sequence_accuracy sequence_edit_distance set_precision set_recall "
            "sigmoid_accuracy sigmoid_accuracy_one_hot sigmoid_cross_entropy_one_hot "
            "sigmoid_precision_one_hot sigmoid_recall_one_hot softmax_cross_entropy_one_hot "
            "two_class_accuracy two_class_log_likelihood unpadded_mse word_error_rate"
        ),
    },
    "tensor2tensor.utils.t2t_model": {
        _TRAIN: (
            "average_sharded_losses create_dummy_vars create_eager_var_store create_host_call "
            "create_tpu_eval_metrics_fn initialize_from_ckpt log_debug log_info log_warn "
            "remove_summaries set_custom_getter_compose summarize_features DummyVariableStore"
        )
    },
}
REFUSED: dict[str, dict[str, str]] = {
    module: {name: instead for instead, names in groups.items() for name in names.split()}
    for module, groups in _TABLE.items()
}
_UNPROVIDED_SETS = (
    _SET_BF16,
    _SET_MLPERF,
    _SET_MEMORY,
    _SET_FFN,
)


def t2t_sets_not_provided() -> dict[str, str]:
    """T2T 1.15's hparams sets (``models/transformer.py``) not registered here -> why: what
    ``--hparams_set`` says of them (``registry.note_not_provided``)."""
    names = REFUSED["tensor2tensor.models.transformer"]
    return {name: why for name, why in names.items() if why in _UNPROVIDED_SETS}


# Constants T2T defines that the edge does not: refused when read.
REFUSED_CONSTANTS: dict[str, dict[str, str]] = {
    "tensor2tensor.utils.hparam": {"PARAM_RE": "parse hparams strings with HParams.parse"},
    "tensor2tensor.utils.metrics": {"METRICS_FNS": "name metrics with Metrics in eval_metrics"},
    "tensor2tensor.utils.t2t_model": {"TPU_METRIC_BLACKLIST": _TRAIN},
    "tensor2tensor.utils.mlperf_log": {
        "LOG_FILE": "MLPerf compliance logging is not supported here (no log file is written)"
    },
}


class _RefusedType(type):
    """The type of a refused name: calling it (or a user's subclass of it) raises one line;
    so does reading a public attribute it lacks (``Registries.problems``), or using it as a
    container (T2T's lists of corpora, ``translate_ende._ENDE_TRAIN_DATASETS``)."""

    t2t_refusal: str

    def __call__(cls, *args, **kwargs):
        raise T2TApiError(cls.t2t_refusal)

    def __getattr__(cls, attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        raise T2TApiError(cls.t2t_refusal)

    def __bool__(cls) -> bool:
        return True  # a name, as any class: not a container's emptiness

    def __iter__(cls):
        raise T2TApiError(cls.t2t_refusal)

    def __len__(cls) -> int:
        raise T2TApiError(cls.t2t_refusal)

    def __getitem__(cls, key):
        raise T2TApiError(cls.t2t_refusal)


def is_stand_in(obj: object) -> bool:
    """Whether ``obj`` is a refused name's stand-in, or a usr_dir's subclass of one."""
    return isinstance(obj, _RefusedType)


@functools.cache
def stand_in(t2t_name: str, instead: str) -> type:
    """The stand-in of T2T's ``module.name`` (one object per name, so ``is`` holds)."""
    message = refusal_message(t2t_name, instead)
    module, _, name = t2t_name.rpartition(".")
    namespace = {"__doc__": message, "__module__": module, "t2t_refusal": message}
    return _RefusedType(name, (), namespace)


def refused(t2t_module: str, name: str) -> type:
    """The stand-in of a name of this table (``REFUSED``)."""
    return stand_in(f"{t2t_module}.{name}", REFUSED[t2t_module][name])


def module_getattr(t2t_module: str) -> Callable[[str], object]:
    """A module-level ``__getattr__`` (PEP 562) for the edge module of ``t2t_module``: names
    the module defines are found before it is asked."""
    names, constants = REFUSED.get(t2t_module, {}), REFUSED_CONSTANTS.get(t2t_module, {})

    def __getattr__(name: str) -> object:
        if name in names:
            return refused(t2t_module, name)
        if name in constants:
            raise T2TApiError(refusal_message(f"{t2t_module}.{name}", constants[name]))
        raise AttributeError(f"module {t2t_module!r} has no attribute {name!r}")

    return __getattr__
