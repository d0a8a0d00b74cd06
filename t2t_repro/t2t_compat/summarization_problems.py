"""T2T 1.15's ``summarize_cnn_dailymail32k`` (``data_generators/cnn_dailymail.py``) under T2T's
name: CNN and Daily Mail stories to their highlights, a ``Text2TextProblem`` with T2T's 32k
subword vocabulary, splits of See et al. (2017).

T2T's files are read from --tmp_dir, fetched there when missing: ``cnn_stories.tgz`` and
``dailymail_stories.tgz`` (Google Drive, extracted to ``cnn/stories/`` and
``dailymail/stories/`` unless those folders are there) and ``all_train.txt`` /
``all_val.txt`` / ``all_test.txt`` (the URL lists: a story is the file named by the sha1 of
its URL). As T2T does, each split's texts are also written to ``cnndm.<split>.source`` /
``.target`` in --tmp_dir. Its ``_wiki_lm_`` variants take a wiki language model's vocabulary
(``wiki_lm.py``: built from its corpus in --tmp_dir when not in --data_dir), and the
``summarize_frac*`` ones keep a fraction of the train split, shuffled by T2T's seeded
``random``; the packed ``summarize_cnn_dailymail_multi64k_packed1k`` is not provided.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro.data.text_files import extract_all
from t2t_repro.t2t_compat import generator_utils, text_encoder, wiki_lm
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem

# cnn_dailymail.py: the stories of http://cs.nyu.edu/~kcho/DMQA/ on Google Drive
_CNN_STORIES_DRIVE_URL = (
    "https://drive.google.com/uc?export=download&id=0BwmD_VLjROrfTHk4NFg2SndKcjQ"
)
_DAILYMAIL_STORIES_DRIVE_URL = (
    "https://drive.google.com/uc?export=download&id=0BwmD_VLjROrfM1BxdkxVaTY2bWs"
)
_URL_LISTS = "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/"
_LISTS = {DatasetSplit.TRAIN: "all_train.txt", DatasetSplit.EVAL: "all_val.txt"}
_RAW_NAMES = {DatasetSplit.TRAIN: "cnndm.train", DatasetSplit.EVAL: "cnndm.dev"}
_SUMMARY = " <summary> "
# See et al.'s sentence ends (cnn_dailymail.py, END_TOKENS): a line ending otherwise gets "."
END_TOKENS = [".", "!", "?", "...", "'", "`", '"', "\u2019", "\u201d", ")"]


def _maybe_download_corpora(tmp_dir: str, dataset_split: str) -> tuple[list[str], str]:
    """T2T's ``_maybe_download_corpora``: every story file, and the split's URL list."""
    all_files = []
    for name, url in (
        ("cnn", _CNN_STORIES_DRIVE_URL),
        ("dailymail", _DAILYMAIL_STORIES_DRIVE_URL),
    ):
        folder = os.path.join(tmp_dir, name, "stories/")
        if not tf.io.gfile.exists(folder):
            archive = generator_utils.maybe_download_from_drive(tmp_dir, f"{name}_stories.tgz", url)
            extract_all(archive, tmp_dir)
        all_files += tf.io.gfile.glob(folder + "*")
    listed = _LISTS.get(dataset_split, "all_test.txt")
    return all_files, generator_utils.maybe_download(tmp_dir, listed, _URL_LISTS + listed)


def example_splits(url_file: str, all_files: list[str]) -> list[str]:
    """T2T's: the story files of the URL list, in its order (a missing one skipped)."""
    by_name = {f.split("/")[-1]: f for f in all_files}
    with tf.io.gfile.GFile(url_file) as f:
        urls = [line.strip().encode("utf-8") for line in f]
    names = (hashlib.sha1(url).hexdigest() + ".story" for url in urls)
    return [by_name[name] for name in names if name in by_name]


def _fix_run_on_sents(line: str) -> str:
    if "@highlight" in line or not line or line[-1] in END_TOKENS:
        return line
    return line + "."


def example_generator(all_files: list[str], urls_path: str, sum_token: bool) -> Iterator[str]:
    """T2T's: each listed story's text lines, then its highlights (after ``@highlight``),
    joined by " <summary> " (``sum_token``) or a space; a story without either is skipped."""
    joiner = _SUMMARY if sum_token else " "
    for story_file in example_splits(urls_path, all_files):
        story, summary, in_highlights = [], [], False
        with tf.io.gfile.GFile(story_file, "rb") as f:
            for raw in f:
                line = _fix_run_on_sents(text_encoder.to_unicode_utf8(raw.strip()))
                if not line:
                    continue
                if line.startswith("@highlight"):
                    if not story:
                        break  # no article text
                    in_highlights = True
                elif in_highlights:
                    summary.append(line)
                else:
                    story.append(line)
        if story and summary:
            yield " ".join(story) + joiner + " ".join(summary)


def _story_summary_split(story: str) -> tuple[str, str]:
    at = story.find(_SUMMARY)
    return story[:at], story[at + len(_SUMMARY) :]


def write_raw_text_to_files(
    all_files: list[str], urls_path: str, dataset_split: str, tmp_dir: str
) -> None:
    """T2T's: the split's stories and summaries, one a line, in tmp_dir's ``cnndm.*``."""
    name = os.path.join(tmp_dir, _RAW_NAMES.get(dataset_split, "cnndm.test"))
    with open(name + ".source", "w", encoding="utf-8") as stories:
        with open(name + ".target", "w", encoding="utf-8") as summaries:
            for example in example_generator(all_files, urls_path, sum_token=True):
                story, summary = _story_summary_split(example)
                stories.write(story + "\n")
                summaries.write(summary + "\n")


