/* SPDX-License-Identifier: MIT */
/* The wide-type vocabulary of core/simd.h for a double that carries, beside its value, a
 * bound on how far a float32 program following the same operations may be from it: the
 * running error analysis of sim/rules.h, compiled from the same source (ref_bound.c). Included
 * by core/simd.h when SIMD_REAL_HEADER is "verify/real_bound.h"; the includer has included
 * verify/ref_internal.h (BOUND_RHO).
 *
 * A value x = {v, e, t}: v is the double result (bit for bit what verify/real64.h computes: the
 * same operations on the same values); BOUND_RHO * e bounds the float32 rounding, to first
 * order: every float32 operation may err by BOUND_RHO relative to its result, and errors of
 * the operands propagate by the derivative (|a| db + |b| da for a product, (da + |a/b| db) /
 * |b| for a quotient, da / (2 sqrt a) for a square root, capped by sqrt(da)); t bounds how far
 * the result may move because a comparison on its path sits within that rounding of its
 * threshold (the comparison could go either way in float32: the selected value may be the
 * other one). An operation on exact float32 operands whose result is itself a float32 value
 * is exact (no rounding), so a state placed on a lattice keeps exact distances, and a neighbour
 * exactly on a radius is decided by the contract (<= or <), not called a tie; a neighbour sum
 * (vf_add_masked) is exact only when it adds integers, exact in every summation order. A number the
 * float32 program must round to hold (a double that is not a float32: dt = 1/60, a radius
 * squared, a cosine) counts one rounding. The masks carry `u`: the comparison could go either
 * way. vf_eq is exact: the rules use it only to test finiteness (x - x == 0). */
#ifndef SHOAL_SIM_REAL_BOUND_H
#define SHOAL_SIM_REAL_BOUND_H

#include <float.h>

#define VW 1
#define SIMD_SCALAR double
#define SIMD_SCALAR_MAX 1.7976931348623157e308
#define SIMD_SCALAR_DOWN 0x1p-600
#define REF_BOUND 1

typedef struct vf {
    double v, e, t;
} vf;
typedef struct vm {
    int m, u;
} vm;

/* x is a float32 value (so a float32 program can hold it exactly) */
SIMD_FN int bnd_f32(double x)
{
    double a = __builtin_fabs(x);
    return a == __builtin_inf() || (a <= (double)FLT_MAX && (double)(float)x == x);
}
/* the rounding bound of an operand: its own, or one rounding for a constant that float32
 * cannot hold */
SIMD_FN double bnd_e(vf x) { return x.e != 0 || bnd_f32(x.v) ? x.e : __builtin_fabs(x.v); }
/* the rounding of a result r: none when the operands were exact and r is a float32 value */
SIMD_FN double bnd_round(double r, int exact)
{
    return exact && bnd_f32(r) ? 0.0 : __builtin_fabs(r);
}
/* x * y for bounds: 0 when either is 0 (an exact 0 times an unbounded error is still 0) */
SIMD_FN double bnd_prod(double x, double y) { return x == 0 || y == 0 ? 0.0 : x * y; }
/* the larger bound; NaN (an undefined bound) counts as unbounded */
SIMD_FN double bnd_max(double x, double y)
{
    if (x != x || y != y)
        return __builtin_inf();
    return x > y ? x : y;
}
SIMD_FN vf bnd_make(double v, double e, double t)
{
    vf r = {v, e, t};
    return r;
}

SIMD_FN vf vf_set1(double x) { return bnd_make(x, 0.0, 0.0); }
SIMD_FN vf vf_zero(void) { return bnd_make(0.0, 0.0, 0.0); }
SIMD_FN vf vf_load_n(const double *p, int n) { return vf_set1(n > 0 ? *p : 0.0); }
SIMD_FN void vf_store_n(double *p, vf v, int n)
{
    if (n > 0)
        *p = v.v;
}
SIMD_FN vf vf_add(vf a, vf b)
{
    double ea = bnd_e(a), eb = bnd_e(b), v = a.v + b.v;
    return bnd_make(v, ea + eb + bnd_round(v, ea == 0 && eb == 0), a.t + b.t);
}
SIMD_FN vf vf_sub(vf a, vf b)
{
    double ea = bnd_e(a), eb = bnd_e(b), v = a.v - b.v;
    return bnd_make(v, ea + eb + bnd_round(v, ea == 0 && eb == 0), a.t + b.t);
}
SIMD_FN vf vf_mul(vf a, vf b)
{
    double ea = bnd_e(a), eb = bnd_e(b), v = a.v * b.v;
    double aa = __builtin_fabs(a.v), ab = __builtin_fabs(b.v);
    double e = bnd_prod(aa, eb) + bnd_prod(ab, ea) + BOUND_RHO * bnd_prod(ea, eb) +
               bnd_round(v, ea == 0 && eb == 0);
    double t = bnd_prod(aa, b.t) + bnd_prod(ab, a.t) +
               BOUND_RHO * (bnd_prod(ea, b.t) + bnd_prod(eb, a.t)) + bnd_prod(a.t, b.t);
    return bnd_make(v, e, t);
}
SIMD_FN vf vf_div(vf a, vf b)
{
    double ea = bnd_e(a), eb = bnd_e(b), v = a.v / b.v;
    /* how close b may come to 0: the quotient is bounded only while it cannot; the rounding
     * (e) and the ties (t) separately, so that a count a tie may lower to 0 leaves the
     * rounding of this world bounded */
    double den_e = __builtin_fabs(b.v) - BOUND_RHO * eb, den = den_e - b.t;
    double av = __builtin_fabs(v);
    int exact = ea == 0 && eb == 0 && bnd_f32(v) && v * b.v == a.v;
    double e = den_e > 0 ? (ea + bnd_prod(av, eb)) / den_e + (exact ? 0.0 : av) : __builtin_inf();
    double t = a.t == 0 && b.t == 0 ? 0.0
               : den > 0            ? (a.t + bnd_prod(av, b.t)) / den
                                    : __builtin_inf();
    return bnd_make(v, e, t);
}
SIMD_FN vf vf_sqrt(vf a)
{
    double ea = bnd_e(a), v = __builtin_sqrt(a.v);
    /* sqrt(a + d) - sqrt(a) <= min(d / (2 sqrt a), sqrt d) */
    double de = __builtin_sqrt(ea / BOUND_RHO), dt = __builtin_sqrt(a.t);
    if (v > 0) {
        double le = ea / (2 * v), lt = a.t / (2 * v);
        de = le < de ? le : de;
        dt = lt < dt ? lt : dt;
    }
    int exact = ea == 0 && bnd_f32(v) && v * v == a.v;
    return bnd_make(v, de + (exact ? 0.0 : v), dt);
}
SIMD_FN vf vf_neg(vf a) { return bnd_make(0.0 - a.v, a.e, a.t); }

