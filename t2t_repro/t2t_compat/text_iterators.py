"""T2T 1.15's text iterators (``data_generators/text_problems.py``: ``txt_line_iterator``,
``text2text_txt_iterator``, ``text2text_generate_encoded``...), which ``text_problems`` names
for a usr_dir: the samples of ``Text2TextProblem`` subclasses, read from text files as T2T's
``tf.gfile`` reads them (``data/text_files.py``, the project's one reader of raw text).
"""

from __future__ import annotations

from collections.abc import Iterator

from t2t_repro.data.text_files import read_lines
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


def txt_line_iterator(txt_path: str) -> Iterator[str]:
    """Stripped lines of a text file, split at ``\\n`` only (as T2T's ``tf.gfile`` reads them;
    a byte-order mark is kept, undecodable bytes become U+FFFD; a .gz file is read
    decompressed)."""
    yield from read_lines(txt_path, keep_byte_order_mark=True)


def text2text_txt_iterator(source_txt_path: str, target_txt_path: str) -> Iterator[dict]:
    for inputs, targets in zip(
        txt_line_iterator(source_txt_path), txt_line_iterator(target_txt_path), strict=False
    ):
        yield {"inputs": inputs, "targets": targets}


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
