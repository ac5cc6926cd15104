/*
 * 0_prelude.cl - what a user operator's C source sees on OpenCL before its first line (opencl_user.c builds
 * one program from this file, the user's source and 1_user_scan.cl).
 *
 * OpenCL C is C99 with a different library: these lines give a source written for every backend the names it
 * may use there (docs/api.md, "A source for every backend"): the fixed-width integer types (OpenCL C has
 * uint, ulong... but no <stdint.h>; its `long long` is 128 bits wide, so int64_t is long), and the float
 * spellings of the math functions (OpenCL's are overloaded on the argument type and have no f suffix).
 */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;

#define fabsf(x) fabs((float)(x))
#define fminf(x, y) fmin((float)(x), (float)(y))
#define fmaxf(x, y) fmax((float)(x), (float)(y))
#define fmaf(x, y, z) fma((float)(x), (float)(y), (float)(z))
#define sqrtf(x) sqrt((float)(x))
#define expf(x) exp((float)(x))
#define logf(x) log((float)(x))
#define powf(x, y) pow((float)(x), (float)(y))
#define floorf(x) floor((float)(x))
#define ceilf(x) ceil((float)(x))
#define sinf(x) sin((float)(x))
#define cosf(x) cos((float)(x))

/* The user's source follows; the compiler's log names its lines as the user wrote them. */
#line 1 "user_source"