/* a comparison: could it go the other way in float32? Unless the operands are further apart
 * than their bounds (exact operands on an exact tie: no; a NaN or an unbounded operand: yes) */
SIMD_FN vm bnd_cmp(int m, vf a, vf b)
{
    double slack = BOUND_RHO * (bnd_e(a) + bnd_e(b)) + a.t + b.t;
    int undefined = a.v != a.v || b.v != b.v;
    vm r = {m, (slack > 0 || undefined) && !(__builtin_fabs(a.v - b.v) > slack)};
    return r;
}
SIMD_FN vm vf_le(vf a, vf b) { return bnd_cmp(a.v <= b.v, a, b); }
SIMD_FN vm vf_lt(vf a, vf b) { return bnd_cmp(a.v < b.v, a, b); }
SIMD_FN vm vf_gt(vf a, vf b) { return bnd_cmp(a.v > b.v, a, b); }
SIMD_FN vm vf_eq(vf a, vf b)
{
    vm r = {a.v == b.v, 0};
    return r;
}
/* u: the result could differ (an uncertain operand that the other does not decide) */
SIMD_FN vm vm_and(vm a, vm b)
{
    vm r = {a.m && b.m, (a.m || a.u) && (b.m || b.u) && (a.u || b.u)};
    return r;
}
SIMD_FN vm vm_or(vm a, vm b)
{
    int sure = (a.m && !a.u) || (b.m && !b.u) || (!a.u && !b.u);
    vm r = {a.m || b.m, !sure};
    return r;
}
SIMD_FN vm vm_andnot(vm a, vm b)
{
    vm nb = {!b.m, b.u};
    return vm_and(a, nb);
}
SIMD_FN int vm_any(vm a) { return a.m || a.u; }
SIMD_FN unsigned vm_bits(vm a) { return (unsigned)(a.m || a.u); }
SIMD_FN vm vm_first(int n)
{
    vm r = {n > 0, 0};
    return r;
}
/* m ? a : b; when m is uncertain the result may be the other: t widens by their distance
 * and by the other's own bound (the rounding of this world stays e) */
SIMD_FN vf vf_select(vm m, vf a, vf b)
{
    vf r = m.m ? a : b, o = m.m ? b : a;
    if (!m.u)
        return r;
    double d = __builtin_fabs(a.v - b.v);
    r.e = bnd_e(r);
    r.t = bnd_max(r.t, o.t + BOUND_RHO * bnd_e(o)) + (d == d ? d : __builtin_inf());
    return r;
}
/* acc + x where m: the rules' neighbour sums (sim/rules.h adds every candidate's terms with
 * it). Another program sums the candidates in its own order, whose partial sums round
 * otherwise: an exact partial sum in this order says nothing of that one, so a sum is exact
 * only when it is a sum of integers below 2^24 (counts, lattice positions: exact in any
 * order). */
SIMD_FN int bnd_int(double x) { return __builtin_fabs(x) <= 0x1p24 && x == __builtin_floor(x); }
SIMD_FN vf vf_add_masked(vf acc, vm m, vf x)
{
    double ea = bnd_e(acc), ex = bnd_e(x), v = acc.v + x.v;
    int exact = ea == 0 && ex == 0 && bnd_int(acc.v) && bnd_int(x.v) && bnd_int(v);
    vf sum = bnd_make(v, ea + ex + (exact ? 0.0 : __builtin_fabs(v)), acc.t + x.t);
    return vf_select(m, sum, acc);
}
SIMD_FN double vf_lane(vf v, int i)
{
    (void)i;
    return v.v;
}

/* the ties of a value and of three (the models' NAME_ties) */
#define REF_T3(a) ((a).x.t + (a).y.t + (a).z.t)
#define REF_T1(a) ((a).t)

#endif
