/* SPDX-License-Identifier: MIT */
/* The wide-type vocabulary of core/simd.h for double at W = 1: what the float64 reference
 * (ref64.c, through verify/ref_kernel.h) compiles sim/rules.h against. Included by core/simd.h
 * when a file defines SIMD_REAL_HEADER as "verify/real64.h" before including it; never on its
 * own. Every operation is one IEEE double operation, round to nearest (the build has no FMA
 * contraction), so the reference gives the same bits on every machine and thread count. */
#ifndef SHOAL_SIM_REAL64_H
#define SHOAL_SIM_REAL64_H

#define VW 1
#define SIMD_SCALAR double
#define SIMD_SCALAR_MAX 1.7976931348623157e308
#define SIMD_SCALAR_DOWN 0x1p-600 /* x * DOWN squared cannot overflow, for any finite x */

typedef double vf;
typedef int vm;
SIMD_FN vf vf_set1(double x) { return x; }
SIMD_FN vf vf_zero(void) { return 0.0; }
SIMD_FN vf vf_load_n(const double *p, int n) { return n > 0 ? *p : 0.0; }
SIMD_FN void vf_store_n(double *p, vf v, int n)
{
    if (n > 0)
        *p = v;
}
SIMD_FN vf vf_add(vf a, vf b) { return a + b; }
SIMD_FN vf vf_sub(vf a, vf b) { return a - b; }
SIMD_FN vf vf_mul(vf a, vf b) { return a * b; }
SIMD_FN vf vf_div(vf a, vf b) { return a / b; }
SIMD_FN vf vf_sqrt(vf a) { return __builtin_sqrt(a); }
SIMD_FN vf vf_neg(vf a) { return 0.0 - a; }
SIMD_FN vm vf_le(vf a, vf b) { return a <= b; }
SIMD_FN vm vf_lt(vf a, vf b) { return a < b; }
SIMD_FN vm vf_gt(vf a, vf b) { return a > b; }
SIMD_FN vm vf_eq(vf a, vf b) { return a == b; }
SIMD_FN vm vm_and(vm a, vm b) { return a & b; }
SIMD_FN vm vm_or(vm a, vm b) { return a | b; }
SIMD_FN vm vm_andnot(vm a, vm b) { return a & !b; }
SIMD_FN int vm_any(vm a) { return a != 0; }
SIMD_FN unsigned vm_bits(vm a) { return (unsigned)a; }
SIMD_FN vm vm_first(int n) { return n > 0; }
SIMD_FN vf vf_select(vm m, vf a, vf b) { return m ? a : b; }
SIMD_FN vf vf_add_masked(vf acc, vm m, vf x) { return m ? acc + x : acc; }
SIMD_FN double vf_lane(vf v, int i)
{
    (void)i;
    return v;
}

/* the ties of a value (real_bound.h): none here */
#define REF_T3(a) ((void)(a), 0.0)
#define REF_T1(a) ((void)(a), 0.0)

#endif
