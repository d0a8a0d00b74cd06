"""T2T 1.15's chatbot problems (``data_generators/dialog_*.py``) under T2T's names, on
``DialogAbstract`` (``dialog_problems.py``): ``dialog_cornell32k`` (Cornell movie dialogs),
``dialog_dailydialog16k`` (DailyDialog), ``dialog_personachat16k`` (Persona-chat's ConvAI2
dialogs, personas unused) and ``dialog_opensubtitles64k{2009,2011,2012,2013,2016,2018}``.

Each writes T2T's files as T2T does, its quirks kept: a dialog's pairs go to train, dev or
test by its rank (80/10/10 of every 100 dialogs; Persona-chat's count from 0, so 81 train,
and its last dialog is left out), the vocabulary counts training words only; OpenSubtitles
walks its whole raw folder, the archive included, one file a conversation.
"""

from __future__ import annotations

import collections
import os
import re

from t2t_repro.t2t_compat import refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.dialog_problems import DialogAbstract, read_raw


def _raw_dir(problem: DialogAbstract, folder: str) -> str:
    """T2T's raw data folder: ``folder`` beside data_dir (its path without its last part)."""
    return os.path.join("/".join(problem._data_dir.split("/")[:-1]), folder)


class _Splitter:
    """T2T's 80/10/10 choice of a dialog's files by its rank among each 100."""

    def __init__(self, problem: DialogAbstract, files: tuple) -> None:
        self.train, self.dev_end = problem.dataset_split["train"], None
        self.dev_end = self.train + problem.dataset_split["val"]
        self.files = files

    def pick(self, counter: int) -> tuple:
        """The (source, target) files of the dialog whose rank is ``counter``."""
        if counter <= self.train:
            return self.files[0], self.files[1]
        if counter <= self.dev_end:
            return self.files[2], self.files[3]
        return self.files[4], self.files[5]


def _count(vocabulary: collections.Counter, text: str) -> None:
    for word in text.split():
        vocabulary[word] += 1


@t2t_registry.register_problem
class DialogCornell32k(DialogAbstract):
    """The Cornell Movie-Dialogs corpus (T2T's dialog_cornell.py)."""

    @property
    def targeted_vocab_size(self) -> int:
        return 2**15

    def preprocess_data(self, train_mode: str) -> None:
        self.raw_data_dir = _raw_dir(self, "raw_data")
        self.raw_data = os.path.join(self._raw_data_dir, "cornell movie-dialogs corpus")
        self.zipped_data = os.path.join(self._raw_data_dir, "cornell_movie_dialogs_corpus.zip")
        self.url = "http://www.cs.cornell.edu/~cristian/data/cornell_movie_dialogs_corpus.zip"
        self.data_pipeline_status(train_mode)

    def create_data(self, train_mode: str) -> None:
        files = self.open_6_files()
        split = _Splitter(self, files)
        vocabulary, line_dict, number_of_lines = collections.Counter(), {}, 0
        with read_raw(os.path.join(self._raw_data, "movie_lines.txt")) as movie_lines:
            for line in movie_lines:
                fields = line.split(" +++$+++ ")
                line_dict[fields[0]] = self.clean_line(fields[4].lower())
                number_of_lines += 1
                if 0 != self.targeted_dataset_size < number_of_lines:
                    break
        counter = 0
        for dialog in self.extract_dialog_ids():
            counter += 1
            for i, utterance in enumerate(dialog):
                # T2T's test: not the last id's value, and not before its two bad lines
                if utterance != dialog[-1] and dialog[i + 1] not in ("L211194", "L1045"):
                    source, target = split.pick(counter)
                    source_line = line_dict[utterance] + "\n"
                    if source is files[0]:
                        _count(vocabulary, source_line)
                    source.write(source_line)
                    target.write(line_dict[dialog[i + 1]] + "\n")
            if counter == 100:
                counter = 0
        self.close_n_files(files)
        self.save_vocab(vocabulary)

    def extract_dialog_ids(self) -> list[list[str]]:
        """Each conversation's line ids (movie_conversations.txt's fourth field)."""
        with read_raw(os.path.join(self._raw_data, "movie_conversations.txt")) as dialogs:
            return [
                [re.sub("[^A-Z0-9]", "", item) for item in line.split(" +++$+++ ")[3].split(",")]
                for line in dialogs
            ]


