"""t2t-quickstart: the whole workflow on an embedded toy translation problem, offline.

Generates the toy data, trains a small Transformer, averages the last checkpoints, decodes
the test split with beam search and scores it with t2t-bleu, all through the real tools.
Takes a few minutes on 2 CPU cores and needs no download.
"""

from __future__ import annotations

import argparse
import os
import sys

from t2t_repro.commands import cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="t2t-quickstart", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--work_dir", default="out/quickstart", help="where everything goes")
    parser.add_argument("--problem", default="translate_toy")
    parser.add_argument("--hparams_set", default="transformer_quickstart")
    parser.add_argument("--train_steps", type=int, default=600)
    return parser


def run(args: argparse.Namespace) -> int:
    from t2t_repro.workflow import WorkflowConfig, WorkflowError, run_workflow

    work_dir = cli.expand(args.work_dir)
    cfg = WorkflowConfig(
        problem=args.problem,
        hparams_set=args.hparams_set,
        work_dir=work_dir,
        tmp_dir=os.path.join(work_dir, "tmp"),
        train_steps=args.train_steps,
        average_n=2,
        extra_trainer_flags=["--local_eval_frequency=200", "--keep_checkpoint_max=10"],
    )
    try:
        summary = run_workflow(cfg)
    except WorkflowError as e:
        raise cli.UsageError(f"{e} (see the tool's message above)") from e
    timings = summary["timings"]
    print("\n=== quickstart finished ===")
    print(f"problem {cfg.problem}, hparams set {cfg.hparams_set}, {cfg.train_steps} steps")
    print(
        f"times: datagen {timings['datagen_s']:.0f}s, training {timings['train_s']:.0f}s, "
        f"averaging {timings['average_s']:.0f}s, decoding {timings['decode_s']:.0f}s"
    )
    for result in summary["bleu"]:
        print(f"{result['name']}: {result['score']:.2f}")
    print(f"data:         {cfg.data_dir}")
    print(f"checkpoints:  {cfg.train_dir} (averaged: {cfg.avg_dir})")
    print(f"decodes:      {summary['decodes']} (reference {summary['reference']})")
    print(f"results:      {os.path.join(work_dir, 'results.json')}")
    print(f"TensorBoard:  .venv/bin/tensorboard --logdir={cfg.train_dir}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return cli.run("t2t-quickstart", run, build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
