"""``tensor2tensor.data_generators.translate`` for a T2T usr_dir: ``TranslateProblem`` over
parallel files in --tmp_dir (``translate.py``: ``TranslateProblem``, ``compile_data``).

A problem names its files as T2T's do, ``source_data_files(split)`` -> ``[[url, (file1,
file2)], ...]`` (or ``[url, ("tsv", src_col, trg_col, glob)]``); each split's pairs are
concatenated into ``<tmp_dir>/<name>-compiled-<train|dev>.lang1/.lang2``, reused when present.
As in T2T, every split but train compiles to ``-dev`` (so a test split reads the dev files).
A missing file is looked for in the archive named by the url in --tmp_dir; a missing archive
is downloaded there (``generator_utils.maybe_download``: T2T's downloads the archive of an
http url even when its files are there; here the files in --tmp_dir are enough).

Archives and compressed files as T2T's ``compile_data`` reads them: a ``.zip`` the url names
is extracted into --tmp_dir whenever the files are compiled; a tar archive (``.tgz``,
``.tar.gz``, ``.tar``) only when the files (or no file of a tsv glob) are there yet; a ``.gz``
file is read from its gunzipped copy beside it, made when missing (T2T's ``gunzip_file``).

A ``("tmx", file)`` entry is a ParaCrawl tmx (gzipped or not) read with T2T's
``cleaner_en_xx.paracrawl_v3_pairs``. ``datatypes_to_clean`` (train only, as in T2T) names the
entries whose pairs T2T's ``cleaner_en_xx.clean_en_xx_pairs`` cleans: "txt", "tsv", "tmx".
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open
from t2t_repro.data.text_files import decode_utf8, open_binary
from t2t_repro.t2t_compat import cleaner_en_xx, generator_utils, refusals
from t2t_repro.t2t_compat.problem import DatasetSplit, T2TProblemError
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem
from t2t_repro.t2t_compat.text_iterators import text2text_txt_iterator, txt_line_iterator


class TranslateProblem(Text2TextProblem):
    """T2T's base class of translation problems: parallel files, one vocabulary."""

    @property
    def is_generate_per_split(self) -> bool:
        return True

    @property
    def approx_vocab_size(self) -> int:
        return 2**15

    @property
    def datatypes_to_clean(self):
        return None

    def source_data_files(self, dataset_split: str) -> list:
        raise NotImplementedError()

    def vocab_data_files(self) -> list:
        return self.source_data_files(DatasetSplit.TRAIN)

    def generate_samples(
        self, data_dir, tmp_dir, dataset_split, custom_iterator=text2text_txt_iterator
    ):
        train = dataset_split == DatasetSplit.TRAIN
        data_path = compile_data(
            tmp_dir,
            self.source_data_files(dataset_split),
            f"{self.name}-compiled-{'train' if train else 'dev'}",
            datatypes_to_clean=self.datatypes_to_clean if train else None,
        )
        return custom_iterator(data_path + ".lang1", data_path + ".lang2")

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        return generator_utils.generate_lines_for_vocab(tmp_dir, self.vocab_data_files())

    @property
    def decode_hooks(self) -> list:
        return []


def _extract_zip(tmp_dir: str, url: str) -> None:
    """T2T's compile_data: the ``.zip`` ``url`` names, in ``tmp_dir``, extracted there (each
    time the files are compiled). Without the archive, the files must be there already, or
    the zip is downloaded when they are looked for (``generator_utils.extract_archive``)."""
    path = os.path.join(tmp_dir, os.path.basename(url))
    if os.path.basename(url).endswith(".zip") and fileio.exists(path):
        generator_utils.extract_zip(path, tmp_dir)


def _gunzipped(path: str) -> str:
    """T2T's compile_data reads ``x.gz`` from ``x``, gunzipped when missing. T2T names it
    ``path.strip(".gz")``, which strips those characters from both ends; at the end that is
    ``rstrip``, and the start of a path is no file name (T2T's ``./tmp/a.gz`` gives ``/tmp/a``)."""
    if not path.endswith(".gz"):
        return path
    new_path = path.rstrip(".gz")
    generator_utils.gunzip_file(path, new_path)
    return new_path


def _sgm_text(line: str, is_sgm: bool) -> str | None:
    """T2T's ``_preprocess_sgm``: the text of a ``<seg>`` line, "" or None for the rest."""
    if not is_sgm:
        return line
    if line.startswith(("<srcset", "</srcset", "<doc", "</doc", "<p>", "</p>")):
        return ""
    line = line.strip()
    if line.startswith("<seg") and line.endswith("</seg>"):
        return line[line.index(">") + 1 : -6]
    return None


def _tsv_pairs(tmp_dir: str, url: str, spec) -> Iterator[tuple[str, str]]:
    """Each tab line's (source, target) columns, stripped, empty ones too (T2T's
    ``compile_data`` drops those after cleaning)."""
    _, src_column, trg_column, pattern = spec
    # T2T's tf.gfile.Glob order (the directory's, not sorted), so several files of a glob
    # are read in the order T2T reads them on this file system.
    names = tf.io.gfile.glob(os.path.join(tmp_dir, pattern))
    if not names:
        generator_utils.fetch_or_extract(
            tmp_dir, url, lambda: bool(tf.io.gfile.glob(os.path.join(tmp_dir, pattern)))
        )
        names = tf.io.gfile.glob(os.path.join(tmp_dir, pattern))
    for name in names:
        with open_binary(_gunzipped(name)) as f:
            for raw in f:  # tf.gfile's lines: every "\r" dropped
                line = decode_utf8(raw.replace(b"\r", b""))
                if line and "\t" in line:
                    parts = line.split("\t")
                    yield parts[src_column].strip(), parts[trg_column].strip()


