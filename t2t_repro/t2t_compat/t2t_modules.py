"""Every library module of T2T 1.15.7's wheel, by T2T's import name, and what each gives a
usr_dir here (docs/porting.md).

The list is T2T's (``tests/test_t2t_modules.py`` checks it against
``tests/data/t2t_1.15.7_modules.json``, made from the wheel by
``tools/t2t_reference/list_t2t_modules.py``). ``aliases.py`` makes each importable: the modules
this project provides (``aliases.ALIASES``) are its own; every other one is a module object made
on import (``T2TModule``) whose names are stand-ins (``refusals.stand_in``) that can be named,
imported, subclassed or written as a decorator's name and fail in one line, naming what to use
here, when used; T2T's problem classes that this project implements (``IMPLEMENTED``) are the
project's, to use and subclass. T2T's scripts (``bin/``) and its ``rl``, ``envs`` and
``insights`` packages are refused in one line at import (``REFUSED_PACKAGES``).
"""

from __future__ import annotations

import importlib
import types

from t2t_repro.t2t_compat import refusals

ROOT = "tensor2tensor"

# T2T's packages (an ``__init__.py`` in the wheel).
PACKAGES = frozenset(
    f"{ROOT}{suffix}"
    for suffix in (
        "",
        ".data_generators",
        ".data_generators.wikisum",
        ".layers",
        ".metrics",
        ".models",
        ".models.neural_architecture_search",
        ".models.research",
        ".models.video",
        ".serving",
        ".utils",
        ".visualization",
    )
)
# T2T package -> the last part of the name of each of its modules.
_MODULES = {
    "tensor2tensor": ("problems problems_colab "),
    "tensor2tensor.data_generators": (
        "algorithmic algorithmic_math algorithmic_math_deepmind "
        "algorithmic_math_two_variables all_problems allen_brain audio audio_encoder babi_qa "
        "bair_robot_pushing celeba celebahq cifar cipher cleaner_en_xx cnn_dailymail cola "
        "common_voice conll_ner desc2code dialog_abstract dialog_cornell dialog_dailydialog "
        "dialog_opensubtitles dialog_personachat dna_encoder enwik8 fsns function_docstring "
        "gene_expression generator_utils google_robot_pushing gym_env ice_parsing image_lsun "
        "image_utils imagenet imdb inspect_tfrecord lambada librispeech lm1b lm1b_imdb "
        "lm1b_mnli mnist moving_mnist mrpc mscoco multi_problem multi_problem_v2 multinli ocr "
        "paraphrase_ms_coco pointer_generator_word problem problem_hparams program_search ptb "
        "qnli quora_qpairs rte scitail snli speech_recognition squad sst_binary stanford_nli "
        "style_transfer subject_verb_agreement text_encoder text_encoder_build_subword "
        "text_problems timeseries timeseries_data_generator tokenizer transduction_problems "
        "translate translate_encs translate_ende translate_enes translate_enet translate_enfr "
        "translate_enid translate_enmk translate_enro translate_entn translate_envi "
        "translate_enzh video_generated video_utils vqa vqa_utils wiki wiki_lm "
        "wiki_multi_problems wiki_revision wiki_revision_utils wikitext103 wnli wsj_parsing "
        "yelp_full yelp_polarity "
    ),
    "tensor2tensor.data_generators.wikisum": (
        "generate_vocab get_references_commoncrawl get_references_web "
        "get_references_web_single_group html parallel_launch produce_examples utils "
        "validate_data wikisum "
    ),
    "tensor2tensor.layers": (
        "area_attention common_attention common_audio common_hparams common_image_attention "
        "common_layers common_video discretization latent_layers message_passing_attention "
        "modalities ngram transformer_glow_layers transformer_glow_layers_ops "
        "transformer_layers transformer_memory vq_discrete vqa_layers "
    ),
    "tensor2tensor.metrics": ("video_conditional_fvd "),
    "tensor2tensor.models": (
        "basic bytenet distillation evolved_transformer image_transformer "
        "image_transformer_2d lstm mtf_image_transformer mtf_resnet mtf_transformer "
        "mtf_transformer2 neural_assistant neural_gpu resnet revnet shake_shake slicenet "
        "text_cnn transformer vanilla_gan xception "
    ),
    "tensor2tensor.models.neural_architecture_search": ("nas_layers nas_model "),
    "tensor2tensor.models.research": (
        "adafactor_experiments aligned attention_lm attention_lm_moe autoencoders cycle_gan "
        "gene_expression glow glow_init_hook glow_ops lm_experiments moe moe_experiments "
        "multiquery_paper neural_stack residual_shuffle_exchange rl shuffle_network "
        "similarity_transformer super_lm transformer_aux transformer_moe transformer_nat "
        "transformer_parallel transformer_revnet transformer_sketch transformer_symshard "
        "transformer_vae transformer_vae_flow_prior transformer_vae_flow_prior_ops "
        "universal_transformer universal_transformer_util vqa_attention "
        "vqa_recurrent_self_attention vqa_self_attention "
    ),
    "tensor2tensor.models.video": (
        "base base_vae basic_deterministic basic_deterministic_params basic_recurrent "
        "basic_stochastic emily epva epva_params next_frame_glow nfg_interpolate "
        "nfg_test_utils savp savp_params sv2p sv2p_params tests_utils "
    ),
    "tensor2tensor.serving": ("export query serving_utils "),
    "tensor2tensor.utils": (
        "adafactor adv_attack_utils avg_checkpoints beam_search bleu_hook cloud_mlengine "
        "compute_video_metrics contrib data_reader decoding devices diet expert_utils flags "
        "get_rouge hparam hparams_lib learning_rate metrics metrics_hook misc_utils "
        "mlperf_log mlperf_tags mtf_model multistep_optimizer multistep_with_adamoptimizer "
        "optimize partial_checkpoint_load_hook pruning_utils quantization registry "
        "restore_hook rouge sari_hook scheduled_sampling t2t_model test_utils trainer_lib "
        "update_ops_hook usr_dir video2gif video_metrics yellowfin "
    ),
    "tensor2tensor.visualization": ("attention visualization "),
}
LIBRARY = PACKAGES | frozenset(
    f"{package}.{leaf}" for package, leaves in _MODULES.items() for leaf in leaves.split()
)

