/* The C API from C99 (compiled -std=c99 -Wall -Wextra -Werror -pedantic): create, describe, run,
 * release. c_api_test.cc calls it, so the header is checked as C in every build. */
#include "c_api_smoke.h"

#include <stdio.h>
#include <string.h>

#include "nuphar/nuphar_c_api.h"

int nuphar_c_smoke(const char* model_path, char* message, size_t message_size) {
  NupharSession* session = NULL;
  NupharStatus* status = nuphar_session_create(model_path, "", &session);
  size_t i;
  float input[512];
  float state[2 * 1 * 128];
  int64_t sr = 16000;
  int64_t input_shape[2] = {1, 512};
  int64_t state_shape[3] = {2, 1, 128};
  NupharTensorView views[3];
  NupharValue* outputs[2] = {NULL, NULL};
  int result = 0;

  if (status) {
    snprintf(message, message_size, "%s", nuphar_status_message(status));
    nuphar_status_release(status);
    return 1;
  }
  for (i = 0; i < 512; ++i) input[i] = (float)(i % 7) * 0.01f;
  memset(state, 0, sizeof state);
  views[0].name = "input"; views[0].dtype = NUPHAR_FLOAT; views[0].shape = input_shape; views[0].rank = 2;
  views[0].data = input; views[0].data_bytes = sizeof input;
  views[1].name = "state"; views[1].dtype = NUPHAR_FLOAT; views[1].shape = state_shape; views[1].rank = 3;
  views[1].data = state; views[1].data_bytes = sizeof state;
  views[2].name = "sr"; views[2].dtype = NUPHAR_INT64; views[2].shape = NULL; views[2].rank = 0;
  views[2].data = &sr; views[2].data_bytes = sizeof sr;
  status = nuphar_session_run(session, views, 3, NULL, nuphar_session_output_count(session), outputs);
  if (status) {
    snprintf(message, message_size, "%s", nuphar_status_message(status));
    nuphar_status_release(status);
    result = 2;
  } else {
    snprintf(message, message_size, "output rank %zu, %s, %zu bytes", nuphar_value_rank(outputs[0]),
             nuphar_dtype_name(nuphar_value_dtype(outputs[0])), nuphar_value_bytes(outputs[0]));
  }
  nuphar_value_release(outputs[0]);
  nuphar_value_release(outputs[1]);
  nuphar_session_release(session);
  return result;
}
