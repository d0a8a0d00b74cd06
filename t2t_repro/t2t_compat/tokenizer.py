"""``tensor2tensor.data_generators.tokenizer`` for a T2T usr_dir: T2T's tokenizer is this
project's (``text_encoding/tokenizer.py``, T2T-exact); the token counts of files that
vocabulary scripts feed to ``SubwordTextEncoder.build_from_token_counts`` read the files as
T2T's ``tokenizer.py`` (``_read_filepattern``) does: sorted glob, stripped lines, at most
``max_lines`` lines in all."""

from __future__ import annotations

import collections
import re
import sys
from collections.abc import Iterator

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.data.text_files import DataError, read_lines
from t2t_repro.t2t_compat import refusals
from t2t_repro.text_encoding.tokenizer import ALNUM_CLASS, decode, encode

__all__ = ["corpus_token_counts", "decode", "encode", "vocab_token_counts"]


class TokenCountsError(DataError, ValueError):
    """A ``token,count`` line whose count is not an integer: a ``ValueError`` as T2T's
    ``int(count)`` raises (``tokenizer.py``, ``vocab_token_counts``), in one line."""


def _read_filepattern(
    filepattern: str, max_lines: int | None = None, split_on_newlines: bool = True
) -> Iterator[str]:
    lines_read = 0
    for filename in sorted(tf.io.gfile.glob(filepattern)):
        if split_on_newlines:
            for line in read_lines(filename, keep_byte_order_mark=True):  # tf.gfile's lines
                yield line
                lines_read += 1
                if max_lines and lines_read >= max_lines:
                    return
        elif not max_lines:  # the file as one text: T2T's f.read() keeps every \r
            with fileio.open(filename, encoding="utf-8", newline="") as f:
                yield f.read()
        else:  # T2T joins tf.gfile's lines, which keep their \n and drop every \r
            with fileio.open(filename, "rb") as f:
                doc = []
                for raw in f:
                    doc.append(raw.replace(b"\r", b"").decode("utf-8"))
                    lines_read += 1
                    if lines_read >= max_lines:
                        yield "".join(doc)
                        return
                yield "".join(doc)


def corpus_token_counts(
    text_filepattern: str, corpus_max_lines: int | None, split_on_newlines: bool = True
) -> collections.Counter:
    """Token counts of the files ``text_filepattern`` matches (T2T's function of that name)."""
    counts: collections.Counter = collections.Counter()
    for doc in _read_filepattern(text_filepattern, corpus_max_lines, split_on_newlines):
        counts.update(encode(doc))
    return counts


def vocab_token_counts(text_filepattern: str, max_lines: int | None) -> dict[str, int]:
    """``token,count`` lines of the files (T2T skips a line without a comma, as here)."""
    counts = {}
    for line in _read_filepattern(text_filepattern, max_lines):
        if "," in line:
            token, count = line.rsplit(",", 1)
            try:
                counts[token] = int(count)
            except ValueError:
                raise TokenCountsError(
                    f"{text_filepattern}: {line!r} is not token,count."
                ) from None
    return counts


_refused = refusals.module_getattr("tensor2tensor.data_generators.tokenizer")
_alphanumeric: set[str] = set()


def __getattr__(name: str) -> object:
    """T2T's ``_ALPHANUMERIC_CHAR_SET`` (its characters of category L* or N* below
    ``sys.maxunicode``: the project tokenizer's ``ALNUM_CLASS``), made on first use (0.1 s);
    T2T's names this project does not provide: one line when called (refusals.py)."""
    if name != "_ALPHANUMERIC_CHAR_SET":
        return _refused(name)
    if not _alphanumeric:
        _alphanumeric.update(re.findall(ALNUM_CLASS, "".join(map(chr, range(sys.maxunicode)))))
    return _alphanumeric