def _file_pairs(tmp_dir: str, url: str, spec) -> Iterator[tuple[str | None, str | None]]:
    """The two files' lines side by side, an ``.sgm`` file's as T2T's ``_preprocess_sgm``
    gives them ("" or None for a line that is no ``<seg>``)."""
    lang1, lang2 = spec
    path1, path2 = (os.path.join(tmp_dir, n) for n in (lang1, lang2))
    generator_utils.fetch_or_extract(
        tmp_dir, url, lambda: fileio.exists(path1) and fileio.exists(path2)
    )
    path1, path2 = _gunzipped(path1), _gunzipped(path2)
    is_sgm = lang1.endswith("sgm") and lang2.endswith("sgm")
    for line1, line2 in zip(txt_line_iterator(path1), txt_line_iterator(path2), strict=False):
        yield _sgm_text(line1, is_sgm), _sgm_text(line2, is_sgm)


def _cleanable(pairs: Iterable[tuple], url: str) -> Iterator[tuple[str, str]]:
    """``pairs`` as T2T's cleaner can take them: it fails on an ``.sgm`` line that is no
    ``<seg>`` line (None) where it reads one (every English one; the other one when the
    English sentence passes its filter: ``cleaner_en_xx.py, clean_en_xx_pairs``)."""
    for line1, line2 in pairs:
        if line1 is None or (line2 is None and not cleaner_en_xx._regex_filter(line1)):
            raise T2TProblemError(
                f"{url}: an .sgm line that is no <seg> line is cleaned, on which T2T 1.15.7's "
                'clean_en_xx_pairs fails too: remove it, or "txt" from datatypes_to_clean.'
            )
        yield line1, line2


@contextlib.contextmanager
def _tmx_lines(tmp_dir: str, url: str, name: str) -> Iterator[Iterator[str]]:
    """The lines of the tmx ``name`` in ``tmp_dir`` (T2T reads a ``.gz`` one with ``gzip``),
    fetched or extracted when missing; undecodable bytes become U+FFFD, as in the other files
    read here. T2T 1.15.7 fails on a tmx that is not gzipped (``str`` has no ``decode`` on
    Python 3); it is read here as the gzipped one is."""
    path = os.path.join(tmp_dir, name)
    generator_utils.fetch_or_extract(tmp_dir, url, lambda: fileio.exists(path))
    with open_binary(path) as f:
        yield (decode_utf8(raw) for raw in f)


def _tmx_to_source_target(tmx_file, source_resfile, target_resfile, do_cleaning=False) -> None:
    """T2T's: the pairs of a ParaCrawl tmx, cleaned when asked, written as they come (T2T
    writes no check for empty members here, unlike its txt and tsv pairs)."""
    pairs = cleaner_en_xx.paracrawl_v3_pairs(tmx_file)
    if do_cleaning:
        pairs = cleaner_en_xx.clean_en_xx_pairs(pairs)
    for source, target in pairs:
        source_resfile.write(source + "\n")
        target_resfile.write(target + "\n")


def compile_data(tmp_dir: str, datasets: list, filename: str, datatypes_to_clean=None) -> str:
    """Concatenate the pairs of ``datasets`` into ``tmp_dir/filename.lang1/.lang2`` (kept when
    both exist); returns ``tmp_dir/filename``. The kinds in ``datatypes_to_clean`` ("txt",
    "tsv", "tmx") are cleaned by T2T's ``cleaner_en_xx``."""
    datatypes_to_clean = datatypes_to_clean or []
    fileio.makedirs(tmp_dir)  # as T2T's maybe_download makes it before anything is read
    filename = os.path.join(tmp_dir, filename)
    lang1_name, lang2_name = filename + ".lang1", filename + ".lang2"
    if fileio.exists(lang1_name) and fileio.exists(lang2_name):
        return filename
    with contextlib.ExitStack() as stack:
        out1 = stack.enter_context(atomic_open(lang1_name))
        out2 = stack.enter_context(atomic_open(lang2_name))
        for dataset in datasets:
            if len(dataset) < 2:  # T2T's compile_data fails on it (os.path.basename of a tuple)
                raise T2TProblemError(
                    f"corpus entry {dataset!r} has no url, which T2T 1.15.7's compile_data "
                    f"fails on too: put the compiled {lang1_name} and {lang2_name} there, "
                    "which it reads instead."
                )
            url, spec = dataset[0], dataset[1]
            _extract_zip(tmp_dir, url)
            if spec[0] == "tmx":
                with _tmx_lines(tmp_dir, url, spec[1]) as lines:
                    _tmx_to_source_target(lines, out1, out2, "tmx" in datatypes_to_clean)
                continue
            kind = "tsv" if spec[0] == "tsv" else "txt"
            pairs = (_tsv_pairs if kind == "tsv" else _file_pairs)(tmp_dir, url, spec)
            if kind in datatypes_to_clean:  # T2T's: cleaned, then empty members dropped
                pairs = cleaner_en_xx.clean_en_xx_pairs(_cleanable(pairs, url))
            for source, target in pairs:
                if source and target:
                    out1.write(source + "\n")
                    out2.write(target + "\n")
    return filename


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.translate")
