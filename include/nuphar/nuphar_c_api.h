/* nuphar_c_api.h: the C ABI of nuphar-cpp (C99), the only interface libnuphar.so exports.
 *
 * # Why a C ABI
 * Services written in C, Go or Rust (and C++ built with another compiler or standard library)
 * embed the runtime through it; no C++ exception, std:: type or allocator crosses it. C++ code
 * uses the same functions through the header-only wrapper nuphar_cxx_api.h.
 *
 * # Conventions
 * - Every function that can fail returns a NupharStatus*: NULL is success, anything else an
 *   error the caller frees with nuphar_status_release. Its message is the Diag text
 *   ("file: graph 'g': node 'n' (Op): reason"). On error no out-parameter is written.
 * - Handles are opaque; each *_create has a *_release (NULL is accepted and ignored).
 * - Strings are UTF-8, NUL-terminated. Strings and arrays returned through a handle stay
 *   valid as long as the handle.
 * - Thread safety: nuphar_session_run may be called on one session from many threads at once;
 *   create and release must not overlap with other calls on the same handle.
 *
 *   NupharSession* s = NULL;
 *   NupharStatus* st = nuphar_session_create("model.onnx", "nuphar_num_threads:2", &s);
 *   if (st) { fprintf(stderr, "%s\n", nuphar_status_message(st)); nuphar_status_release(st); }
 */
#ifndef NUPHAR_C_API_H_
#define NUPHAR_C_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define NUPHAR_API __attribute__((visibility("default")))
#else
#define NUPHAR_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define NUPHAR_C_API_VERSION 1
/* Output buffers (NupharOutputBuffer) hold shapes up to this rank; ONNX models rarely exceed 8. */
#define NUPHAR_MAX_RANK 16

typedef enum NupharCode {
  NUPHAR_OK = 0,
  NUPHAR_INVALID_ARGUMENT = 1, /* bad handle, feed, option or buffer: the caller's mistake */
  NUPHAR_FAIL = 2,             /* the model or a file could not be read, converted or run */
  NUPHAR_INCOMPLETE = 3,       /* symbolic shape inference left values unknown (the tool's exit 1/3) */
  NUPHAR_INTERNAL = 4          /* an exception or allocation failure caught at the boundary */
} NupharCode;

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum NupharDType {
  NUPHAR_UNDEFINED = 0, NUPHAR_FLOAT = 1, NUPHAR_UINT8 = 2, NUPHAR_INT8 = 3, NUPHAR_UINT16 = 4,
  NUPHAR_INT16 = 5, NUPHAR_INT32 = 6, NUPHAR_INT64 = 7, NUPHAR_STRING = 8, NUPHAR_BOOL = 9,
  NUPHAR_FLOAT16 = 10, NUPHAR_DOUBLE = 11, NUPHAR_UINT32 = 12, NUPHAR_UINT64 = 13,
  NUPHAR_COMPLEX64 = 14, NUPHAR_COMPLEX128 = 15, NUPHAR_BFLOAT16 = 16
} NupharDType;

typedef struct NupharStatus NupharStatus;
typedef struct NupharSession NupharSession;
typedef struct NupharValue NupharValue; /* an output tensor the library allocated */

/* ---- status and library info ---------------------------------------------------------- */

/* NUPHAR_OK for NULL. */
NUPHAR_API NupharCode nuphar_status_code(const NupharStatus* status);
/* "OK" for NULL; otherwise the Diag text, valid until the status is released. */
NUPHAR_API const char* nuphar_status_message(const NupharStatus* status);
NUPHAR_API void nuphar_status_release(NupharStatus* status);

/* "0.1.0" */
NUPHAR_API const char* nuphar_version(void);
/* Bytes per element; 0 for string and undefined. "float", "int64", ... for the name. */
NUPHAR_API size_t nuphar_dtype_size(NupharDType dtype);
NUPHAR_API const char* nuphar_dtype_name(NupharDType dtype);

/* ---- sessions -------------------------------------------------------------------------- */

/* `settings`: the runtime settings string ("nuphar_num_threads:2, ..."; README "Runtime
 * settings"); NULL or "" for the defaults. Every check that needs no data happens here. */
NUPHAR_API NupharStatus* nuphar_session_create(const char* model_path, const char* settings,
                                               NupharSession** out);
NUPHAR_API NupharStatus* nuphar_session_create_from_bytes(const void* model_data, size_t model_bytes,
                                                          const char* settings, NupharSession** out);
NUPHAR_API void nuphar_session_release(NupharSession* session);

