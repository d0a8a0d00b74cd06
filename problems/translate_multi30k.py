"""Multi30k task 1 (Elliott et al., 2016): a real, small EN-DE / EN-FR translation task.

``translate_ende_multi30k`` and ``translate_enfr_multi30k`` read the raw (cased, untokenized)
captions ``{train,val,test_2016_flickr}.{en,de,fr}.gz`` from ``--tmp_dir`` (``val`` is our dev
split, ``test_2016_flickr`` our test split): 29,000 / 1,014 / 1,000 pairs. Uncompressed copies
(``train.en``) and a ``multi30k/`` subfolder of tmp_dir are accepted too. When the files are
absent they are downloaded from the dataset's GitHub repository (multi30k/dataset,
``data/task1/raw``) through ``t2t_repro/data/download.py`` (resumed, retried, renamed when
whole) unless ``T2T_REPRO_OFFLINE=1``; without them datagen stops with one line naming the URL
and the file to put in --tmp_dir. One subword vocab of about 2**13 (8,192) entries is shared by both
languages and built from the training captions. Licence: non-commercial research and education
use only (derived from Flickr30K).
"""

from __future__ import annotations

import os

from t2t_repro.builtin.problems.reversed_problem import register_with_rev
from t2t_repro.builtin.problems.translate import TranslateProblem
from t2t_repro.data import download
from t2t_repro.data.pair_sources import FilePairs

RAW_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{}"
SPLIT_FILES = {"train": "train", "dev": "val", "test": "test_2016_flickr"}


class Multi30kProblem(TranslateProblem):
    """Multi30k EN -> ``target_lang`` from the raw .gz files."""

    source_lang, target_lang = "en", "de"
    num_shards = {"train": 10, "dev": 1, "test": 1}
    approx_vocab_size = 2**13

    def _find(self, tmp_dir: str, stem: str, lang: str) -> str | None:
        for folder in (tmp_dir, os.path.join(tmp_dir, "multi30k")):
            for name in (f"{stem}.{lang}.gz", f"{stem}.{lang}"):
                if os.path.isfile(os.path.join(folder, name)):
                    return os.path.join(folder, name)
        return None

    def missing_data_help(self, tmp_dir: str, split: str) -> str:
        stem = SPLIT_FILES[split]
        files = " ".join(f"{stem}.{lang}.gz" for lang in (self.source_lang, self.target_lang))
        return (
            f"Expected {files} in {tmp_dir} (--tmp_dir). Get them from "
            f"{RAW_URL.format('')} (GitHub multi30k/dataset, data/task1/raw) and pass that folder "
            f"as --tmp_dir (a copy may be at ../shared/data/multi30k)."
        )

    def split_sources(self, tmp_dir: str, split: str):
        stem = SPLIT_FILES[split]
        paths = {}
        for lang in (self.source_lang, self.target_lang):
            path = self._find(tmp_dir, stem, lang)
            if path is None:  # the one line of a failed download names the file to put there
                url, path = RAW_URL.format(f"{stem}.{lang}.gz"), f"{tmp_dir}/{stem}.{lang}.gz"
                try:
                    path = download.fetch(url, path)
                except download.DownloadError as e:
                    raise download.DownloadError(f"{self.name}: {e}") from None
            paths[lang] = path
        return [FilePairs(paths[self.source_lang], paths[self.target_lang])]


@register_with_rev
class TranslateEndeMulti30k(Multi30kProblem):
    """Multi30k English -> German (``translate_ende_multi30k_rev``: German -> English)."""

    target_lang = "de"


@register_with_rev
class TranslateEnfrMulti30k(Multi30kProblem):
    """Multi30k English -> French (``translate_enfr_multi30k_rev``: French -> English)."""

    target_lang = "fr"
