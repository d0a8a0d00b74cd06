"""T2T 1.15.7's translation problems of ``translate_envi``, ``translate_enro``, ``translate_encs``,
``translate_enid``, ``translate_enmk``, ``translate_enet``, ``translate_enes`` and
``translate_entn``, and those of ``translate_ende`` and ``translate_enfr`` that the project's
WMT classes are not (``tensor2tensor/data_generators/``), registered under T2T's names on the
usr_dir ``TranslateProblem`` (``translate.py``), so their datagen is T2T's: the same corpus
files (downloaded to --tmp_dir, or found there), the same vocabulary, the same shards.

Each problem is T2T's table of corpora (url, then the two files, or T2T's tsv spec) and its
vocabulary.
``translate_enes_wmt_clean32k`` cleans its train pairs with T2T's ``cleaner_en_xx``
(``cleaner_en_xx.py``). The ``*_multi*64k`` ones use ``languagemodel_de_en_fr_ro_wiki64k``'s
vocabulary (``wiki_lm.py``). T2T's variants not here: ``*_packed`` (packed TPU datasets).
"""

from __future__ import annotations

import random

from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat import t2t_modules, wiki_lm
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import VocabType
from t2t_repro.t2t_compat.text_iterators import text2text_txt_iterator
from t2t_repro.t2t_compat.translate import TranslateProblem, compile_data

_STATMT = "http://www.statmt.org"
_DATA_STATMT = "http://data.statmt.org"
_ENID_REPO = "https://github.com/prasastoadi/parallel-corpora-en-id/raw/master/"
_ENTN_REPO = "https://github.com/LauraMartinus/ukuxhumana/blob/master/data/en_tn/"

