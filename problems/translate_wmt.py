"""WMT EN-DE and EN-FR, as in the paper (WMT14) and as in T2T (``translate_ende_wmt32k``).

* ``wmt_ende``: WMT14 as in the paper (~4.5M pairs): news-commentary v9, commoncrawl,
  europarl v7; dev newstest2013; test newstest2014; tfds fallback ``wmt14_translate/de-en``.
* ``translate_ende_wmt32k``: T2T's mix: news-commentary v13, commoncrawl, europarl v7; dev
  newstest2013; test newstest2014; tfds fallback ``wmt_t2t_translate/de-en``.
  ``translate_ende_wmt8k`` is the same with T2T's 8k vocabulary (its test checkpoint's).
* ``wmt_enfr`` and its T2T-named alias ``translate_enfr_wmt32k``: WMT14 (~36M pairs):
  commoncrawl, europarl v7, news-commentary v9, giga-fren, UN; dev newstest2013; test
  newstest2014; tfds fallback ``wmt14_translate/fr-en``.

One subword vocab of about 2**15 shared by both languages (T2T: 100 train shards, 1 dev).

Where the text comes from, per split: if every corpus of the split is found in ``--tmp_dir``,
those local files are read; if none is, tensorflow-datasets provides the split (downloading it
when online, see ``tfds_source``); if some are, the others' archives are downloaded from
statmt.org into --tmp_dir as T2T's ``compile_data`` downloads them (``data/download.py``), and
offline or when that fails, one line names what is missing.
A corpus is found locally as any of:

* plain parallel files ``<stem>.<lang>`` (or ``.gz``), e.g. ``news-commentary-v13.de-en.en``;
* one TSV ``<stem>.tsv`` (or ``.tsv.gz``), columns in the order of the stem's language pair
  (``news-commentary-v13.de-en.tsv``: German, then English), as statmt.org ships them;
* the members of T2T's tarballs already extracted into tmp_dir (the layout ``t2t-datagen``
  leaves, e.g. ``training-parallel-nc-v13/news-commentary-v13.de-en.en``);
* the tarballs themselves under T2T's names (``training-parallel-nc-v13.tgz``,
  ``training-parallel-commoncrawl.tgz``, ``training-parallel-europarl-v7.tgz``, ``dev.tgz``, ...):
  the needed members are extracted next to them once. SGM test sets are read by ``<seg>``.
"""

from __future__ import annotations

import dataclasses
import os

from t2t_repro.builtin.problems.reversed_problem import register_with_rev
from t2t_repro.builtin.problems.tfds_source import TfdsPairs
from t2t_repro.builtin.problems.translate import TranslateProblem
from t2t_repro.data import download
from t2t_repro.data.pair_sources import FilePairs, PairSource, TsvPairs
from t2t_repro.data.text_files import DataError, extract_member

STATMT = "http://www.statmt.org"
DATA_STATMT = "http://data.statmt.org"


@dataclasses.dataclass(frozen=True)
class WmtCorpus:
    """One parallel corpus and every local layout it may have in tmp_dir."""

    stems: tuple  # plain-file stems, first preferred
    langs: tuple  # the stem's language pair, i.e. a TSV's column order
    locations: tuple  # ((archive file name, {lang: member path}), ...), first preferred
    url: str  # where the first archive is published

    def resolve(self, tmp_dir: str, source_lang: str, target_lang: str) -> PairSource | None:
        isfile = lambda *p: os.path.isfile(os.path.join(tmp_dir, *p))  # noqa: E731
        for stem in self.stems:
            for ext in ("", ".gz"):
                paths = [f"{stem}.{source_lang}{ext}", f"{stem}.{target_lang}{ext}"]
                if all(isfile(p) for p in paths):
                    return FilePairs(*(os.path.join(tmp_dir, p) for p in paths))
            for name in (f"{stem}.tsv", f"{stem}.tsv.gz"):
                if isfile(name):
                    return TsvPairs(
                        os.path.join(tmp_dir, name),
                        self.langs.index(source_lang),
                        self.langs.index(target_lang),
                    )
        for _, members in self.locations:  # members extracted before (T2T's tmp_dir layout)
            src, tgt = members[source_lang], members[target_lang]
            if isfile(src) and isfile(tgt):
                return FilePairs(
                    os.path.join(tmp_dir, src), os.path.join(tmp_dir, tgt), sgm=src.endswith(".sgm")
                )
        errors = []
        for archive, members in self.locations:  # the tarballs: extract the two members once
            src, tgt = members[source_lang], members[target_lang]
            if not isfile(archive):
                continue
            try:
                for member in (src, tgt):
                    extract_member(os.path.join(tmp_dir, archive), member, tmp_dir)
            except DataError as e:
                errors.append(str(e))
                continue
            return FilePairs(
                os.path.join(tmp_dir, src), os.path.join(tmp_dir, tgt), sgm=src.endswith(".sgm")
            )
        if errors:
            raise DataError("; ".join(errors))
        return None

    def fetch(self, tmp_dir: str, source_lang: str, target_lang: str) -> PairSource | None:
        """The first archive downloaded into tmp_dir from ``url`` (as T2T's ``compile_data``
        fetches its tarballs: ``data/download.py``), then resolved as a local corpus."""
        archive = download.fetch(self.url, os.path.join(tmp_dir, self.locations[0][0]))
        found = self.resolve(tmp_dir, source_lang, target_lang)
        if found is None:
            raise DataError(f"{archive} (from {self.url}) does not hold {self.locations[0][1]}.")
        return found

    def expected(self, source_lang: str, target_lang: str) -> str:
        stem = self.stems[0]
        return (
            f"{stem}.{source_lang} + {stem}.{target_lang} (or {stem}.tsv, or "
            f"{' / '.join(sorted({a for a, _ in self.locations}))} from {self.url})"
        )


