"""T2T 1.15's language models on the English Wikipedia XML dump (``data_generators/wiki.py``)
under T2T's names: ``languagemodel_wiki_xml_v8k_l1k`` / ``_l4k`` (the raw XML),
``languagemodel_wiki_scramble_l128`` / ``_l1k`` (inputs: the targets with half their positions
permuted) and ``languagemodel_wiki_noref_v8k_l1k`` / ``_v8k_l16k`` / ``_v32k_l1k`` /
``_v32k_l16k`` / ``_v128k_l1k`` (articles only, references and link markup removed, each
prefixed by a ``title: "..." length: N`` line). Each is T2T's ``ChoppedTextProblem``
(``chopped_text_problem.py``): a subword vocabulary and examples of ``sequence_length`` ids.

T2T's ``maybe_prepare_text`` (``wiki.py``) reads ``enwiki-20171201-pages-articles.xml.bz2``
from --tmp_dir (downloaded there when missing), decompresses it beside itself as ``bunzip2``
does (the ``.bz2`` is removed) and cuts the XML into parts as GNU ``split --line-bytes=4M
--suffix-length=5 --numeric-suffixes`` does: ``<dump>.xml-part-00000``... Here the same is done
in Python (``bz2``, ``split_line_bytes``), and those files stay in --tmp_dir, reused by later
runs as T2T's are. Every 5000th part (``dev_fraction``), from part 0, is dev, the rest train:
a dump of one part is all dev and the vocabulary is then built from no text, as in T2T.

The scramble problems draw their permutations from numpy's global generator, which
t2t-datagen seeds with --random_seed and carries from task to task: T2T's records with
``--num_concurrent_processes=1`` (T2T's pool workers inherit the seeded generator; with several
workers which task draws first is the pool's choice).
"""

from __future__ import annotations

import bz2
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import generator_utils, refusals
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.chopped_text_problem import ChoppedTextProblem
from t2t_repro.t2t_compat.problem import SpaceID

PART_BYTES = 4 * 1024 * 1024  # GNU split's --line-bytes=4M (M: 1024**2)
_SUFFIX_DIGITS = 5  # --suffix-length=5 --numeric-suffixes
_PART = re.compile(r"-part-(\d{5})$")


def split_line_bytes(path: str, prefix: str, line_bytes: int = PART_BYTES) -> list[str]:
    """GNU ``split --line-bytes``: parts of at most ``line_bytes`` bytes holding whole lines;
    a line longer than that is cut at ``line_bytes`` (its rest starts the next part). Each part
    is the first ``line_bytes`` bytes left, cut after their last newline when that many remain
    (so a last line without newline that exactly fills the room goes on, as in coreutils'
    ``line_bytes_split``); an empty file gives no part. The parts are written under temp names,
    then renamed last to first, so an interrupted run leaves no ``-part-00000``."""
    temps: list[str] = []
    tag = uuid.uuid4().hex[:12]
    buf = bytearray()
    eof = False
    try:
        with fileio.open(path, "rb") as src:
            while True:
                while not eof and len(buf) < line_bytes:
                    data = src.read(max(line_bytes, 1 << 20))
                    eof = not data
                    buf += data
                if not buf:
                    break
                cut = len(buf)
                if cut >= line_bytes:
                    cut = buf.rfind(b"\n", 0, line_bytes) + 1 or line_bytes
                if len(temps) == 10**_SUFFIX_DIGITS:
                    raise DataError(
                        f"{path}: more than {10**_SUFFIX_DIGITS} parts of {line_bytes} bytes; "
                        "GNU split's 5-digit suffixes (T2T's) are exhausted."
                    )
                temp = f"{prefix}{len(temps):05d}.{tag}.tmp"
                with fileio.open(temp, "wb") as out:
                    out.write(buf[:cut])
                temps.append(temp)
                del buf[:cut]
    except BaseException:
        for temp in temps:
            fileio.remove(temp)
        raise
    for temp in reversed(temps):
        fileio.replace(temp, temp[: -len(f".{tag}.tmp")])
    return [f"{prefix}{i:05d}" for i in range(len(temps))]


def bunzip2(compressed: str, decompressed: str) -> None:
    """``bunzip2 <file>.bz2``: the whole (multi-stream) file decompressed beside it, which
    then is removed; a failed run leaves the ``.bz2`` and no output."""
    with fileio.open(compressed, "rb") as raw, bz2.open(raw, "rb") as src:
        with atomic_open(decompressed, "wb") as out:
            try:
                shutil.copyfileobj(src, out, 1 << 20)
            except (OSError, EOFError) as e:
                raise DataError(
                    f"{compressed} is not a whole bzip2 file ({e}): remove it from --tmp_dir "
                    "to download it again."
                ) from None
    fileio.remove(compressed)


