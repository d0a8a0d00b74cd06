"""SavedModel export: the exported model translates like t2t-decoder and loads without this
project (its in-graph subword encoding: test_graph_subword_encoder.py)."""

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.line_decoder import hypotheses_found
from tests.grappler import grappler_off_env
from tests.model_utils import shared_toy_checkpoint
from tests.shared_build import build_once
from tests.tools import NO_ENCODER_LAYER, ROOT, run_tool

LINES = [
    "ta mib fazz ta zorp .",
    "",
    "ünïcödé 😀 _x\\ zorp",
    " ".join(["mok"] * 30),
    "en sarn mok yint murn en mok yint .",
]
# Hostile spellings of LINES[0]: every path must normalise them to it (data/source_lines.py).
HOSTILE_LINES = [
    b"  ta mib fazz ta zorp .  ",
    b"\xef\xbb\xbfta mib fazz ta zorp .",
    "\u00a0ta mib fazz ta zorp .\u3000".encode(),
    b"\tta mib fazz ta zorp .\r",
    b"\r\n"[:1] + b"ta mib fazz ta zorp .\x0b",
]
ODD_LINES = [b"ta \xff mib \xe2\x82 fazz", b"ta\tmib  fazz", b" \t\r", "\u3000".encode()]
LOAD_SCRIPT = """
import importlib.abc, json, sys
sys.path = [p for p in sys.path if p not in ("", {root!r})]


class NoProject(importlib.abc.MetaPathFinder):
    # The project is installed in this venv: any import of it while the SavedModel loads or
    # runs must fail, so that the check shows the export needs neither code nor vocabulary.
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("t2t_repro", "problems", "hparams"):
            raise ImportError(f"{{name}} imported by the exported model")


sys.meta_path.insert(0, NoProject())
import tensorflow as tf, tensorflow_text  # noqa: F401  (registers the ops)
translate = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
lines = [bytes.fromhex(line) for line in json.loads(sys.argv[2])]
out = [translate(sources=tf.constant([line])) for line in lines]
assert not [m for m in sys.modules if m.split(".")[0] == "t2t_repro"]
print(json.dumps([[o["translations"].numpy()[0].decode(), float(o["scores"].numpy()[0])]
                  for o in out]))
"""


@pytest.fixture(scope="module")
def trained_dir():
    """The run's one toy checkpoint (tests/model_utils.py): the tests only read it."""
    return shared_toy_checkpoint()


@pytest.fixture(scope="module")
def exported(trained_dir):
    """The toy model exported by t2t-exporter (which checks it against the decoder first),
    once for the run. Without Grappler (tests/grappler.py): its check runs the export and
    the decoder in one process alike, and the SavedModel it writes is the same (Grappler
    rewrites a function when it is first run, not what is saved)."""

    def export(root):
        # binary (its tests load it several times; the text default: the return_beams test)
        out = exporter(trained_dir, f"--export_dir={root}", "--noas_text", env=grappler_off_env())
        assert out.returncode == 0, out.stderr[-3000:]
        assert "checked against t2t-decoder" in out.stderr

    # T2T's layout: a version dir of the export's unix time under --export_dir
    (version,) = build_once("export_toy_saved_model", export).iterdir()
    assert version.name.isdigit() and abs(int(version.name) - time.time()) < 3600
    return version


# The lines below are 1 to 45 ids long (EOS included): the decoders pad them all to 48, not to
# five of the default buckets (decoding/search.py), so each traces its search once, not once a
# bucket (7 traces fewer in this module). The padding is masked and the decode length is the
# line's own (tests/test_decode_length_buckets.py); the export has no buckets.
ONE_BUCKET = (48,)