# T2T's problem classes that this project implements: T2T module -> {class name: module here}.
_WMT = "t2t_repro.builtin.problems.translate_wmt"
_TRANSLATE = "t2t_repro.t2t_compat.translate_problems"
_VARIANTS = "t2t_repro.t2t_compat.translate_wmt_variants"
_SENTIMENT = "t2t_repro.t2t_compat.sentiment_problems"
_GLUE = "t2t_repro.t2t_compat.glue_problems"
_PACKED = "t2t_repro.t2t_compat.packed_problems"


def _at(where: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), where)


IMPLEMENTED: dict[str, dict[str, str]] = {
    f"{ROOT}.data_generators.translate_ende": {
        **_at(_WMT, "TranslateEndeWmt32k TranslateEndeWmt8k"),
        **_at(_TRANSLATE, "TranslateEndeWmtCharacters TranslateEndeWmtMulti64k"),
        **_at(
            _VARIANTS,
            "TranslateEnde2018Wmt32k TranslateEndeWmtClean32k TranslateEndePc32k "
            "TranslateEndePcClean32k TranslateEndeWmtPc32k TranslateEndeWmtCleanPc32k "
            "TranslateEndeWmtPcClean32k TranslateEndeWmtCleanPcClean32k",
        ),
    },
    f"{ROOT}.data_generators.translate_enfr": {
        **_at(_WMT, "TranslateEnfrWmt32k TranslateEnfrWmt8k"),
        **_at(
            _TRANSLATE,
            "TranslateEnfrWmtSmall8k TranslateEnfrWmtSmall32k TranslateEnfrWmtSmallCharacters "
            "TranslateEnfrWmtCharacters TranslateEnfrWmtMulti64k",
        ),
        **_at(
            _VARIANTS,
            "TranslateEnfrWmt32kWithBacktranslateFr TranslateEnfrWmt32kWithBacktranslateEn",
        ),
    },
    **{
        f"{ROOT}.data_generators.{module}": _at(_TRANSLATE, names)
        for module, names in {
            "translate_envi": "TranslateEnviIwslt32k",
            "translate_enro": "TranslateEnroWmt8k TranslateEnroWmt32k TranslateEnroWmtCharacters "
            "TranslateEnroWmtMulti64k TranslateEnroWmtMultiSmall64k TranslateEnroWmtMultiTiny64k",
            "translate_encs": "TranslateEncsWmt32k TranslateEncsWmtCharacters",
            "translate_enid": "TranslateEnidIwslt32k",
            "translate_enmk": "TranslateEnmkSetimes32k TranslateEnmkSetimesCharacters",
            "translate_enet": "TranslateEnetWmt32k TranslateEnetWmtCharacters",
            "translate_enes": "TranslateEnesWmt32k TranslateEnesWmtClean32k TranslateEnesWmt8k "
            "TranslateEnesWmtCharacters",
            "translate_entn": "TranslateEntnRma",
        }.items()
    },
    **{
        f"{ROOT}.data_generators.{module}": _at(where, names)
        for module, (where, names) in {
            "imdb": (_SENTIMENT, "SentimentIMDB SentimentIMDBCharacters"),
            "sst_binary": (_SENTIMENT, "SentimentSSTBinary SentimentSSTBinaryCharacters"),
            "yelp_polarity": (_SENTIMENT, "SentimentYelpPolarity SentimentYelpPolarityCharacters"),
            "yelp_full": (_SENTIMENT, "SentimentYelpFull SentimentYelpFullCharacters"),
            "cola": (_GLUE, "Cola ColaCharacters"),
            "mrpc": (_GLUE, "MSRParaphraseCorpus MSRParaphraseCorpusCharacters"),
            "qnli": (_GLUE, "QuestionNLI QuestionNLICharacters"),
            "quora_qpairs": (_GLUE, "QuoraQuestionPairs QuoraQuestionPairsCharacters"),
            "rte": (_GLUE, "RTE RTECharacters"),
            "wnli": (_GLUE, "WinogradNLI WinogradNLICharacters"),
            "scitail": (_GLUE, "SciTail SciTailCharacters SciTailSharedVocab"),
            "stanford_nli": (
                _GLUE,
                "StanfordNLI StanfordNLICharacters StanfordNLISharedVocab "
                "StanfordNLIWikiLMSharedVocab StanfordNLIWikiLMSharedVocab64k",
            ),
            "multinli": (
                _GLUE,
                "MultiNLI MultiNLICharacters MultiNLISharedVocab MultiNLIText2text "
                "MultiNLIWikiLMSharedVocab MultiNLIWikiLMSharedVocab64k "
                "MultiNLIWikiLMMultiVocab64k",
            ),
            "cnn_dailymail": (
                "t2t_repro.t2t_compat.summarization_problems",
                "SummarizeCnnDailymail32k SummarizeCnnDailymailWikiLMSharedVocab "
                "SummarizeCnnDailymailWikiLMSharedVocab64k "
                "SummarizeCnnDailymailWikiLMMultiVocab64k "
                "SummarizeFracCnnDailymailWikiLMSharedVocab64k "
                + " ".join(
                    f"SummarizeFrac{frac}CnnDailymailWikiLMSharedVocab64k"
                    for frac in ("0p1", "1", "2", "5", "10", "20", "50")
                ),
            ),
            "problem_hparams": (
                "t2t_repro.t2t_compat.ptb_parsing",
                "ParsingEnglishPtb8k ParsingEnglishPtb16k",
            ),
            "squad": (
                "t2t_repro.t2t_compat.squad_problems",
                "SquadText2text Squad SquadConcat SquadConcatPositioned SquadConcatMulti64k "
                "SquadConcatSharedVocab",
            ),
        }.items()
    },
}

