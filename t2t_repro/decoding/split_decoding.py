"""Decoding a problem's dataset split, as T2T's ``decode_from_dataset`` and ``decode_once``
(``tensor2tensor/utils/decoding.py``): the split's source text decoded, the decodes written
with their references (and, under ``--decode_to_file``, the sources) beside them, one record
per output: with ``return_beams`` each beam is a record of its own, its reference and source
repeated, as T2T writes them. Used by ``t2t-decoder`` without ``--decode_from_file`` and by
the trainer's decode schedules."""

from __future__ import annotations

import os
from dataclasses import dataclass

from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.decoding import t2t_decode_names
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.decoding.postprocess import strip_after_eos
from t2t_repro.decoding.runner import (
    check_not_prepended,
    default_output_name,
    write_lines_atomically,
)
from t2t_repro.errors import UsageError
from t2t_repro.hparam import HParams, join_overrides
from t2t_repro.paths import expect_file_destination
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


def check_split_decodable(model_hparams) -> None:
    """One line for a model whose split decodes this project does not write as T2T's:
    ``prepend_mode`` (``runner.check_not_prepended``) and ``split_targets_chunk_length``: T2T
    reads a split for decoding through ``data_reader.input_fn`` too, which chunks its targets
    in every mode, so it decodes each example's inputs once per non-empty chunk, with the
    chunk as the reference (``prepare_for_output``'s ``infer_targets``)."""
    check_not_prepended(model_hparams)
    if model_hparams.get("split_targets_chunk_length", 0):
        raise UsageError(
            "split_targets_chunk_length: T2T decodes a dataset split chunk by chunk (each "
            "example's inputs again for every chunk of its targets, the chunk as the "
            "reference), which this project does not reproduce; decode the split's inputs "
            "with --decode_from_file."
        )


@dataclass(frozen=True)
class SplitPaths:
    """Where a split's decodes go: the decodes, their references, the sources (or "")."""

    decodes: str
    targets: str
    inputs: str = ""


def split_paths(
    output_dir: str,
    split: str,
    decode_to_file: str = "",
    names: tuple[str, str, str] = ("", "", ""),
    dhp: HParams | None = None,
) -> SplitPaths:
    """Without ``decode_to_file``: ``decode_<split>.txt`` and ``decode_<split>.ref.txt`` in
    ``output_dir``. With it, T2T's names (``tensor2tensor/utils/decoding.py``,
    ``decode_once`` and ``_decode_filename``): ``<decode_to_file>.<model>.<hparams_set>.
    <problem>.beam<k>.alpha<a>.decodes`` (unless ``decode_to_file`` already holds
    ``beam<k>.alpha<a>.decodes``), and the same name ending in ``.targets`` and ``.inputs``.
    ``names``: (model, hparams_set, problem)."""
    if not decode_to_file:
        return SplitPaths(
            os.path.join(output_dir, f"decode_{split}.txt"),
            os.path.join(output_dir, f"decode_{split}.ref.txt"),
        )
    suffix = f"beam{dhp.beam_size}.alpha{dhp.alpha}.decodes"
    if suffix in decode_to_file:
        decodes = decode_to_file
    else:
        decodes = default_output_name(decode_to_file, *names, dhp)
    stem = decodes.rsplit(".", 1)[0] if "." in os.path.basename(decodes) else decodes
    return SplitPaths(decodes, f"{stem}.targets", f"{stem}.inputs")


def split_example_cap(decode_overrides: str) -> tuple[str, int]:
    """T2T reads the decode hparam ``num_samples`` two ways: decoding a dataset split it is the
    number of examples to decode (``tensor2tensor/utils/decoding.py``, ``decode_once``'s
    ``max_records``), decoding interactively the outputs per input (``_interactive_input_fn``;
    here files and stdin too). For a split: ``decode_overrides`` with one output per input, and
    the cap for ``decode_split`` (-1: all examples)."""
    cap = decode_hparams(decode_overrides).num_samples
    if cap < 0:
        return decode_overrides, -1
    return join_overrides(decode_overrides, "num_samples=-1"), cap


