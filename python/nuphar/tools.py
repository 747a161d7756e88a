"""The graph tools on files, with the command-line tools' options as keyword arguments.

    nuphar.tools.model_editor("lstm.onnx", "scan.onnx", mode="to_scan")
    nuphar.tools.symbolic_shape_infer("scan.onnx", "scan_si.onnx", auto_merge=True)
    nuphar.tools.model_quantizer("scan_si.onnx", "int8.onnx", only_for_scan=True)

Each writes its output through a temporary file (untouched on error) and raises NupharError
(InvalidArgument for a bad option, IncompleteError when shapes stay unknown) with the Diag text.
"""
from . import _nuphar


def _options(**kwargs):
    # Keyword arguments -> the C API's "name=value" entries: True is a flag, False/None are left
    # out, lists join with commas (remain_inputs).
    out = []
    for name, value in kwargs.items():
        if value is None or value is False:
            continue
        if value is True:
            out.append(name)
        elif isinstance(value, (list, tuple)):
            out.append("%s=%s" % (name, ",".join(str(v) for v in value)))
        else:
            out.append("%s=%s" % (name, value))
    return out


def model_editor(input, output, mode, keep_unconvertible_loop_ops=False, skip_shape_inference=False,
                 remain_inputs=None, zero_state_as_input=False, verbose=False):
    """model_editor --input --output --mode (to_scan, loop_to_scan, opt_inproj, gemm_to_matmul,
    remove_initializers_from_inputs); shape inference with auto_merge afterwards unless skipped."""
    _nuphar.model_editor(str(input), str(output), mode, _options(
        keep_unconvertible_loop_ops=keep_unconvertible_loop_ops, skip_shape_inference=skip_shape_inference,
        remain_inputs=remain_inputs, zero_state_as_input=zero_state_as_input, verbose=verbose))


def symbolic_shape_infer(input, output=None, auto_merge=False, int_max=None, guess_output_rank=False, verbose=None,
                         save_as_external_data=False, all_tensors_to_one_file=False, external_data_location=None,
                         external_data_size_threshold=None, save_partial=None, strict=False, keep_value_info=False):
    """symbolic_shape_infer; output None only checks that inference completes."""
    _nuphar.symbolic_shape_infer(str(input), "" if output is None else str(output), _options(
        auto_merge=auto_merge, int_max=int_max, guess_output_rank=guess_output_rank, verbose=verbose,
        save_as_external_data=save_as_external_data, all_tensors_to_one_file=all_tensors_to_one_file,
        external_data_location=external_data_location, external_data_size_threshold=external_data_size_threshold,
        save_partial=save_partial, strict=strict, keep_value_info=keep_value_info))


def model_quantizer(input, output, only_for_scan=False, share_input_quantization=False, default_qcfg=None,
                    qcfg_json=None, export_qcfg_json=False, guard_zero_delta=False):
    """model_quantizer: MatMul/Gemm -> MatMulInteger."""
    _nuphar.model_quantizer(str(input), str(output), _options(
        only_for_scan=only_for_scan, share_input_quantization=share_input_quantization, default_qcfg=default_qcfg,
        qcfg_json=qcfg_json, export_qcfg_json=export_qcfg_json, guard_zero_delta=guard_zero_delta))
