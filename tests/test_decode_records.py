"""What t2t-decoder writes for T2T's decode hparams that shape its records, read as T2T's
``utils/decoding.py`` reads them: scores only after ``return_beams``' outputs (``%.2f``),
``num_decodes`` and ``log_results``. The searches are stood in for: these check the records."""

from types import SimpleNamespace

from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.decoding import runner, split_decoding
from t2t_repro.decoding.line_decoder import (
    Hypothesis,
    LineDecoder,
    decode_hparams,
    format_hypotheses,
    writes_scores,
)
from t2t_repro.hparam import HParams
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

BEAMS = [Hypothesis("ein hund", -1.234567), Hypothesis("hund", -2.005)]


def test_scores_follow_return_beams_outputs_only_as_t2t_writes_them():
    """T2T's decode_from_file: ``"\\t".join(d + "\\t%.2f" % s)`` with return_beams and
    write_beam_scores; without return_beams the decode alone, whatever write_beam_scores."""
    for overrides, samples, scored in (
        ("write_beam_scores=True", 0, False),
        ("return_beams=True", 0, False),
        ("return_beams=True,write_beam_scores=True", 0, True),
        ("beam_size=1,num_samples=2,write_beam_scores=True", 2, True),  # samples, as beams
        ("num_samples=2,write_beam_scores=True", 0, False),  # a search that does not sample
    ):
        assert writes_scores(decode_hparams(overrides), samples) is scored, overrides
    assert format_hypotheses(BEAMS, True) == "ein hund\t-1.23\thund\t-2.00"
    assert format_hypotheses(BEAMS, False) == "ein hund\thund"
    assert format_hypotheses([Hypothesis("x", -0.004)], True) == "x\t-0.00"


class _Words:
    """A word vocabulary growing as it encodes (ids from 2: 0 and 1 are PAD and EOS)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, text: str) -> list[int]:
        return [self.ids.setdefault(w, len(self.ids) + 2) for w in text.split()]

    def decode(self, ids) -> str:
        words = {i: w for w, i in self.ids.items()}
        return " ".join(words[i] for i in ids)


class _StandIn:
    """A LineDecoder's record-writing surface; its 'search' echoes each line upper-cased."""

    def __init__(self, overrides: str, prompt: bool = False, **model_hparams) -> None:
        self.dhp = decode_hparams(overrides)
        self.model_hparams = HParams(**model_hparams)
        self.prompt, self.labels, self.multi_label, self.samples = prompt, False, False, False
        self.outputs_per_input = 0
        self.max_input_length = self.split_input_length = 100
        self.input_encoder, self.target_encoder = _Words(), _Words()
        self.decoded: list[str] = []
        self.encoded = None
        self.said: list[str] = []
        self.log = self.said.append

    def encode(self, line: str, index: int) -> list[int]:
        return self.input_encoder.encode(line) + [EOS_ID]

    def decode_lines(self, lines, earlier=(), encoded=None):
        lines = [normalize_source_line(line) for line in lines]  # as LineDecoder's
        self.encoded = encoded
        self.decoded += lines
        beams = (-1.0, -2.0) if self.dhp.return_beams else (-1.0,)
        return [[Hypothesis(line.upper() * -int(s), s) for s in beams] for line in lines]

    format = LineDecoder.format


def test_num_decodes_reads_a_language_models_file_that_many_times(tmp_path):
    """T2T's _get_language_modeling_inputs(repeat=num_decodes): the whole file again; a model
    with inputs reads it once (T2T's _get_sorted_inputs has no repeat)."""
    out = tmp_path / "out"
    for prompt, want in ((True, ["A", "B", "A", "B", "A", "B"]), (False, ["A", "B"])):
        setup = SimpleNamespace(decoder=_StandIn("num_decodes=3", prompt=prompt))
        setup.dhp = setup.decoder.dhp
        runner.decode_lines_to_file(setup, [b"a", b"b"], str(out))
        assert out.read_text().splitlines() == want
    setup = SimpleNamespace(decoder=_StandIn("num_decodes=0", prompt=True))
    setup.dhp = setup.decoder.dhp
    runner.decode_lines_to_file(setup, [b"a"], str(out))
    assert out.read_text() == ""


