"""T2T 1.15.7's WMT variants that share another problem's vocabulary: ``translate_ende``'s
cleaned, ParaCrawl and WMT18 problems and ``translate_enfr``'s back-translation ones
(``tensor2tensor/data_generators/translate_ende.py``, ``translate_enfr.py``).

T2T gives them ``TranslateEndeWmt32k()``'s (or ``TranslateEnfrWmt32k()``'s) vocabulary
(``use_vocab_from_other_problem``): the file ``vocab.translate_ende_wmt32k.32768.subwords``,
built from T2T's corpora when missing, which the project's ``translate_ende_wmt32k`` writes too.
Their corpora and cleaning are T2T's (``translate_problems.py``'s tables; ``cleaner_en_xx``);
``translate_ende2018_wmt32k``'s datagen fails in T2T 1.15.7 (no ``source_data_files``) and here
in one line. Their classes are not T2T's subclasses of ``TranslateEndeWmt32k`` /
``TranslateEnfrWmt32k`` (those names are the project's WMT classes here): an ``issubclass``
check against them differs from T2T's.
"""

from __future__ import annotations

import os

from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat import t2t_modules
from t2t_repro.t2t_compat.problem import DatasetSplit, T2TProblemError
from t2t_repro.t2t_compat.text_iterators import text2text_txt_iterator
from t2t_repro.t2t_compat.translate import compile_data
from t2t_repro.t2t_compat.translate_problems import _DATA_STATMT, ENDE, ENFR_LARGE, _Corpora

ENDE_RAPID = [
    [f"{_DATA_STATMT}/wmt18/translation-task/rapid2016.tgz",
     ("rapid2016.de-en.en", "rapid2016.de-en.de")],
]  # fmt: skip
ENDE_PARACRAWL = [
    ["https://s3.amazonaws.com/web-language-models/paracrawl/release4/en-de.bicleaner07.tmx.gz",
     ("tmx", "en-de.bicleaner07.tmx.gz")],
]  # fmt: skip


class _EndeVocab(_Corpora):
    """``TranslateEndeWmt32k()`` as T2T's variants use it: its vocabulary file, and the text
    T2T builds it from when it is missing."""

    name = "translate_ende_wmt32k"
    CORPORA = ENDE


class _EnfrVocab(_Corpora):
    name = "translate_enfr_wmt32k"
    CORPORA = ENFR_LARGE


class _SharesEnde(_Corpora):
    CORPORA = ENDE

    @property
    def use_vocab_from_other_problem(self):
        return _EndeVocab()


@t2t_registry.register_problem
class TranslateEnde2018Wmt32k(_SharesEnde):
    """T2T's adds the WMT18 rapid corpus, but its class has no ``source_data_files``."""

    @property
    def additional_training_datasets(self):
        return ENDE_RAPID

    def check_datagen(self) -> None:
        """Before anything is written: T2T's datagen of it raises NotImplementedError."""
        raise T2TProblemError(
            f"{self.name}: T2T 1.15.7's class defines no source_data_files, so its datagen "
            "cannot run (NotImplementedError there too); train it on T2T's shards, or write a "
            "usr_dir subclass whose source_data_files returns translate_ende_wmt32k's corpora "
            "plus additional_training_datasets (rapid2016.tgz)."
        )

    def check_runnable(self) -> None:
        """Shards made otherwise train, as in T2T (its datagen alone fails)."""

    def source_data_files(self, dataset_split):
        self.check_datagen()


@t2t_registry.register_problem
class TranslateEndeWmtClean32k(_SharesEnde):
    datatypes_to_clean = property(lambda self: ["txt"])


@t2t_registry.register_problem
class TranslateEndePc32k(_SharesEnde):
    """ParaCrawl's bicleaner tmx for training, newstest2013 for dev."""

    def source_data_files(self, dataset_split):
        if dataset_split == DatasetSplit.TRAIN:
            return ENDE_PARACRAWL + self.additional_training_datasets
        return ENDE[1]


@t2t_registry.register_problem
class TranslateEndePcClean32k(TranslateEndePc32k):
    datatypes_to_clean = property(lambda self: ["tmx"])


@t2t_registry.register_problem
class TranslateEndeWmtPc32k(_SharesEnde):
    additional_training_datasets = property(lambda self: ENDE_PARACRAWL)


@t2t_registry.register_problem
class TranslateEndeWmtCleanPc32k(TranslateEndeWmtPc32k):
    datatypes_to_clean = property(lambda self: ["txt"])


@t2t_registry.register_problem
class TranslateEndeWmtPcClean32k(TranslateEndeWmtPc32k):
    datatypes_to_clean = property(lambda self: ["tmx"])


@t2t_registry.register_problem
class TranslateEndeWmtCleanPcClean32k(TranslateEndeWmtPcClean32k):
    datatypes_to_clean = property(lambda self: ["txt", "tmx"])


@t2t_registry.register_problem
class TranslateEnfrWmt32kWithBacktranslateFr(_Corpora):
    """WMT EN-FR with back-translated French (``fr_mono_en.txt``/``fr_mono_fr.txt`` in
    --tmp_dir) before the authentic pairs, in one unshuffled train shard."""

    CORPORA = ENFR_LARGE
    already_shuffled = property(lambda self: True)
    skip_random_fraction_when_training = property(lambda self: False)
    backtranslate_data_filenames = property(lambda self: [("fr_mono_en.txt", "fr_mono_fr.txt")])

    @property
    def use_vocab_from_other_problem(self):
        return _EnfrVocab()

    @property
    def dataset_splits(self):
        return [
            {"split": DatasetSplit.TRAIN, "shards": 1},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        train = dataset_split == DatasetSplit.TRAIN
        datasets = self.source_data_files(dataset_split)
        compiled = compile_data(
            tmp_dir, datasets, f"{self.name}-compiled-{'train' if train else 'dev'}"
        )
        authentic = (compiled + ".lang1", compiled + ".lang2")
        if not train:
            yield from text2text_txt_iterator(*authentic)
            return
        for file1, file2 in self.backtranslate_data_filenames:  # synthetic, then authentic
            synthetic = (os.path.join(tmp_dir, file1), os.path.join(tmp_dir, file2))
            yield from text2text_txt_iterator(*synthetic)
            yield from text2text_txt_iterator(*authentic)


@t2t_registry.register_problem
class TranslateEnfrWmt32kWithBacktranslateEn(TranslateEnfrWmt32kWithBacktranslateFr):
    backtranslate_data_filenames = property(
        lambda self: [(f"en_mono_en.txt{i}", f"en_mono_fr.txt{i}") for i in (0, 1, 2)]
    )


# The classes of T2T's modules implemented here (t2t_modules.IMPLEMENTED names them).
T2T_REGISTERED_PROBLEMS = tuple(
    globals()[name]
    for classes in t2t_modules.IMPLEMENTED.values()
    for name, where in classes.items()
    if where == __name__
)