# T2T's *_packed problems (t2t_compat/packed_problems.py), each in its T2T module.
for _module, _names in {
    "translate_ende": "TranslateEndeWmt32kPacked TranslateEndeWmt8kPacked "
    "TranslateEndeWmtMulti64kPacked1k",
    "translate_enfr": "TranslateEnfrWmt32kPacked TranslateEnfrWmtMulti64kPacked1k",
    "translate_enes": "TranslateEnesWmt32kPacked TranslateEnesWmt8kPacked",
    "translate_enro": "TranslateEnroWmtMultiTiny64kPacked1k",
    "multinli": "MultiNLIText2textMulti64kPacked1k",
    "squad": "SquadText2textMulti64kPacked1k",
    "cnn_dailymail": "SummarizeCnnDailymailMulti64kPacked1k",
    "wiki_lm": "LanguagemodelDeEnFrRoWiki64kFitbPacked1k",
    "lm1b": "LanguagemodelLm1b8kPacked LanguagemodelLm1bCharactersPacked",
}.items():
    IMPLEMENTED.setdefault(f"{ROOT}.data_generators.{_module}", {}).update(_at(_PACKED, _names))

_NO_LAYERS = (
    "T2T's layers are not provided: only this project's own transformer runs "
    "(--model=transformer with an hparams set)"
)
_NO_MODELS = (
    "T2T's models other than the transformer, and their hparams sets, are not provided: "
    "train --model=transformer with a transformer hparams set (t2t-trainer --registry_help "
    "lists them)"
)
_NO_PROBLEM = (
    "T2T's data generators of this module are not provided: register your own "
    "Text2TextProblem or TranslateProblem (t2t-datagen --registry_help lists the problems "
    "this project has)"
)
# T2T module (or package, for every module under it) -> what to use here instead; the
# longest matching name wins.
_INSTEAD = {
    f"{ROOT}.problems": (
        "look a problem up with registry.problem(name) from tensor2tensor.utils.registry "
        "(t2t-datagen --registry_help lists them)"
    ),
    f"{ROOT}.problems_colab": "look a problem up with registry.problem(name)",
    f"{ROOT}.utils": (
        "T2T's utilities of this module are not provided: the t2t-* commands do their work "
        "(docs/porting.md lists the modules provided)"
    ),
    f"{ROOT}.utils.trainer_lib": (
        "train with t2t-trainer, and build hparams with registry.hparams(name) from "
        "tensor2tensor.utils.registry"
    ),
    f"{ROOT}.utils.optimize": (
        "the optimizer and learning-rate schedule are set by hparams (optimizer, "
        "learning_rate_schedule, ...) in an hparams set or --hparams"
    ),
    f"{ROOT}.utils.decoding": (
        "decode with t2t-decoder (--decode_from_file, --decode_interactive, or a split)"
    ),
    f"{ROOT}.layers": _NO_LAYERS,
    f"{ROOT}.models": _NO_MODELS,
    f"{ROOT}.data_generators": _NO_PROBLEM,
    f"{ROOT}.data_generators.problem_hparams": (
        "T2T's audio and test problem hparams are not provided: a problem's hparams come from its "
        "hparams(defaults, model_hparams) hook"
    ),
    f"{ROOT}.metrics": "T2T's video metrics are not provided",
    f"{ROOT}.serving": "export with t2t-exporter and query a served model with t2t-query-server",
    f"{ROOT}.visualization": "t2t-attention draws a model's attention",
}

