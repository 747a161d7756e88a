"""nuphar: nuphar-cpp's runtime and graph tools from Python.

    import nuphar
    sess = nuphar.InferenceSession("model.onnx")          # or model bytes; settings="nuphar_num_threads:2"
    outputs = sess.run(None, {"x": x})                     # onnxruntime's signature

`InferenceSession` follows onnxruntime.InferenceSession, so code switches by changing the import.
Errors raise NupharError (a RuntimeError) whose message is the Diag text (file, graph, node, op,
reason); InvalidArgument and IncompleteError are its subclasses. The graph tools are in
nuphar.tools.
"""
from ._nuphar import IncompleteError, InvalidArgument, NupharError, __version__
from . import _nuphar
from . import tools

__all__ = ["InferenceSession", "NodeArg", "NupharError", "InvalidArgument", "IncompleteError", "tools",
           "__version__"]


class NodeArg:
    """A graph input or output: .name, .type ("tensor(float)"), .shape (ints, symbol names, None)."""

    def __init__(self, name, type, shape, has_default=False):
        self.name = name
        self.type = type
        self.shape = shape
        self.has_default = has_default

    def __repr__(self):
        return "NodeArg(name='%s', type='%s', shape=%s)" % (self.name, self.type, self.shape)


class InferenceSession:
    """Loads a model (a path, os.PathLike or bytes) and runs it.

    settings is the runtime settings string ("nuphar_num_threads:2, ..."). run() releases the GIL,
    and one session may be run from several threads at once.
    """

    def __init__(self, path_or_bytes, settings="", sess_options=None, providers=None, **kwargs):
        # sess_options/providers are accepted (and ignored) so onnxruntime code runs unchanged.
        self._model_path = path_or_bytes if not isinstance(path_or_bytes, (bytes, bytearray)) else None
        self._sess = _nuphar.Session(path_or_bytes, settings)
        self._inputs = [NodeArg(*i) for i in self._sess.inputs()]
        self._outputs = [NodeArg(*o) for o in self._sess.outputs()]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        """output_names: list of names, or None/[] for every output in graph order.
        input_feed: {name: numpy array}. Returns a list of numpy arrays."""
        if not isinstance(input_feed, dict):
            raise InvalidArgument("input_feed must be a dict {name: numpy array}, not %s" % type(input_feed).__name__)
        return self._sess.run(list(output_names) if output_names else None, input_feed)
