"""T2T 1.15's text iterators (``data_generators/text_problems.py``: ``txt_line_iterator``,
``text2text_txt_iterator``, ``text2self_txt_iterator``, ``text2class_txt_iterator``,
``text2text_generate_encoded``...), which ``text_problems`` names for a usr_dir: the samples
of ``Text2TextProblem`` and its kinds, read from text files as T2T's ``tf.gfile`` reads them
(``data/text_files.py``, the project's one reader of raw text).

Where T2T raises on a malformed line (a label that is not an integer or not a class name, a
target that is not a float), the error here is one line naming the file and line, and keeps
T2T's built-in type (``ValueError``, or ``KeyError`` for an unknown class name), so a usr_dir's
``except`` still catches it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from t2t_repro.data.text_files import read_lines
from t2t_repro.errors import DataError
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


class TextLineError(DataError, ValueError):
    """A line T2T's iterator cannot read (T2T raises ValueError): one line naming it."""


class UnknownClassError(DataError, KeyError):
    """A label line that is not one of ``class_strs`` (T2T's dict lookup raises KeyError)."""

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


def _where(path: str, index: int) -> str:
    return f"{path}, line {index + 1}"


def txt_line_iterator(txt_path: str) -> Iterator[str]:
    """Stripped lines of a text file, split at ``\\n`` only (as T2T's ``tf.gfile`` reads them;
    a byte-order mark is kept, undecodable bytes become U+FFFD; a .gz file is read
    decompressed)."""
    yield from read_lines(txt_path, keep_byte_order_mark=True)


# T2T's text_problems.py, txt_and_label_iterator: "<text>\tExtra_Label: <int>", searched in
# the stripped line (the greedy group takes the last such tab).
_EXTRA_LABEL = re.compile("(.*)\tExtra_Label: (.*)")


def txt_and_label_iterator(txt_path: str) -> Iterator[list]:
    """``[text, extra_label]`` of each ``<text>\\tExtra_Label: <int>`` line (T2T's
    ``txt_and_label_iterator``); a line of another form is refused, as T2T raises."""
    for index, line in enumerate(txt_line_iterator(txt_path)):
        found = _EXTRA_LABEL.search(line)
        label = _integer(found.group(2)) if found else None
        if label is None:
            raise TextLineError(
                f"{_where(txt_path, index)}: {line[:80]!r} is not '<word_1 ... word_n>\\t"
                "Extra_Label: <int_label>', the format T2T's txt_and_label_iterator reads."
            )
        yield [found.group(1), label]


def _integer(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def text2text_txt_iterator(source_txt_path: str, target_txt_path: str) -> Iterator[dict]:
    for inputs, targets in zip(
        txt_line_iterator(source_txt_path), txt_line_iterator(target_txt_path), strict=False
    ):
        yield {"inputs": inputs, "targets": targets}


def text2text_txt_iterator_with_label(source_txt_path: str, target_txt_path: str) -> Iterator[dict]:
    """T2T's: the targets file's lines carry an extra label (``txt_and_label_iterator``)."""
    for inputs, (targets, extra_label) in zip(
        txt_line_iterator(source_txt_path), txt_and_label_iterator(target_txt_path), strict=False
    ):
        yield {"inputs": inputs, "targets": targets, "extra_label": [extra_label]}


def text2text_txt_iterator_with_index(source_txt_path: str, target_txt_path: str) -> Iterator[dict]:
    """T2T's: each pair with its 0-based position, ``idx`` (an int64 feature of its record)."""
    pairs = text2text_txt_iterator(source_txt_path, target_txt_path)
    for idx, sample in enumerate(pairs):
        yield {**sample, "idx": [idx]}


def text2text_distill_iterator(
    source_txt_path: str, target_txt_path: str, distill_txt_path: str
) -> Iterator[dict]:
    for inputs, targets, dist_targets in zip(
        txt_line_iterator(source_txt_path),
        txt_line_iterator(target_txt_path),
        txt_line_iterator(distill_txt_path),
        strict=False,
    ):
        yield {"inputs": inputs, "targets": targets, "dist_targets": dist_targets}


def text2self_txt_iterator(txt_path: str) -> Iterator[dict]:
    """A language model's samples: each line a target (T2T's ``text2self_txt_iterator``)."""
    for line in txt_line_iterator(txt_path):
        yield {"targets": line}


def text2class_txt_iterator(
    source_txt_path: str, label_txt_path: str, class_strs: Sequence[str] | None = None
) -> Iterator[dict]:
    """A classifier's samples, ``{"inputs": text, "label": int}`` (T2T's
    ``text2class_txt_iterator``): each label line an integer, or, given ``class_strs``, a
    class name whose position in ``class_strs`` is its id."""
    ids = {name: i for i, name in enumerate(class_strs)} if class_strs else None
    lines = zip(txt_line_iterator(source_txt_path), txt_line_iterator(label_txt_path), strict=False)
    for index, (inputs, label) in enumerate(lines):
        label = label.strip()
        if ids is not None and label not in ids:
            raise UnknownClassError(
                f"{_where(label_txt_path, index)}: label {label!r} is not one of class_strs "
                f"({len(ids)} names), as T2T's text2class_txt_iterator requires."
            )
        label_id = ids[label] if ids is not None else _integer(label)
        if label_id is None:
            raise TextLineError(
                f"{_where(label_txt_path, index)}: label {label[:80]!r} is not an integer; give "
                "text2class_txt_iterator class_strs to read class names (T2T's argument)."
            )
        yield {"inputs": inputs, "label": label_id}


def text2real_txt_iterator(source_txt_path: str, target_txt_path: str) -> Iterator[dict]:
    """A regression's samples, ``{"inputs": text, "targets": [float, ...]}``: each target
    line floats split at single spaces (T2T's ``text2real_txt_iterator``)."""
    lines = zip(
        txt_line_iterator(source_txt_path), txt_line_iterator(target_txt_path), strict=False
    )
    for index, (inputs, targets) in enumerate(lines):
        try:
            values = [float(x) for x in targets.split(" ")]
        except ValueError:
            raise TextLineError(
                f"{_where(target_txt_path, index)}: {targets[:80]!r} is not floats separated "
                "by single spaces, which T2T's text2real_txt_iterator reads."
            ) from None
        yield {"inputs": inputs, "targets": values}


def text2text_txt_tab_iterator(txt_path: str) -> Iterator[dict]:
    """Tab-separated ``input<TAB>target`` lines (lines without a tab skipped)."""
    for line in txt_line_iterator(txt_path):
        if line and "\t" in line:
            inputs, targets = line.split("\t", 1)[:2]
            yield {"inputs": inputs.strip(), "targets": targets.strip()}


def text2text_generate_encoded(
    sample_generator,
    vocab,
    targets_vocab=None,
    has_inputs: bool = True,
    inputs_prefix: str = "",
    targets_prefix: str = "",
) -> Iterator[dict]:
    """Samples with their texts encoded and EOS appended (T2T's function of that name)."""
    targets_vocab = targets_vocab or vocab
    for sample in sample_generator:
        if has_inputs:
            sample["inputs"] = vocab.encode(inputs_prefix + sample["inputs"])
            sample["inputs"].append(EOS_ID)
        sample["targets"] = targets_vocab.encode(targets_prefix + sample["targets"])
        sample["targets"].append(EOS_ID)
        yield sample