REFUSED_PACKAGES = {
    f"{ROOT}.bin": "T2T's scripts are this project's commands: run t2t-trainer, t2t-datagen, "
    "t2t-decoder, ... (the module's name with '-' for '_')",
    f"{ROOT}.rl": "reinforcement learning is not supported here",
    f"{ROOT}.envs": "T2T's RL environments are not supported here",
    f"{ROOT}.insights": "T2T's insights server is not provided: decode with t2t-decoder",
}


# T2T's modules import each other by their last name (``from tensor2tensor.data_generators import
# problem``), and usr_dirs read those through them (``translate_envi.problem.DatasetSplit``).
_IMPORTING_PACKAGES = ("data_generators", "utils", "layers", "models")
# T2T module (without "tensor2tensor.") -> the names it binds to something else than T2T's
# module of that last name (problems.py's ``problem`` function, absl's ``flags``): checked
# against T2T 1.15.7's source (tools/t2t_reference/list_t2t_modules.py).
NAMES_NOT_MODULES = {
    "data_generators.audio": "flags",
    "data_generators.video_utils": "flags",
    "data_generators.wiki_revision": "flags",
    "data_generators.wikisum.generate_vocab": "flags wikisum",
    "data_generators.wikisum.get_references_commoncrawl": "flags wikisum",
    "data_generators.wikisum.get_references_web": "flags",
    "data_generators.wikisum.get_references_web_single_group": "flags",
    "data_generators.wikisum.parallel_launch": "flags",
    "data_generators.wikisum.produce_examples": "flags wikisum",
    "data_generators.wikisum.validate_data": "flags wikisum",
    "data_generators.wsj_parsing": "flags",
    "models": "gene_expression",
    "models.lstm": "lstm",
    "models.mtf_transformer2": "transformer transformer_layers",
    "models.neural_gpu": "neural_gpu",
    "models.research.glow_ops": "revnet",
    "models.revnet": "revnet",
    "models.video.nfg_interpolate": "flags",
    "problems": "problem",
    "problems_colab": "problem",
    "serving.query": "flags",
    "utils.avg_checkpoints": "flags",
    "utils.beam_search": "beam_search",
    "utils.contrib": "metrics",
    "utils.flags": "flags",
    "utils.optimize": "adafactor optimize",
    "utils.registry": "problem",
    "utils.video2gif": "flags",
}


