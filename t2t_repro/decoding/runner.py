"""What ``t2t-decoder`` does: load the trained model (``checkpoints.loading.load_trained_model``:
its ``hparams.json``, else the named set, then ``--hparams``); decode a file, a split or stdin.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from t2t_repro import fileio, registry
from t2t_repro.atomic_write import atomic_open
from t2t_repro.checkpoints.loading import HPARAMS_FILE, load_trained_model
from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.data.text_files import iter_raw_lines, read_delimited_records
from t2t_repro.decoding import t2t_decode_names
from t2t_repro.decoding.ensemble import Ensemble, EnsembleError
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.decoding.precision import decoding_policy
from t2t_repro.errors import UsageError
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.paths import expect_file_destination


@dataclass
class DecoderSetup:
    decoder: LineDecoder
    dhp: HParams
    problem: object
    checkpoint: str
    model: object  # the restored model (the exporter and attention maps use it directly)
    # or, for several checkpoints, their ``Ensemble`` (t2t-decoder only)


def check_not_prepended(model_hparams) -> None:
    """One line for a model trained with ``prepend_mode``: every T2T decode of it (a dataset
    split's, ``data_generators/problem.py``, ``preprocess_example_common``; a file's and an
    interactive one's, ``utils/decoding.py``, ``_decode_input_tensor_to_features_dict``; an
    export's, ``Problem.serving_input_fn``) forces each input and a 0 as the targets' start
    (``partial_targets``; ``models/transformer.py``, ``_fast_decode``) and stops at the
    input's own EOS: every decode is empty. Not reproduced: refused."""
    mode = model_hparams.get("prepend_mode", "none")
    if mode != "none":
        raise UsageError(
            f"prepend_mode={mode!r}: T2T 1.15.7 decodes such a model by forcing each input "
            "(its EOS included) as the targets' start and stops at that EOS, so every decode "
            "(from a file, interactive, a split, an export) is empty; this project does not "
            "decode or export it."
        )


def load_decoder(
    problem_name: str,
    hparams_set: str,
    hparams_overrides: str,
    data_dir: str,
    output_dir: str,
    checkpoint_path: str = "",
    decode_overrides: str = "",
    model_name: str = "transformer",
    allow_ensemble: bool = False,
    random_seed: int | None = None,
) -> DecoderSetup:
    """The trained model and a decoder for it. Every name and override (decode hparams too)
    is checked before the vocabulary or checkpoint is read. With ``allow_ensemble``,
    ``checkpoint_path`` may name several checkpoints (comma-separated; ``ensemble_members``):
    the decoder then averages their probabilities (``decoding/ensemble.py``).
    ``random_seed`` seeds sampling (``--random_seed``; None: a fresh seed, logged)."""
    defaults = getattr(registry.problem(problem_name), "decode_defaults", None)
    dhp = decode_hparams(decode_overrides, defaults)
    members = ensemble_members(checkpoint_path, output_dir)
    if len(members) > 1 and not allow_ensemble:
        raise EnsembleError(
            f"--checkpoint_path names {len(members)} checkpoints; this tool takes one "
            "(only t2t-decoder decodes an ensemble)."
        )

    def load(precision: str) -> list:
        with decoding_policy(precision):
            return [
                load_trained_model(
                    member_dir,
                    checkpoint_path=member_checkpoint,
                    problem_name=problem_name,
                    data_dir=data_dir,
                    hparams_set=hparams_set,
                    hparams_overrides=hparams_overrides,
                    model_name=model_name,
                )
                for member_dir, member_checkpoint in members
            ]

    trained = load(dhp.precision)
    for member in trained:  # T2T's decodes of a prepend_mode model are empty
        check_not_prepended(member.hparams)
    # T2T decodes a model trained with activation_dtype=bfloat16 in bfloat16, one trained with
    # float16 in float16 (utils/t2t_model.py, _custom_getter, set by T2TModel.call and infer
    # alike; T2T 1.15.7's fast decode of float16 fails on its float32 timing signal,
    # models/transformer.py, preprocess_targets): built again under that policy.
    dtypes = {t.hparams.get("activation_dtype") or "float32" for t in trained}
    if not dhp.precision and len(dtypes) > 1:
        raise EnsembleError(
            "the ensemble's members were trained with activation_dtype "
            f"{' and '.join(sorted(dtypes))}: give --decode_hparams=precision=float32 (or "
            "another) to decode them all so."
        )
    model_dtype = min(dtypes)  # the one type, unless precision was given
    model_precision = not dhp.precision and model_dtype != "float32"
    if model_precision:
        dhp.set_hparam("precision", model_dtype)
        trained = load(dhp.precision)
    model = trained[0].model if len(trained) == 1 else Ensemble([t.model for t in trained])
    problem = trained[0].problem
    decoder = decoder_for_model(model, problem, data_dir, dhp, random_seed=random_seed)
    if model_precision:
        why = f"as T2T decodes a model trained with activation_dtype={model_dtype}"
        if model_dtype == "float16":  # T2T's model computes so; its search fails on it
            why = (
                "the activations of T2T's model trained with activation_dtype=float16 (T2T "
                "1.15.7's own decode of it fails on a dtype mismatch)"
            )
        decoder.log(
            f"note: decoding in {model_dtype}, {why} (--decode_hparams=precision=float32 "
            "decodes in float32)"
        )
    checkpoint = ",".join(t.checkpoint for t in trained)
    return DecoderSetup(decoder, dhp, problem, checkpoint, model)


def decoder_for_model(
    model, problem, data_dir: str, dhp: HParams, log=None, random_seed: int | None = None
) -> LineDecoder:
    """A ``LineDecoder`` of ``model`` with the problem's vocabularies and search constraint;
    ``random_seed`` seeds sampling (None: a fresh seed, logged)."""
    encoders = problem.get_encoders(data_dir)
    return LineDecoder(
        model,
        encoders["inputs"],
        encoders["targets"],
        dhp,
        log=log,
        constraint=problem.search_constraint(data_dir, dhp),
        random_seed=random_seed,
    )


def load_ctranslate2_decoder(
    problem_name: str,
    data_dir: str,
    model_dir: str,
    decode_overrides: str = "",
    intra_threads: int = 0,
    hparams_overrides: str = "",
    random_seed: int | None = None,
) -> DecoderSetup:
    """A decoder whose search runs in CTranslate2 on ``model_dir`` (written by ``t2t-exporter
    --export_format=ctranslate2``); the problem's vocabulary encodes and decodes the text, as
    for the TensorFlow engine. Refuses what the exported model or the engine cannot do
    (``hparams_overrides``, ``random_seed``: t2t-decoder's --hparams, --random_seed), before
    decoding; says in one line when its length penalty ranks beams otherwise than T2T's."""
    from t2t_repro.decoding.ctranslate2_search import (
        CTranslate2Error,
        CTranslate2Searcher,
        check_engine_flags,
        length_penalty_note,
        read_metadata,
    )

    problem = registry.problem(problem_name)
    dhp = decode_hparams(decode_overrides, getattr(problem, "decode_defaults", None))
    check_engine_flags(hparams_overrides, random_seed, dhp)
    metadata = read_metadata(model_dir)
    names = ("input_vocab_size", "target_vocab_size")
    for name, size in zip(names, problem.vocab_sizes(data_dir), strict=True):
        if size != metadata.get(name):
            raise CTranslate2Error(
                f"--ct2_model_dir={model_dir!r} has {name}={metadata.get(name)} but "
                f"--problem={problem_name} in --data_dir has {size}: export the "
                "model trained on this problem's vocabulary."
            )
    if problem.search_constraint(data_dir, dhp) is not None:
        raise CTranslate2Error(
            f"--problem={problem_name} constrains its search, which CTranslate2 cannot do; "
            "decode it with the TensorFlow engine."
        )
    encoders = problem.get_encoders(data_dir)
    engine = CTranslate2Searcher
    if metadata.get("has_input", True) is False:  # a language model: ctranslate2.Generator
        from t2t_repro.decoding.ctranslate2_generator import CTranslate2PromptSearcher

        engine = CTranslate2PromptSearcher
    searcher = engine(
        model_dir,
        dhp.beam_size,
        dhp.alpha,
        dhp.extra_length,
        return_beams=dhp.return_beams,
        intra_threads=intra_threads,
    )
    decoder = LineDecoder(searcher, encoders["inputs"], encoders["targets"], dhp, searcher=searcher)
    if dhp.num_samples > 1:  # as a search of the TensorFlow engine that does not sample
        decoder.log(
            f"note: num_samples={dhp.num_samples}: --engine=ctranslate2 does not sample; one "
            "output a line (the n best of beam search: return_beams=True)."
        )
    if length_penalty_note(dhp):
        decoder.log(length_penalty_note(dhp))
    positions = metadata["max_positions"]  # 0: no table (relative attention)
    if positions:
        room = positions - dhp.extra_length  # what the export's table holds of an input
        if room < 2:  # an id and EOS
            raise CTranslate2Error(
                f"extra_length={dhp.extra_length} leaves no position for an input in the "
                f"export's {positions}: lower extra_length in --decode_hparams, or export again "
                "with a larger --ct2_max_positions."
            )
        decoder.split_input_length = room
        if dhp.max_input_size <= 0:  # cut only when asked (T2T); here the table bounds it
            decoder.max_input_length = room
        elif decoder.max_input_length > room:
            raise CTranslate2Error(
                f"inputs of up to {decoder.max_input_length} tokens plus extra_length="
                f"{dhp.extra_length} need {decoder.max_input_length + dhp.extra_length} "
                f"positions; the export has {positions}. Lower max_input_size or extra_length "
                "in --decode_hparams, or export again with a larger --ct2_max_positions."
            )
    return DecoderSetup(decoder, dhp, problem, model_dir, searcher)


def ensemble_members(checkpoint_path: str, output_dir: str) -> list[tuple[str, str]]:
    """(training dir, checkpoint) of each model that ``checkpoint_path`` names.

    One path (or none) is the usual single model: its hparams come from ``output_dir`` (when
    it is not given, from the checkpoint's directory or its parent, as below). Several,
    comma-separated, make an ensemble; each member's hparams.json is looked for in its
    checkpoint's directory, then in that directory's parent (``TRAIN/avg`` -> ``TRAIN``),
    then in ``output_dir``.
    """
    paths = [p.strip() for p in checkpoint_path.split(",")] if checkpoint_path else [""]
    if len(paths) == 1:  # when nothing is found, the loader says what is missing
        return [(output_dir or run_dir_of(paths[0]) or "", paths[0])]
    if "" in paths:
        raise EnsembleError(f"--checkpoint_path={checkpoint_path!r} has an empty entry.")
    members = []
    for path in paths:
        found = run_dir_of(path) or (output_dir if _has_hparams(output_dir) else None)
        if found is None:
            raise EnsembleError(
                f"ensemble member {path!r}: no {HPARAMS_FILE} in its directory, its parent or "
                "--output_dir; name checkpoints inside (or averaged beside) a t2t-trainer "
                "output_dir."
            )
        members.append((found, path))
    return members


def run_dir_of(checkpoint: str) -> str | None:
    """The training dir of a checkpoint prefix or directory: the one of it, its directory or
    that directory's parent that holds hparams.json."""
    if not checkpoint:
        return None
    directory = checkpoint if fileio.isdir(checkpoint) else os.path.dirname(checkpoint)
    return next((d for d in (directory, os.path.dirname(directory)) if _has_hparams(d)), None)


def _has_hparams(directory: str) -> bool:
    return bool(directory) and fileio.exists(os.path.join(directory, HPARAMS_FILE))


def default_output_name(
    input_path: str, model: str, hparams_set: str, problem: str, dhp: HParams
) -> str:
    """T2T's name: ``<input>.<model>.<hparams_set>.<problem>.beam<k>.alpha<a>.decodes``."""
    return (
        f"{input_path}.{model}.{hparams_set}.{problem}.beam{dhp.beam_size}.alpha{dhp.alpha}.decodes"
    )


def write_lines_atomically(path: str, lines: list[str], delimiter: str = "\n") -> None:
    """Each line followed by ``delimiter`` (T2T's decode hparam; inside a line, newlines
    and the delimiter become spaces, so records stay aligned)."""
    fileio.makedirs_for(path)
    with atomic_open(path) as f:
        for line in lines:
            f.write(line.replace("\n", " ").replace(delimiter, " ") + delimiter)


def decode_lines_to_file(
    setup: DecoderSetup, lines: list[str], output_path: str, earlier: Sequence = ()
) -> list[str]:
    """Decodes ``lines`` and writes exactly one output record per input record (several
    outputs of one input, ``return_beams`` or ``num_samples``, tab-separated in it); a
    language model's lines are read ``num_decodes`` times over, as T2T reads them.
    ``earlier``: the file's lines before these (``LineDecoder.decode_lines``)."""
    t2t_decode_names.check_mode(setup.dhp, t2t_decode_names.FILE)
    if setup.decoder.prompt:  # T2T's _get_language_modeling_inputs(repeat=num_decodes)
        lines = list(lines) * max(0, setup.dhp.num_decodes)
    results = setup.decoder.decode_lines(lines, earlier)
    outputs = [setup.decoder.format(h) for h in results]
    write_lines_atomically(output_path, outputs, setup.dhp.delimiter)
    return outputs


def check_decode_paths(
    input_path: str, output_path: str, input_flag: str = "--decode_from_file"
) -> None:
    """Before any decoding work: the input exists and the output can be a file."""
    if not fileio.isfile(input_path):
        what = "is a directory" if fileio.isdir(input_path) else "does not exist"
        raise FileNotFoundError(f"{input_flag}: {input_path!r} {what}.")
    expect_file_destination(output_path, "--decode_to_file")


def decode_file(setup: DecoderSetup, input_path: str, output_path: str) -> list[str]:
    check_decode_paths(input_path, output_path)
    # Raw bytes: decode_lines normalises them as the interactive and exported paths do.
    records = read_delimited_records(input_path, setup.dhp.delimiter)
    return decode_lines_to_file(setup, records, output_path)


# T2T's interactive settings (decoding.py, _interactive_input_fn): a line "ns=N" or "dl=N"
INTERACTIVE_SETTINGS = {"ns": "num_samples", "dl": "extra_length"}


def decode_interactive(setup: DecoderSetup, stdin=sys.stdin, stdout=sys.stdout) -> None:
    """Reads one source sentence per line until EOF (or 'q'); prints its translation. As in
    T2T's interactive decoding, a line ``ns=N`` sets the outputs per input (num_samples),
    ``dl=N`` the length decoded past the input (extra_length), ``it=text`` the input type."""
    print(
        "Type a sentence and press Enter (Ctrl-D or 'q' to quit; ns=N: outputs per input, "
        "dl=N: decode length past the input).",
        file=sys.stderr,
    )
    t2t_decode_names.check_mode(setup.dhp, t2t_decode_names.STDIN)
    for raw in getattr(stdin, "buffer", stdin):  # bytes: invalid UTF-8 is not fatal
        line = normalize_source_line(raw)
        if line == "q":
            break
        if line[2:3] == "=" and line[:2] in (*INTERACTIVE_SETTINGS, "it"):
            print(_interactive_setting(setup.decoder, line[:2], line[3:]), file=sys.stderr)
            continue
        hyps = setup.decoder.decode_lines([line])[0]
        print(setup.decoder.format(hyps), file=stdout, flush=True)


def _interactive_setting(decoder: LineDecoder, key: str, value: str) -> str:
    """Applies T2T's ``ns=``, ``dl=`` or ``it=`` line; returns what to tell the user."""
    if key == "it":
        if value == "text":
            return "input type: text"
        return f"error: it={value}: only text input is decoded here (not T2T's image or label)."
    name = INTERACTIVE_SETTINGS[key]
    try:
        dhp = decoder.dhp.copy()
        dhp.set_hparam(name, int(value))
        decoder.set_search(dhp)
    except ValueError as e:  # HParamsError included
        detail = str(e) if isinstance(e, HParamsError) else "expected a whole number"
        return f"error: {key}={value}: {detail}"
    if name == "num_samples" and int(value) > 1 and decoder.outputs_per_input <= 1:
        return f"num_samples={int(value)}: one output a line from the next line on (no sampling)"
    return f"{name}={int(value)} from the next line on"


def score_file(
    setup: DecoderSetup, input_path: str, output_path: str, score_type: str = "loss"
) -> list[float]:
    """``--score_file``: one score a line of ``input_path`` (source<TAB>target) into
    ``output_path``, ``nan`` for a line that cannot be scored (``decoding/scoring.py``)."""
    from t2t_repro.decoding.scoring import PairScorer, format_score

    if isinstance(setup.model, Ensemble):
        raise EnsembleError("--score_file scores with one model; name one checkpoint.")
    check_decode_paths(input_path, output_path, "--score_file")
    scorer = PairScorer(
        setup.model,
        setup.decoder.input_encoder,
        setup.decoder.target_encoder,
        setup.dhp.batch_size,
        score_type,
        log=setup.decoder.log,
        has_input=getattr(setup.model, "has_input", True),
        loss_multiplier=float(setup.model.hparams.get("loss_multiplier", 1.0)),
    )
    with decoding_policy(setup.dhp.precision):
        scores = scorer(list(iter_raw_lines(input_path)), name=input_path)
    write_lines_atomically(output_path, [format_score(s) for s in scores])
    return scores