@t2t_registry.register_problem
class DialogDailydialog16k(DialogAbstract):
    """DailyDialog, without its auxiliary information (T2T's dialog_dailydialog.py)."""

    def preprocess_data(self, train_mode: str) -> None:
        self.raw_data_dir = _raw_dir(self, "raw_data")
        self.raw_data = os.path.join(self._raw_data_dir, "ijcnlp_dailydialog")
        self.zipped_data = os.path.join(self._raw_data_dir, "ijcnlp_dailydialog.zip")
        self.url = "http://yanran.li/files/ijcnlp_dailydialog.zip"
        self.data_pipeline_status(train_mode)

    def create_data(self, train_mode: str) -> None:
        files = self.open_6_files()
        split = _Splitter(self, files)
        vocabulary, line_counter, counter = collections.Counter(), 0, 0
        with read_raw(os.path.join(self._raw_data, "dialogues_text.txt")) as dialogs:
            for dialog in dialogs:
                counter += 1
                source, target = split.pick(counter)
                utterances = dialog.split("__eou__")[:-1]
                for i, utterance in enumerate(utterances, 1):
                    line_counter += 1
                    utterance = self.clean_line(utterance.lower())
                    if source is files[0]:
                        _count(vocabulary, utterance)
                    if i != len(utterances):
                        source.write(utterance + "\n")
                    if i != 1:
                        target.write(utterance + "\n")
                if counter == 100:
                    counter = 0
                if 0 != self.targeted_dataset_size < line_counter:
                    break
        self.close_n_files(files)
        self.save_vocab(vocabulary)


@t2t_registry.register_problem
class DialogPersonachat16k(DialogAbstract):
    """Persona-chat's dialogs (ConvAI2), personas unused (T2T's dialog_personachat.py)."""

    def preprocess_data(self, train_mode: str) -> None:
        self.raw_data_dir = _raw_dir(self, "raw_data")
        self.raw_data = os.path.join(self._raw_data_dir, "ConvAI2")
        self.zipped_data = os.path.join(self._raw_data_dir, "convai2.tar.gz")
        self.url = "http://parl.ai/downloads/convai2/convai2_fix_723.tgz"
        self.data_pipeline_status(train_mode)

    def extract_data(self, train_mode: str) -> None:
        """T2T's: into the ConvAI2 folder itself."""
        self._extract(self._zipped_data, self._raw_data, tar=True)
        self.create_data(train_mode)

    def _dialogs(self) -> list[str]:
        """T2T's: train then valid (copied to full_none_original_no_cands.txt), read into
        dialogs of "utterance__eou__" (a line whose dialog was silenced is skipped until the
        next dialog; the last dialog is never kept, as in T2T)."""
        full = os.path.join(self._raw_data, "full_none_original_no_cands.txt")
        with open(full, "w") as out:
            for part in ("train", "valid"):
                with read_raw(
                    os.path.join(self._raw_data, f"{part}_none_original_no_cands.txt")
                ) as f:
                    out.write(f.read())
        number_of_lines, current, dialogs, silenced = 0, "", [], False
        with read_raw(full) as lines:
            for line in lines:
                dialog_id = line.split()[0]
                if "__SILENCE__" not in line and (dialog_id == "1" or not silenced):
                    silenced = False
                    number_of_lines += 1
                    source = self.clean_line(" ".join(line.split("\t")[0].split()[1:]).lower())
                    target = self.clean_line(line.split("\t")[1].strip("\n").lower())
                    if dialog_id == "1" and current:
                        dialogs.append(current)
                        current = ""
                    current += source + "__eou__" + target + "__eou__"
                else:
                    silenced = True
                if 0 != self.targeted_dataset_size < number_of_lines:
                    break
        return dialogs

    def create_data(self, train_mode: str) -> None:
        files = self.open_6_files()
        split = _Splitter(self, files)
        vocabulary, counter = collections.Counter(), 0
        for dialog in self._dialogs():
            source, target = split.pick(counter)
            utterances = dialog.split("__eou__")[:-1]
            for i, utterance in enumerate(utterances, 1):
                if source is files[0]:
                    _count(vocabulary, utterance)
                if i != len(utterances):
                    source.write(utterance + "\n")
                if i != 1:
                    target.write(utterance + "\n")
            counter += 1
            if counter == 100:
                counter = 0
        self.close_n_files(files)
        self.save_vocab(vocabulary)


