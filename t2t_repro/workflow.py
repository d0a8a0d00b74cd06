"""Runs the full T2T workflow through the real command-line tools, one step after another.

datagen -> train -> average checkpoints -> decode the test split -> BLEU. Each step is a subprocess
running the tool's own ``main`` (``python -m t2t_repro.commands.<tool>``, what the installed
``t2t-*`` scripts call), so recipes and the quickstart exercise exactly what users run. Steps print
their command; a failing step stops the workflow with the tool's own error message.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field

from t2t_repro.atomic_write import write_text_atomically
from t2t_repro.errors import UserError


class WorkflowError(UserError, RuntimeError):
    """A step of the workflow failed."""


def tool_module(tool: str) -> str:
    """``t2t-avg-all`` -> ``t2t_repro.commands.avg_all`` (the module its console script calls)."""
    name = tool.removeprefix("t2t-").replace("-", "_")
    return "t2t_repro.commands." + ("t2t_import" if name == "import" else name)  # a keyword


def run_tool(tool: str, *args: str, log=None, capture: bool = False) -> str:
    """Runs the tool ``t2t-<name>`` with this interpreter; returns stdout when ``capture``."""
    cmd = [sys.executable, "-m", tool_module(tool), *args]
    print(f"\n$ {tool} {' '.join(shlex.quote(a) for a in args)}", flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None, text=True)
    if proc.returncode != 0:
        raise WorkflowError(f"{tool} failed with exit code {proc.returncode}.")
    return proc.stdout or ""


@dataclass
class WorkflowConfig:
    problem: str
    hparams_set: str
    work_dir: str
    tmp_dir: str
    train_steps: int
    hparams: str = ""
    decode_hparams: str = "beam_size=4,alpha=0.6,extra_length=50"
    average_n: int = 5
    extra_trainer_flags: list = field(default_factory=list)

    @property
    def data_dir(self) -> str:
        return os.path.join(self.work_dir, "data")

    @property
    def train_dir(self) -> str:
        return os.path.join(self.work_dir, "train")

    @property
    def avg_dir(self) -> str:
        return os.path.join(self.work_dir, "train", "avg")


def run_workflow(cfg: WorkflowConfig) -> dict:
    """Runs every step; returns a summary dict (also written as ``work_dir/results.json``)."""
    timings = {}
    start = time.time()
    run_tool(
        "t2t-datagen",
        f"--problem={cfg.problem}",
        f"--data_dir={cfg.data_dir}",
        f"--tmp_dir={cfg.tmp_dir}",
    )
    timings["datagen_s"] = time.time() - start

    start = time.time()
    run_tool(
        "t2t-trainer",
        f"--problem={cfg.problem}",
        f"--hparams_set={cfg.hparams_set}",
        f"--hparams={cfg.hparams}",
        f"--data_dir={cfg.data_dir}",
        f"--output_dir={cfg.train_dir}",
        f"--train_steps={cfg.train_steps}",
        "--schedule=train_and_evaluate",
        *cfg.extra_trainer_flags,
    )
    timings["train_s"] = time.time() - start

    start = time.time()
    run_tool(
        "t2t-avg-all",
        f"--model_dir={cfg.train_dir}",
        f"--output_dir={cfg.avg_dir}",
        f"--n={cfg.average_n}",
        "--nosliding_window",  # the newest average alone (T2T's default writes one per step)
    )
    timings["average_s"] = time.time() - start

    start = time.time()
    run_tool(
        "t2t-decoder",
        f"--problem={cfg.problem}",
        f"--hparams_set={cfg.hparams_set}",
        f"--data_dir={cfg.data_dir}",
        f"--tmp_dir={cfg.tmp_dir}",
        f"--output_dir={cfg.train_dir}",
        f"--checkpoint_path={cfg.avg_dir}",
        f"--decode_hparams={cfg.decode_hparams}",
        "--eval_use_test_set",
    )
    timings["decode_s"] = time.time() - start
    translation = os.path.join(cfg.train_dir, "decode_test.txt")
    reference = os.path.join(cfg.train_dir, "decode_test.ref.txt")

    bleu_json = run_tool(
        "t2t-bleu",
        f"--translation={translation}",
        f"--reference={reference}",
        "--json",
        capture=True,
    )
    summary = {
        "problem": cfg.problem,
        "hparams_set": cfg.hparams_set,
        "hparams": cfg.hparams,
        "train_steps": cfg.train_steps,
        "timings": timings,
        "bleu": json.loads(bleu_json),
        "train_dir": cfg.train_dir,
        "checkpoint": cfg.avg_dir,
        "decodes": translation,
        "reference": reference,
    }
    path = os.path.join(cfg.work_dir, "results.json")
    write_text_atomically(path, json.dumps(summary, indent=2))
    return summary
