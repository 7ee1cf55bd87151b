"""The C runtime of an AOT library, at the top of its C source (capi.py, which renames
`ember_` to `<lib>_rt_` and fills in KEY, STATUS_OOM, CODE_ and the TRACKED_ names):
the error key the objects declare and its creation once (`pthread_once`), the thread's
error message and its formatting from the error table, the tracking of a call's buffers
(freed when the call fails), and the copy of an output of `?` dims into a C-contiguous
buffer the caller frees."""

RUNTIME = r"""
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN int32_t KEY = -1;  /* the objects' error key (native.py) */
static pthread_once_t ember_once = PTHREAD_ONCE_INIT;
static int ember_key_failed;
static __thread char ember_message[4096];

typedef struct { int32_t status; int code; const char *text; } ember_site;

/* The buffers the running call allocated and has not freed (build.py renames the entries'
   malloc, calloc and free to these): a failing call unwinds past the frames that own them,
   so ember_track_end frees them; on success they are the outputs, the caller's. */
static __thread struct { void **items; size_t count, size; int on; } ember_track;

static void *ember_keep(void *p) {
  if (!p || !ember_track.on) return p;
  if (ember_track.count == ember_track.size) {
    size_t size = ember_track.size ? 2 * ember_track.size : 64;
    void **items = realloc(ember_track.items, size * sizeof *items);
    if (!items) { free(p); return NULL; }  /* compiled code fails with OUT_OF_MEMORY */
    ember_track.items = items;
    ember_track.size = size;
  }
  ember_track.items[ember_track.count++] = p;
  return p;
}

HIDDEN void *TRACKED_MALLOC(size_t size) { return ember_keep(malloc(size)); }
HIDDEN void *TRACKED_CALLOC(size_t n, size_t size) { return ember_keep(calloc(n, size)); }

HIDDEN void TRACKED_FREE(void *p) {
  if (p && ember_track.on) {
    for (size_t i = ember_track.count; i-- > 0;) {  /* most recent first */
      if (ember_track.items[i] == p) {
        ember_track.items[i] = ember_track.items[--ember_track.count];
        break;
      }
    }
  }
  free(p);
}

static void ember_track_begin(void) { ember_track.count = 0; ember_track.on = 1; }

static void ember_track_end(int failed) {
  if (failed)
    for (size_t i = 0; i < ember_track.count; i++) free(ember_track.items[i]);
  free(ember_track.items);
  ember_track.items = NULL;
  ember_track.count = ember_track.size = 0;
  ember_track.on = 0;
}

static void ember_make_key(void) {
  pthread_key_t key;
  if (pthread_key_create(&key, NULL) != 0) { ember_key_failed = 1; return; }
  KEY = (int32_t)key;
}

static int ember_bad_call(const char *text) {
  snprintf(ember_message, sizeof ember_message, "%s", text);
  return CODE_BAD_CALL;
}

/* OUT_OF_MEMORY unless an input of `rank` dims `dims` and elements of `item` bytes fits
   in what a process can address (2**47 bytes): compiled code computes the sizes of its
   buffers in int64 without overflow checks, so a larger one could wrap to a small
   allocation and be written past its end. */
static int ember_check_size(const char *entry, const char *name, const int64_t *dims,
                            int rank, uint64_t item) {
  uint64_t bytes = item;
  int over = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 0) return 0;
    over |= __builtin_mul_overflow(bytes, (uint64_t)dims[k], &bytes);
  }
  if (!over && bytes <= (1ULL << 47)) return 0;
  char shape[512];
  size_t at = 0;
  for (int k = 0; k < rank && at < sizeof shape; k++)
    at += (size_t)snprintf(shape + at, sizeof shape - at, k ? ", %lld" : "%lld",
                           (long long)dims[k]);
  snprintf(ember_message, sizeof ember_message,
           "Unable to allocate the arrays of @%s: input %s of shape [%s] would take more "
           "than 2**47 bytes, more than a process can address: out of memory", entry,
           name, shape);
  return CODE_OUT_OF_MEMORY;
}

static int ember_begin(void) {
  ember_message[0] = 0;
  pthread_once(&ember_once, ember_make_key);
  if (!ember_key_failed) return 0;
  snprintf(ember_message, sizeof ember_message,
           "pthread_key_create failed: no key for errors of compiled code");
  return CODE_RUNTIME;
}

static void ember_format(const char *text, const int64_t *values) {
  size_t at = 0, size = sizeof ember_message;
  for (const char *c = text; *c && at + 1 < size; c++) {
    if (*c == 1 && c[1]) {
      int k = (unsigned char)*++c - 1;
      int n = snprintf(ember_message + at, size - at, "%lld", (long long)values[k]);
      at = n < 0 ? at : (at + (size_t)n < size ? at + (size_t)n : size - 1);
    } else {
      ember_message[at++] = *c;
    }
  }
  ember_message[at] = 0;
}

static void ember_size(char *out, size_t size, unsigned long long count) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int bits = 0;
  for (unsigned long long c = count; c; c >>= 1) bits++;
  int unit = (bits - 1 > 1 ? bits - 1 : 1) / 10;
  if (unit > 6) unit = 6;
  double value = (double)count / (double)(1ULL << (10 * unit));
  if (unit < 6 && (long long)(value + 0.5) == 1024) { value /= 1024; unit++; }
  if (unit == 0) snprintf(out, size, "%llu bytes", count);
  else if (value + 0.5 < 1000) snprintf(out, size, "%#.3g %s", value, units[unit]);
  else snprintf(out, size, "%#.0f %s", value, units[unit]);
}

static int ember_fail(int32_t status, const int64_t *values, const ember_site *sites,
                      int count, const char *entry) {
  if (status == STATUS_OOM) {
    char amount[64];
    ember_size(amount, sizeof amount, (unsigned long long)values[0]);
    snprintf(ember_message, sizeof ember_message,
             "Unable to allocate %s in compiled code of @%s: out of memory", amount, entry);
    return CODE_OUT_OF_MEMORY;
  }
  for (int i = 0; i < count; i++) {
    if (sites[i].status == status) {
      ember_format(sites[i].text, values);
      return sites[i].code;
    }
  }
  snprintf(ember_message, sizeof ember_message,
           "compiled code of @%s failed with unknown status %d", entry, (int)status);
  return CODE_RUNTIME;
}

/* An output of `?` dims: the descriptor the entry returned (allocated, aligned, offset,
   sizes, strides; malloc'ed) becomes a malloc'ed C-contiguous buffer the caller frees.
   `allocs` holds the allocated pointer of each of the call's `?` outputs, this one at
   `index`: outputs over one allocation (`y` and `reshape(y)`) each get a buffer of their
   own - the last one takes the allocation (or a copy, then frees it), the others a copy -
   so that the caller frees each output once. */
static int ember_take(void *slot, int rank, size_t item, void **out, int64_t *shape,
                      void *const *allocs, int index, int outputs) {
  int64_t *d = (int64_t *)slot;
  char *allocated = (char *)(intptr_t)d[0], *aligned = (char *)(intptr_t)d[1];
  int64_t offset = d[2], *sizes = d + 3, *strides = d + 3 + rank, count = 1, step = 1;
  int dense = aligned + offset * (int64_t)item == allocated, later = 0;
  for (int j = index + 1; j < outputs; j++) later |= allocs[j] == allocated;
  for (int k = rank - 1; k >= 0; k--) {
    count *= sizes[k];
    if (sizes[k] != 1 && strides[k] != step) dense = 0;
    step *= sizes[k];
  }
  for (int k = 0; k < rank; k++) shape[k] = sizes[k];
  if (count == 0) {
    if (!later) free(allocated);
    *out = malloc(1);
  } else if (dense && !later) {
    *out = allocated;
  } else {
    char *copy = malloc((size_t)count * item), *from = aligned + offset * (int64_t)item;
    if (!copy) { if (!later) free(allocated); free(d); *out = NULL; return 1; }
    for (int64_t i = 0; i < count; i++) {
      int64_t rest = i, at = 0;
      for (int k = rank - 1; k >= 0; k--) { at += (rest % sizes[k]) * strides[k]; rest /= sizes[k]; }
      memcpy(copy + i * (int64_t)item, from + at * (int64_t)item, item);
    }
    if (!later) free(allocated);
    *out = copy;
  }
  free(d);
  return *out == NULL;
}
"""