@t2t_registry.register_problem
class LanguagemodelWikiXmlV8kL1k(ChoppedTextProblem):
    """The XML dump cut into examples of 1024 ids, across article boundaries (T2T's)."""

    def maybe_prepare_text(self, tmp_dir: str) -> list[str]:
        """The dump's parts in --tmp_dir, made (downloaded, decompressed, split) when absent
        (T2T's ``maybe_prepare_text``)."""
        compressed = os.path.join(tmp_dir, os.path.basename(self.corpus_url))
        decompressed = compressed[: -len(".bz2")]
        prefix = decompressed + "-part-"
        parts = sorted(fileio.glob(prefix + "?" * _SUFFIX_DIGITS))
        if parts:
            numbers = [int(_PART.search(p).group(1)) if _PART.search(p) else -1 for p in parts]
            if numbers != list(range(len(parts))):
                raise DataError(
                    f"{prefix}NNNNN in --tmp_dir are not parts 00000 to {len(parts) - 1:05d} "
                    "(an interrupted split?): remove them to split the dump again."
                )
            return parts
        if not fileio.exists(decompressed):
            if not fileio.exists(compressed):
                generator_utils.maybe_download(
                    tmp_dir, os.path.basename(compressed), self.corpus_url
                )
            bunzip2(compressed, decompressed)
        parts = split_line_bytes(decompressed, prefix, PART_BYTES)
        if not parts:  # T2T asserts split files
            raise DataError(f"{decompressed} is empty: no text for {self.name}.")
        return parts

    def train_text_filepaths(self, tmp_dir: str) -> list[str]:
        files = self.maybe_prepare_text(tmp_dir)
        return [f for i, f in enumerate(files) if i % self.dev_fraction != 0]

    def dev_text_filepaths(self, tmp_dir: str) -> list[str]:
        files = self.maybe_prepare_text(tmp_dir)
        return [f for i, f in enumerate(files) if i % self.dev_fraction == 0]

    @property
    def dev_fraction(self) -> int:
        """Every ``dev_fraction``-th part is dev."""
        return 5000

    @property
    def corpus_url(self) -> str:
        return "https://archive.org/download/enwiki-20171201/enwiki-20171201-pages-articles.xml.bz2"

    @property
    def approx_vocab_size(self) -> int:
        return 2**13

    @property
    def sequence_length(self) -> int:
        return 1024

    @property
    def max_chars_for_vocab(self) -> int:
        return 41800829  # T2T's number, kept for its vocabulary


@t2t_registry.register_problem
class LanguagemodelWikiXmlV8kL4k(LanguagemodelWikiXmlV8kL1k):
    """As ``languagemodel_wiki_xml_v8k_l1k``, examples of 4096 ids."""

    @property
    def sequence_length(self) -> int:
        return 4096


class LanguagemodelWikiScramble(LanguagemodelWikiXmlV8kL1k):
    """Targets: a piece of the dump; inputs: the same ids with ``scramble_fraction`` of their
    positions permuted among themselves (for parallel, non-autoregressive prediction)."""

    def example_generator(self, encoder: Any, tmp_dir: str, task_id: int) -> Iterator[dict]:
        for example in super().example_generator(encoder, tmp_dir, task_id):
            example["inputs"] = self.scramble(example["targets"])
            yield example

    @property
    def scramble_fraction(self) -> float:
        raise NotImplementedError()

    @property
    def has_inputs(self) -> bool:
        return True

    @property
    def input_space_id(self) -> int:
        return SpaceID.EN_TOK

    @property
    def targeted_vocab_size(self) -> int:
        return 2**13

    @property
    def remainder_policy(self) -> str:
        return "drop"

    def scramble(self, seq: list[int]) -> list[int]:
        """T2T's draws (``wiki.py``, ``scramble``): a permutation of all positions, then one of
        its first ``sequence_length * scramble_fraction`` entries, undone after."""
        ids = np.array(seq)
        count = int(self.sequence_length * self.scramble_fraction)
        full = np.random.permutation(self.sequence_length)
        inverse = np.argsort(full)
        partial = np.random.permutation(count)
        ids = ids[full]
        ids = np.concatenate((ids[:count][partial], ids[count:]))
        return [int(i) for i in ids[inverse]]


@t2t_registry.register_problem
class LanguagemodelWikiScrambleL128(LanguagemodelWikiScramble):
    """128 ids, half scrambled."""

    @property
    def sequence_length(self) -> int:
        return 128

    @property
    def scramble_fraction(self) -> float:
        return 0.5


@t2t_registry.register_problem
class LanguagemodelWikiScrambleL1k(LanguagemodelWikiScramble):
    """1024 ids, half scrambled."""

    @property
    def sequence_length(self) -> int:
        return 1024

    @property
    def scramble_fraction(self) -> float:
        return 0.5


@t2t_registry.register_problem
class LanguagemodelWikiNorefV8kL1k(LanguagemodelWikiXmlV8kL1k):
    """Articles only (no title with ":", no text of 140 characters or fewer: redirects), their
    references, internal-link markup and triple quotes removed, each after a line
    ``title: "<title>" length: <characters>`` (a prompt for an article of a title and length);
    cut into examples of 1024 ids across articles."""

    def filepath_to_unicode_strings(self, filepath: str) -> Iterator[str]:
        """A part's articles as one text (T2T's ``filepath_to_unicode_strings``); a page cut
        by the part boundary is lost, as in T2T."""
        for dump in super().filepath_to_unicode_strings(filepath):
            articles = []
            for page in _dump_to_pages(dump):
                title = _page_to_title(page, filepath)
                text = _page_to_text(page)
                text = _remove_triple_quotes(_remove_double_brackets(_remove_references(text)))
                if ":" in title or len(text) <= 140:
                    continue
                articles.append(f'title: "{title}" length: {len(text)}\n{text}\n')
            yield "".join(articles)

    @property
    def max_chars_for_vocab(self) -> int:
        return 21240483  # T2T's number


