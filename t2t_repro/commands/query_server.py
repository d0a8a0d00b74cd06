"""t2t-query-server: translate lines with a TensorFlow Serving model server (T2T's
``t2t-query-server``) that serves t2t-exporter's SavedModel.

    t2t-query-server --server=localhost:8500 --servable_name=my_model < source.txt
    t2t-query-server --server=http://localhost:8501 --servable_name=my_model \
        --inputs_once="A man rides a bike ." --return_beams --write_beam_scores

One output line per input line, as t2t-decoder writes them but for T2T's placeholder beams,
which the export does not answer (docs/serving.md); T2T's client prints an ``Input:`` /
``Output (Score ...):`` block for each instead. One line per request, as T2T's client sends.

T2T's ``serving/query.py`` requires ``--problem`` and ``--data_dir`` (with ``--t2t_usr_dir``
for a problem of your own) to tokenise on the client. The export tokenises in its graph, so
here they are optional; given, they are checked as T2T uses them (the problem is registered
and its vocabulary loads from --data_dir), so a T2T command line runs and a wrong one stops
with one line.
"""

from __future__ import annotations

import argparse
import itertools
import sys

from t2t_repro.commands import cli, t2t_flags
from t2t_repro.errors import UsageError

# T2T's flags this tool refuses, and why (each one line).
REFUSED_T2T_FLAGS = {
    "cloud_mlengine_model_name": "Cloud ML Engine is not supported; serve with TF Serving",
    "cloud_mlengine_model_version": "Cloud ML Engine is not supported; serve with TF Serving",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog="t2t-query-server",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--server",
        default="",
        help="the model server: host:port for gRPC (tensorflow_model_server --port), "
        "http://host:port for REST (--rest_api_port)",
    )
    parser.add_argument("--servable_name", default="", help="the served model's name")
    parser.add_argument(
        "--inputs_once", default=None, help="translate this one input and exit (else: stdin)"
    )
    parser.add_argument("--timeout_secs", type=float, default=10, help="per request (T2T: 10)")
    parser.add_argument(
        "--return_beams",
        action="store_true",
        help="every beam, tab-separated, from the export's nbest signature",
    )
    parser.add_argument(
        "--write_beam_scores",
        action="store_true",
        help="with --return_beams: follow each beam by its score (as t2t-decoder)",
    )
    parser.add_argument(
        "--batch_size",
        type=int,
        default=1,
        help="not a T2T flag: lines per request when stdin is not a terminal; T2T's client "
        "sends one (the default), and a batch decodes to its longest line (docs/serving.md)",
    )
    t2t = parser.add_argument_group(
        "T2T's client flags (optional here: the export tokenises in its graph; given, checked)"
    )
    t2t.add_argument("--problem", default="", help="the export's registered problem")
    t2t.add_argument("--data_dir", default="", help="the problem's vocabulary files")
    t2t.add_argument("--t2t_usr_dir", default="", help="a module/package of your registrations")
    for name in REFUSED_T2T_FLAGS:
        parser.add_argument(f"--{name}", default=None, help=argparse.SUPPRESS)
    t2t_flags.add_t2t_flags(parser, "t2t-query-server")  # absl's flags (and T2T problem modules')
    return parser


def check_flags(args: argparse.Namespace) -> None:
    for name, why in REFUSED_T2T_FLAGS.items():
        if getattr(args, name) is not None:
            raise UsageError(f"--{name}: {why}; drop it.")
    cli.require(args, "server", "servable_name")
    if bool(args.problem) != bool(args.data_dir):
        raise UsageError(
            "--problem and --data_dir go together (T2T's query.py needs both); give both "
            "or neither (the export tokenises in its graph)."
        )
    if args.batch_size < 1 or args.timeout_secs <= 0:
        raise UsageError("--batch_size must be at least 1 and --timeout_secs above 0.")


def run(args: argparse.Namespace, stdin=None, stdout=None) -> int:
    from t2t_repro import console

    console.start_tensorflow()  # before the decoder's modules import it: quietly
    from t2t_repro.decoding.line_decoder import format_hypotheses
    from t2t_repro.serving import query

    if args.problem:
        check_problem(args.problem, cli.expand(args.data_dir))
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    signature = query.NBEST_SIGNATURE if args.return_beams else query.DEFAULT_SIGNATURE
    request_fn = query.make_request_fn(
        args.server, args.servable_name, signature, args.timeout_secs
    )
    if args.inputs_once is not None:
        batches = iter([[args.inputs_once]])
    else:
        lines = getattr(stdin, "buffer", stdin)  # bytes: invalid UTF-8 is not fatal
        size = 1 if stdin.isatty() else args.batch_size
        if stdin.isatty():
            print("Type a sentence and press Enter (Ctrl-D to quit).", file=sys.stderr)
        batches = iter(lambda: list(itertools.islice(lines, size)), [])
    scores = args.write_beam_scores and args.return_beams  # as t2t-decoder's writes_scores
    if args.write_beam_scores and not args.return_beams:
        print(
            "note: --write_beam_scores writes a score after each beam of --return_beams only "
            "(as t2t-decoder): these outputs have none.",
            file=sys.stderr,
        )
    for batch in batches:
        for hyps in query.query(batch, request_fn, args.return_beams):
            print(format_hypotheses(hyps, scores), file=stdout, flush=True)
    return 0


def check_problem(name: str, data_dir: str) -> None:
    """What T2T's ``query.py`` does with --problem and --data_dir before querying
    (``registry.problem(FLAGS.problem).feature_encoders(data_dir)``): a one-line error for an
    unknown problem or a vocabulary that does not load."""
    from t2t_repro import registry
    from t2t_repro.commands.builtins import register_builtins

    register_builtins()
    registry.problem(name).get_encoders(data_dir)


def main(argv: list[str] | None = None, stdin=None, stdout=None) -> int:
    return cli.run(
        "t2t-query-server",
        lambda args: run(args, stdin, stdout),
        build_parser(),
        argv,
        check_flags=check_flags,
    )


if __name__ == "__main__":
    sys.exit(main())
