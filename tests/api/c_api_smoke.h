/* A C99 caller of the C API (c_api_smoke.c), called from c_api_test.cc. */
#ifndef NUPHAR_TESTS_API_C_API_SMOKE_H_
#define NUPHAR_TESTS_API_C_API_SMOKE_H_
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Runs silero_vad_v5 on fixed inputs; 0 on success, the status text (or a summary) in message. */
int nuphar_c_smoke(const char* model_path, char* message, size_t message_size);
#ifdef __cplusplus
}
#endif
#endif
