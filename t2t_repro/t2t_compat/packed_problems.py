"""T2T 1.15.7's packed problems (``packed_length``: several examples joined into one of at most
256 or 1,024 ids, T2T's TPU datasets) whose base problems this project provides, registered
under T2T's names with T2T's vocabularies, corpora and splits (``tensor2tensor/data_generators/
translate_ende.py``, ``translate_enes.py``, ``translate_enfr.py``, ``translate_enro.py``,
``lm1b.py``, ``multinli.py``, ``squad.py``, ``cnn_dailymail.py``, ``wiki_lm.py``).

Their datagen is ``Text2TextProblem``'s, whose shuffle packs each shard's records as T2T's
``_pack_fn`` does (``text2text_problem.py``, ``data/example_packing.py``). Each reads its base
problem's vocabulary file (T2T's ``use_vocab_from_other_problem``, or ``vocab_filename`` for
LM1B's), built from the base's text when missing:

- ``translate_ende_wmt32k_packed`` / ``_wmt8k_packed``: ``vocab.translate_ende_wmt32k.32768``
  / ``vocab.translate_ende_wmt8k.8192.subwords`` (the files the project's WMT problems of those
  names write; their classes are the project's, so the packed ones are not their subclasses
  here: ``translate_wmt_variants.py``'s way), T2T's WMT corpora in --tmp_dir;
- ``translate_enes_wmt32k_packed`` / ``_wmt8k_packed``, ``translate_enfr_wmt32k_packed``;
- ``languagemodel_lm1b8k_packed`` (``languagemodel_lm1b8k``'s file),
  ``languagemodel_lm1b_characters_packed`` (bytes; 1,024 ids);
- the ``*_multi64k_packed1k`` ones: ``languagemodel_de_en_fr_ro_wiki64k``'s vocabulary, 1,024
  ids, T2T's ``inputs_prefix``/``targets_prefix`` where T2T sets them.
"""

from __future__ import annotations

from collections.abc import Iterator

from t2t_repro.t2t_compat import generator_utils, lm_problems, wiki_lm
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.glue_problems import MultiNLIText2text
from t2t_repro.t2t_compat.squad_problems import SquadText2text
from t2t_repro.t2t_compat.summarization_problems import SummarizeCnnDailymail32k
from t2t_repro.t2t_compat.translate_problems import (
    ENDE,
    TranslateEndeWmtMulti64k,
    TranslateEnesWmt8k,
    TranslateEnesWmt32k,
    TranslateEnfrWmtMulti64k,
    TranslateEnfrWmtSmall32k,
    TranslateEnroWmtMultiTiny64k,
    _Corpora,
)
from t2t_repro.t2t_compat.translate_wmt_variants import _EndeVocab, _EnfrVocab


class _Packed256:
    packed_length = property(lambda self: 256)


class _Packed1k:
    packed_length = property(lambda self: 1024)


class _Ende8kVocab(_Corpora):
    """``TranslateEndeWmt8k()`` as T2T's packed variant uses it: its vocabulary file, and the
    text T2T builds it from when it is missing (WMT's EN-DE corpora)."""

    name = "translate_ende_wmt8k"
    CORPORA = ENDE
    approx_vocab_size = property(lambda self: 2**13)


# -- translate_ende.py, translate_enes.py, translate_enfr.py: 256 ids --------------------------
@t2t_registry.register_problem
class TranslateEndeWmt32kPacked(_Packed256, _Corpora):
    CORPORA = ENDE

    @property
    def use_vocab_from_other_problem(self):
        return _EndeVocab()


@t2t_registry.register_problem
class TranslateEndeWmt8kPacked(_Packed256, _Corpora):
    CORPORA = ENDE
    approx_vocab_size = property(lambda self: 2**13)

    @property
    def use_vocab_from_other_problem(self):
        return _Ende8kVocab()


@t2t_registry.register_problem
class TranslateEnesWmt32kPacked(_Packed256, TranslateEnesWmt32k):
    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnesWmt32k()


@t2t_registry.register_problem
class TranslateEnesWmt8kPacked(_Packed256, TranslateEnesWmt8k):
    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnesWmt8k()


@t2t_registry.register_problem
class TranslateEnfrWmt32kPacked(_Packed256, TranslateEnfrWmtSmall32k):
    """T2T's: WMT's large EN-FR mix (a ``TranslateEnfrWmt32k`` there, the project's WMT class
    here, so not its base)."""

    use_small_dataset = property(lambda self: False)

    @property
    def use_vocab_from_other_problem(self):
        return _EnfrVocab()


