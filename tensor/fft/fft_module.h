/* The interface of the FFT module, libtide_fft.so (tensor/fft/fftw.cpp, built on FFTW 3).
 *
 * FFTW is GPL-licensed, so libtide and the tide program never link it: the engine loads the
 * module with dlopen on the first FFT (tensor/fft/loader.cpp) and talks to it through this
 * plain C table, which sees raw buffers only (no tide types), so the module does not link
 * libtide either.
 *
 * One call runs a batch of 1-D transforms of length n along one axis. Complex buffers hold
 * interleaved (re, im) pairs of float or double (std::complex's layout). Every stride counts
 * elements of the buffer's own type: complex elements for a complex buffer, real ones for a
 * real buffer (FFTW's convention). Transforms are unnormalised: forward is
 * X[k] = sum_j x[j] exp(-2 pi i jk/n), backward the same with +i. */
#ifndef TIDE_FFT_MODULE_H
#define TIDE_FFT_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDE_FFT_ABI_VERSION 1

enum TideFftKind {
  TIDE_FFT_C2C = 0, /* complex n -> complex n, forward or backward */
  TIDE_FFT_R2C = 1, /* real n -> complex n/2+1 (the non-negative frequencies), forward */
  TIDE_FFT_C2R = 2  /* complex n/2+1 (Hermitian half) -> real n, backward; overwrites its input */
};

enum TideFftPrecision { TIDE_FFT_FLOAT = 0, TIDE_FFT_DOUBLE = 1 };

/* One dimension: its length and the strides of the input and the output along it. */
typedef struct TideFftDim {
  int64_t n;
  int64_t in_stride;
  int64_t out_stride;
} TideFftDim;

typedef struct TideFftEngine {
  int abi_version;     /* TIDE_FFT_ABI_VERSION */
  const char* library; /* e.g. "fftw-3.3.10" */
  /* Transforms along `axis` (axis.n: the logical length n, also for r2c/c2r) for every
   * index of the batch dims (batch_rank of them; none of length 0). sign: -1 forward, +1
   * backward (r2c takes -1, c2r +1). in and out may be the same buffer only for c2c with
   * equal strides. Returns 0, or -1 with a message in err (errlen bytes, NUL-terminated).
   * Safe to call from several threads at once. */
  int (*execute)(int kind, int precision, int sign, TideFftDim axis, int batch_rank,
                 const TideFftDim* batch, void* in, void* out, char* err, size_t errlen);
  /* The number of plans cached now (for tests). */
  size_t (*cached_plans)(void);
} TideFftEngine;

/* The module's entry point, found with dlsym. */
typedef const TideFftEngine* (*TideFftEntryFn)(void);

#ifdef __cplusplus
}
#endif

#endif
