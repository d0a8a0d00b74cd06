"""Shared pieces of the command-line tools (this package): common flags, clean failures.

User errors (unknown names, bad hparams, missing data or checkpoints) end the tool with
``<tool>: error: <message>`` and exit code 1, never a traceback; ``--registry_help`` prints
the registry and exits, as in T2T.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable

from t2t_repro import console, fileio
from t2t_repro.bool_flags import add_bool, parse_bool  # noqa: F401 (the tools' helpers)
from t2t_repro.commands import absl_argv
from t2t_repro.errors import UsageError, UserError


def add_problem_flags(
    parser: argparse.ArgumentParser, output_dir_help: str, reads_raw_data: bool = True
) -> None:
    """``reads_raw_data``: the tool reads --tmp_dir (tools that only load a trained model
    and its vocabulary do not take it)."""
    parser.add_argument("--problem", default="", help="registered problem name")
    parser.add_argument("--model", default="transformer", help="registered model name")
    parser.add_argument("--hparams_set", default="", help="registered hparams set")
    parser.add_argument("--hparams", default="", help='overrides, "name=value,name2=value2"')
    parser.add_argument("--data_dir", default="", help="vocab files and TFRecord shards")
    if reads_raw_data:
        parser.add_argument("--tmp_dir", default="/tmp/t2t_datagen", help="raw data")
    parser.add_argument("--output_dir", default="", help=output_dir_help)
    parser.add_argument(
        "--t2t_usr_dir", default="", help="a module/package of your own registrations"
    )
    add_bool(parser, "registry_help", "list everything registered and exit")


def add_random_seed_flag(parser: argparse.ArgumentParser) -> None:
    """T2T's --random_seed, for the tools that decode: it seeds sampling."""
    parser.add_argument(
        "--random_seed",
        type=int,
        default=None,
        help="seed of sampling (--hparams=sampling_method=random): the same seed draws the "
        "same samples for the same input (default: a fresh seed, printed)",
    )


def expand(path: str) -> str:
    """Local paths made absolute; ``gs://...`` and other URLs unchanged."""
    return fileio.expand(path)


def require(args: argparse.Namespace, *names: str) -> None:
    missing = [f"--{n}" for n in names if not getattr(args, n)]
    if missing:
        raise UsageError(f"{', '.join(missing)} required (see --help).")


# The errors a tool reports as one line: ours, and the OS's about paths the user gave.
USER_ERRORS = (
    UserError,
    FileNotFoundError,
    FileExistsError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
)


def load_decoder_from_flags(args: argparse.Namespace, *required: str, allow_ensemble: bool = False):
    """The decoder (``decoding.runner.DecoderSetup``) of the trained model that the shared
    flags name: --problem, --data_dir, --output_dir or --checkpoint_path, --hparams_set,
    --hparams, --decode_hparams, --model; ``required`` names further flags that must be set.
    ``allow_ensemble``: --checkpoint_path may name several checkpoints (t2t-decoder)."""
    from t2t_repro.decoding import runner

    require(args, "problem", "data_dir", *required)
    if not (args.output_dir or args.checkpoint_path):
        raise UsageError("--output_dir or --checkpoint_path is required.")
    return runner.load_decoder(
        args.problem,
        args.hparams_set,
        args.hparams,
        expand(args.data_dir),
        expand(args.output_dir),
        ",".join(expand(p.strip()) for p in args.checkpoint_path.split(","))
        if args.checkpoint_path
        else "",
        args.decode_hparams,
        args.model,
        allow_ensemble=allow_ensemble,
        random_seed=getattr(args, "random_seed", None),
    )


def run(
    prog: str,
    main: Callable[[argparse.Namespace], int | None],
    parser: argparse.ArgumentParser,
    argv: list[str] | None = None,
    *,
    uses_registry: bool = False,
    check_flags: Callable[[argparse.Namespace], None] | None = None,
) -> int:
    """Parses flags, runs ``check_flags`` (before TensorFlow starts, so a refused flag costs
    nothing), starts TensorFlow quietly and registers names (``uses_registry``), handles
    --t2t_usr_dir/--registry_help, runs ``main`` and reports user errors as one line (exit 1)."""
    add_bool(
        parser,
        "verbose",
        f"also show TensorFlow's own start-up lines and warnings (or set {console.VERBOSE_ENV}=1)",
    )
    try:
        argv = absl_argv.expand_flagfiles(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        parser.error(str(e))
    args = parser.parse_args(argv)
    if args.verbose:
        os.environ[console.VERBOSE_ENV] = "1"  # Also for the tools a workflow runs.
    try:
        if check_flags is not None:
            check_flags(args)
        if uses_registry:
            from t2t_repro.commands.builtins import register_builtins

            console.start_tensorflow()

            register_builtins()
        if getattr(args, "t2t_usr_dir", ""):
            _import_usr_dir(args.t2t_usr_dir)
        if getattr(args, "registry_help", False):
            from t2t_repro import registry

            print(registry.help_string())
            return 0
        return int(main(args) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted.", file=sys.stderr)
        return 130
    except Exception as e:
        if isinstance(e, USER_ERRORS):
            print(f"{prog}: error: {e}", file=sys.stderr)
            return 1
        line = _usr_dir_error_line(e, args)
        if line is None:
            raise
        if args.verbose:
            traceback.print_exc()
        print(f"{prog}: error: {line}", file=sys.stderr)
        return 1


def _usr_dir_error_line(error: Exception, args: argparse.Namespace) -> str | None:
    """One line for an error the --t2t_usr_dir's own code raised (its file, line, function
    and the problem); None for any other (a bug here: its traceback is kept)."""
    if not getattr(args, "t2t_usr_dir", ""):
        return None
    from t2t_repro.usr_dir import usr_dir_error_line

    return usr_dir_error_line(error, getattr(args, "problem", "") or "")


def _import_usr_dir(usr_dir: str) -> None:
    """A user's module failing to import is the user's to fix: one line, not a traceback."""
    from t2t_repro.usr_dir import import_usr_dir, usr_dir_error_line

    try:
        import_usr_dir(usr_dir)
    except FileNotFoundError:
        raise
    except Exception as e:
        line = usr_dir_error_line(e, traceback_hint=False)
        raise UsageError(f"--t2t_usr_dir {usr_dir}: {line or f'{type(e).__name__}: {e}'}") from e
