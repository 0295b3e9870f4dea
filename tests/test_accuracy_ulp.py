"""Unit tests of the accuracy metric and references against hand-checked values and MPFR."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from pytest_gpuperf.accuracy import check, exact_ops, inputs, mpfr, rounding, search, ulp
from pytest_gpuperf.accuracy.fp_formats import FP16, FP32, FP64
from pytest_gpuperf.accuracy.rounding import LD

F32 = np.float32


def ld(x) -> np.ndarray:
    return np.array([x], dtype=LD)


@pytest.mark.parametrize("fmt,x,expected", [
    (FP32, 1.0, 2.0 ** -23), (FP32, 1.5, 2.0 ** -23), (FP32, 1.0 - 2.0 ** -24, 2.0 ** -24),  # binade edge
    (FP32, 2.0 ** -126, 2.0 ** -149), (FP32, 2.0 ** -140, 2.0 ** -149), (FP32, 0.0, 2.0 ** -149),  # subnormal
    (FP32, 3.0e38, 2.0 ** 104), (FP32, 2.0 ** 200, 2.0 ** 104),  # top binade spacing continues
    (FP64, 1.0, 2.0 ** -52), (FP64, 2.0 ** -1060, 2.0 ** -1074), (FP16, 1.0, 2.0 ** -10), (FP16, 65504.0, 32.0),
    (FP16, 2.0 ** -20, 2.0 ** -24),
])
def test_ulp_of_hand_values(fmt, x, expected):
    assert rounding.ulp_of(ld(x), fmt)[0] == LD(expected)


@pytest.mark.parametrize("y,exact,ulp_err,cr", [
    (1.0 + 2.0 ** -23, 1.0, 1.0, 1),  # one step above an exact 1
    (1.0 - 2.0 ** -24, 1.0, 0.5, 1),  # one step below 1: Goldberg ulp of x=1 is the spacing above (2^-23)
    (1.0, 1.0 - 2.0 ** -26, 0.25, 0),  # x just below the binade edge: ulp(x) = 2^-24, RN(x) = 1
    (1.0 - 2.0 ** -24, 1.0 - 2.0 ** -26, 0.75, 1),
    (2.0 ** -149, 0.0, 1.0, 1),  # subnormal spacing at zero
    (2.0 ** -149, 2.0 ** -150, 0.5, 1),  # tie between 0 and 2^-149 rounds to even (0)
    (0.0, 2.0 ** -150 + 2.0 ** -170, 0.5 + 2.0 ** -21, 1),  # just above the tie: RN = 2^-149
    (3 * 2.0 ** -149, 2.5 * 2.0 ** -149, 0.5, 0),  # subnormal tie: RN is the even 2·2^-149 (checked below)
])
def test_ulp_errors_hand_values(y, exact, ulp_err, cr):
    e = ulp.ulp_errors(np.array([y], F32), ld(exact), FP32)
    assert e.cls[0] == ulp.OK
    assert e.ulp[0] == pytest.approx(ulp_err, rel=1e-12)
    if exact == 2.5 * 2.0 ** -149:  # 2.5 lies between 2 and 3 (·2^-149): the tie goes to 2 (even significand)
        assert e.rounded[0] == LD(2 * 2.0 ** -149) and e.cr[0] == 1
    else:
        assert e.cr[0] == cr


def test_mismatch_classes_are_not_numbers():
    y = np.array([np.nan, 1.0, np.inf, np.inf, 3.0e38, np.nan, np.inf, -0.0], F32)
    x = np.array([1.0, np.nan, 3.0e38, 2.0 ** 129, np.inf, np.nan, np.inf, 0.0], LD)
    e = ulp.ulp_errors(y, x, FP32)
    assert list(e.cls) == [ulp.NAN_MISMATCH, ulp.NAN_MISMATCH, ulp.INF_MISMATCH, ulp.OK, ulp.INF_MISMATCH, ulp.OK,
                           ulp.OK, ulp.OK]
    assert np.isnan(e.ulp[[0, 1, 2, 4]]).all() and np.isnan(e.cr[[0, 1, 2, 4]]).all()
    assert e.ulp[3] == 0 and e.ulp[5] == 0 and e.ulp[7] == 0  # overflow to inf is correct; nan==nan; -0 == +0
    # inf of the wrong sign is a mismatch
    assert ulp.ulp_errors(np.array([-np.inf], F32), ld(np.inf), FP32).cls[0] == ulp.INF_MISMATCH


SPECIALS = [np.nan, np.inf, -np.inf, 1.0, 0.0, -0.0, 1e-40, 65504.0, 7e4, 3.4e38, 1e39, 1e300, -1e-310]
#: a signalling nan per format (quiet bit clear): what PoCL's log1p below -1 returns
SIGNALLING = {"fp16": 0x7D00, "fp32": 0x7FA00000, "fp64": 0x7FF4000000000000}


@pytest.mark.parametrize("fmt", [FP16, FP32, FP64], ids=lambda f: f.name)
def test_special_values_and_signalling_nans_are_scored_without_a_floating_point_exception(fmt):
    """Every pair of specials (nan, ±inf, zeros, subnormals, values beyond the format) and signalling nans
    from the device: scored with no invalid-operation or overflow flag raised (a signalling nan converted
    to long double raised one, an fp64 error beyond float64's range another); the classes and figures
    are the ones the quiet path gives."""
    with np.errstate(all="ignore"):
        y = np.array([a for a in SPECIALS for _ in SPECIALS], fmt.dtype)
    x = np.array([b for _ in SPECIALS for b in SPECIALS], LD)
    snan = np.full(3, SIGNALLING[fmt.name], fmt.bits).view(fmt.dtype)
    y, x = np.concatenate([y, snan]), np.concatenate([x, np.array([1.0, np.nan, np.inf], LD)])
    with np.errstate(all="raise"):
        e = ulp.ulp_errors(y, x, fmt)
    assert list(e.cls[-3:]) == [ulp.NAN_MISMATCH, ulp.OK, ulp.NAN_MISMATCH]  # a nan is a nan, quiet or not
    assert np.isnan(e.ulp[-3]) and e.ulp[-2] == 0 and e.cr[-2] == 0
    ok = e.cls == ulp.OK
    assert not np.isnan(e.ulp[ok]).any() and (e.ulp[ok] >= 0).all()
    if fmt is FP64:  # 1.0 against an exact 0: 2^1074 ulp, beyond float64: inf, not an overflow in a cast
        one_vs_zero = SPECIALS.index(1.0) * len(SPECIALS) + SPECIALS.index(0.0)
        assert e.ulp[one_vs_zero] == np.inf and e.cls[one_vs_zero] == ulp.OK


def test_overflow_threshold_rounding():
    top = float(FP32.max)
    thr = 2.0 ** 128 * (1 - 2.0 ** -25)  # the midpoint between FLT_MAX and 2^128
    assert rounding.round_exact(ld(thr), 0, FP32, "rn")[0] == LD(np.inf)  # tie: to even → overflow
    assert rounding.round_exact(ld(thr), -1, FP32, "rn")[0] == LD(top)
    assert rounding.round_exact(ld(2.0 ** 130), 0, FP32, "rz")[0] == LD(top)
    assert rounding.round_exact(ld(-2.0 ** 130), 0, FP32, "ru")[0] == LD(-top)
    assert rounding.round_exact(ld(-2.0 ** 130), 0, FP32, "rd")[0] == LD(-np.inf)


def test_ordered_key_is_monotone():
    x = np.sort(inputs.stratified(FP32, 2, np.random.default_rng(0)))
    k = ulp.ordered_key(x, FP32)
    assert np.all(np.diff(k) >= 0)
    assert ulp.ordered_key(np.array([-0.0, 0.0], F32), FP32).tolist() == [0, 0]


@pytest.mark.parametrize("fmt", [FP16, FP32, FP64], ids=lambda f: f.name)
@pytest.mark.parametrize("op", exact_ops.OPS)
def test_exact_op_rounding_matches_mpfr(fmt, op):
    """The vectorized path (error-free transforms + round_exact) equals MPFR's correct rounding in every
    mode, including subnormal results, cancellation and overflow."""
    rng = np.random.default_rng(zlib.crc32(f"{fmt.name}.{op}".encode()))  # str hash() is salted per run
    n = 120
    args = [np.concatenate([inputs.stratified(fmt, 1, rng)[rng.integers(0, 1 << 11 if fmt is FP64 else 60, n)],
                            inputs.specials(fmt)[:6]]) for _ in range(exact_ops.ARITY[op])]
    if op in ("add", "sub"):
        args[1][: n // 3] = (-1 if op == "add" else 1) * args[0][: n // 3] * fmt.dtype.type(1 + 2.0 ** (3 - fmt.p))
    r, s = exact_ops.exact_op(op, *args)
    for mode in rounding.MODES:
        got = rounding.round_exact(r, s, fmt, mode)
        for i in range(len(r)):
            want = mpfr.correctly_rounded(op, [a[i] for a in args], fmt, mode)
            g = float(got[i])
            assert (math.isnan(g) and math.isnan(want)) or g == want, \
                (fmt.name, op, mode, [float(a[i]).hex() for a in args], g, want)


def test_score_confirms_maxima_with_mpfr():
    """A deliberately wrong bulk reference at the worst element is corrected by the MPFR confirmation."""
    x = np.array([0.5, 1.0, 2.0, 3.0], F32)
    y = np.sin(x.astype(np.float64)).astype(F32)
    bulk = np.sin(x.astype(LD))
    bulk[2] *= 1 + LD(2.0 ** -10)  # a broken reference for x = 2: ~2^13 ulp
    sc = check.score(y, [x], bulk, FP32, "sin", "cr")
    assert sc.max == 0 and sc.disagreements >= 1 and sc.confirmed == 4


def test_stratified_covers_every_binade_and_sign():
    x = inputs.stratified(FP32, 3, np.random.default_rng(1))
    bits = x.view(np.uint32)
    assert set(((bits >> 23) & 0xFF).tolist()) == set(range(255))
    assert (bits >> 31).sum() == x.size // 2


def test_mpfr_reference_uses_target_precision_and_subnormals():
    assert mpfr.correctly_rounded("mul", [2.0 ** -100, 2.0 ** -30], FP32, "rn") == 2.0 ** -130  # subnormal, exact
    assert mpfr.correctly_rounded("mul", [2.0 ** -100, 2.0 ** -50], FP32, "rn") == 0.0  # below half min subnormal
    assert mpfr.correctly_rounded("mul", [2.0 ** -100, 2.0 ** -50], FP32, "ru") == 2.0 ** -149
    assert mpfr.correctly_rounded("add", [65504.0, 16.0], FP16, "rn") == math.inf
    assert mpfr.correctly_rounded("add", [65504.0, 16.0], FP16, "rz") == 65504.0
    assert mpfr.correctly_rounded("sin", [1e22], FP64, "rn") == -0.8522008497671888  # the classic hard case


def test_worst_case_search_finds_a_planted_defect():
    """Search logic only (host 'device'): a 1000-ulp defect on a narrow bit range is found."""
    target = int(np.array([1.2345], F32).view(np.uint32)[0])

    def fake_eval(x):
        y = x.copy()
        b = x.view(np.uint32).astype(np.int64)
        bad = np.abs(b - target) < 64
        y[bad] = (y[bad].view(np.uint32) + 1000).view(F32)
        return y

    # at least as many rounds as half a second gives a quiet host (about 110; the defect falls within 80 of
    # them): the seeded search then visits the same inputs on a busy host
    res = search.worst_case_search(FP32, fake_eval, ulp.widen, "cr", 0.5, np.random.default_rng(3),
                                   batch=1 << 12, domain=(1.0, 1.5), min_rounds=160)
    e = ulp.ulp_errors(fake_eval(res.best_x), ulp.widen(res.best_x), FP32)
    assert e.cr.max() == 1000


@pytest.mark.parametrize("mode", rounding.MODES)
def test_mpfr_confirmation_keeps_far_remainders(mode):
    """1e300 ± 1e-300: the remainder sign survives MPFR confirmation (exact, not 256-bit, sums)."""
    a = np.array([1e300, 1e300, -1e300], np.float64)
    b = np.array([1e-300, -1e-300, 1e-300], np.float64)
    r, s = exact_ops.exact_op("add", a, b)
    want = np.array([mpfr.correctly_rounded("add", [x, y], FP64, mode) for x, y in zip(a, b)])
    sc = check.score(want, [a, b], r, FP64, "add", "cr", s, mode=mode)
    assert sc.max == 0 and sc.confirmed == 3


def test_strategies_stay_in_their_regions():
    """The hypothesis region strategies draw what their names promise (pure logic, no device)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_gpuperf.accuracy import region_strategies as S

    @settings(max_examples=60, deadline=None, database=None)
    @given(st.data())
    def check(data):
        x = data.draw(S.near_pi_over_2(FP32))
        k = round(abs(x) / (math.pi / 2))
        ref = np.float32(k * math.pi / 2)
        steps = abs(int(np.array([abs(x)], np.float32).view(np.int32)[0]) - int(np.array([ref]).view(np.int32)[0]))
        assert k >= 1 and steps <= 4
        h = data.draw(S.huge(FP32))
        assert abs(h) >= 2.0 ** 20 and math.isfinite(h)
        s = data.draw(S.subnormal(FP32))
        assert 0 < abs(s) < 2.0 ** -126
        e = data.draw(S.near(FP32, 88.0, 8))
        assert abs(int(np.array([e], np.float32).view(np.int32)[0]) - int(np.array([88.0], np.float32).view(np.int32)[0])) <= 8

    check()


def test_sample_excludes_interval_and_keeps_specials():
    cols = inputs.sample(FP32, 1, 2, 100, (-20.0, 5.0), np.random.default_rng(5), exclude=(-10.001, -2.264))
    x = cols[0]
    assert not np.any((x > -10.001) & (x < -2.264))
    assert np.isnan(x).any() and np.isinf(x).any() and (x == 0).any()


def test_exact_sum_matches_mpfr_fsum():
    """The vectorized exact sum equals MPFR's fsum (4400 bits: exact for any binary64 data) including
    cancellation to zero, huge/tiny mixtures, subnormals and binary32 input."""
    import gmpy2

    from pytest_gpuperf.accuracy import summation

    def mpfr_sum(x):
        with gmpy2.context(precision=4400):
            return float(gmpy2.fsum(gmpy2.mpfr(float(v)) for v in x))

    rng = np.random.default_rng(7)
    cases = [np.array([1e300, 1e-300, -1e300, 5e-324, 1e-310]), np.array([2.0 ** 1023, 2.0 ** 1023 * 0.5, -2.0 ** 1023]),
             np.array([], np.float64), summation.thesis_data(1 << 12, np.float32, rng),
             summation.thesis_data(1 << 12, np.float64, rng)]
    for _ in range(40):
        n = int(rng.integers(1, 200))
        x = rng.standard_normal(n) * 2.0 ** rng.integers(-1000, 1000, n)
        cases += [x, np.concatenate([x, -x[:-1]]), (rng.standard_normal(n) * 2.0 ** rng.integers(-149, 100, n)).astype(np.float32)]
    for x in cases:
        assert summation.exact_sum(x) == mpfr_sum(x), x
    assert summation.exact_sum(summation.thesis_data(1 << 12, np.float32, rng)) == 0.0


@pytest.mark.parametrize("fmt_name", ["fp32", "fp64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "ru", "rd"])
def test_each_elements_score_depends_on_that_element_alone(fmt_name, mode):
    """``check.score`` rescores only the elements MPFR corrected: that is the full scoring only because every
    figure of ``ulp_errors`` (ulp, cr, class, rounded reference) is a function of its own element."""
    fmt = {"fp32": FP32, "fp64": FP64}[fmt_name]
    rng = np.random.default_rng(11)
    n = 4000
    bits = rng.integers(0, 1 << fmt.width, n, dtype=np.uint64).astype(fmt.bits)
    y = bits.view(fmt.dtype)  # every class of value: nan, inf, subnormal, zero, normal
    exact = ulp.widen(y) * (1 + LD(2) ** -(fmt.p + 2) * rng.integers(-3, 4, n).astype(LD))
    exact[::97] = ulp.widen(y[::97])  # exact hits too
    sgn = rng.integers(-1, 2, n).astype(np.int8)
    whole = ulp.ulp_errors(y, exact, fmt, sgn, mode)
    idx = np.unique(rng.integers(0, n, 300))
    part = ulp.ulp_errors(y[idx], exact[idx], fmt, sgn[idx], mode)
    for a, b in ((whole.ulp[idx], part.ulp), (whole.cr[idx], part.cr), (whole.rounded[idx], part.rounded)):
        assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(whole.cls[idx], part.cls)
