"""T2T 1.15's ``ChoppedTextProblem`` (``data_generators/text_problems.py``), which
``text_problems`` names for a usr_dir: a language model over whole text files, encoded with
the problem's vocabulary (a subword one by default) and cut into examples of
``sequence_length`` target ids (no EOS; the last one padded with 0, or dropped).

Datagen is T2T's task by task (``multiprocess_generate``): task ``i`` writes the ``i``-th
unshuffled shard (the train shards, then the dev shards) from its share of the files, then
shuffles it with the global ``random`` (``generate_files``, ``shuffle_dataset``).
``t2t-datagen`` calls ``prepare_to_generate`` (the vocabulary), then each task in turn
(``datagen_tasks.py``, ``run_as_t2t_datagen``). T2T's ``bin/t2t_datagen.py`` runs the tasks in
a ``multiprocessing.Pool``, whose forked workers Python reseeds from the OS (``random.py``,
``os.register_at_fork``): T2T's vocabulary and examples per shard are fixed, the order of a
shard's examples differs from run to run. Here the shuffles draw from ``--random_seed``, so
they are the same every run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from t2t_repro import fileio
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import generator_utils
from t2t_repro.t2t_compat.problem import T2TProblemError
from t2t_repro.t2t_compat.text_kinds import Text2SelfProblem


class ChoppedTextProblem(Text2SelfProblem):
    """T2T's ``ChoppedTextProblem``: a subclass gives ``train_text_filepaths``,
    ``dev_text_filepaths`` and ``sequence_length``."""

    def train_text_filepaths(self, tmp_dir: str) -> list[str]:
        raise NotImplementedError()

    def dev_text_filepaths(self, tmp_dir: str) -> list[str]:
        raise NotImplementedError()

    @property
    def sequence_length(self) -> int:
        raise NotImplementedError()

    def max_length(self, model_hparams: Any) -> int:
        return model_hparams.get("split_to_length", 0) or self.sequence_length

    @property
    def remainder_policy(self) -> str:
        """What the last ids of a task's text become: ``"pad"`` (an example padded with 0)
        or ``"drop"``."""
        return "pad"

    @property
    def max_chars_for_vocab(self) -> int:
        return 10**7

    @property
    def max_dev_chars(self) -> int:
        return 10**7

    @property
    def num_train_shards(self) -> int:
        return self.dataset_splits[0]["shards"]

    @property
    def num_dev_shards(self) -> int:
        return self.dataset_splits[1]["shards"]

    @property
    def multiprocess_generate(self) -> bool:
        return True

    @property
    def num_generate_tasks(self) -> int:
        return self.num_train_shards + self.num_dev_shards

    def eval_metrics(self) -> list[str]:
        return ["accuracy", "neg_log_perplexity"]

    def text_filepaths_for_task(self, tmp_dir: str, task_id: int) -> list[str]:
        """The files of one task: every ``num_train_shards``-th training file, or of a dev
        task every ``num_dev_shards``-th dev file (T2T's round-robin)."""
        self._check_task(task_id)
        if task_id < self.num_train_shards:
            files, shards = self.train_text_filepaths(tmp_dir), self.num_train_shards
            index = task_id
        else:
            files, shards = self.dev_text_filepaths(tmp_dir), self.num_dev_shards
            index = task_id - self.num_train_shards
        return [f for i, f in enumerate(files) if i % shards == index]

    def filepath_to_unicode_strings(self, filepath: str) -> Iterator[str]:
        """The whole file as one text, as T2T's ``tf.gfile`` ``read()`` gives it (every
        ``\\r`` kept; a file that is not UTF-8 is refused, as that read fails)."""
        with fileio.open(filepath, "rb") as f:
            data = f.read()
        try:
            yield data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(
                f"{filepath} is not UTF-8 text ({e.reason} at byte {e.start}); T2T's "
                "ChoppedTextProblem reads it with tf.gfile, which fails on it too."
            ) from None

    def file_generator(
        self,
        filepaths: list[str],
        max_chars_per_file: int | None = None,
        max_chars_total: int | None = None,
    ) -> Iterator[str]:
        """The files' texts, cut to at most ``max_chars_per_file`` characters a file and
        ``max_chars_total`` in all (T2T's ``file_generator``)."""
        chars_total = 0
        for path in filepaths:
            chars_this_file = 0
            for text in self.filepath_to_unicode_strings(path):
                if max_chars_per_file and chars_this_file + len(text) > max_chars_per_file:
                    text = text[: max_chars_per_file - chars_this_file]
                if max_chars_total and chars_total + len(text) > max_chars_total:
                    text = text[: max_chars_total - chars_total]
                chars_total += len(text)
                chars_this_file += len(text)
                if text:
                    yield text
                if max_chars_total and chars_total >= max_chars_total:
                    return
                if max_chars_per_file and chars_this_file >= max_chars_per_file:
                    break

    def example_generator(self, encoder: Any, tmp_dir: str, task_id: int) -> Iterator[dict]:
        """One task's examples: its texts' ids, carried over from one text to the next, cut
        every ``sequence_length`` ids; a dev task reads at most its share of
        ``max_dev_chars`` a file (T2T's ``example_generator``)."""
        filepaths = self.text_filepaths_for_task(tmp_dir, task_id)
        max_chars_per_file = None
        if task_id >= self.num_train_shards:
            max_chars_per_file = self.max_dev_chars // (self.num_dev_shards * len(filepaths))
        length = self.sequence_length
        tokens: list[int] = []
        for text in self.file_generator(filepaths, max_chars_per_file=max_chars_per_file):
            tokens.extend(encoder.encode(text))
            pos = 0
            while pos + length <= len(tokens):
                yield {"targets": tokens[pos : pos + length]}
                pos += length
            tokens = tokens[pos:]
        if self.remainder_policy == "pad":
            if tokens:
                yield {"targets": tokens + [0] * (length - len(tokens))}
        elif self.remainder_policy != "drop":
            raise T2TProblemError(
                f"{type(self).__name__}: remainder_policy is {self.remainder_policy!r}; T2T's "
                "ChoppedTextProblem takes 'pad' or 'drop'."
            )

    def prepare_to_generate(self, data_dir: str, tmp_dir: str) -> None:
        """The vocabulary, built once before the tasks (and the files asked for)."""
        self.get_or_create_vocab(data_dir, tmp_dir)
        self.train_text_filepaths(tmp_dir)
        self.dev_text_filepaths(tmp_dir)

    def generate_text_for_vocab(self, data_dir: str, tmp_dir: str) -> Iterator[str]:
        return self.file_generator(
            self.train_text_filepaths(tmp_dir), max_chars_total=self.max_chars_for_vocab
        )

    def generate_data(self, data_dir: str, tmp_dir: str, task_id: int = -1) -> None:
        """One task's shard (T2T's ``generate_data``): its examples, then its shuffle."""
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        self._check_task(task_id)
        if task_id < self.num_train_shards:
            paths = self.training_filepaths(data_dir, self.num_train_shards, shuffled=False)
            out_file = paths[task_id]
        else:
            paths = self.dev_filepaths(data_dir, self.num_dev_shards, shuffled=False)
            out_file = paths[task_id - self.num_train_shards]
        examples = self.example_generator(encoder, tmp_dir, task_id)
        generator_utils.generate_files(examples, [out_file])
        generator_utils.shuffle_dataset([out_file])

    def _check_task(self, task_id: Any) -> None:
        """T2T asserts a task id in range: here one line (t2t-trainer --generate_data, which
        passes none, meets it as T2T's trainer does)."""
        tasks = self.num_generate_tasks
        if not isinstance(task_id, int) or not 0 <= task_id < tasks:
            raise T2TProblemError(
                f"{type(self).__name__} ({self.name}): generate_data takes a task id from 0 to "
                f"{tasks - 1} (T2T's ChoppedTextProblem asserts it), not {task_id!r}: write its "
                "data with t2t-datagen, which runs every task."
            )

    def check_split_decodes(self) -> None:
        raise T2TProblemError(
            f"{type(self).__name__} ({self.name}): its examples are cut from whole files, not "
            "samples, so a split's decodes (which read the split's samples) cannot be made: "
            "continue prompts with --decode_from_file."
        )
