"""``tensor2tensor.data_generators.program_search``: T2T 1.15.7's ``program_search_algolisp``,
AlgoLisp program synthesis (https://arxiv.org/abs/1802.04335): a task's description -> its
program, with T2T's default subword vocabulary (``vocab.program_search_algolisp.32768.subwords``,
from the training pairs).

Each split's ``metaset3.<split>.jsonl.gz`` (in --tmp_dir or downloaded there from T2T's
Dropbox address) is read line by line: the inputs are the ``text`` tokens joined by spaces, the
targets the nested ``short_tree`` flattened with each list's brackets as tokens. 100 train
shards, 1 dev shard (T2T's defaults); T2T's test file is named but never read by its datagen.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator

from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit, T2TProblemError
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem


@t2t_registry.register_problem
class ProgramSearchAlgolisp(Text2TextProblem):
    """Programs synthesized from their description (T2T's ``ProgramSearchAlgolisp``)."""

    DROPBOX = "https://www.dropbox.com"
    DATA_URLS = {
        DatasetSplit.TRAIN: DROPBOX + "/s/qhun6kml9yb2ui9/metaset3.train.jsonl.gz?dl=1",
        DatasetSplit.EVAL: DROPBOX + "/s/aajkw83j2ps8bzx/metaset3.dev.jsonl.gz?dl=1",
        DatasetSplit.TEST: DROPBOX + "/s/f1x9ybkjpf371cp/metaset3.test.jsonl.gz?dl=1",
    }

    @staticmethod
    def _extract_filename_from_url(url: str) -> str:
        """The URL's last path part without its query: ``metaset3.train.jsonl.gz``."""
        return os.path.basename(url).split("?")[0]

    @staticmethod
    def _flatten_target_programs(iterable: Iterable) -> Iterator[str]:
        """A nested program as tokens, each list between ``[`` and ``]`` tokens."""
        yield "["
        for item in iterable:
            if isinstance(item, (list, tuple)):
                yield from ProgramSearchAlgolisp._flatten_target_programs(item)
            else:
                yield item
        yield "]"

    @staticmethod
    def _parse_json_to_dict(json_line) -> dict:
        """One jsonl line as a sample: its ``text`` and flattened ``short_tree``, space-joined."""
        task = json.loads(json_line)
        program = ProgramSearchAlgolisp._flatten_target_programs(task["short_tree"])
        return {"inputs": " ".join(task["text"]), "targets": " ".join(program)}

    @property
    def is_generate_per_split(self) -> bool:
        return True

    def maybe_download_dataset(self, tmp_dir: str, dataset_split: str) -> str:
        """The split's file in ``tmp_dir``, downloaded when missing."""
        url = self.DATA_URLS.get(dataset_split)
        if url is None:  # T2T: tf.logging.fatal
            raise T2TProblemError(
                f"{self.name}: unknown dataset_split {dataset_split!r}; use one of "
                f"{sorted(self.DATA_URLS)}."
            )
        return generator_utils.maybe_download(tmp_dir, self._extract_filename_from_url(url), url)

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        path = self.maybe_download_dataset(tmp_dir, dataset_split)
        with gzip.open(path, "rb") as f:
            for line in f:
                yield self._parse_json_to_dict(line.strip())


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (ProgramSearchAlgolisp,)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.program_search")