/* A graph input or output as the model declares it. Pointers are owned by the session. */
typedef struct NupharValueInfo {
  const char* name;
  NupharDType dtype;
  int has_shape;                 /* 0: the model declares no shape (rank unknown) */
  size_t rank;
  const int64_t* dims;           /* rank entries; -1 where the dim is symbolic or unknown */
  const char* const* dim_params; /* rank entries; the symbol ("seq") where dims[i] == -1, else "" */
  int has_default;               /* inputs only: an initializer supplies it when not fed */
} NupharValueInfo;

NUPHAR_API size_t nuphar_session_input_count(const NupharSession* session);
NUPHAR_API size_t nuphar_session_output_count(const NupharSession* session);
/* NUPHAR_INVALID_ARGUMENT when index >= the count. */
NUPHAR_API NupharStatus* nuphar_session_input_info(const NupharSession* session, size_t index,
                                                   NupharValueInfo* info);
NUPHAR_API NupharStatus* nuphar_session_output_info(const NupharSession* session, size_t index,
                                                    NupharValueInfo* info);

/* An input: caller-owned memory, C order, read during the call only (the runtime copies it). */
typedef struct NupharTensorView {
  const char* name;
  NupharDType dtype;
  const int64_t* shape;
  size_t rank;
  const void* data;
  size_t data_bytes; /* must equal nuphar_dtype_size(dtype) * product(shape) */
} NupharTensorView;

/* Runs the model. `output_names` NULL (num_outputs = nuphar_session_output_count) means every
 * output in graph order. On success outputs[i] is a new NupharValue the caller releases. */
NUPHAR_API NupharStatus* nuphar_session_run(const NupharSession* session, const NupharTensorView* inputs,
                                            size_t num_inputs, const char* const* output_names,
                                            size_t num_outputs, NupharValue** outputs);

/* A caller-owned output buffer. `data`/`capacity_bytes` are read; the rest is written. */
typedef struct NupharOutputBuffer {
  void* data;
  size_t capacity_bytes;
  NupharDType dtype;              /* out */
  size_t rank;                    /* out */
  int64_t shape[NUPHAR_MAX_RANK]; /* out */
  size_t data_bytes;              /* out: bytes the output needs (also set when too small) */
} NupharOutputBuffer;

/* Like nuphar_session_run, but copies each output into the caller's buffer. A buffer that is
 * too small gives NUPHAR_INVALID_ARGUMENT naming the output, with every data_bytes set so the
 * caller can grow the buffers and run again. */
NUPHAR_API NupharStatus* nuphar_session_run_into(const NupharSession* session, const NupharTensorView* inputs,
                                                 size_t num_inputs, const char* const* output_names,
                                                 size_t num_outputs, NupharOutputBuffer* outputs);

NUPHAR_API NupharDType nuphar_value_dtype(const NupharValue* value);
NUPHAR_API size_t nuphar_value_rank(const NupharValue* value);
NUPHAR_API const int64_t* nuphar_value_shape(const NupharValue* value);
NUPHAR_API const void* nuphar_value_data(const NupharValue* value);
NUPHAR_API size_t nuphar_value_bytes(const NupharValue* value);
NUPHAR_API void nuphar_value_release(NupharValue* value);

/* ---- graph tools on files ---------------------------------------------------------------
 * The tools' long flags without the dashes, one per entry: "name=value", or "name" for a flag
 * ("name=0" / "name=false" turns it off). Unknown names are NUPHAR_INVALID_ARGUMENT. The output
 * is written through a temporary file, so it is untouched on error.
 *
 * model_editor:         keep_unconvertible_loop_ops, skip_shape_inference, remain_inputs=A,B,
 *                       zero_state_as_input, verbose
 * symbolic_shape_infer: auto_merge, int_max=N, guess_output_rank, verbose=N, strict,
 *                       keep_value_info, save_as_external_data, external_data_location=F,
 *                       external_data_size_threshold=N, save_partial=F
 *                       (`output` may be NULL: infer and check only)
 * model_quantizer:      only_for_scan, share_input_quantization, default_qcfg=PRESET,
 *                       qcfg_json=F, export_qcfg_json, guard_zero_delta
 */
NUPHAR_API NupharStatus* nuphar_model_editor(const char* input, const char* output, const char* mode,
                                             const char* const* options, size_t num_options);
NUPHAR_API NupharStatus* nuphar_symbolic_shape_infer(const char* input, const char* output,
                                                     const char* const* options, size_t num_options);
NUPHAR_API NupharStatus* nuphar_model_quantizer(const char* input, const char* output,
                                                const char* const* options, size_t num_options);

#ifdef __cplusplus
}
#endif

#endif /* NUPHAR_C_API_H_ */