def _dump_to_pages(dump: str) -> list[str]:
    """What lies between each ``<page>\\n`` and the next ``</page>\\n`` (T2T's; an unclosed
    last page is dropped)."""
    start_tag, end_tag = "<page>\n", "</page>\n"
    pages: list[str] = []
    pos = 0
    while True:
        start = dump.find(start_tag, pos)
        if start == -1:
            break
        start += len(start_tag)
        end = dump.find(end_tag, start)
        if end == -1:
            break
        pages.append(dump[start:end])
        pos = end + len(end_tag)
    return pages


def _page_to_title(page: str, filepath: str = "the dump") -> str:
    """The ``<title>`` of a page (T2T asserts one is there: here one line)."""
    start, end = page.find("<title>"), page.find("</title>")
    if start == -1 or end == -1:
        raise DataError(f"{filepath}: a <page> without <title>...</title> (T2T asserts one).")
    return page[start + len("<title>") : end]


def _page_to_text(page: str) -> str:
    """The page's text between ``<text ...>`` and ``</text>`` (empty without ``</text>``)."""
    start = page.find("<text")
    tag_end = page.find(">", start) if start != -1 else -1
    if tag_end == -1:
        raise DataError("a <page> without a <text> element (T2T asserts one).")
    end = page.find("</text>")
    return "" if end == -1 else page[tag_end + 1 : end]


def _find_and_replace(
    text: str, start_string: str, end_string: str, replace_fn: Callable[[str], str]
) -> str:
    """Each ``start_string ... end_string`` replaced by ``replace_fn`` of what is between
    (T2T's; a start without an end drops the rest of the text)."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(start_string, pos)
        if start == -1:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        end = text.find(end_string, start + len(start_string))
        if end == -1:
            break
        out.append(replace_fn(text[start + len(start_string) : end]))
        pos = end + len(end_string)
    return "".join(out)


def _remove_references(text: str) -> str:
    """``&lt;ref...&lt;/ref&gt;`` removed (a self-closing ref takes all to the next close)."""
    return _find_and_replace(text, "&lt;ref", "&lt;/ref&gt;", lambda s: "")


def _remove_triple_quotes(text: str) -> str:
    """``'''bold'''`` kept as ``bold``."""
    return _find_and_replace(text, "'''", "'''", lambda s: s)


def _remove_double_brackets(text: str) -> str:
    """Internal links kept as their shown text (after the first ``|``); a link with ":"
    (categories, files) removed."""

    def shown(link: str) -> str:
        if ":" in link:
            return ""
        bar = link.find("|")
        return link if bar == -1 else link[bar + 1 :]

    return _find_and_replace(text, "[[", "]]", shown)


@t2t_registry.register_problem
class LanguagemodelWikiNorefV8kL16k(LanguagemodelWikiNorefV8kL1k):
    """As ``languagemodel_wiki_noref_v8k_l1k``, examples of 16384 ids."""

    @property
    def sequence_length(self) -> int:
        return 2**14


@t2t_registry.register_problem
class LanguagemodelWikiNorefV32kL1k(LanguagemodelWikiNorefV8kL1k):
    """A 32k vocabulary, built from up to 100M characters."""

    @property
    def approx_vocab_size(self) -> int:
        return 2**15

    @property
    def max_chars_for_vocab(self) -> int:
        return 100 * 10**6


@t2t_registry.register_problem
class LanguagemodelWikiNorefV32kL16k(LanguagemodelWikiNorefV32kL1k):
    """The 32k vocabulary, examples of 16384 ids."""

    @property
    def sequence_length(self) -> int:
        return 2**14


@t2t_registry.register_problem
class LanguagemodelWikiNorefV128kL1k(LanguagemodelWikiNorefV8kL1k):
    """A 128k vocabulary, built from up to 100M characters."""

    @property
    def approx_vocab_size(self) -> int:
        return 2**17

    @property
    def max_chars_for_vocab(self) -> int:
        return 100 * 10**6


T2T_REGISTERED_PROBLEMS = (
    LanguagemodelWikiXmlV8kL1k,
    LanguagemodelWikiXmlV8kL4k,
    LanguagemodelWikiScrambleL128,
    LanguagemodelWikiScrambleL1k,
    LanguagemodelWikiNorefV8kL1k,
    LanguagemodelWikiNorefV8kL16k,
    LanguagemodelWikiNorefV32kL1k,
    LanguagemodelWikiNorefV32kL16k,
    LanguagemodelWikiNorefV128kL1k,
)

# T2T's wiki.py is provided whole: another name is an AttributeError naming T2T's module.
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.wiki")
