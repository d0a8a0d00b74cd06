"""t2t-decoder as users run it: one output line per input line, whatever the input."""

import re

import pytest

from t2t_repro.decoding.line_decoder import SCORES_NEED_BEAMS
from tests.grappler import grappler_off_env
from tests.model_utils import shared_toy_checkpoint
from tests.tools import USER_ENV, assert_quiet, run_tool


@pytest.fixture(scope="module")
def setup():
    """The run's one toy checkpoint (step 7; tests/model_utils.py): the decodes only read it,
    writing their outputs under their own tmp_path."""
    return shared_toy_checkpoint()


def decode(root, *extra, stdin=None, env=None):
    """``env``: the suite's by default (a forked start, without Grappler: the decodes check
    lines, files and order, not T2T's numbers; tests/grappler.py); USER_ENV where the
    start-up's output is under test (a real interpreter)."""
    return run_tool(
        "t2t-decoder",
        "--problem=translate_toy",
        f"--data_dir={root / 'data'}",
        f"--output_dir={root / 'train'}",
        "--decode_hparams=beam_size=2,extra_length=4,batch_size=2",
        *extra,
        input=stdin,
        timeout=600,
        env=grappler_off_env() if env is None else env,
    )


@pytest.mark.slow
def test_one_line_per_input_in_order(setup, tmp_path):
    src = tmp_path / "src"
    long_line = " ".join(["dog"] * 40)
    src.write_bytes(
        b"the dog sees a cat .\n\n" + long_line.encode() + b"\nbad \xff bytes\nmany cats run .\n"
    )
    # All five lines in one batch (the last --decode_hparams is the one read): one search
    # trace in this real interpreter, not three (two batch shapes of 2 rows and the blank's
    # of 1): ~1.2 core-s less; and without Grappler (lines are checked, not numbers; the flag
    # is T2T's): ~0.3 core-s less (AMD EPYC Zen 3).
    one_batch = "--decode_hparams=beam_size=2,extra_length=4,batch_size=5"
    out = decode(
        setup,
        f"--decode_from_file={src}",
        f"--decode_to_file={tmp_path / 'out'}",
        one_batch,
        "--disable_grappler_optimizations",
        env=USER_ENV,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert_quiet(out.stderr)
    lines = (tmp_path / "out").read_text().split("\n")
    assert len(lines) == 6 and lines[-1] == ""  # 5 outputs + final newline (the blank decoded)
    assert "truncated" not in out.stderr  # T2T's decode_from_file cuts only when asked
    # Cut to max_input_size, said; the same lines in the other order give the same outputs
    # in that order (sorted by length to batch, then put back). With both beams and their
    # scores: the untrained toy model decodes both lines to empty text, and the order check
    # needs outputs that differ.
    outputs = []
    for i, pair in enumerate(([long_line, "many cats run ."], ["many cats run .", long_line])):
        src.write_text("\n".join(pair) + "\n")
        cut = "--decode_hparams=max_input_size=10,beam_size=2,return_beams=True"
        cut += ",write_beam_scores=True"
        out = decode(setup, f"--decode_from_file={src}", f"--decode_to_file={tmp_path / 'o'}", cut)
        assert f"line {i + 1}" in out.stderr and "truncated" in out.stderr, out.stderr
        outputs.append((tmp_path / "o").read_text().split("\n")[:2])
    assert outputs[0][0] != outputs[0][1] and outputs[0] == outputs[1][::-1], outputs


@pytest.mark.slow
def test_default_output_name_and_scores(setup, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a cat .\n")
    out = decode(
        setup,
        f"--decode_from_file={src}",
        "--hparams_set=transformer_tiny",
        "--decode_hparams=beam_size=2,extra_length=3,return_beams=True,write_beam_scores=True",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    name = tmp_path / "in.txt.transformer.transformer_tiny.translate_toy.beam2.alpha0.6.decodes"
    # T2T's record: each beam followed by its score, "%.2f", tab-separated
    fields = name.read_text().rstrip("\n").split("\t")
    assert len(fields) in (2, 4), fields
    scores = fields[1::2]
    assert all(re.fullmatch(r"-\d+\.\d\d", s) for s in scores), fields
    assert sorted(map(float, scores), reverse=True) == list(map(float, scores))


@pytest.mark.slow
def test_interactive(setup):
    """T2T's interactive lines: dl=N (decode length past the input), ns=N (outputs per input:
    sampling only here), it=text; each other value is one line on stderr, and decoding goes on."""
    lines = "a cat .\ndl=0\na cat .\ndl=x\nns=2\nit=image\nit=text\nq\nnot read\n"
    scores = "--decode_hparams=beam_size=2,extra_length=4,batch_size=2,write_beam_scores=True"
    out = decode(setup, "--decode_interactive", scores, stdin=lines)
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 2, out
    # T2T writes a score only after each of return_beams' beams: one output has none, said
    assert "\t" not in out.stdout and SCORES_NEED_BEAMS in out.stderr, out
    for said in (
        "extra_length=0 from the next line on",
        "error: dl=x: expected a whole number",
        # beam search does not sample: one output a line still, as T2T's file decoding
        "note: num_samples=2 draws several outputs per input by sampling",
        "num_samples=2: one output a line from the next line on (no sampling)",
        "error: it=image: only text input",
        "input type: text",
    ):
        assert said in out.stderr, said
    refused = "--decode_hparams=identity_output=1"
    out = decode(setup, "--decode_interactive", refused, "--xla_compile", stdin="q\n")
    assert out.returncode == 1 and "identity_output=True is not implemented here" in out.stderr
    # T2T 1.15's --xla_compile does nothing off TPU: said
    assert "note: --xla_compile has no effect, as in T2T 1.15 off TPU" in out.stderr
    sampling = ("--decode_hparams=beam_size=1", "--hparams=sampling_method=random")
    out = decode(setup, "--decode_interactive", *sampling, stdin="a cat .\nns=3\na cat .\n")
    assert "num_samples=3 from the next line on" in out.stderr, out.stderr
    assert [len(line.split("\t")) for line in out.stdout.splitlines()] == [1, 3], out.stdout


@pytest.mark.slow
def test_missing_checkpoint_is_a_clear_error(setup, tmp_path):
    out = decode(setup, f"--checkpoint_path={tmp_path / 'nope'}")
    assert out.returncode == 1 and "does not exist" in out.stderr
    assert "Traceback" not in out.stderr


def test_loader_checks_names_before_reading_files(setup, tmp_path, capsys):
    """A typo is reported before the (here missing) vocabulary or checkpoint is looked at; an
    output_dir without hparams.json needs --hparams_set."""
    from t2t_repro.commands import decoder

    empty = tmp_path / "empty"
    empty.mkdir()
    base = ["--problem=translate_toy", f"--data_dir={empty}", f"--output_dir={setup / 'train'}"]
    for flag, expected in (
        ("--decode_hparams=beam_sizee=2", "beam_sizee"),
        ("--hparams=num_headz=2", "num_headz"),
        ("--model=transformr", "Unknown model 'transformr'"),
    ):
        assert decoder.main(base + [flag]) == 1
        err = capsys.readouterr().err
        assert err.startswith("t2t-decoder: error: ") and expected in err, err
    assert decoder.main(base) == 1  # Names are fine: now the missing vocabulary is reported.
    assert "t2t-datagen" in capsys.readouterr().err
    assert (
        decoder.main(
            ["--problem=translate_toy", f"--data_dir={setup / 'data'}", f"--output_dir={empty}"]
        )
        == 1
    )
    assert (
        "--hparams_set is required when --output_dir has no hparams.json" in capsys.readouterr().err
    )


def test_grappler_flag_lasts_for_the_run_only(tmp_path, monkeypatch, capsys):
    """--disable_grappler_optimizations in a ``main(argv)`` call: off while it decodes, as
    before once it returns (it used to stay off for the rest of the caller's process)."""
    import tensorflow as tf

    from t2t_repro.commands import decoder
    from t2t_repro.errors import UsageError

    def options() -> bool:
        return tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)

    seen = []

    def load_setup(args):
        seen.append(options())
        raise UsageError("stopped by the test after the flags took effect")

    monkeypatch.setattr(decoder, "load_setup", load_setup)
    (tmp_path / "src").write_text("a b\n")
    flags = [
        "--problem=translate_toy",
        f"--data_dir={tmp_path}",
        f"--output_dir={tmp_path}",
        f"--decode_from_file={tmp_path / 'src'}",
        f"--decode_to_file={tmp_path / 'out'}",
    ]
    before = options()
    assert decoder.main([*flags, "--disable_grappler_optimizations"]) != 0
    assert decoder.main(flags) != 0
    assert seen == [True, before] and options() == before
    assert "stopped by the test" in capsys.readouterr().err


def test_lines_share_batches_as_t2ts_word_count_order_makes_them():
    """T2T's _get_sorted_inputs sorts by whitespace-separated words (most first, ties in file
    order), not by subword ids: here the line of fewest words has the most ids, and it is
    batched last, padded to its batch-mate's length (which sets both lines' decode length)."""
    import numpy as np

    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
    from tests.model_utils import build_model

    class CharIds:  # one id a character: "abcdefgh" is 8 ids, "a b c" 5
        def encode(self, text):
            return [2 + (ord(c) % 20) for c in text]

        def decode(self, ids):
            return " ".join(map(str, ids))

    batches = []

    def searcher(padded, occurrences=None):
        batches.append(padded.copy())
        return np.zeros([len(padded), 1, 3], np.int32), np.zeros([len(padded), 1], np.float32)

    lines = ["abcdefgh", "a b c", "a b", "x y z w"]
    dhp = decode_hparams("batch_size=2")
    model = build_model("transformer_tiny", "hidden_size=16,num_heads=2", vocab_size=30)
    decoder = LineDecoder(model, CharIds(), CharIds(), dhp, log=lambda _: None, searcher=searcher)
    assert len(decoder.decode_lines(lines)) == 4
    # Words: 4 ("x y z w"), 3 ("a b c"), 2 ("a b"), 1 ("abcdefgh"): ids with EOS 8, 6, 4, 9.
    assert [b.shape for b in batches] == [(2, 8), (2, 9)]
    assert [row.tolist().count(0) for row in batches[1]] == [5, 0]  # "a b" padded to 9


def test_placeholder_beams_are_written_as_t2t_writes_them():
    """With return_beams, where fewer beams finished than asked for, T2T's beam search returns
    the rest as its start (ids 0, score -INF) and its decode_from_file writes them as any beam:
    the decode of those ids ("<pad>" each) and, with write_beam_scores, -10000000.00."""
    import numpy as np

    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams, hypotheses_found
    from tests.model_utils import build_model

    class Pads:  # T2T's reserved names for ids 0 and 1, the rest as numbers
        def encode(self, text):
            return [int(t) for t in text.split()]

        def decode(self, ids):
            return "".join({0: "<pad>", 1: "<EOS>"}.get(i, f" {i}") for i in ids).strip()

    def searcher(padded, occurrences=None):
        ids = np.zeros([1, 3, 5], np.int32)  # beam 1 finished, beams 2 and 3 did not
        ids[0, 0, 1:4] = [7, 8, 1]
        return ids, np.array([[-1.5, -1e7, -1e7]], np.float32)

    dhp = decode_hparams("beam_size=3,return_beams=True,write_beam_scores=True")
    model = build_model("transformer_tiny", "hidden_size=16,num_heads=2", vocab_size=30)
    decoder = LineDecoder(model, Pads(), Pads(), dhp, log=lambda _: None, searcher=searcher)
    [hyps] = decoder.decode_lines(["5 6"])
    line = decoder.format(hyps)
    assert (
        line == "7 8\t-1.50\t<pad><pad><pad><pad>\t-10000000.00\t<pad><pad><pad><pad>\t-10000000.00"
    )
    assert [h.text for h in hypotheses_found(hyps)] == ["7 8"]  # what the export answers