# -- lm1b.py -----------------------------------------------------------------------------------
@t2t_registry.register_problem
class LanguagemodelLm1b8kPacked(_Packed256, lm_problems.LanguagemodelLm1b8k):
    @property
    def vocab_filename(self):
        return lm_problems.LanguagemodelLm1b8k().vocab_filename


@t2t_registry.register_problem
class LanguagemodelLm1bCharactersPacked(_Packed1k, lm_problems.LanguagemodelLm1bCharacters):
    pass


# -- the multilingual 64k vocabulary, 1,024 ids ------------------------------------------------
class _Multi64k:
    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


def _prefixes(inputs: str, targets: str) -> dict:
    return {
        "inputs_prefix": property(lambda self: inputs),
        "targets_prefix": property(lambda self: targets),
    }


def _packed1k(class_name: str, bases: tuple, examples: int, prefixes: tuple | None = None) -> type:
    """A registered T2T ``*_packed1k`` class: T2T's name, bases, ``num_training_examples`` and
    prefixes."""
    attributes: dict = {
        "__module__": __name__,
        "__qualname__": class_name,
        "num_training_examples": property(lambda self: examples),
    }
    if prefixes:
        attributes.update(_prefixes(*prefixes))
    return t2t_registry.register_problem(type(class_name, (_Packed1k, *bases), attributes))


TranslateEndeWmtMulti64kPacked1k = _packed1k(
    "TranslateEndeWmtMulti64kPacked1k",
    (TranslateEndeWmtMulti64k,),
    173800,
    ("translate English German ", "translate German English "),
)
TranslateEnfrWmtMulti64kPacked1k = _packed1k(
    "TranslateEnfrWmtMulti64kPacked1k",
    (TranslateEnfrWmtMulti64k,),
    1760600,
    ("translate English French ", "translate French English "),
)
TranslateEnroWmtMultiTiny64kPacked1k = _packed1k(
    "TranslateEnroWmtMultiTiny64kPacked1k",
    (TranslateEnroWmtMultiTiny64k,),
    32,
    ("translate English Romanian ", "translate Romanian English "),
)
MultiNLIText2textMulti64kPacked1k = _packed1k(
    "MultiNLIText2textMulti64kPacked1k", (_Multi64k, MultiNLIText2text), 18300
)
SquadText2textMulti64kPacked1k = _packed1k(
    "SquadText2textMulti64kPacked1k", (_Multi64k, SquadText2text), 16300
)
SummarizeCnnDailymailMulti64kPacked1k = _packed1k(
    "SummarizeCnnDailymailMulti64kPacked1k",
    (_Multi64k, SummarizeCnnDailymail32k),
    252600,
    ("CNN Daily Mail article to summary ", "CNN Daily Mail summary to article "),
)


@t2t_registry.register_problem
class LanguagemodelDeEnFrRoWiki64kFitbPacked1k(_Packed1k, wiki_lm.LanguagemodelDeEnFrRoWiki64k):
    """T2T's fill-in-the-blanks text to text: each Wikipedia example's words cut at random
    points and dealt to inputs and targets (``generator_utils.random_deinterleave``, drawing
    from the global ``random`` as T2T's does)."""

    num_training_examples = property(lambda self: 3597800)
    has_inputs = property(lambda self: True)
    inputs_prefix = targets_prefix = property(lambda self: "wiki fill ")

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        for example in super().generate_samples(data_dir, tmp_dir, dataset_split):
            inputs, targets = generator_utils.random_deinterleave(example["targets"])
            yield {"inputs": inputs, "targets": targets}


# Every class above, for the registry (t2t_compat/aliases.py registers them again when a test
# restored the registry) and for T2T's module names (t2t_modules.IMPLEMENTED).
T2T_REGISTERED_PROBLEMS = (
    TranslateEndeWmt32kPacked,
    TranslateEndeWmt8kPacked,
    TranslateEnesWmt32kPacked,
    TranslateEnesWmt8kPacked,
    TranslateEnfrWmt32kPacked,
    LanguagemodelLm1b8kPacked,
    LanguagemodelLm1bCharactersPacked,
    TranslateEndeWmtMulti64kPacked1k,
    TranslateEnfrWmtMulti64kPacked1k,
    TranslateEnroWmtMultiTiny64kPacked1k,
    MultiNLIText2textMulti64kPacked1k,
    SquadText2textMulti64kPacked1k,
    SummarizeCnnDailymailMulti64kPacked1k,
    LanguagemodelDeEnFrRoWiki64kFitbPacked1k,
)
