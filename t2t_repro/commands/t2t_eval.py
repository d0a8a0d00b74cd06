"""t2t-eval: evaluates each checkpoint of a run as it comes, as tensor2tensor's t2t-eval.

    t2t-eval --problem=translate_ende_wmt32k --model=transformer --hparams_set=transformer_base \
        --data_dir=DATA --output_dir=TRAIN [--eval_use_test_set] [--eval_timeout_mins=240]

T2T's ``bin/t2t_eval.py`` takes t2t-trainer's flags and evaluates every checkpoint of
--output_dir (the newest first, then each new one, until none came for --eval_timeout_mins)
with ``Estimator.evaluate()``, whose scalars go to ``<output_dir>/eval``. This is t2t-trainer's
``--schedule=continuous_eval`` (which T2T's trainer writes to ``eval_eval`` and which skips a
step-0 checkpoint) with those two differences; T2T's t2t-eval reads no --schedule.
"""

from __future__ import annotations

import argparse

from t2t_repro.commands import trainer


def build_parser() -> argparse.ArgumentParser:
    """t2t-trainer's flags, as T2T's t2t_eval.py imports t2t_trainer's."""
    parser = trainer.build_parser()
    parser.prog = "t2t-eval"
    parser.description = __doc__.split("\n\n")[0]
    parser.set_defaults(standalone_eval=True, schedule="continuous_eval")
    return parser


def main(argv: list[str] | None = None) -> int:
    return trainer.main(argv, build_parser())


if __name__ == "__main__":
    raise SystemExit(main())