def decode_split(
    decoder: LineDecoder,
    problem,
    tmp_dir: str,
    split: str,
    paths: SplitPaths,
    max_examples: int = -1,
) -> SplitPaths | None:
    """Decodes a problem split's source text; writes the decodes, the references beside
    them and, when ``paths.inputs`` is set, the sources (one record per output, in order,
    ended by the decode hparam ``delimiter``). ``max_examples`` >= 0 keeps only the first that many
    examples (``split_example_cap``). None: nothing written, as T2T's ``decode_from_dataset``
    writes nothing with ``num_decodes=0`` (no decode) or ``log_results=False`` (``decode_once``
    returns the decodes unwritten)."""
    t2t_decode_names.check_mode(decoder.dhp, t2t_decode_names.SPLIT)
    check_split_decodable(decoder.model_hparams)
    if decoder.multi_label:
        raise UsageError(
            "a multi-label problem's dev references are label lists, which T2T's decoder cannot "
            "write either (its targets vocabulary decodes one label): decode the split's "
            "inputs with --decode_from_file."
        )
    sources, references = problem.source_lines(tmp_dir, split)
    if max_examples >= 0:
        sources = sources[:max_examples]
        references = references[:max_examples]
    for path in (paths.decodes, paths.targets, paths.inputs):
        if path:
            expect_file_destination(path, "--decode_to_file")
    if decoder.dhp.num_decodes < 1:
        return None
    delimiter = decoder.dhp.delimiter
    # T2T's dataset decode does not read max_input_size (only its decode_from_file does)
    file_limit, decoder.max_input_length = decoder.max_input_length, decoder.split_input_length
    try:
        sources, references, encoded = t2t_predict_examples(decoder, sources, references)
        results = decoder.decode_lines(sources, encoded=encoded)
    finally:
        decoder.max_input_length = file_limit
    if not decoder.dhp.log_results:
        return None
    # T2T's decode_once writes a record per beam, its target and input again beside it
    records = [
        (decoder.format([hyp]), reference, source)
        for hyps, reference, source in zip(results, references, sources, strict=True)
        for hyp in hyps
    ]
    write_lines_atomically(paths.decodes, [r[0] for r in records], delimiter)
    write_lines_atomically(paths.targets, [r[1] for r in records], delimiter)
    if paths.inputs:
        inputs = [normalize_source_line(r[2]) for r in records]
        write_lines_atomically(paths.inputs, inputs, delimiter)
    return paths


def t2t_predict_examples(
    decoder: LineDecoder, sources: list[str], references: list[str]
) -> tuple[list[str], list[str], list[list[int]] | None]:
    """A split's examples as T2T's dataset decode reads them: inputs and targets (EOS
    appended) cut to the model hparams ``max_input_seq_length`` and ``max_target_seq_length``
    (``data_generators/problem.py``, ``preprocess_example_common``: a cut drops the EOS), then
    examples shorter than ``min_length`` dropped, and with ``eval_drop_long_sequences`` those
    longer than ``max_length`` (else the model's ``batch_size``; T2T's ``decode_from_dataset``
    puts an explicit decode ``batch_size`` in its place, which is not done here: T2T's 0 and
    an explicit 32 are one value once parsed) too (``utils/data_reader.py``,
    ``input_fn``'s ``gpu_valid_size``); the length is the longer of inputs and targets. A cut
    source or reference is written as its cut ids decode, as T2T writes them. Returns the
    kept sources, references and the inputs' ids (None when nothing applies: the decoder's
    own encoding). A language model or a classifier is read as it is."""
    hp = decoder.model_hparams
    max_in = int(hp.get("max_input_seq_length", 0) or 0)
    max_out = int(hp.get("max_target_seq_length", 0) or 0)
    min_length = int(hp.get("min_length", 0) or 0)
    drop_long = bool(hp.get("eval_drop_long_sequences", False))
    applies = max_in > 0 or max_out > 0 or min_length > 0 or drop_long
    if decoder.prompt or decoder.labels or not applies:
        return sources, references, None
    longest = int(hp.get("max_length", 0) or hp.get("batch_size", 0)) if drop_long else 10**9
    kept: tuple[list, list, list] = ([], [], [])
    for i, (source, reference) in enumerate(zip(sources, references, strict=True)):
        line = normalize_source_line(source)
        ids = decoder.encode(line, i) if line else []
        targets = decoder.target_encoder.encode(reference.strip()) + [EOS_ID]
        if 0 < max_in < len(ids):
            ids = ids[:max_in]
            line = decoder.input_encoder.decode(strip_after_eos([0, *ids]))
        if 0 < max_out < len(targets):
            reference = decoder.target_encoder.decode(strip_after_eos([0, *targets[:max_out]]))
            targets = targets[:max_out]
        if min_length <= max(len(ids), len(targets)) <= longest:
            for column, value in zip(kept, (line, reference, ids), strict=True):
                column.append(value)
    if len(kept[0]) < len(sources):
        decoder.log(
            f"kept {len(kept[0])} of the split's {len(sources)} examples, as T2T's input_fn "
            f"keeps them (min_length={min_length}, eval_drop_long_sequences={drop_long}, "
            f"longest {longest})"
        )
    return kept


def nothing_written(dhp: HParams) -> str:
    """Why ``decode_split`` wrote nothing (it returned None), to tell the user."""
    if dhp.num_decodes < 1:
        return f"num_decodes={dhp.num_decodes}: the split is not decoded, nothing is written (T2T)"
    return "log_results=False: the decodes are not written (T2T's decode_once only returns them)"