def _corpus(stem, pair, archive, url, member_fmt, extra_stems=(), extra_locations=()):
    langs = tuple(pair.split("-"))
    members = {lang: member_fmt.format(lang=lang) for lang in langs}
    return WmtCorpus(
        (stem,) + tuple(extra_stems), langs, ((archive, members),) + tuple(extra_locations), url
    )


def _newstest(year: int, pair: str) -> WmtCorpus:
    langs = tuple(pair.split("-"))  # ("de", "en")
    code = f"{langs[0]}{langs[1]}"
    dev_url = f"{DATA_STATMT}/wmt17/translation-task/dev.tgz"
    if year <= 2013:
        members = {lang: f"dev/newstest{year}.{lang}" for lang in langs}
        return WmtCorpus((f"newstest{year}",), langs, (("dev.tgz", members),), dev_url)
    other = langs[0]  # newstest2014-deen-src.en.sgm is the English side of the full test set
    locations = (
        (
            "dev.tgz",
            {
                "en": f"dev/newstest{year}-{code}-src.en.sgm",
                other: f"dev/newstest{year}-{code}-ref.{other}.sgm",
            },
        ),
        (
            "dev.tgz",
            {
                "en": f"dev/newstest{year}-{code}-ref.en.sgm",
                other: f"dev/newstest{year}-{code}-src.{other}.sgm",
            },
        ),
        (
            "test-full.tgz",
            {
                "en": f"test-full/newstest{year}-{code}-src.en.sgm",
                other: f"test-full/newstest{year}-{code}-ref.{other}.sgm",
            },
        ),
    )
    return WmtCorpus((f"newstest{year}-{code}", f"newstest{year}"), langs, locations, dev_url)


def _europarl(pair):
    return _corpus(
        f"europarl-v7.{pair}",
        pair,
        "training-parallel-europarl-v7.tgz",
        f"{STATMT}/wmt13/training-parallel-europarl-v7.tgz",
        f"training/europarl-v7.{pair}.{{lang}}",
    )


def _commoncrawl(pair):
    return _corpus(
        f"commoncrawl.{pair}",
        pair,
        "training-parallel-commoncrawl.tgz",
        f"{STATMT}/wmt13/training-parallel-commoncrawl.tgz",
        f"commoncrawl.{pair}.{{lang}}",
    )


def _news_commentary_v9(pair):
    return _corpus(
        f"news-commentary-v9.{pair}",
        pair,
        "training-parallel-nc-v9.tgz",
        f"{STATMT}/wmt14/training-parallel-nc-v9.tgz",
        f"training/news-commentary-v9.{pair}.{{lang}}",
    )


NEWS_COMMENTARY_V13_DE = _corpus(
    "news-commentary-v13.de-en",
    "de-en",
    "training-parallel-nc-v13.tgz",
    f"{DATA_STATMT}/wmt18/translation-task/training-parallel-nc-v13.tgz",
    "training-parallel-nc-v13/news-commentary-v13.de-en.{lang}",
)
GIGA_FREN = _corpus(
    "giga-fren.release2.fixed",
    "fr-en",
    "training-giga-fren.tar",
    f"{STATMT}/wmt10/training-giga-fren.tar",
    "giga-fren.release2.fixed.{lang}.gz",
)
UN_FREN = _corpus(
    "undoc.2000.fr-en",
    "fr-en",
    "training-parallel-un.tgz",
    f"{STATMT}/wmt13/training-parallel-un.tgz",
    "un/undoc.2000.fr-en.{lang}",
)

