"""A stand-in for TensorFlow Serving's model server, for tests: TensorFlow Serving's binary is
not installable from the package registries here.

It serves one SavedModel under one name on loopback, over gRPC (``PredictionService.Predict``,
from tensorflow-serving-api's own protos and stubs) and REST (``POST
/v1/models/<name>[/versions/<n>]:predict``, the columnar ``inputs`` request format, which
t2t-query-server sends), answering as TF Serving does: the signature's outputs by name, strings
as JSON strings (``{"b64": ...}`` when not UTF-8), errors as ``{"error": "..."}`` (REST) or a
gRPC status. Only Predict: no model status, metadata, classify or regress.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

DEFAULT_SIGNATURE = "serving_default"
PREDICT_PATH = re.compile(r"^/v1/models/([^/:]+)(?:/versions/\d+)?:predict$")


class PredictError(Exception):
    def __init__(self, status: grpc.StatusCode, http_code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.http_code = status, http_code


class StandInModelServer:
    """``with StandInModelServer(dir, name) as s:`` serves on ``s.grpc_address`` (host:port)
    and ``s.rest_address`` (http://host:port) until the block ends."""

    def __init__(self, saved_model_dir: str, model_name: str) -> None:
        self.loaded = tf.saved_model.load(saved_model_dir)
        self.model_name = model_name

    def predict(self, model_name: str, signature_name: str, inputs: dict) -> dict:
        """numpy inputs by name -> numpy outputs by name, or ``PredictError``."""
        if model_name != self.model_name:
            raise PredictError(
                grpc.StatusCode.NOT_FOUND, 404, f"Servable not found for request: {model_name}"
            )
        name = signature_name or DEFAULT_SIGNATURE
        if name not in self.loaded.signatures:
            raise PredictError(
                grpc.StatusCode.INVALID_ARGUMENT,
                400,
                f'Serving signature name: "{name}" not found in signature def',
            )
        fn = self.loaded.signatures[name]
        try:
            outputs = fn(**{k: tf.constant(v) for k, v in inputs.items()})
        except (TypeError, ValueError, tf.errors.OpError) as e:
            raise PredictError(grpc.StatusCode.INVALID_ARGUMENT, 400, str(e)) from None
        return {k: v.numpy() for k, v in outputs.items()}

    def __enter__(self) -> StandInModelServer:
        self.grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(
            _Servicer(self), self.grpc_server
        )
        self.grpc_address = f"127.0.0.1:{self.grpc_server.add_insecure_port('127.0.0.1:0')}"
        self.grpc_server.start()
        self.http_server = ThreadingHTTPServer(("127.0.0.1", 0), _rest_handler(self))
        self.rest_address = f"http://127.0.0.1:{self.http_server.server_address[1]}"
        self.http_thread = threading.Thread(target=self.http_server.serve_forever, daemon=True)
        self.http_thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.http_server.shutdown()
        self.http_server.server_close()
        self.http_thread.join()
        self.grpc_server.stop(grace=None).wait()


class _Servicer(prediction_service_pb2_grpc.PredictionServiceServicer):
    def __init__(self, server: StandInModelServer) -> None:
        self.server = server

    def Predict(self, request, context):  # noqa: N802 (the gRPC method's name)
        inputs = {k: tf.make_ndarray(v) for k, v in request.inputs.items()}
        try:
            outputs = self.server.predict(
                request.model_spec.name, request.model_spec.signature_name, inputs
            )
        except PredictError as e:
            context.abort(e.status, str(e))
        response = predict_pb2.PredictResponse()
        response.model_spec.name = request.model_spec.name
        response.model_spec.signature_name = request.model_spec.signature_name
        for name, value in outputs.items():
            response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
        return response


def _to_json(value):
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value


def _from_json(value):
    if isinstance(value, dict) and "b64" in value:
        return base64.b64decode(value["b64"])
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def _rest_handler(server: StandInModelServer):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            match = PREDICT_PATH.match(self.path)
            if not match:
                return self.answer(404, {"error": f"Malformed request: POST {self.path}"})
            try:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                inputs = {k: np.array(_from_json(v)) for k, v in body["inputs"].items()}
                outputs = server.predict(match.group(1), body.get("signature_name", ""), inputs)
            except PredictError as e:
                return self.answer(e.http_code, {"error": str(e)})
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                return self.answer(400, {"error": f"JSON Parse error: {e}"})
            return self.answer(
                200, {"outputs": {k: _to_json(v.tolist()) for k, v in outputs.items()}}
            )

        def answer(self, code: int, payload: dict) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:  # quiet
            pass

    return Handler