@pytest.fixture(scope="module")
def toy_decoders(trained_dir):
    """t2t-decoder's own code path for the toy model, one line per batch, as exported:
    (best only, return_beams=True), each searching in ``ONE_BUCKET``."""
    from t2t_repro.decoding import runner
    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams

    setup = runner.load_decoder(
        "translate_toy",
        "transformer_tiny",
        "",
        str(trained_dir / "data"),
        str(trained_dir / "train"),
        decode_overrides="beam_size=3,alpha=0.6,extra_length=6,batch_size=1",
    )
    setup.decoder.log = lambda msg: None
    best = setup.decoder
    best.searcher = best.searcher.with_config(length_buckets=ONE_BUCKET)
    dhp = decode_hparams("beam_size=3,alpha=0.6,extra_length=6,batch_size=1,return_beams=True")
    beams = LineDecoder(setup.model, best.input_encoder, best.target_encoder, dhp, lambda msg: None)
    beams.searcher = beams.searcher.with_config(length_buckets=ONE_BUCKET)
    return setup, beams


def saved_functions(export_dir: Path) -> list:
    """The functions (``FunctionDef``s) in a SavedModel's graph."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((export_dir / "saved_model.pb").read_bytes())
    return list(saved.meta_graphs[0].graph_def.library.function)


def search_stop_rules(export_dir: Path) -> dict[str, bool]:
    """Per signature function, the beam search's stop rule it passes the one search (its
    ``stop_early`` constant: true is the best beam's rule, false ``return_beams``')."""
    rules = {}
    for function in saved_functions(export_dir):
        name = function.signature.name
        nodes = {node.name: node for node in function.node_def}
        for node in function.node_def:
            if "f" in node.attr and node.attr["f"].func.name.startswith("__inference_run_search_"):
                stop_early = nodes[node.input[1].split(":")[0]]  # (sources, stop_early, ...)
                signature = name.removeprefix("__inference_").rsplit("_", 1)[0]
                rules[signature] = stop_early.attr["value"].tensor.bool_val[0]
    return rules


def exporter(root, *extra, **kwargs):
    return run_tool(
        "t2t-exporter",
        "--problem=translate_toy",
        f"--data_dir={root / 'data'}",
        f"--output_dir={root / 'train'}",
        "--decode_hparams=beam_size=3,alpha=0.6,extra_length=6",
        *extra,
        timeout=600,
        **kwargs,
    )


@pytest.mark.slow
def test_exported_model_translates_like_the_decoder(exported, toy_decoders, tmp_path):
    """Same lines, same translations: exported model, decoder file path, interactive path."""
    import io

    from t2t_repro.decoding import runner

    export_dir = exported
    assert (export_dir / "saved_model.pb").exists() and list((export_dir / "assets").iterdir())
    # Both signatures call one traced search (serving/exporter.py): it, and the beam search's
    # loop in it, are saved once; each passes it its own stop rule.
    names = [function.signature.name for function in saved_functions(export_dir)]
    assert sum(name.startswith("__inference_run_search_") for name in names) == 1, names
    assert sum(name.startswith("while_body_") for name in names) == 1, names
    assert search_stop_rules(export_dir) == {"translate": True, "translate_beams": False}

    raw_lines = [line.encode() for line in LINES] + HOSTILE_LINES + ODD_LINES
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            LOAD_SCRIPT.format(root=str(ROOT)),
            str(export_dir),
            json.dumps([line.hex() for line in raw_lines]),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    exported = json.loads(loaded.stdout.strip().splitlines()[-1])

    setup = toy_decoders[0]
    expected = [hyps[0] for hyps in setup.decoder.decode_lines(LINES)]
    n = len(LINES)
    assert [text for text, _ in exported[:n]] == [h.text for h in expected]
    assert LINES[1] == "" and exported[1][1] < 0  # EOS alone, translated as T2T's client has it
    assert any(text for text, _ in exported)
    np.testing.assert_allclose(
        [s for _, s in exported[:n]], [h.score for h in expected], rtol=1e-4, atol=1e-4
    )
    # Hostile spellings translate as the clean line, in the export too.
    assert exported[n : n + len(HOSTILE_LINES)] == [exported[0]] * len(HOSTILE_LINES)
    assert exported[-2:] == [exported[1]] * 2  # whitespace-only lines are blank
    # The decoder's file and interactive paths give the exported model's translations.
    src = tmp_path / "src.txt"
    src.write_bytes(b"\n".join(raw_lines) + b"\n")
    from_file = runner.decode_file(setup, str(src), str(tmp_path / "out.txt"))
    stdout = io.StringIO()
    runner.decode_interactive(setup, stdin=io.BytesIO(src.read_bytes()), stdout=stdout)
    assert from_file == [text for text, _ in exported]
    assert stdout.getvalue().split("\n")[:-1] == from_file


def test_an_export_goes_to_a_version_dir_of_its_time_under_the_base(tmp_path, monkeypatch):
    """T2T's export.py: --export_dir (default <checkpoint dir>/export) is the base, the
    SavedModel its <unix time> dir (Estimator's export_saved_model); a second taken already
    (two exports within one second) gives the next one, as Estimator retries a second later."""
    from t2t_repro.serving.exporter import versioned_export_dir

    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.7)
    base = tmp_path / "models"
    assert versioned_export_dir(str(base)) == str(base / "1800000000")
    (base / "1800000000").mkdir(parents=True)
    assert versioned_export_dir(str(base)) == str(base / "1800000001")


@pytest.mark.slow
@pytest.mark.usefixtures("without_grappler_here")  # its own export and decoder run alike
def test_exported_parser_decodes_like_the_decoder_with_the_tree_constraint(tmp_path):
    """A parsing problem exports with its token target vocabulary and the tree constraint, and
    passes t2t-exporter's own check (its probe lines: a blank one, whose graph word classes
    once failed with no word to scan)."""
    import keras
    import tensorflow as tf

    from t2t_repro import registry
    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
    from t2t_repro.serving.export_check import PROBE_LINES, check_export
    from t2t_repro.serving.exporter import export_saved_model
    from tests.model_utils import build_model
    from tests.test_wsj_parsing import make_ldc

    problem = registry.problem("wsj_parsing_ldc")
    data_dir = str(tmp_path / "data")
    problem.generate_data(data_dir, str(make_ldc(tmp_path / "raw")), progress=False)
    encoders = problem.get_encoders(data_dir)
    keras.utils.set_random_seed(2)
    sizes = problem.vocab_sizes(data_dir)
    model = build_model(  # one decoder layer: the constraint acts on any model's scores alike
        "transformer_tiny",
        f"hidden_size=32,filter_size=48,num_heads=4,{NO_ENCODER_LAYER}",
        vocab_size=sizes[0],
        target_vocab_size=sizes[1],
    )
    dhp = decode_hparams("beam_size=2,extra_length=6,batch_size=1", problem.decode_defaults)
    constraint = problem.search_constraint(data_dir, dhp)
    decoder = LineDecoder(
        model, encoders["inputs"], encoders["targets"], dhp, lambda m: None, constraint
    )
    lines = ["The cat sat .", "Rome waits , ` he said '"]  # 8 and 61 ids: one search in 64
    decoder.searcher = decoder.searcher.with_config(length_buckets=(64,))  # (as ONE_BUCKET)
    export_dir = str(tmp_path / "exported")
    # t2t-exporter's input limit, the decoder's (64 cut the first probe line's 103 ids in this
    # tiny vocabulary in the export alone, and its check rightly failed)
    limit = decoder.split_input_length
    export_saved_model(
        model, encoders, decoder.searcher.config, limit, export_dir, decoder.constraint
    )
    assert "" in PROBE_LINES
    parse = check_export(export_dir, decoder).signatures["serving_default"]
    exported = [
        parse(sources=tf.constant([line]))["translations"].numpy()[0].decode() for line in lines
    ]
    assert exported == [hyps[0].text for hyps in decoder.decode_lines(lines)]
    assert exported[1].split().count("``") == 1 and exported[1].split().count("''") == 1


@pytest.mark.slow
@pytest.mark.usefixtures("without_grappler_here")  # its export's signatures and decoders alike
def test_nbest_signature_and_query_server_give_the_decoders_hypotheses(
    exported, toy_decoders, trained_dir
):
    """The export's nbest signature is t2t-decoder's return_beams, padded with placeholders;
    t2t-query-server over gRPC and REST, against a stand-in for tensorflow_model_server
    serving the export, prints t2t-decoder's lines (best, and --return_beams); clear errors."""
    import io

    from t2t_repro.commands.query_server import main
    from tests.tf_serving_standin import StandInModelServer

    def query(*flags, stdin=b""):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(
                ["--servable_name=toy", "--timeout_secs=300", *flags], io.BytesIO(stdin), out
            )
        return code, out.getvalue().splitlines(), err.getvalue()

    setup, beams_decoder = toy_decoders
    exported_data_dir = trained_dir / "data"
    best = [hyps[0] for hyps in setup.decoder.decode_lines(LINES)]
    # what the export answers: the decoder's hypotheses, T2T's placeholders not among them
    all_beams = [hypotheses_found(hyps) for hyps in beams_decoder.decode_lines(LINES)]
    assert any(len(hyps) > 1 for hyps in all_beams) and all_beams[1][0].ids == best[1].ids
    assert [hyps[0].text for hyps in all_beams] == [h.text for h in best]
    stdin = "\n".join(LINES).encode() + b"\n"
    with StandInModelServer(str(exported), "toy") as server:
        # nbest, one line per call as the decoder's batch_size=1: [1, beam_size]; the decoder's
        # return_beams hypotheses, then placeholders ("", a score below -1e6).
        nbest = server.loaded.signatures["nbest"]
        for line, hyps in zip(LINES, all_beams, strict=True):
            out = nbest(sources=tf.constant([line]))
            texts = [t.decode() for t in out["translations"].numpy()[0]]
            scores = out["scores"].numpy()[0]
            assert out["translations"].shape == out["scores"].shape == (1, 3)
            assert texts[: len(hyps)] == [h.text for h in hyps]
            np.testing.assert_allclose(scores[: len(hyps)], [h.score for h in hyps], atol=1e-4)
            assert texts[len(hyps) :] == [""] * (3 - len(hyps))
            assert all(score < -1e6 for score in scores[len(hyps) :])

        # one line per request by default, as T2T's client: the decoder's per-line outputs
        code, grpc_lines, err = query(f"--server={server.grpc_address}", stdin=stdin)
        assert code == 0, err
        assert grpc_lines == [h.text for h in best]
        code, rest_lines, err = query(
            f"--server={server.rest_address}",
            "--batch_size=1",
            "--return_beams",
            "--write_beam_scores",
            stdin=stdin,
        )
        assert code == 0, err
        assert len(rest_lines) == len(LINES)
        for line, hyps in zip(rest_lines, all_beams, strict=True):
            fields = line.split("\t")
            assert fields[0::2] == [h.text for h in hyps]
            # written "%.2f" (T2T's): within half a unit of the last place of the decoder's
            # scores, which the nbest signature's equal to 1e-4 (above)
            np.testing.assert_allclose(
                [float(s) for s in fields[1::2]], [h.score for h in hyps], atol=0.005 + 1e-4
            )
        code, once, err = query(
            f"--server={server.grpc_address}", "--return_beams", f"--inputs_once={LINES[0]}"
        )
        assert (code, once) == (0, ["\t".join(h.text for h in all_beams[0])])
        # T2T's query.py needs --problem and --data_dir: a T2T command line runs.
        data = f"--data_dir={exported_data_dir}"
        code, once, err = query(
            f"--server={server.grpc_address}",
            "--problem=translate_toy",
            data,
            f"--inputs_once={LINES[0]}",
        )
        assert (code, once) == (0, [best[0].text]), err
        # Errors are one line: an unknown model, T2T's client flags that do not fit.
        for flags, message in (
            ([f"--server={server.rest_address}", "--servable_name=nope"], "HTTP 404"),
            ([f"--server={server.grpc_address}", "--servable_name=nope"], "NOT_FOUND"),
            ([f"--server={server.grpc_address}", "--problem=translate_toy"], "go together"),
            ([f"--server={server.grpc_address}", "--problem=translate_nope", data], "nope"),
            (
                [f"--server={server.grpc_address}", "--problem=translate_toy", "--data_dir=/no"],
                "Vocabulary file /no/",
            ),
        ):
            code, lines, err = query(*flags, "--inputs_once=ta mib")
            assert code == 1 and not lines and err.count("\n") == 1, err
            assert err.startswith("t2t-query-server: error:") and message in err, err


