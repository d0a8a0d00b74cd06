"""``tensor2tensor.data_generators.function_docstring``: T2T 1.15.7's
``github_function_docstring``, Kubeflow's code search pairs: a function's docstring tokens ->
its code tokens, with a subword vocabulary (``vocab.github_function_docstring.8192.subwords``,
from at most 350,000 samples, T2T's cap).

T2T's 100 files ``func-doc-pairs-000NN-of-00100.csv`` (in --tmp_dir, or copied there from
T2T's ``gs://kubeflow-examples/t2t-code-search/raw_data``) are read in order, each line parsed
alone as CSV (a quoted field cannot span lines), two columns: docstring, function. One stream
(T2T's ``is_generate_per_split`` False) round-robin into T2T's 100 train shards and 1 dev
shard; each record also holds T2T's ``embed_code`` feature, ``[0]``, which the transformer
never reads (the input pipeline drops it, as it does T2T's other extra features).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.metrics import Metrics
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem

_TRAIN = "train"  # tf.estimator.ModeKeys.TRAIN


@t2t_registry.register_problem
class GithubFunctionDocstring(Text2TextProblem):
    """Function and docstring pairs (T2T's ``GithubFunctionDocstring``)."""

    NUM_SHARDS = 100

    @property
    def base_url(self) -> str:
        return "gs://kubeflow-examples/t2t-code-search/raw_data"

    @property
    def pair_files_list(self) -> list[list]:
        """T2T's ``[url, (file name,)]`` of each of the ``NUM_SHARDS`` CSV files."""
        files = []
        for i in range(self.NUM_SHARDS):
            name = f"func-doc-pairs-{i:05}-of-{self.NUM_SHARDS:05}.csv"
            files.append([f"{self.base_url}/{name}", (name,)])
        return files

    @property
    def is_generate_per_split(self) -> bool:
        return False

    @property
    def approx_vocab_size(self) -> int:
        return 2**13

    @property
    def max_samples_for_vocab(self) -> int:
        return int(3.5e5)

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        # Not a generator: as T2T's list comprehension, every file is fetched when called.
        paths = [
            generator_utils.maybe_download(tmp_dir, names[0], url)
            for url, names in self.pair_files_list
        ]
        return self._pairs(paths)

    @staticmethod
    def _pairs(paths: list[str]) -> Iterator[dict]:
        for path in paths:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    for docstring, function in csv.reader(io.StringIO(line)):
                        yield {"inputs": docstring, "targets": function, "embed_code": [0]}

    def preprocess_example(self, example: dict, mode: str, unused_hparams: Any) -> dict:
        """T2T's: ``embed_code`` is ``[0]`` outside training (no truncation, as T2T's)."""
        if mode != _TRAIN:
            example["embed_code"] = [0]
        return example

    def eval_metrics(self) -> list[str]:
        return [Metrics.ACC]


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (GithubFunctionDocstring,)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.function_docstring")