def test_a_split_decoded_with_log_results_off_or_no_decodes_writes_nothing(tmp_path):
    """T2T's decode_from_dataset: num_decodes=0 runs no decode, log_results=False returns the
    decodes from decode_once unwritten; num_decodes=2 writes what one decode writes."""
    problem = SimpleNamespace(source_lines=lambda tmp_dir, split: (["a", "b"], ["x", "y"]))
    paths = split_decoding.SplitPaths(str(tmp_path / "dec"), str(tmp_path / "ref"))
    for overrides, decoded in (("num_decodes=0", []), ("log_results=False", ["a", "b"])):
        decoder = _StandIn(overrides)
        assert split_decoding.decode_split(decoder, problem, "", "dev", paths) is None
        assert decoder.decoded == decoded and not list(tmp_path.iterdir())
        assert overrides.split("=")[0] in split_decoding.nothing_written(decoder.dhp)
    decoder = _StandIn("num_decodes=2")
    assert split_decoding.decode_split(decoder, problem, "", "dev", paths) == paths
    assert decoder.decoded == ["a", "b"]
    assert (tmp_path / "dec").read_text() == "A\nB\n" and (tmp_path / "ref").read_text() == "x\ny\n"


def test_a_splits_beams_are_records_of_their_own_beside_their_reference_and_source(tmp_path):
    """T2T's decode_once with return_beams: one record per beam (its score after it with
    write_beam_scores), the target and the input written again for each."""
    problem = SimpleNamespace(source_lines=lambda tmp_dir, split: ([" a ", "b"], ["x", "y"]))
    names = ("dec", "ref", "src")
    paths = split_decoding.SplitPaths(*(str(tmp_path / n) for n in names))
    decoder = _StandIn("return_beams=True,write_beam_scores=True")
    assert split_decoding.decode_split(decoder, problem, "", "dev", paths) == paths
    written = [(tmp_path / n).read_text().splitlines() for n in names]
    assert written == [
        ["A\t-1.00", "AA\t-2.00", "B\t-1.00", "BB\t-2.00"],
        ["x", "x", "y", "y"],
        ["a", "a", "b", "b"],
    ]


def test_a_splits_examples_are_cut_and_filtered_as_t2ts_predict_input():
    """T2T's dataset decode: inputs and targets (EOS appended) cut to max_input_seq_length and
    max_target_seq_length (problem.py, preprocess_example_common: a cut drops the EOS); then
    examples shorter than min_length dropped, and with eval_drop_long_sequences those longer
    than max_length (data_reader.py, input_fn: gpu_valid_size), by the longer feature."""
    sources, refs = ["a b c d", "e", "f g"], ["x y z", "w", "v"]
    cut = _StandIn("", max_input_seq_length=3, max_target_seq_length=2, min_length=3)
    kept = split_decoding.t2t_predict_examples(cut, sources, refs)
    a, b, c, f, g = (cut.input_encoder.ids[w] for w in "abcfg")
    # lengths after the cut: 3, 2 (dropped: below 3) and 3; written as the cut ids decode
    assert kept == (["a b c", "f g"], ["x y", "v"], [[a, b, c], [f, g, EOS_ID]])
    assert cut.said == [
        "kept 2 of the split's 3 examples, as T2T's input_fn keeps them (min_length=3, "
        "eval_drop_long_sequences=False, longest 1000000000)"
    ]
    long = _StandIn("", eval_drop_long_sequences=True, max_length=2, batch_size=4096)
    assert split_decoding.t2t_predict_examples(long, sources, refs)[:2] == (["e"], ["w"])
    unset = _StandIn("", max_input_seq_length=0, min_length=0, eval_drop_long_sequences=False)
    assert split_decoding.t2t_predict_examples(unset, sources, refs) == (sources, refs, None)