# T2T's corpora: (train, dev) lists of [url, (lang1 file, lang2 file)], by T2T module.
ENVI = (
    [["https://github.com/stefan-it/nmt-en-vi/raw/master/data/train-en-vi.tgz",
      ("train.en", "train.vi")]],
    [["https://github.com/stefan-it/nmt-en-vi/raw/master/data/dev-2012-en-vi.tgz",
      ("tst2012.en", "tst2012.vi")]],
)  # fmt: skip
ENRO = (
    [
        [f"{_STATMT}/europarl/v7/ro-en.tgz", ("europarl-v7.ro-en.en", "europarl-v7.ro-en.ro")],
        ["http://opus.nlpl.eu/download.php?f=SETIMES/v2/moses/en-ro.txt.zip",
         ("SETIMES.en-ro.en", "SETIMES.en-ro.ro")],
    ],
    [[f"{_DATA_STATMT}/wmt16/translation-task/dev-romanian-updated.tgz",
      ("dev/newsdev2016-roen-ref.en.sgm", "dev/newsdev2016-roen-src.ro.sgm")]],
)  # fmt: skip
ENCS = (
    [
        ["https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/1-1458/"
         "data-plaintext-format.tar", ("tsv", 3, 2, "data.plaintext-format/*train.gz")],
        [f"{_DATA_STATMT}/wmt18/translation-task/training-parallel-nc-v13.tgz",
         ("training-parallel-nc-v13/news-commentary-v13.cs-en.en",
          "training-parallel-nc-v13/news-commentary-v13.cs-en.cs")],
        [f"{_STATMT}/wmt13/training-parallel-commoncrawl.tgz",
         ("commoncrawl.cs-en.en", "commoncrawl.cs-en.cs")],
        [f"{_STATMT}/wmt13/training-parallel-europarl-v7.tgz",
         ("training/europarl-v7.cs-en.en", "training/europarl-v7.cs-en.cs")],
    ],
    [[f"{_DATA_STATMT}/wmt17/translation-task/dev.tgz",
      ("dev/newstest2013.en", "dev/newstest2013.cs")]],
)  # fmt: skip
ENID = (
    [
        [_ENID_REPO + "IWSLT17.train.en-id.tgz",
         ("IWSLT17.train.en-id.en", "IWSLT17.train.en-id.id")],
        *[[_ENID_REPO + f"PANL-BPPT-{kind}-EN-ID-{size}Kw.tgz",
           (f"PANL-BPPT-{kind}-EN-{size}Kw.txt", f"PANL-BPPT-{kind}-ID-{size}Kw.txt")]
          for kind, size in (("ECO", 150), ("INT", 150), ("SCI", 100), ("SPO", 100))],
    ],
    [[_ENID_REPO + "IWSLT17.TED.tst2017plus.en-id.tgz",
      ("IWSLT17.TED.tst2017plus.en-id.en", "IWSLT17.TED.tst2017plus.en-id.id")]],
)  # fmt: skip
ENMK = (
    [["http://nlp.ffzg.hr/data/corpora/setimes/setimes.en-mk.txt.tgz",
      ("setimes.en-mk.en.txt", "setimes.en-mk.mk.txt")]],
    [["https://github.com/stefan-it/nmt-en-mk/raw/master/data/MTE-1984-dev.enmk.tgz",
      ("MTE1984-dev.en", "MTE1984-dev.mk")]],
)  # fmt: skip
ENET = (
    [
        [f"{_DATA_STATMT}/wmt18/translation-task/training-parallel-ep-v8.tgz",
         ("training/europarl-v8.et-en.en", "training/europarl-v8.et-en.et")],
        ["https://s3.amazonaws.com/web-language-models/paracrawl/release1/"
         "paracrawl-release1.en-et.zipporah0-dedup-clean.tgz",
         ("paracrawl-release1.en-et.zipporah0-dedup-clean.en",
          "paracrawl-release1.en-et.zipporah0-dedup-clean.et")],
        [f"{_DATA_STATMT}/wmt18/translation-task/rapid2016.tgz",
         ("rapid2016.en-et.en", "rapid2016.en-et.et")],
    ],
    [["https://github.com/stefan-it/nmt-en-et/raw/master/data/newsdev2018-enet.tar.gz",
      ("newsdev2018-enet-src.en", "newsdev2018-enet-ref.et")]],
)  # fmt: skip
ENES = (
    [
        [f"{_STATMT}/wmt13/training-parallel-commoncrawl.tgz",
         ("commoncrawl.es-en.en", "commoncrawl.es-en.es")],
        [f"{_STATMT}/wmt13/training-parallel-europarl-v7.tgz",
         ("training/europarl-v7.es-en.en", "training/europarl-v7.es-en.es")],
        [f"{_STATMT}/wmt13/training-parallel-un.tgz",
         ("un/undoc.2000.es-en.en", "un/undoc.2000.es-en.es")],
        ["https://s3.amazonaws.com/web-language-models/paracrawl/release1/"
         "paracrawl-release1.en-es.zipporah0-dedup-clean.tgz",
         ("paracrawl-release1.en-es.zipporah0-dedup-clean.en",
          "paracrawl-release1.en-es.zipporah0-dedup-clean.es")],
    ],
    [[f"{_DATA_STATMT}/wmt17/translation-task/dev.tgz",
      ("dev/newstest2013.en", "dev/newstest2013.es")]],
)  # fmt: skip
ENDE = (
    [
        [f"{_DATA_STATMT}/wmt18/translation-task/training-parallel-nc-v13.tgz",
         ("training-parallel-nc-v13/news-commentary-v13.de-en.en",
          "training-parallel-nc-v13/news-commentary-v13.de-en.de")],
        [f"{_STATMT}/wmt13/training-parallel-commoncrawl.tgz",
         ("commoncrawl.de-en.en", "commoncrawl.de-en.de")],
        [f"{_STATMT}/wmt13/training-parallel-europarl-v7.tgz",
         ("training/europarl-v7.de-en.en", "training/europarl-v7.de-en.de")],
    ],
    [[f"{_DATA_STATMT}/wmt17/translation-task/dev.tgz",
      ("dev/newstest2013.en", "dev/newstest2013.de")]],
)  # fmt: skip
_ENFR_1M = "https://s3.amazonaws.com/opennmt-trainingdata/baseline-1M-enfr.tgz"
ENFR_SMALL = tuple(
    [[_ENFR_1M, tuple(f"baseline-1M-enfr/baseline-1M_{part}.{lang}" for lang in ("en", "fr"))]]
    for part in ("train", "valid")
)  # fmt: skip
ENFR_LARGE = (
    [
        [f"{_STATMT}/wmt13/training-parallel-commoncrawl.tgz",
         ("commoncrawl.fr-en.en", "commoncrawl.fr-en.fr")],
        [f"{_STATMT}/wmt13/training-parallel-europarl-v7.tgz",
         ("training/europarl-v7.fr-en.en", "training/europarl-v7.fr-en.fr")],
        [f"{_STATMT}/wmt14/training-parallel-nc-v9.tgz",
         ("training/news-commentary-v9.fr-en.en", "training/news-commentary-v9.fr-en.fr")],
        [f"{_STATMT}/wmt10/training-giga-fren.tar",
         ("giga-fren.release2.fixed.en.gz", "giga-fren.release2.fixed.fr.gz")],
        [f"{_STATMT}/wmt13/training-parallel-un.tgz",
         ("un/undoc.2000.fr-en.en", "un/undoc.2000.fr-en.fr")],
    ],
    [[f"{_DATA_STATMT}/wmt17/translation-task/dev.tgz",
      ("dev/newstest2013.en", "dev/newstest2013.fr")]],
)  # fmt: skip
ENTN = (
    [[_ENTN_REPO + "eng_tswane.train.tar.gz?raw=true",
      ("entn_parallel.train.en", "entn_parallel.train.tn")]],
    [[_ENTN_REPO + "eng_tswane.dev.tar.gz?raw=true",
      ("entn_parallel.dev.en", "entn_parallel.dev.tn")]],
)  # fmt: skip


