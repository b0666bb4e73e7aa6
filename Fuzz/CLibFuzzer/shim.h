// libFuzzer's entry for programs that have their own main (LLVM >= 13). Linked only into
// fuzz builds (`-sanitize=fuzzer`); declared here, not linked, so that plain builds of the
// fuzz targets (corpus replay) need nothing extra.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
