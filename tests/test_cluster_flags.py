"""T2T's cluster flags (t2t_repro/training/cluster/cluster_flags.py): accepted when they agree with
what the run does, else one line naming the TF_CONFIG to set, before TensorFlow starts."""

import json
import subprocess
import sys

import pytest

from t2t_repro.errors import UsageError
from t2t_repro.training.cluster.cluster_flags import T2T_DEFAULTS, check_cluster_flags
from tests.tools import ROOT

TWO_WORKERS = {"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}}
CHIEF_AND_WORKER = {
    "cluster": {"chief": ["a:1"], "worker": ["b:2"]},
    "task": {"type": "worker", "index": 0},
}


def flags(**given):
    return {**T2T_DEFAULTS, "worker_replicas": None, "worker_id": None, **given}


def env(config=None):
    return {"TF_CONFIG": json.dumps(config)} if config else {}


@pytest.mark.parametrize(
    "given,config",
    [
        ({}, None),  # T2T's defaults: one host
        ({"worker_replicas": 1, "worker_id": 0, "sync": True}, None),
        ({"worker_replicas": 2, "worker_id": 1}, TWO_WORKERS),  # as TF_CONFIG says
        ({"worker_id": 1}, CHIEF_AND_WORKER),  # the worker after the chief is worker 1
        ({}, TWO_WORKERS),
    ],
)
def test_accepted(given, config):
    check_cluster_flags(flags(**given), env(config))


@pytest.mark.parametrize(
    "given,config,says",
    [
        (
            {"worker_replicas": 4, "worker_id": 2},
            None,
            r'"host3:2222"\]}, "task": {"type": '
            r'"worker", "index": 2}}\' on host 2',
        ),
        ({"master": "grpc://10.0.0.1:5000"}, None, "no TF1 master; set TF_CONFIG="),
        ({"ps_replicas": 2, "ps_gpu": 8, "sync": True}, None, "no parameter servers"),
        ({"schedule": "run_std_server"}, None, "--schedule=train and its TF_CONFIG"),
        ({"worker_job": "/job:worker"}, None, "job names come from TF_CONFIG"),
        ({"gpu_order": "1 3 2 4"}, None, "CUDA_VISIBLE_DEVICES=1,3,2,4"),
        ({"use_tpu": True}, None, "TPUs are not supported"),
        ({"worker_id": 0}, TWO_WORKERS, r"disagree with TF_CONFIG \(worker 1 of 2\)"),
        ({"worker_replicas": 3}, CHIEF_AND_WORKER, r"disagree with TF_CONFIG \(worker 1 of 2\)"),
    ],
)
def test_refused_with_the_tf_config_equivalent(given, config, says):
    with pytest.raises(UsageError, match=says) as e:
        check_cluster_flags(flags(**given), env(config))
    assert "\n" not in str(e.value)


def test_the_trainer_refuses_before_tensorflow_starts():
    code = (
        "import sys\n"
        "from t2t_repro.commands import trainer\n"
        "rc = trainer.main(['--problem=p', '--worker_replicas=2', '--worker_id=1', "
        "'--master=grpc://h:1', '--schedule=train', '--sync'])\n"
        "print('tensorflow' in sys.modules)\n"
        "sys.exit(rc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 1 and out.stdout.strip() == "False"
    assert out.stderr.startswith("t2t-trainer: error: --master=grpc://h:1: there is no TF1")
    assert out.stderr.count("\n") == 1