class _Corpora(TranslateProblem):
    """A T2T translation problem given by its corpora (``CORPORA``: train, dev), plus
    ``additional_training_datasets`` (T2T's ``TranslateEndeWmt32k``/``TranslateEnesWmt32k``
    hook for subclasses; none by default) for training."""

    CORPORA: tuple[list, list] = ([], [])

    @property
    def additional_training_datasets(self):
        return []

    def source_data_files(self, dataset_split):
        train, dev = self.CORPORA
        if dataset_split == DatasetSplit.TRAIN:
            return train + self.additional_training_datasets
        return dev


def _problem(
    class_name: str, base: type, corpora=None, vocab_size: int | None = None, chars=False
) -> type:
    """A registered T2T problem class of T2T's name and base (T2T's registry name from it):
    its corpora, its vocabulary size or T2T's character vocabulary where it sets one."""
    attributes: dict = {"__module__": __name__, "__qualname__": class_name}
    if corpora is not None:
        attributes["CORPORA"] = corpora
    if vocab_size is not None:
        attributes["approx_vocab_size"] = property(lambda self: vocab_size)
    if chars:
        attributes["vocab_type"] = property(lambda self: VocabType.CHARACTER)
    return t2t_registry.register_problem(type(class_name, (base,), attributes))


TranslateEnviIwslt32k = _problem("TranslateEnviIwslt32k", _Corpora, ENVI, 2**15)
TranslateEnroWmt8k = _problem("TranslateEnroWmt8k", _Corpora, ENRO, 2**13)
TranslateEnroWmt32k = _problem("TranslateEnroWmt32k", TranslateEnroWmt8k, vocab_size=2**15)
TranslateEnroWmtCharacters = _problem("TranslateEnroWmtCharacters", TranslateEnroWmt8k, chars=True)
TranslateEnidIwslt32k = _problem("TranslateEnidIwslt32k", _Corpora, ENID, 2**15)
TranslateEnmkSetimes32k = _problem("TranslateEnmkSetimes32k", _Corpora, ENMK, 2**15)
TranslateEnmkSetimesCharacters = _problem(
    "TranslateEnmkSetimesCharacters", _Corpora, ENMK, chars=True
)
TranslateEnetWmt32k = _problem("TranslateEnetWmt32k", _Corpora, ENET, 2**15)
TranslateEnetWmtCharacters = _problem("TranslateEnetWmtCharacters", _Corpora, ENET, chars=True)