ENDE_WMT14 = {
    "train": (_news_commentary_v9("de-en"), _commoncrawl("de-en"), _europarl("de-en")),
    "dev": (_newstest(2013, "de-en"),),
    "test": (_newstest(2014, "de-en"),),
}
# T2T's translate_ende_wmt32k (data_generators/translate_ende.py): train and newstest2013 as
# its eval split; T2T's problems of these names have no test split (Text2TextProblem's
# dataset_splits: train 100 shards, eval 1)
ENDE_T2T = {
    "train": (NEWS_COMMENTARY_V13_DE, _commoncrawl("de-en"), _europarl("de-en")),
    "dev": (_newstest(2013, "de-en"),),
}
T2T_SHARDS = {"train": 100, "dev": 1}
ENFR_WMT14 = {
    "train": (
        _commoncrawl("fr-en"),
        _europarl("fr-en"),
        _news_commentary_v9("fr-en"),
        GIGA_FREN,
        UN_FREN,
    ),
    "dev": (_newstest(2013, "fr-en"),),
    "test": (_newstest(2014, "fr-en"),),
}


class WmtProblem(TranslateProblem):
    """A WMT translation problem: local corpora in tmp_dir, else tensorflow-datasets."""

    source_lang, target_lang = "en", "de"
    corpora: dict = ENDE_WMT14
    tfds_name = "wmt14_translate/de-en"
    num_shards = {"train": 100, "dev": 1, "test": 1}
    approx_vocab_size = 2**15

    def split_sources(self, tmp_dir: str, split: str) -> list[PairSource]:
        corpora = self.corpora.get(split, ())
        found = [c.resolve(tmp_dir, self.source_lang, self.target_lang) for c in corpora]
        if found and all(found):
            return found
        missing = [
            c.expected(self.source_lang, self.target_lang)
            for c, f in zip(corpora, found, strict=True)
            if f is None
        ]
        local_help = f"Local files for the {split} split go in {tmp_dir} (--tmp_dir): " + "; ".join(
            missing
        )
        if any(found):  # T2T's route, partly taken: the rest downloaded as T2T downloads it
            try:
                return [
                    f or c.fetch(tmp_dir, self.source_lang, self.target_lang)
                    for c, f in zip(corpora, found, strict=True)
                ]
            except download.DownloadError as e:
                raise DataError(
                    f"{self.name}: {split} data is incomplete ({e}) {local_help}."
                ) from None
        return [
            TfdsPairs(
                self.tfds_name,
                split,
                self.source_lang,
                self.target_lang,
                vocab_files=len(corpora),
                help_text=f"Either let tensorflow-datasets fetch {self.tfds_name} (needs network "
                f"once), or provide the raw files. {local_help}.",
            )
        ]


# What T2T's problems of these names report (data_generators/text_problems.py,
# Text2TextProblem.eval_metrics): top-5 accuracy, the teacher-forced approx_bleu_score and
# ROUGE too; and "bleu", this project's dev BLEU of real decodes.
T2T_TEXT2TEXT_METRICS = (
    "accuracy",
    "accuracy_top5",
    "accuracy_per_sequence",
    "neg_log_perplexity",
    "approx_bleu_score",
    "rouge_2_fscore",
    "rouge_L_fscore",
    "bleu",
)


@register_with_rev
class WmtEnde(WmtProblem):
    """WMT14 English -> German as in the paper (dev newstest2013, test newstest2014)."""


@register_with_rev
class TranslateEndeWmt32k(WmtProblem):
    """T2T's ``translate_ende_wmt32k`` data mix (news-commentary v13 + commoncrawl + europarl
    v7)."""

    corpora = ENDE_T2T
    num_shards = T2T_SHARDS
    tfds_name = "wmt_t2t_translate/de-en"
    eval_metrics = T2T_TEXT2TEXT_METRICS


@register_with_rev
class TranslateEndeWmt8k(TranslateEndeWmt32k):
    """T2T's ``translate_ende_wmt8k``: the same data with an 8k (2**13) subword vocabulary."""

    approx_vocab_size = 2**13


@register_with_rev
class WmtEnfr(WmtProblem):
    """WMT14 English -> French as in the paper (dev newstest2013, test newstest2014)."""

    target_lang = "fr"
    corpora = ENFR_WMT14
    tfds_name = "wmt14_translate/fr-en"


@register_with_rev
class TranslateEnfrWmt32k(WmtEnfr):
    """T2T's ``translate_enfr_wmt32k``: the same WMT14 EN-FR mix under T2T's name (train and
    dev: T2T's has no test split)."""

    corpora = {split: c for split, c in ENFR_WMT14.items() if split != "test"}
    num_shards = T2T_SHARDS
    eval_metrics = T2T_TEXT2TEXT_METRICS


@register_with_rev
class TranslateEnfrWmt8k(TranslateEnfrWmt32k):
    """T2T's ``translate_enfr_wmt8k``: the same data with an 8k (2**13) subword vocabulary."""

    approx_vocab_size = 2**13
