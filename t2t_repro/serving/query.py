"""Sends source lines to a TensorFlow Serving model server that serves ``t2t-exporter``'s
SavedModel, over gRPC (``PredictionService.Predict``) or REST (``POST
/v1/models/<name>:predict``), and returns the decoder's hypotheses per line.

As T2T's ``tensor2tensor/serving/serving_utils.py`` (``make_grpc_request_fn``, ``predict``),
but the export tokenises in its graph, so raw text is sent and text comes back: no problem,
vocabulary or data_dir on the client. Which protocol: a server given as ``http://host:port``
(TF Serving's ``--rest_api_port``) is REST, ``host:port`` (its ``--port``) gRPC.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.decoding.line_decoder import Hypothesis
from t2t_repro.errors import UserError
from t2t_repro.serving.nbest import NBEST_SIGNATURE, as_text, rows_to_hypotheses

DEFAULT_SIGNATURE = "serving_default"
# sources [B] -> (translations, scores): [B] for serving_default, [B, k] for nbest.
RequestFn = Callable[[list[str]], tuple[list, list]]


class ServingError(UserError):
    """The model server could not be reached or refused the request."""


def is_rest(server: str) -> bool:
    return server.startswith(("http://", "https://"))


def make_request_fn(
    server: str, servable_name: str, signature_name: str, timeout_secs: float
) -> RequestFn:
    """A function that sends one batch of sources to ``server`` and returns its outputs."""
    maker = make_rest_request_fn if is_rest(server) else make_grpc_request_fn
    return maker(server, servable_name, signature_name, timeout_secs)


def make_grpc_request_fn(
    server: str, servable_name: str, signature_name: str, timeout_secs: float
) -> RequestFn:
    """gRPC, as T2T's ``make_grpc_request_fn`` (an insecure channel to ``host:port``)."""
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    stub = prediction_service_pb2_grpc.PredictionServiceStub(grpc.insecure_channel(server))

    def request_fn(sources: list[str]) -> tuple[list, list]:
        request = predict_pb2.PredictRequest()
        request.model_spec.name = servable_name
        request.model_spec.signature_name = signature_name
        encoded = [s.encode("utf-8") for s in sources]
        request.inputs["sources"].CopyFrom(tf.make_tensor_proto(encoded, shape=[len(sources)]))
        try:
            response = stub.Predict(request, timeout_secs)
        except grpc.RpcError as e:
            raise ServingError(
                f"gRPC request to {server} (model {servable_name!r}, signature "
                f"{signature_name!r}) failed: {e.code().name}: {e.details()}"
            ) from None
        outputs = response.outputs
        return (
            tf.make_ndarray(outputs["translations"]).tolist(),
            tf.make_ndarray(outputs["scores"]).tolist(),
        )

    return request_fn


def make_rest_request_fn(
    server: str, servable_name: str, signature_name: str, timeout_secs: float
) -> RequestFn:
    """REST: TF Serving's columnar ("inputs"/"outputs") predict API."""
    url = f"{server.rstrip('/')}/v1/models/{servable_name}:predict"

    def request_fn(sources: list[str]) -> tuple[list, list]:
        body = json.dumps({"signature_name": signature_name, "inputs": {"sources": sources}})
        request = urllib.request.Request(
            url, body.encode("utf-8"), {"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_secs) as response:
                outputs = json.load(response)["outputs"]
        except urllib.error.HTTPError as e:
            raise ServingError(f"POST {url} failed: HTTP {e.code}: {_rest_error(e)}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ServingError(f"POST {url} failed: {getattr(e, 'reason', e)}") from None
        except (ValueError, KeyError, TypeError):
            raise ServingError(f"POST {url}: the answer is not TF Serving's JSON.") from None
        return _unb64(outputs["translations"]), outputs["scores"]

    return request_fn


def _rest_error(error: urllib.error.HTTPError) -> str:
    """TF Serving's ``{"error": "..."}`` body, or the HTTP reason."""
    try:
        return json.loads(error.read().decode("utf-8", "replace"))["error"]
    except (ValueError, KeyError, TypeError):
        return str(error.reason)


def _unb64(value):
    """TF Serving writes strings that are not UTF-8 as ``{"b64": ...}``."""
    if isinstance(value, list):
        return [_unb64(v) for v in value]
    if isinstance(value, dict) and "b64" in value:
        return base64.b64decode(value["b64"])
    return value


def query(sources: Sequence[str | bytes], request_fn: RequestFn, nbest: bool) -> list:
    """Hypotheses (best first) for each source line, as ``t2t-decoder`` gives them:
    one per line, or with ``nbest`` (the ``nbest`` signature) every beam the search kept."""
    lines = [normalize_source_line(s) for s in sources]
    if not lines:
        return []
    texts, scores = request_fn(lines)
    if len(texts) != len(lines) or len(scores) != len(lines):
        raise ServingError(f"the server answered {len(texts)} results for {len(lines)} lines.")
    # serving_default answers every beam too when the export has return_beams (T2T's)
    if nbest or (texts and all(isinstance(row, list) for row in texts)):
        if not all(isinstance(row, list) for row in texts):
            raise ServingError(
                f"signature {NBEST_SIGNATURE!r} answered one result per line; is the server "
                "serving an older export without it?"
            )
        return rows_to_hypotheses(texts, scores)
    return [[Hypothesis(as_text(t), float(s))] for t, s in zip(texts, scores, strict=True)]