@t2t_registry.register_problem
class TranslateEnesWmt32k(_Corpora):
    """T2T's: its vocabulary from the four corpora whatever a subclass adds to training
    (``additional_training_datasets``)."""

    CORPORA = ENES

    def vocab_data_files(self):
        return ENES[0]


@t2t_registry.register_problem
class TranslateEnesWmtClean32k(TranslateEnesWmt32k):
    """T2T's: ``translate_enes_wmt32k``'s vocabulary and corpora, its train pairs cleaned by
    T2T's ``cleaner_en_xx`` (``datatypes_to_clean``: the text files)."""

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnesWmt32k()

    @property
    def datatypes_to_clean(self):
        return ["txt"]


TranslateEnesWmt8k = _problem("TranslateEnesWmt8k", TranslateEnesWmt32k, vocab_size=2**13)
TranslateEnesWmtCharacters = _problem("TranslateEnesWmtCharacters", TranslateEnesWmt8k, chars=True)


@t2t_registry.register_problem
class TranslateEncsWmt32k(_Corpora):
    CORPORA = ENCS

    def vocab_data_files(self):
        """T2T's: a leading tsv corpus (its ``data-plaintext-format.tar``) is read from its
        compiled train files, then each corpus's two files."""
        datasets = self.source_data_files(DatasetSplit.TRAIN)
        vocab = []
        if datasets[0][0].endswith("data-plaintext-format.tar"):
            compiled = [f"{self.name}-compiled-train.lang{i}" for i in (1, 2)]
            vocab.append([datasets[0][0], compiled])
            datasets = datasets[1:]
        return vocab + [[url, [files[0], files[1]]] for url, files in datasets]


@t2t_registry.register_problem
class TranslateEncsWmtCharacters(_Corpora):
    """T2T's reads its own compiled files, ``wmt_encs_chr_<train|dev>``."""

    CORPORA = ENCS

    @property
    def vocab_type(self):
        return VocabType.CHARACTER

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        tag = "train" if dataset_split == DatasetSplit.TRAIN else "dev"
        path = compile_data(tmp_dir, self.source_data_files(dataset_split), f"wmt_encs_chr_{tag}")
        return text2text_txt_iterator(path + ".lang1", path + ".lang2")


@t2t_registry.register_problem
class TranslateEntnRma(_Corpora):
    """T2T's RMA Autshumato En-Tn, with its own vocabulary file name."""

    CORPORA = ENTN

    @property
    def vocab_filename(self):
        return f"vocab.entn.{self.approx_vocab_size}"


# T2T's translate_ende and translate_enfr problems beyond those of the project's own WMT
# classes (problems/translate_wmt.py): T2T's character vocabularies and the 1M-pair EN-FR set.
@t2t_registry.register_problem
class TranslateEndeWmtCharacters(_Corpora):
    """T2T's (a ``TranslateEndeWmt8k`` there, whose class here is the project's WMT one, so
    not its base): ``translate_ende_wmt32k``'s corpora, a character vocabulary."""

    CORPORA = ENDE
    approx_vocab_size = property(lambda self: 2**13)
    vocab_type = property(lambda self: VocabType.CHARACTER)


