"""t2t-import: turn a tensor2tensor 1.x training directory into this project's output_dir.

    t2t-import --t2t_dir=T2T_TRAIN --output_dir=TRAIN --data_dir=DATA
    t2t-import --t2t_dir=T2T_TRAIN --output_dir=TRAIN --vocab=vocab.<problem>.<size>.subwords

Reads T2T's newest model.ckpt-N, hparams.json and flags.txt (T2T_TRAIN is not changed) and
writes TRAIN with a checkpoint, Adam state and step that t2t-decoder, t2t-trainer (resume),
t2t-avg-all, t2t-exporter and t2t-attention read.
"""

from __future__ import annotations

import argparse
import sys

from t2t_repro.commands import cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-import", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--t2t_dir",
        default="",
        help="T2T's --output_dir (checkpoint, "
        "model.ckpt-N.*, hparams.json, flags.txt), or a model.ckpt-N prefix",
    )
    parser.add_argument(
        "--output_dir", default="", help="the new directory to write (must not exist)"
    )
    parser.add_argument(
        "--data_dir",
        default="",
        help="T2T data dir: its vocabulary (found "
        "by the problem's name) is checked against the checkpoint",
    )
    parser.add_argument(
        "--vocab",
        default="",
        help="the subword vocabulary file instead; it "
        "is also copied into --output_dir under the problem's vocab name",
    )
    parser.add_argument("--problem", default="", help="default: --problem of flags.txt")
    parser.add_argument(
        "--hparams_set",
        default="",
        help="this project's set to express the "
        "hparams against (default: flags.txt's, T2T's renamed sets mapped)",
    )
    parser.add_argument(
        "--ignore_hparams",
        default="",
        help="comma-separated T2T hparams to "
        "drop although they change the model (the import then differs from T2T)",
    )
    parser.add_argument(
        "--weights_only",
        action="store_true",
        help="skip Adam's moments (resumed training starts them at zero)",
    )
    parser.add_argument(
        "--t2t_usr_dir",
        default="",
        help="a module/package of your own registrations (problems, hparams sets)",
    )
    parser.add_argument(
        "--registry_help", action="store_true", help="list everything registered and exit"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.t2t_import import import_t2t_dir
    from t2t_repro.t2t_import.report import describe

    cli.require(args, "t2t_dir", "output_dir")
    result = import_t2t_dir(
        cli.expand(args.t2t_dir),
        cli.expand(args.output_dir),
        data_dir=cli.expand(args.data_dir),
        vocab=cli.expand(args.vocab),
        problem=args.problem,
        hparams_set=args.hparams_set,
        ignore_hparams=[n.strip() for n in args.ignore_hparams.split(",") if n.strip()],
        weights_only=args.weights_only,
        log=lambda msg: print(msg, file=sys.stderr),
    )
    print(
        describe(
            result,
            cli.expand(args.output_dir),
            cli.expand(args.data_dir),
            bool(args.vocab),
            usr_dir=args.t2t_usr_dir,
        )
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run("t2t-import", run, build_parser(), argv, uses_registry=True)


if __name__ == "__main__":
    sys.exit(main())
