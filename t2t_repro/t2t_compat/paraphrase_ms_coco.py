"""``tensor2tensor.data_generators.paraphrase_ms_coco``: T2T 1.15.7's paraphrase generation
problems on MS COCO's captions under T2T's names: ``paraphrase_generation_ms_coco_problem1d``
(each pair of one image's captions, first to second), ``..._problem2d`` (both ways) and their
``_characters`` variants.

``captions_train-val2014.zip`` (in --tmp_dir or downloaded there from T2T's address) is unzipped
into ``--tmp_dir/captions_train-val2014`` unless that folder is there; train reads
``annotations/captions_train2014.json``, dev ``captions_val2014.json``: each image's captions in
the file's order, images in order of first appearance. The subword vocabulary
(``vocab.<name>.8192.subwords``) is T2T's default, from the training pairs; 10 train shards and
1 dev shard.
"""

from __future__ import annotations

import collections
import json
import os
import zipfile
from collections.abc import Iterator

from t2t_repro import fileio
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import DatasetSplit
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType

_MS_COCO_DOWNLOAD_URL = "http://msvocds.blob.core.windows.net/annotations-1-0-3"
_MS_COCO_ZIPPED_FILE = "captions_train-val2014.zip"
_MS_COCO_TRAIN_FILE = "captions_train2014.json"
_MS_COCO_DEV_FILE = "captions_val2014.json"


def create_combination(list_of_sentences: list) -> list[tuple]:
    """Every pair ``(earlier, later)`` of the list, by the earlier's position, then the
    later's: ``[a, b, c]`` -> ``[(a, b), (a, c), (b, c)]``."""
    return [
        (first, second)
        for i, first in enumerate(list_of_sentences)
        for second in list_of_sentences[i + 1 :]
    ]


class ParaphraseGenerationProblem(Text2TextProblem):
    """T2T's base class: ``prepare_data`` gives the pairs; ``bidirectional`` adds each
    pair reversed after it."""

    @property
    def bidirectional(self) -> bool:
        raise NotImplementedError()

    def prepare_data(self, data_dir: str, tmp_dir: str, dataset_split: str) -> list[tuple]:
        raise NotImplementedError()

    def generate_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        for first, second in self.prepare_data(data_dir, tmp_dir, dataset_split):
            yield {"inputs": first, "targets": second}
            if self.bidirectional:
                yield {"inputs": second, "targets": first}


class ParaphraseGenerationMsCocoProblem(ParaphraseGenerationProblem):
    """MS COCO's captions of one image as paraphrases of each other."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def dataset_splits(self) -> list[dict]:
        return [
            {"split": DatasetSplit.TRAIN, "shards": 10},
            {"split": DatasetSplit.EVAL, "shards": 1},
        ]

    @property
    def approx_vocab_size(self) -> int:
        return 2**13

    def prepare_data(self, data_dir: str, tmp_dir: str, dataset_split: str) -> list[tuple]:
        captions = self._get_captions(self._maybe_download(tmp_dir, dataset_split))
        return [pair for image in captions for pair in create_combination(image)]

    def _maybe_download(self, tmp_dir: str, dataset_split: str) -> str:
        """The split's json file, the zip fetched and unzipped first when needed."""
        name = os.path.basename(_MS_COCO_ZIPPED_FILE)
        path = generator_utils.maybe_download(
            tmp_dir, name, os.path.join(_MS_COCO_DOWNLOAD_URL, name)
        )
        # T2T's folder name is the zip's with the characters of ".zip" stripped at both ends.
        unzip_dir = os.path.join(tmp_dir, name.strip(".zip"))
        if not fileio.exists(unzip_dir):
            with zipfile.ZipFile(path, "r") as archive:
                archive.extractall(unzip_dir)
        train = dataset_split == DatasetSplit.TRAIN
        return os.path.join(
            unzip_dir, "annotations", _MS_COCO_TRAIN_FILE if train else _MS_COCO_DEV_FILE
        )

    def _get_captions(self, ms_coco_path: str) -> list[list[str]]:
        """Each image's captions, in the file's order, images by first appearance."""
        with open(ms_coco_path, encoding="utf-8") as f:
            annotations = json.load(f)["annotations"]
        by_image: dict = collections.defaultdict(list)
        for annotation in annotations:
            by_image[annotation["image_id"]].append(annotation["caption"])
        return list(by_image.values())


@t2t_registry.register_problem
class ParaphraseGenerationMsCocoProblem2d(ParaphraseGenerationMsCocoProblem):
    """Each pair both ways."""

    @property
    def bidirectional(self) -> bool:
        return True


@t2t_registry.register_problem
class ParaphraseGenerationMsCocoProblem1d(ParaphraseGenerationMsCocoProblem):
    """Each pair one way, earlier caption to later."""

    @property
    def bidirectional(self) -> bool:
        return False


@t2t_registry.register_problem
class ParaphraseGenerationMsCocoProblem2dCharacters(ParaphraseGenerationMsCocoProblem2d):
    """With T2T's byte vocabulary."""

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER


@t2t_registry.register_problem
class ParaphraseGenerationMsCocoProblem1dCharacters(ParaphraseGenerationMsCocoProblem1d):
    """With T2T's byte vocabulary."""

    @property
    def vocab_type(self) -> str:
        return VocabType.CHARACTER


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (
    ParaphraseGenerationMsCocoProblem2d,
    ParaphraseGenerationMsCocoProblem1d,
    ParaphraseGenerationMsCocoProblem2dCharacters,
    ParaphraseGenerationMsCocoProblem1dCharacters,
)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.paraphrase_ms_coco")
