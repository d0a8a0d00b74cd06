"""The problem names T2T 1.15 registers that this project does not (``@registry.register_problem``
in its ``data_generators/`` modules; tests/data/t2t_1.15.7_models.json, from
tools/t2t_reference/list_t2t_models.py): ``--problem`` with one of them says it is T2T's and not
provided here, in one line, instead of "Unknown problem" and a nearest name that is another
problem (``wiki_revision_packed1k`` is not ``wiki_revision``'s data)."""

T2T_PROBLEMS_NOT_PROVIDED = """
    audio_timit_characters_tune audio_timit_tokens8k_test audio_timit_tokens8k_tune common_voice
    common_voice_clean common_voice_noisy common_voice_train_full_test_clean
    genomics_expression_cage10 genomics_expression_gm12878
    genomics_expression_l262k image_celeba image_celeba32 image_celeba64
    image_celeba_multi_resolution image_celebahq128 image_celebahq128_dmol image_celebahq256
    image_celebahq256_dmol image_cifar10 image_cifar100 image_cifar100_plain
    image_cifar100_plain8 image_cifar100_plain_gen image_cifar100_tune image_cifar10_plain
    image_cifar10_plain8 image_cifar10_plain_gen image_cifar10_plain_gen_dmol
    image_cifar10_plain_gen_flat image_cifar10_plain_random_shift image_cifar10_tune
    image_cifar20 image_cifar20_plain image_cifar20_plain8 image_cifar20_plain_gen
    image_cifar20_tune image_fashion_mnist image_fsns image_imagenet image_imagenet224
    image_imagenet224_no_normalization image_imagenet256 image_imagenet32 image_imagenet32_gen
    image_imagenet32_small image_imagenet64 image_imagenet64_gen image_imagenet64_gen_flat
    image_imagenet_multi_resolution_gen image_lsun_bedrooms image_mnist image_mnist_tune
    image_ms_coco_characters image_ms_coco_tokens32k image_text_ms_coco
    image_text_ms_coco_multi_resolution image_vqav2_rcnn_feature_tokens10k_labels3k
    image_vqav2_tokens10k_labels3k img2img_allen_brain img2img_allen_brain_dim16to16_paint1
    img2img_allen_brain_dim48to64 img2img_allen_brain_dim8to32 img2img_celeba img2img_celeba64
    img2img_cifar10 img2img_cifar100 img2img_imagenet
    languagemodel_en_wiki_lm_multi_nli_subwords languagemodel_en_wiki_lm_multi_nli_subwords64k
    languagemodel_en_wiki_lm_multi_nli_subwords_v2
    languagemodel_en_wiki_lm_short_multi_nli_subwords64k
    languagemodel_en_wiki_lm_squad_concat_subwords
    languagemodel_en_wiki_lm_summarize_cnndm_subwords
    languagemodel_en_wiki_lm_summarize_cnndm_subwords64k
    languagemodel_en_wiki_lm_summarize_frac10_cnndm_subwords64k
    languagemodel_en_wiki_lm_summarize_frac1_cnndm_subwords64k
    languagemodel_en_wiki_lm_summarize_frac20_cnndm_subwords64k
    languagemodel_en_wiki_lm_summarize_frac2_cnndm_subwords64k
    languagemodel_en_wiki_lm_summarize_frac50_cnndm_subwords64k
    languagemodel_en_wiki_lm_summarize_frac5_cnndm_subwords64k languagemodel_lm1b_multi_nli
    languagemodel_lm1b_multi_nli_subwords languagemodel_lm1b_sentiment_imdb
    languagemodel_multi_wiki_translate languagemodel_multi_wiki_translate_fr
    languagemodel_multi_wiki_translate_packed1k languagemodel_multi_wiki_translate_packed1k_v2
    librispeech librispeech_clean librispeech_clean_small librispeech_noisy
    librispeech_train_full_test_clean librispeech_train_full_test_other ocr_test
    timeseries_synthetic_data_series10_samples100k timeseries_toy_problem
    timeseries_toy_problem_no_inputs video_bair_robot_pushing
    video_bair_robot_pushing_with_actions video_google_robot_pushing video_moving_mnist
    video_stochastic_shapes10k wiki_revision wiki_revision_packed1k wiki_revision_packed256
    wikisum_commoncrawl wikisum_commoncrawl_lead_section wikisum_web wikisum_web_lead_section
""".split()

WHY = (
    "this project registers the T2T text problems it can train (translation, algorithmic, "
    "parsing, language models, classification, summarization, dialog...: t2t-datagen "
    "--registry_help lists them); for another task, write it as a --t2t_usr_dir problem on "
    "your data (docs/porting.md)"
)


# The names of T2T 1.15's t2t-datagen has beyond its registry: its legacy generators
# (bin/t2t_datagen.py, _SUPPORTED_PROBLEM_GENERATORS) but the two registered above.
T2T_DATAGEN_GENERATORS = (
    "algorithmic_algebra_inverse",
    "inference_snli32k",
    "audio_timit_characters_test",
    "audio_timit_tokens_8k_test",
    "audio_timit_tokens_32k_test",
)
WHY_GENERATOR = (
    "it is one of T2T's t2t-datagen legacy generators (_SUPPORTED_PROBLEM_GENERATORS); write "
    "it as a --t2t_usr_dir problem on your data (docs/porting.md)"
)


def t2t_problems_not_provided() -> dict[str, str]:
    """{T2T 1.15 problem name: why} for ``registry.note_not_provided``."""
    return dict.fromkeys(T2T_PROBLEMS_NOT_PROVIDED, WHY) | dict.fromkeys(
        T2T_DATAGEN_GENERATORS, WHY_GENERATOR
    )
