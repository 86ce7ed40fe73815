/* run_module.c - run a compiled strata module from C (strata/runtime_c.h).
 *
 *   run_module MODULE [--threads N] [--inputs DIR] [--outputs DIR]
 *
 * Prints the module's inputs and outputs, binds each input from
 * DIR/<name>.bin (raw row-major bytes of the declared type and shape; without
 * --inputs every input is zeros), runs the module once and prints the first
 * values of each output; with --outputs, also writes DIR/<name>.bin.
 * Dynamic input dimensions are not handled here: compile with
 * --input-shape first. Every error is the library's one-line message. */

#include <strata/runtime_c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reports a failed call and exits; the library's message says what failed. */
static void check(strata_status status, const char *what) {
  if (status != STRATA_OK) {
    fprintf(stderr, "run_module: %s: %s: %s\n", what,
            strata_status_name(status), strata_last_error());
    exit(1);
  }
}

static char *pathJoin(const char *dir, const char *name, const char *ext) {
  size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
  char *path = malloc(n);
  if (!path) {
    fprintf(stderr, "run_module: out of memory\n");
    exit(1);
  }
  snprintf(path, n, "%s/%s%s", dir, name, ext);
  return path;
}

/* Reads exactly `size` bytes of `path` into a new buffer. */
static void *readExactly(const char *path, size_t size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "run_module: cannot open %s\n", path);
    exit(1);
  }
  void *data = malloc(size ? size : 1);
  size_t got = data ? fread(data, 1, size, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (!data || got != size || extra) {
    fprintf(stderr, "run_module: %s does not hold exactly %zu bytes\n", path,
            size);
    exit(1);
  }
  return data;
}

static void printShape(const strata_tensor_info *info) {
  printf("%s[", strata_dtype_name(info->dtype));
  for (size_t d = 0; d < info->rank; ++d) {
    if (info->shape[d] < 0)
      printf(d ? ", ?" : "?");
    else
      printf(d ? ", %lld" : "%lld", (long long)info->shape[d]);
  }
  printf("]");
}

int main(int argc, char **argv) {
  const char *modulePath = NULL, *inputDir = NULL, *outputDir = NULL;
  unsigned threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--inputs") && i + 1 < argc)
      inputDir = argv[++i];
    else if (!strcmp(argv[i], "--outputs") && i + 1 < argc)
      outputDir = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!modulePath && argv[i][0] != '-')
      modulePath = argv[i];
    else {
      fprintf(stderr, "usage: run_module MODULE [--threads N] [--inputs DIR] "
                      "[--outputs DIR]\n");
      return 2;
    }
  }
  if (!modulePath) {
    fprintf(stderr, "usage: run_module MODULE [--threads N] [--inputs DIR] "
                    "[--outputs DIR]\n");
    return 2;
  }

  printf("strata runtime %s (C API %d)\n", strata_version(),
         STRATA_C_API_VERSION);
  strata_module *module = NULL;
  check(strata_module_load(modulePath, &module), "loading the module");
  printf("module %s, target %s\n", modulePath, strata_module_target(module));

  strata_session_options *options = NULL;
  check(strata_session_options_create(&options), "creating options");
  check(strata_session_options_set_threads(options, threads), "threads");
  strata_session *session = NULL;
  check(strata_session_create(module, options, &session), "creating a session");
  strata_session_options_free(options);

  for (size_t i = 0; i < strata_module_num_inputs(module); ++i) {
    strata_tensor_info in;
    check(strata_module_input(module, i, &in), "describing an input");
    printf("input  %s: ", in.name);
    printShape(&in);
    printf("\n");
    size_t count = 1;
    for (size_t d = 0; d < in.rank; ++d)
      count *= in.shape[d] < 0 ? 0 : (size_t)in.shape[d];
    size_t bytes = count * strata_dtype_size(in.dtype);
    void *data = NULL;
    if (inputDir) {
      char *path = pathJoin(inputDir, in.name, ".bin");
      data = readExactly(path, bytes);
      free(path);
    } else {
      data = calloc(bytes ? bytes : 1, 1);
    }
    check(strata_session_set_input(session, in.name, in.dtype, in.shape,
                                   in.rank, data, bytes),
          "binding an input");
    free(data);
  }

  check(strata_session_run(session), "running");

  for (size_t i = 0; i < strata_module_num_outputs(module); ++i) {
    strata_tensor_info declared, out;
    check(strata_module_output(module, i, &declared), "describing an output");
    const void *data = NULL;
    size_t bytes = 0;
    check(strata_session_output(session, declared.name, &out, &data, &bytes),
          "reading an output");
    printf("output %s: ", out.name);
    printShape(&out);
    if (out.dtype == STRATA_F32) {
      const float *values = data;
      size_t count = bytes / sizeof(float);
      printf(" =");
      for (size_t k = 0; k < count && k < 4; ++k)
        printf(" %g", values[k]);
      if (count > 4)
        printf(" ...");
    }
    printf("\n");
    if (outputDir) {
      char *path = pathJoin(outputDir, out.name, ".bin");
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "run_module: cannot write %s\n", path);
        return 1;
      }
      free(path);
    }
  }
  strata_session_free(session);
  strata_module_free(module);
  return 0;
}