@t2t_registry.register_problem
class SummarizeCnnDailymail32k(Text2TextProblem):
    """Summarize CNN and Daily Mail articles to their summary highlights (T2T's)."""

    def generate_text_for_vocab(self, data_dir: str, tmp_dir: str) -> Iterator[str]:
        all_files, urls_path = _maybe_download_corpora(tmp_dir, DatasetSplit.TRAIN)
        return example_generator(all_files, urls_path, sum_token=False)

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 100},
            {"split": DatasetSplit.EVAL, "shards": 10},
            {"split": DatasetSplit.TEST, "shards": 10},
        ]

    def is_generate_per_split(self) -> bool:  # a method in T2T too: only its truth is read
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        all_files, urls_path = _maybe_download_corpora(tmp_dir, dataset_split)
        write_raw_text_to_files(all_files, urls_path, dataset_split, tmp_dir)
        for example in example_generator(all_files, urls_path, sum_token=True):
            story, summary = _story_summary_split(example)
            yield {"inputs": story, "targets": summary}


@t2t_registry.register_problem
class SummarizeCnnDailymailWikiLMSharedVocab(SummarizeCnnDailymail32k):
    """CNN/DM with English Wikipedia's 32k vocabulary (cnn_dailymail.py), shared with its LM."""

    @property
    def use_vocab_from_other_problem(self) -> wiki_lm.LanguagemodelEnWiki32k:
        return wiki_lm.LanguagemodelEnWiki32k()


@t2t_registry.register_problem
class SummarizeCnnDailymailWikiLMSharedVocab64k(SummarizeCnnDailymail32k):
    """CNN/DM with English Wikipedia's 64k vocabulary."""

    @property
    def use_vocab_from_other_problem(self) -> wiki_lm.LanguagemodelEnWiki64k:
        return wiki_lm.LanguagemodelEnWiki64k()


@t2t_registry.register_problem
class SummarizeCnnDailymailWikiLMMultiVocab64k(SummarizeCnnDailymail32k):
    """CNN/DM with the four Wikipedias' 64k vocabulary (de, en, fr, ro)."""

    @property
    def use_vocab_from_other_problem(self) -> wiki_lm.LanguagemodelDeEnFrRoWiki64k:
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@t2t_registry.register_problem
class SummarizeFracCnnDailymailWikiLMSharedVocab64k(SummarizeCnnDailymail32k):
    """A fraction of CNN/DM's train stories (all of them here), the Wiki 64k vocabulary: the
    subclasses measure how summarization degrades with less data."""

    @property
    def use_vocab_from_other_problem(self) -> wiki_lm.LanguagemodelEnWiki64k:
        return wiki_lm.LanguagemodelEnWiki64k()

    def fraction_of_data(self) -> float:
        return 1.0

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """T2T's (cnn_dailymail.py, ``SummarizeFrac...generate_samples``): the split's pairs
        read whole; for TRAIN, shuffled by the global ``random`` (t2t-datagen seeds it) and
        the first ``int(fraction * count)`` kept."""
        all_files, urls_path = _maybe_download_corpora(tmp_dir, dataset_split)
        write_raw_text_to_files(all_files, urls_path, dataset_split, tmp_dir)
        pairs = [
            _story_summary_split(example)
            for example in example_generator(all_files, urls_path, sum_token=True)
        ]
        if dataset_split == DatasetSplit.TRAIN:
            random.shuffle(pairs)
            pairs = pairs[: int(self.fraction_of_data() * len(pairs))]
        for story, summary in pairs:
            yield {"inputs": story, "targets": summary}


@t2t_registry.register_problem
class SummarizeFrac0p1CnnDailymailWikiLMSharedVocab64k(
    SummarizeFracCnnDailymailWikiLMSharedVocab64k
):
    """0.1% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.001


@t2t_registry.register_problem
class SummarizeFrac1CnnDailymailWikiLMSharedVocab64k(SummarizeFracCnnDailymailWikiLMSharedVocab64k):
    """1% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.01


@t2t_registry.register_problem
class SummarizeFrac2CnnDailymailWikiLMSharedVocab64k(SummarizeFracCnnDailymailWikiLMSharedVocab64k):
    """2% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.02


@t2t_registry.register_problem
class SummarizeFrac5CnnDailymailWikiLMSharedVocab64k(SummarizeFracCnnDailymailWikiLMSharedVocab64k):
    """5% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.05


@t2t_registry.register_problem
class SummarizeFrac10CnnDailymailWikiLMSharedVocab64k(
    SummarizeFracCnnDailymailWikiLMSharedVocab64k
):
    """10% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.1


@t2t_registry.register_problem
class SummarizeFrac20CnnDailymailWikiLMSharedVocab64k(
    SummarizeFracCnnDailymailWikiLMSharedVocab64k
):
    """20% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.2


@t2t_registry.register_problem
class SummarizeFrac50CnnDailymailWikiLMSharedVocab64k(
    SummarizeFracCnnDailymailWikiLMSharedVocab64k
):
    """50% of the train stories."""

    def fraction_of_data(self) -> float:
        return 0.5


T2T_REGISTERED_PROBLEMS = (
    SummarizeCnnDailymail32k,
    SummarizeCnnDailymailWikiLMSharedVocab,
    SummarizeCnnDailymailWikiLMSharedVocab64k,
    SummarizeCnnDailymailWikiLMMultiVocab64k,
    SummarizeFracCnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac0p1CnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac1CnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac2CnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac5CnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac10CnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac20CnnDailymailWikiLMSharedVocab64k,
    SummarizeFrac50CnnDailymailWikiLMSharedVocab64k,
)
