"""The built-in registrations: ``t2t_repro.models``, ``t2t_repro.builtin.problems`` and
``.hparams`` (the checkout's ``problems/`` and ``hparams/`` folders, setup.py), and T2T's own
language-model problems (``t2t_compat/lm_problems.py``), algorithmic problems
(``t2t_compat/algorithmic.py``), text classifiers (``sentiment_problems.py``,
``glue_problems.py``), translation problems
(``t2t_compat/translate_problems.py``) and ``wsj_parsing`` (``t2t_compat/wsj_parsing.py``).

Why here and not in the registry: the registry is the lowest module (layers and hparams use
it), so it must not reach up to name packages that sit above it. As in tensor2tensor (whose
``bin/t2t_trainer.py`` imports ``tensor2tensor.models`` and ``data_generators.all_problems``
itself), the tools that look names up import what registers them: plain imports, installed
with ``t2t_repro`` by ``setup.py`` under the project's own name, so that a ``--t2t_usr_dir``
named ``problems`` or ``hparams`` is the user's. Library users (tests, bench scripts, notebooks)
call ``register_builtins()`` once, or import only the packages they want.
"""

from __future__ import annotations


def register_builtins() -> None:
    """Registers the built-in models, problems and hparams sets (idempotent; imports TF)."""
    import t2t_repro.builtin.hparams  # noqa: F401
    import t2t_repro.builtin.problems  # noqa: F401
    import t2t_repro.models  # noqa: F401
    import t2t_repro.t2t_compat.algorithmic  # noqa: F401  (T2T's algorithmic problems)
    import t2t_repro.t2t_compat.algorithmic_math_deepmind  # noqa: F401  (DeepMind mathematics)
    import t2t_repro.t2t_compat.algorithmic_math_two_variables  # noqa: F401  (x, y arithmetic)
    import t2t_repro.t2t_compat.cipher  # noqa: F401  (T2T's cipher problems)
    import t2t_repro.t2t_compat.conll_ner  # noqa: F401  (T2T's CoNLL 2002 NER problems)
    import t2t_repro.t2t_compat.desc2code  # noqa: F401  (T2T's Description2Code problems)
    import t2t_repro.t2t_compat.dialog_corpora  # noqa: F401  (T2T's dialog problems)
    import t2t_repro.t2t_compat.enwik8_problems  # noqa: F401  (T2T's enwik8_l65k)
    import t2t_repro.t2t_compat.function_docstring  # noqa: F401  (github_function_docstring)
    import t2t_repro.t2t_compat.glue_problems  # noqa: F401  (T2T's GLUE-style classifiers)
    import t2t_repro.t2t_compat.ice_parsing  # noqa: F401  (T2T's parsing_icelandic16k)
    import t2t_repro.t2t_compat.lambada_problems  # noqa: F401  (T2T's LAMBADA problems)
    import t2t_repro.t2t_compat.lm_problems  # noqa: F401  (T2T's own language-model problems)
    import t2t_repro.t2t_compat.packed_problems  # noqa: F401  (T2T's *_packed problems)
    import t2t_repro.t2t_compat.paraphrase_ms_coco  # noqa: F401  (T2T's MS COCO paraphrases)
    import t2t_repro.t2t_compat.pointer_generator_word  # noqa: F401  (text2text_copyable_tokens)
    import t2t_repro.t2t_compat.program_search  # noqa: F401  (T2T's program_search_algolisp)
    import t2t_repro.t2t_compat.ptb_parsing  # noqa: F401  (T2T's parsing_english_ptb*)
    import t2t_repro.t2t_compat.sentiment_problems  # noqa: F401  (T2T's sentiment problems)
    import t2t_repro.t2t_compat.squad_problems  # noqa: F401  (T2T's SQuAD problems)
    import t2t_repro.t2t_compat.style_transfer  # noqa: F401  (T2T's Shakespeare style transfer)
    import t2t_repro.t2t_compat.subject_verb_agreement  # noqa: F401  (T2T's sva_* problems)
    import t2t_repro.t2t_compat.summarization_problems  # noqa: F401  (T2T's CNN/Daily Mail)
    import t2t_repro.t2t_compat.transduction_problems  # noqa: F401  (T2T's copy/reverse/flip sequences)
    import t2t_repro.t2t_compat.translate_enzh  # noqa: F401  (T2T's translate_enzh_wmt32k/_wmt8k)
    import t2t_repro.t2t_compat.translate_problems  # noqa: F401  (T2T's translate_en* problems)
    import t2t_repro.t2t_compat.translate_wmt_variants  # noqa: F401  (T2T's WMT variants)
    import t2t_repro.t2t_compat.wiki_dump_lm  # noqa: F401  (T2T's wiki.py dump language models)
    import t2t_repro.t2t_compat.wiki_lm  # noqa: F401  (T2T's Wikipedia language models)
    import t2t_repro.t2t_compat.wsj_parsing  # noqa: F401  (T2T's own wsj_parsing)
    from t2t_repro import registry
    from t2t_repro.t2t_compat.refusals import t2t_sets_not_provided
    from t2t_repro.t2t_compat.t2t_models import t2t_models_not_provided
    from t2t_repro.t2t_compat.t2t_problems import t2t_problems_not_provided

    registry.note_not_provided(registry.HPARAMS, t2t_sets_not_provided())
    registry.note_not_provided(registry.MODELS, t2t_models_not_provided())
    registry.note_not_provided(registry.PROBLEMS, t2t_problems_not_provided())
