"""T2T 1.15.7's GLUE-style sentence and sentence-pair classification problems
(``data_generators/cola.py``, ``mrpc.py``, ``qnli.py``, ``quora_qpairs.py``, ``rte.py``,
``wnli.py``, ``scitail.py``, ``stanford_nli.py``, ``multinli.py``), registered under T2T's
names with T2T's datagen: the same corpus files (downloaded into --tmp_dir, or the zips and
files already there), vocabularies, shards, problem hparams and metrics. A pair is T2T's
``TextConcat2ClassProblem``: both texts encoded, ``$``'s first id between them, then EOS; MRPC
and Quora pairs are written twice, (s1, s2) then (s2, s1), as T2T's (Radford et al.'s trick).

The ``...SharedVocab`` variants use LM1B's vocabulary as T2T's do (``lm_problems.py``):
``multi_nli_shared_vocab`` reads (or builds, from the LM1B corpus) LM1B's
``vocab.languagemodel_lm1b32k.32768.subwords``; ``sci_tail_shared_vocab`` and
``stanford_nli_shared_vocab`` only take that file's name, so they read it when it is in
--data_dir and otherwise build their own vocabulary under it, as T2T's do.
``multi_nli_text2text`` is T2T's text-to-text form (``multinli premise: ... hypothesis: ...``
to the label's name. The ``_wiki_lm_`` variants take a wiki language model's vocabulary
(``wiki_lm.py``): ``multi_nli_wiki_lm_*`` read (or build, from its corpus) the model's file;
``stanford_nli_wiki_lm_*`` only take its name, as ``stanford_nli_shared_vocab`` does. Not
provided: ``multi_nli_text2text_multi64k_packed1k`` (packed).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro.t2t_compat import generator_utils, t2t_modules, wiki_lm
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.glue_files import (
    COLA,
    EN_NLI,
    EN_SIM,
    THREE_CL_NLI,
    GlueTask,
    Row,
    characters,
    extracted_folder,
    glue_url,
    rows,
)
from t2t_repro.t2t_compat.lm_problems import LanguagemodelLm1b32k
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem
from t2t_repro.t2t_compat.text_kinds import Text2ClassProblem, TextConcat2ClassProblem

ENTAILMENT = ("not_entailment", "entailment")
NLI = ("contradiction", "entailment", "neutral")


@t2t_registry.register_problem
class Cola(GlueTask, Text2ClassProblem):
    """The Corpus of Linguistic Acceptability (T2T's ``cola.py``): ``CoLA/train.tsv`` and
    ``dev.tsv``, no header, rows ``source<TAB>label<TAB>mark<TAB>sentence``."""

    _COLA_URL = glue_url("CoLA.zip", "46d5e637-3411-4188-bc44-5809b5bfb5f4")
    _LABELS = ("unacceptable", "acceptable")

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        return extracted_folder(tmp_dir, "CoLA", "CoLA.zip", self._COLA_URL)

    def example_generator(self, filename: str) -> Iterator[dict]:
        for row in rows(filename, skip_header=False):
            _, label, _, sentence = row.take(4)
            yield {"inputs": sentence, "label": row.integer(label)}


@t2t_registry.register_problem
class MSRParaphraseCorpus(TextConcat2ClassProblem):
    """The MSR Paraphrase Corpus (T2T's ``mrpc.py``: SentEval's two files, GLUE's dev ids;
    ``example_generator``'s split by them): TRAIN is the train
    file's pairs not in ``dev_ids.tsv``, EVAL those in it, TEST the test file; each pair
    twice, both ways. The files are ``--tmp_dir/MRPC/`` (T2T's ``DATA_DIR``)."""

    DEV_IDS = glue_url("mrpc_dev_ids.tsv", "ec5c0836-31d5-48f4-b431-7480817f1adc")
    MRPC_TRAIN = "https://s3.amazonaws.com/senteval/senteval_data/msr_paraphrase_train.txt"
    MRPC_TEST = "https://s3.amazonaws.com/senteval/senteval_data/msr_paraphrase_test.txt"
    DATA_DIR = "MRPC"

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
            {"split": DatasetSplit.TEST, "shards": 1},
        ]

    @property
    def approx_vocab_size(self) -> int:
        return 2**13

    @property
    def num_classes(self) -> int:
        return 2

    def class_labels(self, data_dir: str | None) -> list[str]:
        del data_dir
        return ["not_paraphrase", "paraphrase"]

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        """``tmp_dir/MRPC`` with its three files, each downloaded when missing."""
        mrpc_dir = os.path.join(tmp_dir, self.DATA_DIR)
        for name, url in (
            ("msr_paraphrase_train.txt", self.MRPC_TRAIN),
            ("msr_paraphrase_test.txt", self.MRPC_TEST),
            ("dev_ids.tsv", self.DEV_IDS),
        ):
            generator_utils.maybe_download(mrpc_dir, name, url)
        return mrpc_dir

    def example_generator(
        self, filename: str, dev_ids: list[list[str]], dataset_split: str
    ) -> Iterator[dict]:
        """The pairs of ``filename`` (after its header) that belong to ``dataset_split`` (by
        ``dev_ids``, ``[id1, id2]`` lists), each both ways."""
        for row in rows(filename, skip_header=True):
            label, id1, id2, s1, s2 = row.take(5)
            is_dev = [id1, id2] in dev_ids
            if dataset_split == DatasetSplit.TRAIN and is_dev:
                continue
            if dataset_split == DatasetSplit.EVAL and not is_dev:
                continue
            for pair in ([s1, s2], [s2, s1]):
                yield {"inputs": pair, "label": row.integer(label)}

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        mrpc_dir = self._maybe_download_corpora(tmp_dir)
        test = dataset_split == DatasetSplit.TEST
        dev_ids = []
        if not test:  # the dev ids file read as text, as T2T's tf.gfile.Open(path)
            with tf.io.gfile.GFile(os.path.join(mrpc_dir, "dev_ids.tsv")) as f:
                dev_ids = [line.strip().split("\t") for line in f]
        name = "msr_paraphrase_test.txt" if test else "msr_paraphrase_train.txt"
        yield from self.example_generator(os.path.join(mrpc_dir, name), dev_ids, dataset_split)


class _GluePair(GlueTask, TextConcat2ClassProblem):
    """A GLUE pair task of ``<folder>.zip`` (T2T's ``example_generator`` of ``qnli.py``,
    ``rte.py`` and ``wnli.py``): a header, then ``index<TAB>s1<TAB>s2<TAB>label``
    rows (``qnli.py``, ``rte.py``, ``wnli.py``); the label a name of ``_LABELS``, or
    ``_INT_LABELS``' integer."""

    _FOLDER = ""
    _INT_LABELS = False

    def _corpus_url(self) -> str:
        raise NotImplementedError()

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        return extracted_folder(tmp_dir, self._FOLDER, f"{self._FOLDER}.zip", self._corpus_url())

    def example_generator(self, filename: str) -> Iterator[dict]:
        labels = self.class_labels(None)
        for row in rows(filename, skip_header=True):
            _, s1, s2, label = row.take(4)
            label_id = row.integer(label) if self._INT_LABELS else row.label_id(label, labels)
            yield {"inputs": [s1, s2], "label": label_id}


@t2t_registry.register_problem
class QuestionNLI(_GluePair):
    """GLUE's Question NLI (``qnli.py``): does the sentence answer the question."""

    _QNLI_URL = glue_url("QNLI.zip", "c24cad61-f2df-4f04-9ab6-aa576fa829d0")
    _FOLDER, _TRAIN_SHARDS, _VOCAB_SIZE, _LABELS = "QNLI", 100, 2**15, ENTAILMENT

    def _corpus_url(self) -> str:
        return self._QNLI_URL


@t2t_registry.register_problem
class RTE(_GluePair):
    """GLUE's Recognizing Textual Entailment (``rte.py``)."""

    _RTE_URL = glue_url("RTE.zip", "5efa7e85-a0bb-4f19-8ea2-9e1840f077fb")
    _FOLDER, _TRAIN_SHARDS, _LABELS = "RTE", 1, ENTAILMENT

    def _corpus_url(self) -> str:
        return self._RTE_URL


@t2t_registry.register_problem
class WinogradNLI(_GluePair):
    """GLUE's Winograd NLI (``wnli.py``): integer labels, vocab file ``vocab.wnli.8192``."""

    _WNLI_URL = glue_url("WNLI.zip", "068ad0a0-ded7-4bd7-99a5-5e00222e0faf")
    _FOLDER, _TRAIN_SHARDS, _LABELS, _INT_LABELS = "WNLI", 1, ENTAILMENT, True

    def _corpus_url(self) -> str:
        return self._WNLI_URL

    @property
    def vocab_filename(self) -> str:
        return f"vocab.wnli.{self.approx_vocab_size}"


@t2t_registry.register_problem
class QuoraQuestionPairs(GlueTask, TextConcat2ClassProblem):
    """GLUE's Quora Question Pairs (``quora_qpairs.py``): a header, then ``id, qid1, qid2,
    q1, q2, label`` rows (a
    row of fewer fields skipped, as T2T skips it); each pair twice, both ways."""

    _QQP_URL = glue_url("QQP.zip", "700c6acf-160d-4d89-81d1-de4191d02cb5")
    _TRAIN_SHARDS, _VOCAB_SIZE, _LABELS = 100, 2**15, ("not_duplicate", "duplicate")

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        return extracted_folder(tmp_dir, "QQP", "QQP.zip", self._QQP_URL)

    def example_generator(self, filename: str) -> Iterator[dict]:
        for row in rows(filename, skip_header=True):
            if len(row.fields) < 6:
                continue
            s1, s2, label = row.take(6)[3:]
            for pair in ([s1, s2], [s2, s1]):
                yield {"inputs": pair, "label": row.integer(label)}


@t2t_registry.register_problem
class SciTail(GlueTask, TextConcat2ClassProblem):
    """AI2's SciTail (``scitail.py``): ``SciTailV1.1/tsv_format/scitail_1.0_{train,dev}.tsv``,
    no header,
    ``premise<TAB>hypothesis<TAB>label`` rows."""

    _SCITAIL_URL = "http://data.allenai.org.s3.amazonaws.com/downloads/SciTailV1.1.zip"
    _FILES = ("tsv_format/scitail_1.0_train.tsv", "tsv_format/scitail_1.0_dev.tsv")
    _LABELS = ("neutral", "entails")

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        return extracted_folder(tmp_dir, "SciTailV1.1", "SciTailV1.1.zip", self._SCITAIL_URL)

    def example_generator(self, filename: str) -> Iterator[dict]:
        labels = self.class_labels(None)
        for row in rows(filename, skip_header=False):
            s1, s2, label = row.field(0), row.field(1), row.field(2)
            yield {"inputs": [s1, s2], "label": row.label_id(label, labels)}


@t2t_registry.register_problem
class StanfordNLI(GlueTask, TextConcat2ClassProblem):
    """The Stanford NLI corpus (``stanford_nli.py``; ``SNLI.zip``:
    ``snli_1.0/snli_1.0_{train,dev}.txt``): a
    header, then rows of the gold label and the two sentences in fields 5 and 6; a row
    without a gold label (``-``) skipped."""

    _SNLI_URL = "https://nlp.stanford.edu/projects/snli/snli_1.0.zip"
    _FILES = ("snli_1.0_train.txt", "snli_1.0_dev.txt")
    _TRAIN_SHARDS, _VOCAB_SIZE, _LABELS = 100, 2**15, NLI

    def _maybe_download_corpora(self, tmp_dir: str) -> str:
        return extracted_folder(tmp_dir, "snli_1.0", "SNLI.zip", self._SNLI_URL)

    def example_generator(self, filename: str) -> Iterator[dict]:
        labels = self.class_labels(None)
        for row in rows(filename, skip_header=True):
            s1, s2 = row.field(5), row.field(6)
            if row.fields[0] == "-":
                continue
            yield {"inputs": [s1, s2], "label": row.label_id(row.fields[0], labels)}


# -- MultiNLI (multinli.py) ------------------------------------------------------------------
_MNLI_URL = glue_url("MNLI.zip", "50329ea1-e339-40e2-809c-10c40afff3ce")


def mnli_rows(tmp_dir: str, dataset_split: str) -> Iterator[tuple[Row, str, str]]:
    """T2T's ``_maybe_download_corpora`` and ``_example_generator`` of ``multinli.py``: each
    row after the header of ``MNLI/train.tsv`` for TRAIN, ``MNLI/dev_matched.tsv`` otherwise,
    with its premise (field 8) and hypothesis (field 9); its label is its last field."""
    folder = extracted_folder(tmp_dir, "MNLI", "MNLI.zip", _MNLI_URL)
    name = "train.tsv" if dataset_split == DatasetSplit.TRAIN else "dev_matched.tsv"
    for row in rows(os.path.join(folder, name), skip_header=True):
        yield row, row.field(8), row.field(9)


@t2t_registry.register_problem
class MultiNLI(GlueTask, TextConcat2ClassProblem):
    """The Multi-Genre NLI corpus (``multinli.py``, ``MultiNLI``), its matched dev set for
    EVAL."""

    _TRAIN_SHARDS, _VOCAB_SIZE, _LABELS = 100, 2**15, NLI

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        labels = self.class_labels(None)
        for row, premise, hypothesis in mnli_rows(tmp_dir, dataset_split):
            yield {"inputs": [premise, hypothesis], "label": row.label_id(row.fields[-1], labels)}


@t2t_registry.register_problem
class MultiNLIText2text(Text2TextProblem):
    """MultiNLI as text to text (``multinli.py``, ``MultiNLIText2text``): ``multinli premise:
    <p> hypothesis: <h>`` to the label's name."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def approx_vocab_size(self) -> int:
        return 2**15

    def generate_samples(self, data_dir: str, tmp_dir: str, dataset_split: str) -> Iterator[dict]:
        for row, premise, hypothesis in mnli_rows(tmp_dir, dataset_split):
            inputs = f"multinli premise: {premise} hypothesis: {hypothesis}"
            yield {"inputs": inputs, "targets": row.fields[-1]}


@t2t_registry.register_problem
class MultiNLISharedVocab(MultiNLI):
    """MultiNLI with LM1B's vocabulary (``use_vocab_from_other_problem``)."""

    @property
    def use_vocab_from_other_problem(self) -> Text2TextProblem:
        return LanguagemodelLm1b32k()


@t2t_registry.register_problem
class MultiNLIWikiLMSharedVocab(MultiNLI):
    """MultiNLI with English Wikipedia's 32k vocabulary (multinli.py), read or built as the
    language model's."""

    @property
    def use_vocab_from_other_problem(self) -> Text2TextProblem:
        return wiki_lm.LanguagemodelEnWiki32k()


@t2t_registry.register_problem
class MultiNLIWikiLMSharedVocab64k(MultiNLIWikiLMSharedVocab):
    """MultiNLI with English Wikipedia's 64k vocabulary."""

    @property
    def use_vocab_from_other_problem(self) -> Text2TextProblem:
        return wiki_lm.LanguagemodelEnWiki64k()


@t2t_registry.register_problem
class MultiNLIWikiLMMultiVocab64k(MultiNLIWikiLMSharedVocab):
    """MultiNLI with the four Wikipedias' 64k vocabulary."""

    @property
    def use_vocab_from_other_problem(self) -> Text2TextProblem:
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@t2t_registry.register_problem
class StanfordNLIWikiLMSharedVocab(StanfordNLI):
    """SNLI under the Wiki 32k vocabulary's file name (stanford_nli.py overrides only
    ``vocab_filename``): that file when in --data_dir, else SNLI's own 2**15 one built
    under its name, as T2T's."""

    @property
    def vocab_filename(self) -> str:
        return wiki_lm.LanguagemodelEnWiki32k().vocab_filename


@t2t_registry.register_problem
class StanfordNLIWikiLMSharedVocab64k(StanfordNLIWikiLMSharedVocab):
    """SNLI under the Wiki 64k vocabulary's file name."""

    @property
    def vocab_filename(self) -> str:
        return wiki_lm.LanguagemodelEnWiki64k().vocab_filename


def _lm1b_named(base: type, name: str) -> type:
    """T2T's ``<Base>SharedVocab`` of SciTail and StanfordNLI: the base with LM1B's vocab
    file name (``vocab_filename`` only), registered."""
    attributes = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"T2T's {base.__name__} with LM1B's vocabulary file name.",
        "vocab_filename": property(lambda self: LanguagemodelLm1b32k().vocab_filename),
    }
    return t2t_registry.register_problem(type(name, (base,), attributes))


ColaCharacters = characters(Cola, "ColaCharacters", COLA, __name__)
MSRParaphraseCorpusCharacters = characters(
    MSRParaphraseCorpus, "MSRParaphraseCorpusCharacters", EN_SIM, __name__
)
QuestionNLICharacters = characters(QuestionNLI, "QuestionNLICharacters", EN_NLI, __name__)
RTECharacters = characters(RTE, "RTECharacters", EN_NLI, __name__)
WinogradNLICharacters = characters(WinogradNLI, "WinogradNLICharacters", EN_NLI, __name__)
QuoraQuestionPairsCharacters = characters(
    QuoraQuestionPairs, "QuoraQuestionPairsCharacters", EN_SIM, __name__
)
SciTailCharacters = characters(SciTail, "SciTailCharacters", EN_NLI, __name__)
SciTailSharedVocab = _lm1b_named(SciTail, "SciTailSharedVocab")
StanfordNLICharacters = characters(StanfordNLI, "StanfordNLICharacters", THREE_CL_NLI, __name__)
StanfordNLISharedVocab = _lm1b_named(StanfordNLI, "StanfordNLISharedVocab")
MultiNLICharacters = characters(MultiNLI, "MultiNLICharacters", THREE_CL_NLI, __name__)

# T2T's module -> its classes provided here (t2t_modules.IMPLEMENTED names them).
T2T_MODULES = {
    module.rpartition(".")[2]: tuple(
        globals()[name] for name, where in classes.items() if where == __name__
    )
    for module, classes in t2t_modules.IMPLEMENTED.items()
    if __name__ in classes.values()
}
T2T_REGISTERED_PROBLEMS = tuple(cls for classes in T2T_MODULES.values() for cls in classes)
