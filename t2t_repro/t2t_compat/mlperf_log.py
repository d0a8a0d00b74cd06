"""``tensor2tensor.utils.mlperf_log`` for a usr_dir: T2T's MLPerf compliance logging, which T2T
itself runs only when the hparams passed say ``mlperf_mode`` (``utils/mlperf_log.py``,
``transformer_print``). T2T's own ``Text2TextProblem.generate_encoded_samples`` calls
``transformer_print(key=PREPROC_TOKENIZE_TRAINING)`` without hparams, a no-op there, and
usr_dirs that copy it keep the call: here it is the same no-op. Asking for MLPerf logging
(hparams with ``mlperf_mode`` true) is refused in one line. The log keys are T2T's
(``mlperf_tags``, which T2T's module star-imports).
"""

from __future__ import annotations

import inspect
import logging
import re
from typing import Any

from t2t_repro.t2t_compat import mlperf_tags, refusals
from t2t_repro.t2t_compat.refusals import T2TApiError, refusal_message

globals().update({name: getattr(mlperf_tags, name) for name in mlperf_tags.__all__})

ROOT_DIR_GNMT = None
ROOT_DIR_RESNET = None
ROOT_DIR_TRANSFORMER = None
PATTERN = re.compile("[a-zA-Z0-9]+")  # T2T's pattern of a log key
LOGGER = logging.getLogger("mlperf_compliance")  # T2T's logger name; nothing is logged to it
TRANSFORMER_TAG_SET = set(mlperf_tags.TRANSFORMER_TAGS)


def get_mode(hparams: Any) -> bool:
    """Whether ``hparams`` ask for MLPerf logging (T2T: ``mlperf_mode`` set and true)."""
    return bool(getattr(hparams, "mlperf_mode", False))  # a T2T-only hparam: t2t_hparams.py


def get_caller(stack_index: int = 2, root_dir: str | None = None) -> str:
    """``file:line`` of the caller ``stack_index`` frames up, as T2T names a call site."""
    frame = inspect.stack()[stack_index]
    path = frame.filename if root_dir is None else frame.filename.removeprefix(root_dir + "/")
    return f"{path}:{frame.lineno}"


def transformer_print(
    key: str,
    value: Any = None,
    stack_offset: int = 2,
    deferred: bool = False,
    hparams: Any = None,
) -> None:
    """T2T's no-op without hparams or with ``mlperf_mode`` off; MLPerf mode is refused."""
    if not hparams or not get_mode(hparams):
        return None
    raise T2TApiError(
        refusal_message(
            "tensor2tensor.utils.mlperf_log.transformer_print with mlperf_mode",
            "MLPerf compliance logging is not supported here; leave mlperf_mode False",
        )
    )


# T2T's names this project does not provide: one line when read (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.utils.mlperf_log")