class _EnfrSmallOrLarge(_Corpora):
    """T2T's EN-FR problems of ``use_small_dataset`` (OpenNMT's 1M pairs) or WMT's mix."""

    @property
    def use_small_dataset(self):
        return True

    def source_data_files(self, dataset_split):
        train, dev = ENFR_SMALL if self.use_small_dataset else ENFR_LARGE
        return train if dataset_split == DatasetSplit.TRAIN else dev


@t2t_registry.register_problem
class TranslateEnfrWmtSmall8k(_EnfrSmallOrLarge):
    approx_vocab_size = property(lambda self: 2**13)

    def vocab_data_files(self):
        return (ENFR_SMALL if self.use_small_dataset else ENFR_LARGE)[0]


TranslateEnfrWmtSmall32k = _problem(
    "TranslateEnfrWmtSmall32k", TranslateEnfrWmtSmall8k, vocab_size=2**15
)
TranslateEnfrWmtSmallCharacters = _problem(
    "TranslateEnfrWmtSmallCharacters", _EnfrSmallOrLarge, chars=True
)


@t2t_registry.register_problem
class TranslateEnfrWmtCharacters(TranslateEnfrWmtSmallCharacters):
    use_small_dataset = property(lambda self: False)


class _MultiVocab:
    """T2T's ``*_multi*64k``: ``languagemodel_de_en_fr_ro_wiki64k``'s vocabulary, built from
    its Wikipedia files in --tmp_dir when missing."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@t2t_registry.register_problem
class TranslateEndeWmtMulti64k(_MultiVocab, _Corpora):
    """T2T's (a ``TranslateEndeWmt8k`` there, the project's WMT class here, so not its base):
    ``translate_ende_wmt32k``'s corpora (``translate_ende.py``)."""

    CORPORA = ENDE
    approx_vocab_size = property(lambda self: 2**13)


@t2t_registry.register_problem
class TranslateEnfrWmtMulti64k(_MultiVocab, TranslateEnfrWmtSmall32k):
    """T2T's: WMT's EN-FR mix, not the small set (``translate_enfr.py``)."""

    use_small_dataset = property(lambda self: False)


@t2t_registry.register_problem
class TranslateEnroWmtMulti64k(_MultiVocab, TranslateEnroWmt8k):
    """T2T's ``translate_enro.py``."""


@t2t_registry.register_problem
class TranslateEnroWmtMultiSmall64k(_MultiVocab, TranslateEnroWmt8k):
    """T2T's: about ``how_many_examples_to_sample`` train pairs drawn with ``random``."""

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 16},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def how_many_examples_to_sample(self) -> int:
        return 6000

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """T2T's sampling (``TranslateEnroWmtMultiSmall64k.generate_samples``): each train
        pair kept with probability how_many / 614,000 (T2T's corpus size), a second pass if
        fewer were kept, none past how_many. T2T ends it with ``raise StopIteration``, which
        Python 3.7+ turns into a RuntimeError (PEP 479); here it ends the samples."""
        pairs = super().generate_samples
        if dataset_split != DatasetSplit.TRAIN:
            yield from pairs(data_dir, tmp_dir, dataset_split)
            return
        wanted = self.how_many_examples_to_sample
        sample_prob = wanted / float(614000)
        counter = 0
        for _ in range(2):
            for pair in pairs(data_dir, tmp_dir, dataset_split):
                if random.random() > sample_prob:
                    continue
                counter += 1
                if counter > wanted:
                    return
                yield pair
            if counter >= wanted:
                return


@t2t_registry.register_problem
class TranslateEnroWmtMultiTiny64k(TranslateEnroWmtMultiSmall64k):
    """T2T's: about 600 train pairs."""

    @property
    def how_many_examples_to_sample(self) -> int:
        return 600


# The classes of T2T's modules implemented here (t2t_modules.IMPLEMENTED names them).
T2T_REGISTERED_PROBLEMS = tuple(
    globals()[name]
    for classes in t2t_modules.IMPLEMENTED.values()
    for name, where in classes.items()
    if where == __name__
)
