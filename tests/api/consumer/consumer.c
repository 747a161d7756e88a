/* An application of the installed package, in C99 (built by install_test.sh with
 * cc -std=c99 -Wall -Werror $(pkg-config --cflags --libs nuphar)).
 *
 * Usage: consumer_c MODEL IN_DIR OUT_DIR
 * IN_DIR/inputs.txt lists "name dtype rank dims..." per input, the data in IN_DIR/<name>.bin;
 * every output is written to OUT_DIR/<name>.bin (raw, C order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nuphar/nuphar_c_api.h>

#define MAX_INPUTS 16

static int fail(NupharStatus* status) {
  fprintf(stderr, "consumer_c: %s\n", nuphar_status_message(status));
  nuphar_status_release(status);
  return 1;
}

static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  void* data;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = malloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  NupharSession* session = NULL;
  NupharStatus* status;
  NupharTensorView views[MAX_INPUTS];
  char names[MAX_INPUTS][256];
  int64_t shapes[MAX_INPUTS][NUPHAR_MAX_RANK];
  void* buffers[MAX_INPUTS];
  NupharValue** outputs;
  size_t num_inputs = 0, num_outputs, i, r;
  char path[4096];
  FILE* list;
  int dtype, rank;

  if (argc != 4) {
    fprintf(stderr, "usage: consumer_c MODEL IN_DIR OUT_DIR\n");
    return 2;
  }
  status = nuphar_session_create(argv[1], "", &session);
  if (status) return fail(status);

  snprintf(path, sizeof path, "%s/inputs.txt", argv[2]);
  list = fopen(path, "r");
  if (!list) return 1;
  while (num_inputs < MAX_INPUTS && fscanf(list, "%255s %d %d", names[num_inputs], &dtype, &rank) == 3) {
    NupharTensorView* v = &views[num_inputs];
    for (r = 0; r < (size_t)rank; ++r) {
      long long d;
      if (fscanf(list, "%lld", &d) != 1) return 1;
      shapes[num_inputs][r] = (int64_t)d;
    }
    snprintf(path, sizeof path, "%s/%s.bin", argv[2], names[num_inputs]);
    buffers[num_inputs] = read_file(path, &v->data_bytes);
    if (!buffers[num_inputs]) return 1;
    v->name = names[num_inputs];
    v->dtype = (NupharDType)dtype;
    v->shape = shapes[num_inputs];
    v->rank = (size_t)rank;
    v->data = buffers[num_inputs];
    ++num_inputs;
  }
  fclose(list);

  num_outputs = nuphar_session_output_count(session);
  outputs = calloc(num_outputs, sizeof *outputs);
  status = nuphar_session_run(session, views, num_inputs, NULL, num_outputs, outputs);
  if (status) return fail(status);
  for (i = 0; i < num_outputs; ++i) {
    NupharValueInfo info;
    FILE* out;
    status = nuphar_session_output_info(session, i, &info);
    if (status) return fail(status);
    snprintf(path, sizeof path, "%s/%s.bin", argv[3], info.name);
    out = fopen(path, "wb");
    if (!out) return 1;
    fwrite(nuphar_value_data(outputs[i]), 1, nuphar_value_bytes(outputs[i]), out);
    fclose(out);
    nuphar_value_release(outputs[i]);
  }
  free(outputs);
  for (i = 0; i < num_inputs; ++i) free(buffers[i]);
  nuphar_session_release(session);
  printf("consumer_c: %s ran, %zu outputs\n", argv[1], num_outputs);
  return 0;
}
