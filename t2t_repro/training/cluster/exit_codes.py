"""How a ``t2t-trainer`` run ends, as the exit code a cluster manager acts on.

Why: Kubernetes (``restartPolicy: OnFailure``), Vertex AI and Slurm decide from the exit code
alone whether a job is done or should run again. A run stopped by a preemption notice
(SIGTERM) after saving has not finished, so it must not exit 0; and a worker whose peer died
must exit non-zero with a line a person can act on, not a gRPC traceback.

- 0: training reached ``--train_steps`` (or ``--max_train_seconds``, or early stopping): done.
- ``--signal_exit_code`` (default 143, what TensorFlow's own preemption handler exits with on
  GCE, ``failure_handling_util.py``, and what a shell reports for a process ended by SIGTERM):
  SIGTERM/SIGINT arrived, every worker saved the same checkpoint; rerun to resume.
- 1: an error the message names (bad flags or data, workers that disagree at start, a peer
  that failed or stopped answering: ``peer_failure``).

The command runs the trainer and maps its outcome to these (``commands/trainer.py``,
``train``), so this module imports nothing of the trainer.
"""

from __future__ import annotations

import re

import tensorflow as tf

from t2t_repro.training.cluster.tf_config import Cluster
from t2t_repro.training.run_setup import TrainingError

DEFAULT_SIGNAL_EXIT_CODE = 143
# What a collective raises when a peer died (UnavailableError, CancelledError, AbortedError:
# socket closed, task failed, heartbeat missed) or stopped answering (DeadlineExceededError:
# --collective_timeout_secs).
PEER_ERRORS = (
    tf.errors.UnavailableError,
    tf.errors.DeadlineExceededError,
    tf.errors.CancelledError,
    tf.errors.AbortedError,
)
_TASK = re.compile(r"/job:(chief|worker)/replica:\d+/task:(\d+)")


class PeerFailure(TrainingError):
    """Another worker of the cluster failed or stopped answering."""


def check_exit_flags(cfg) -> None:
    if not 1 <= cfg.signal_exit_code <= 255:
        raise TrainingError(f"--signal_exit_code={cfg.signal_exit_code}: use 1 to 255.")
    if cfg.collective_timeout_secs < 0:
        raise TrainingError(f"--collective_timeout_secs={cfg.collective_timeout_secs} < 0.")


def peer_failure(
    error: tf.errors.OpError, cluster: Cluster, timeout: float, latest: str | None
) -> PeerFailure:
    """One line: which peer (when TensorFlow's message names it), what happened, what to do."""
    text = str(error)
    me = (cluster.task, cluster.task_id)
    peers = {(job, int(i)) for job, i in _TASK.findall(text)} - {me}
    who = ", ".join(f"{job} {i}" for job, i in sorted(peers)) or "another worker"
    if isinstance(error, tf.errors.DeadlineExceededError):
        what = (
            f"did not answer for {timeout:g} s (--collective_timeout_secs): it is stuck (a "
            "hung file-system read?) or far slower"
        )
    else:
        what = "failed or was stopped (its own log says why)"
    cause = _cause(text) or type(error).__name__
    return PeerFailure(
        f"this is {cluster.task} {me[1]}; {who} {what}. Restart the whole cluster (every "
        f"process, same command); {resume_text(latest)}. [TensorFlow: {cause}]"
    )


def resume_text(latest: str | None) -> str:
    return f"it resumes from {latest}" if latest else "it starts from step 0 (no checkpoint yet)"


def _cause(text: str) -> str:
    """TensorFlow's own reason in its multi-line message (not the traceback of the op)."""
    skip = ("Graph execution error", "Detected at node", "File ", "The error could be")
    lines = (line.strip() for line in text.splitlines())
    return next((line[:200] for line in lines if line and not line.startswith(skip)), "")