def imported_module(module: str, name: str) -> types.ModuleType | None:
    """T2T's library module that the attribute ``name`` of T2T's ``module`` is, when ``name``
    is such a module's last name and ``module`` binds it to nothing else, else None."""
    if name in NAMES_NOT_MODULES.get(module.removeprefix(f"{ROOT}."), "").split():
        return None
    for package in _IMPORTING_PACKAGES:
        full = f"{ROOT}.{package}.{name}"
        if full in LIBRARY:
            return importlib.import_module(full)
    return None


def instead(module: str) -> str:
    """What to use here instead of the names of T2T's ``module``."""
    parts = module.split(".")
    for depth in range(len(parts), 0, -1):
        found = _INSTEAD.get(".".join(parts[:depth]))
        if found:
            return found
    return "see docs/porting.md for what this project provides"


def refused_import(module: str) -> str | None:
    """The one line for importing ``module`` when it is in a refused package, else None."""
    for package, why in REFUSED_PACKAGES.items():
        if module == package or module.startswith(package + "."):
            return (
                f"{module} is not provided by this project's tensor2tensor API: {why} "
                "(docs/porting.md)."
            )
    return None


class T2TModule(types.ModuleType):
    """A T2T module this project does not provide, importable under T2T's name. A package
    gives its submodules; any other module gives each public name as a stand-in that fails
    in one line when used, but T2T's problem classes that are implemented here
    (``IMPLEMENTED``) are this project's."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        if full in LIBRARY:
            return importlib.import_module(full)
        if self.__name__ in PACKAGES:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        where = IMPLEMENTED.get(self.__name__, {}).get(name)
        if where:
            return getattr(importlib.import_module(where), name)
        return imported_module(self.__name__, name) or refusals.stand_in(
            full, instead(self.__name__)
        )