def test_an_exports_inputs_are_cut_as_t2ts_serving_input_fn():
    """T2T's export reads an input as its dataset decode does (serving_input_fn ->
    preprocess_example_common): ids and EOS cut to max_input_seq_length (a cut drops the EOS),
    max_input_size unread; the graph (Translator.encode_inputs) and its Python twin for the
    export's check (export_input_ids) agree."""
    from types import SimpleNamespace

    from t2t_repro.hparam import HParams
    from t2t_repro.serving.exporter import Translator, export_input_ids, t2t_input_cut

    def model(**hparams):
        return SimpleNamespace(hparams=HParams(**hparams))

    assert t2t_input_cut(model(max_input_seq_length=3)) == 3
    assert t2t_input_cut(model(max_input_seq_length=3, has_input=False)) == 0  # a prompt
    assert t2t_input_cut(model()) == 0

    class Lengths:  # a word's id: its length + 1
        def encode(self, text):
            if isinstance(text, str):
                return [len(w) + 1 for w in text.split()]
            return tf.ragged.map_flat_values(tf.strings.length, tf.strings.split(text)) + 1

    lines = ["a bb ccc dddd", "e", "ff gg"]
    for table, cut in ((100, 0), (100, 3), (3, 0), (3, 2)):
        stub = SimpleNamespace(input_encoder=Lengths(), max_input_length=table, input_cut=cut)
        graph = Translator.encode_inputs(stub, tf.constant(lines)).numpy().tolist()
        python = [export_input_ids(Lengths(), line, table, cut) for line in lines]
        assert [row[: len(ids)] for row, ids in zip(graph, python, strict=True)] == python
        assert all(set(row[len(ids) :]) <= {0} for row, ids in zip(graph, python, strict=True))
    assert export_input_ids(Lengths(), "a bb ccc dddd", 100, 3) == [2, 3, 4]  # EOS cut off
    assert export_input_ids(Lengths(), "a bb ccc dddd", 3, 0) == [2, 3, 1]  # the table: EOS kept


