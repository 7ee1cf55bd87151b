/* Calls the digits MLP compiled ahead of time (digits_model.py) from C:
 *   cc -O2 -I DIR examples/aot/main.c -L DIR -ldigits -Wl,-rpath,DIR -o digits && ./digits */
#include <stdio.h>
#include <stdint.h>
#include "digits.h"

int main(void) {
  enum { N = 4 };
  float images[N * 64];
  for (int i = 0; i < N; i++)  /* the sample images of digits_model.py */
    for (int k = 0; k < 64; k++) images[i * 64 + k] = (float)((13 * i + k) % 17) / 16.0f;
  float *logits;
  int32_t *classes;
  int64_t logits_shape[2], classes_shape[1];
  int code = digits_predict(images, N, &logits, logits_shape, &classes, classes_shape);
  if (code != DIGITS_OK) {
    fprintf(stderr, "%s: %s\n", digits_error_name(code), digits_last_error());
    return 1;
  }
  for (int64_t i = 0; i < classes_shape[0]; i++)
    printf("image %d: class %d, logit %.6f\n", (int)i, (int)classes[i],
           logits[i * logits_shape[1] + classes[i]]);
  digits_free(logits);  /* outputs with a ? dim belong to the caller */
  digits_free(classes);
  return 0;
}
