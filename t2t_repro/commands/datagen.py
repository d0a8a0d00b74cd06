"""t2t-datagen: raw data -> vocab file + sharded TFRecords in --data_dir (tensor2tensor's layout).

    t2t-datagen --problem=translate_ende_multi30k --tmp_dir=../shared/data/multi30k \\
        --data_dir=~/t2t_data
    t2t-datagen --problem=translate_toy,algorithmic_copy --data_dir=/tmp/t2t_data
    t2t-datagen --registry_help

Re-running is cheap: finished shards are kept, interrupted ones rewritten.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import tempfile

from t2t_repro import paths
from t2t_repro.commands import cli, t2t_flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-datagen", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--problem", default="", help="problem name, a comma list, or a prefix* pattern"
    )
    parser.add_argument(
        "--data_dir",
        default="",
        help="where the vocab and TFRecord shards go (T2T's default: the system's temp dir)",
    )
    parser.add_argument(
        "--tmp_dir", default="/tmp/t2t_datagen", help="raw data (read, downloaded to)"
    )
    parser.add_argument(
        "--num_workers",
        "--num_concurrent_processes",
        dest="num_workers",
        type=int,
        default=0,
        help="encoding processes (default: all cores; T2T's name: --num_concurrent_processes)",
    )
    parser.add_argument(
        "--exclude_problems",
        default="",
        help="comma list: --problem leaves out every name containing an item (T2T's), or "
        "matching it as a pattern",
    )
    cli.add_bool(parser, "only_list", "print the problems that would be generated and exit")
    parser.add_argument(
        "--random_seed", type=int, default=429459, help="seed of the per-shard shuffle"
    )
    parser.add_argument(
        "--max_cases", type=int, default=0, help="at most this many pairs per split (0: all)"
    )
    parser.add_argument(
        "--t2t_usr_dir", default="", help="a module/package of your own registrations"
    )
    tasks = parser.add_argument_group(
        "datagen over several machines (T2T's)",
        "A usr_dir problem's own generate_data gets the task id; the others have no tasks and "
        "write all their files, as in T2T.",
    )
    tasks.add_argument(
        "--task_id", type=int, default=-1, help="run generate_data for this task id only"
    )
    for end in ("start", "end"):
        tasks.add_argument(
            f"--task_id_{end}",
            type=int,
            default=-1,
            help=f"a multiprocess_generate problem's range of task ids: its {end}"
            + (" (excluded)" if end == "end" else ""),
        )
    cli.add_bool(parser, "registry_help", "list everything registered and exit")
    cli.add_bool(parser, "noprogress", "no progress lines on stderr")
    cli.add_bool(
        parser,
        "offline",
        "download nothing (as T2T_REPRO_OFFLINE=1): a missing file is named in one line",
    )
    t2t_flags.add_t2t_flags(parser, "t2t-datagen")
    return parser


def problem_names(pattern: str, exclude_problems: str = "") -> list[str]:
    """Names from a comma list whose items may be ``fnmatch`` patterns (``translate_*``),
    sorted and each once, the order T2T's ``t2t_datagen.py`` main generates them in. A
    pattern that also matches T2T 1.15's problems not provided here is refused in one line
    naming them (T2T would generate them too), but those ``exclude_problems`` drops."""
    from t2t_repro import registry

    known = registry.list_names(registry.PROBLEMS)
    t2ts_missing = [
        n for n in registry.not_provided(registry.PROBLEMS) if not excluded(n, exclude_problems)
    ]
    # T2T's patterns match its base problems, which its <name>_rev are not (utils/registry.py:
    # the suffix is parsed from a name, not registered; problems/reversed_problem.py)
    rev_variants = {n for n in known if n.endswith("_rev") and n[: -len("_rev")] in known}
    names = []
    for item in filter(None, (s.strip() for s in pattern.split(","))):
        if any(c in item for c in "*?["):
            matched = [
                name
                for name in fnmatch.filter(known, item)
                if "_rev" in item or name not in rev_variants
            ]
            missing = fnmatch.filter(t2ts_missing, item)
            if missing:
                shown = ", ".join(missing[:8]) + (
                    f" and {len(missing) - 8} more" if len(missing) > 8 else ""
                )
                provided = (
                    f"; give those provided by name: --problem={','.join(matched)}"
                    if matched
                    else ""
                )
                raise cli.UsageError(
                    f"--problem pattern {item!r} matches T2T 1.15's {shown}, not provided "
                    f"here{provided}."
                )
            if not matched:
                raise cli.UsageError(f"no problem matches {item!r} (--registry_help lists them).")
            names.extend(matched)
        else:
            names.append(item)
    return sorted(set(names))


def excluded(name: str, exclude_problems: str) -> bool:
    """T2T's ``t2t_datagen.py`` main drops every problem whose name contains an item of
    --exclude_problems (``wmt`` drops them all); an item with ``*?[`` is also a pattern."""
    items = filter(None, (s.strip() for s in exclude_problems.split(",")))
    return any(item in name or fnmatch.fnmatchcase(name, item) for item in items)


def run(args: argparse.Namespace) -> int:
    from t2t_repro import registry
    from t2t_repro.data import download

    if not args.problem:
        raise cli.UsageError("--problem is required (see --help; --registry_help lists them).")
    names = [
        n
        for n in problem_names(args.problem, args.exclude_problems)
        if not excluded(n, args.exclude_problems)
    ]
    if not names:  # T2T's main raises "You must specify one of the supported problems"
        raise cli.UsageError(
            f"--exclude_problems={args.exclude_problems} leaves none of --problem={args.problem}"
            " (an item drops every problem whose name contains it)."
        )
    problems = [registry.problem(name) for name in names]  # an unknown name: one line
    if args.only_list:  # T2T's lists only problems it knows
        print("\n".join(names))
        return 0
    for problem in problems:  # before any problem's files are written
        problem.check_datagen()
    if not args.data_dir:  # T2T's t2t_datagen.py main: the temp dir, with a warning
        args.data_dir = tempfile.gettempdir()
        print(
            f"warning: no --data_dir: the data goes to {args.data_dir} (T2T's default); "
            "giving --data_dir is strongly recommended.",
            file=sys.stderr,
        )
    data_dir, tmp_dir = cli.expand(args.data_dir), cli.expand(args.tmp_dir)
    paths.expect_directory(data_dir, "--data_dir")
    with download.settings(offline=args.offline, progress=not args.noprogress):
        _generate(problems, data_dir, tmp_dir, args)
    return 0


def _generate(problems: list, data_dir: str, tmp_dir: str, args: argparse.Namespace) -> None:
    tasks = _tasks(args)
    for problem in problems:
        options = {}
        if getattr(problem.generate_data, "runs_t2t_tasks", False):
            options["t2t_tasks"] = tasks
        else:  # T2T's generate_data of such a problem ignores the task id
            tasks.note_no_tasks(problem.name)
        try:
            summary = problem.generate_data(
                data_dir,
                tmp_dir,
                args.num_workers or None,
                max_cases=args.max_cases or None,
                random_seed=args.random_seed,
                progress=not args.noprogress,
                **options,
            )
        except KeyboardInterrupt:
            raise cli.UsageError(
                "interrupted; run again to finish (finished shards are kept)."
            ) from None
        print(summary.format(), flush=True)


def _tasks(args: argparse.Namespace):
    from t2t_repro.t2t_compat.datagen_tasks import DatagenTasks

    return DatagenTasks(args.task_id, args.task_id_start, args.task_id_end)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return cli.run(
        "t2t-datagen",
        run,
        parser,
        argv,
        uses_registry=True,
        check_flags=lambda args: _check_flags(parser, args),
    )


def _check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    t2t_flags.check_t2t_flags(parser, args)
    if args.max_cases < 0:
        raise cli.UsageError("--max_cases must be 0 (every pair) or a positive count.")


if __name__ == "__main__":
    sys.exit(main())