@pytest.mark.slow
@pytest.mark.usefixtures("without_grappler_here")  # its own export and decoder run alike
def test_an_export_with_return_beams_gives_every_beam_by_default(toy_decoders, tmp_path):
    """T2T's export with return_beams answers every beam in its one signature
    (t2t_model.py, estimator_spec_predict: top_beams = beam_size): serving_default is then
    the nbest signature, checked against the decoder's return_beams hypotheses; the query
    client reads either."""
    from t2t_repro.serving import query
    from t2t_repro.serving.export_check import check_export
    from t2t_repro.serving.exporter import export_saved_model

    setup, beams = toy_decoders
    encoders = {"inputs": beams.input_encoder, "targets": beams.target_encoder}
    export_dir = str(tmp_path / "beams")
    assert beams.searcher.config.return_beams
    export_saved_model(
        setup.model,
        encoders,
        beams.searcher.config,
        beams.max_input_length,
        export_dir,
        as_text=True,  # t2t-exporter's default, T2T's --as_text: loaded (and checked) as text
    )
    from t2t_repro.commands import exporter as exporter_command

    assert exporter_command.build_parser().parse_args([]).as_text
    assert os.listdir(export_dir).count("saved_model.pbtxt") == 1
    assert not os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    # the exporter's own check, here after the write: it loads the export once for the test
    signatures = check_export(export_dir, beams, lines=LINES[:1]).signatures
    default = signatures["serving_default"](sources=tf.constant(LINES[:2]))
    assert default["translations"].shape == default["scores"].shape == (2, 3)

    def request(lines):
        out = signatures["serving_default"](sources=tf.constant(lines))
        return out["translations"].numpy().tolist(), out["scores"].numpy().tolist()

    # one line a request, as T2T's client sends them and the decoder's batch_size=1 decodes
    got = [query.query([line], request, nbest=False)[0] for line in LINES[:2]]
    want = [hypotheses_found(hyps) for hyps in beams.decode_lines(LINES[:2])]
    assert [[h.text for h in hyps] for hyps in got] == [[h.text for h in hyps] for hyps in want]
    np.testing.assert_allclose(
        [h.score for hyps in got for h in hyps], [h.score for hyps in want for h in hyps], atol=1e-4
    )