@t2t_registry.register_problem
class DialogOpensubtitles64k2009(DialogAbstract):
    """OpenSubtitles (OPUS), its 2009 release (T2T's dialog_opensubtitles.py)."""

    @property
    def targeted_vocab_size(self) -> int:
        return 2**16

    @property
    def dataset_version(self) -> int:
        return 2009

    def extract_data(self, train_mode: str) -> None:
        """T2T's: the archive (``en.tar.gz``) read as a zip."""
        self._extract(self._zipped_data, self._raw_data_dir, tar=False)
        self.create_data(train_mode)

    def preprocess_data(self, train_mode: str) -> None:
        year = "" if self.dataset_version == 2009 else str(self.dataset_version)
        self.raw_data_dir = _raw_dir(self, f"raw_data_{self.dataset_version}")
        self.raw_data = os.path.join(self._raw_data_dir, "OpenSubtitles" + year)
        self.zipped_data = os.path.join(self._raw_data_dir, "en.tar.gz")
        self.url = f"http://opus.nlpl.eu/download.php?f=OpenSubtitles{year}/en.tar.gz"
        self.data_pipeline_status(train_mode)

    def _conversation(self, path: str, vocabulary, in_train: bool) -> tuple[str, str, int]:
        """One file's sentences (its ``<w>`` words) as source and target lines, and T2T's
        ``line_id`` (1 + the sentences kept; a file's last sentence is not)."""
        sources, targets, words, line_id = "", "", "", 1
        with read_raw(path) as f:
            for line in f:
                if line.find('<s id="') != -1:
                    if words:
                        words = self.clean_line(words)
                        if in_train:
                            _count(vocabulary, words)
                        sources += words + "\n"
                        if line_id != 1:
                            targets += words + "\n"
                        line_id += 1
                    words = ""
                else:
                    at = line.find('<w id="')
                    if at >= 0:
                        line = line[at:]
                        word = line[line.find(">") + 1 : line.find("</w")]
                        words = words + " " + word.replace("\t", " ")
        # the last source sentence has no target
        return "\n".join(sources.split("\n")[:-2]) + "\n", targets, line_id

    def create_data(self, train_mode: str) -> None:
        files = self.open_6_files()
        split = _Splitter(self, files)
        vocabulary, counter, number_of_lines = collections.Counter(), 0, 0
        for root, _, names in os.walk(self._raw_data_dir):
            for name in names:
                counter += 1
                source, target = split.pick(counter)
                path = os.path.join(root, name)
                sources, targets, line_id = self._conversation(path, vocabulary, source is files[0])
                source.write(sources)
                target.write(targets)
                if counter == 100:
                    counter = 0
                number_of_lines += line_id
                if 0 != self.targeted_dataset_size < number_of_lines:
                    break
            else:
                continue
            break
        self.close_n_files(files)
        self.save_vocab(vocabulary)

    def clean_line(self, line: str) -> str:
        """T2T's OpenSubtitles rules: lower case, keep ``[a-z .!?'\\t\\\\]``, and so on."""
        line = re.sub("[^a-z .!?'\t\\\\]", "", line.lower())
        line = re.sub("\\\\['] ", " '", line)
        line = re.sub("[\\\\]", " ", line)
        line = re.sub("[.]", " . ", line)
        line = re.sub("[?]", " ? ", line)
        line = re.sub("[!]", " ! ", line)
        line = re.sub("[ ]'[ ]", " ", line)
        return re.sub("n't", " n't", line)


def _opensubtitles(year: int) -> type:
    """T2T's ``DialogOpensubtitles64k<year>``: the 2009 class with its ``dataset_version``."""
    name = f"DialogOpensubtitles64k{year}"
    attributes = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"OpenSubtitles (OPUS), its {year} release (T2T's).",
        "dataset_version": property(lambda self: year),
    }
    return t2t_registry.register_problem(type(name, (DialogOpensubtitles64k2009,), attributes))


DialogOpensubtitles64k2011 = _opensubtitles(2011)
DialogOpensubtitles64k2012 = _opensubtitles(2012)
DialogOpensubtitles64k2013 = _opensubtitles(2013)
DialogOpensubtitles64k2016 = _opensubtitles(2016)
DialogOpensubtitles64k2018 = _opensubtitles(2018)

T2T_REGISTERED_PROBLEMS = (
    DialogCornell32k,
    DialogDailydialog16k,
    DialogPersonachat16k,
    DialogOpensubtitles64k2009,
    DialogOpensubtitles64k2011,
    DialogOpensubtitles64k2012,
    DialogOpensubtitles64k2013,
    DialogOpensubtitles64k2016,
    DialogOpensubtitles64k2018,
)

# T2T's names of the dialog_*.py modules this project does not provide: one line when called.
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.dialog_cornell")
