package geohash

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Redis's documented example: GEOADD Sicily 13.361389 38.115556 Palermo
// stores 3479099956230698, GEOPOS reads 13.36138933897018433
// 38.11555639549629859 back, GEODIST to Catania is 166274.1516 m.
func TestSicilyVectors(t *testing.T) {
	h, ok := EncodeWGS84(13.361389, 38.115556, StepMax)
	if !ok || Align52(h) != 3479099956230698 {
		t.Fatalf("Palermo's score = %d (ok %v), want 3479099956230698", Align52(h), ok)
	}
	lon, lat := DecodeScore(3479099956230698)
	if lon != 13.36138933897018433 || lat != 38.11555639549629859 {
		t.Fatalf("decoded %.17g %.17g", lon, lat)
	}
	c, _ := EncodeWGS84(15.087269, 37.502669, StepMax)
	clon, clat := DecodeScore(float64(Align52(c)))
	if d := Distance(lon, lat, clon, clat); math.Abs(d-166274.1516) > 0.00005 {
		t.Fatalf("Palermo-Catania %.6f m, want 166274.1516", d)
	}
}

// Scores GEOADD never writes still decode, as C's (uint64_t) cast on
// x86-64 and the clamping make them.
func TestDecodeOddScores(t *testing.T) {
	for _, s := range []float64{-1, math.Inf(1), math.Inf(-1), 1e300, 1 << 52, 1.5} {
		lon, lat := DecodeScore(s)
		if lon < LongMin || lon > LongMax || lat < LatMin || lat > LatMax {
			t.Errorf("score %g decodes outside the limits: %g %g", s, lon, lat)
		}
	}
	if scoreBits(math.Inf(1)) != 0 || scoreBits(math.Inf(-1)) != 1<<63 || scoreBits(-1) != math.MaxUint64 {
		t.Errorf("scoreBits(inf, -inf, -1) = %x %x %x", scoreBits(math.Inf(1)), scoreBits(math.Inf(-1)), scoreBits(-1))
	}
}

// sin, cos and asin are correctly rounded: checked against a 300-bit
// Taylor series on seeded random arguments of the ranges distances use.
func TestLibmCorrectlyRounded(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	const prec = 300
	series := func(x float64, cosine bool) float64 {
		bx := new(big.Float).SetPrec(prec).SetFloat64(x)
		x2 := new(big.Float).SetPrec(prec).Mul(bx, bx)
		term := new(big.Float).SetPrec(prec).SetInt64(1)
		if !cosine {
			term.Set(bx)
		}
		sum := new(big.Float).SetPrec(prec).Set(term)
		for n := int64(1); n < 80; n++ {
			a, b := 2*n, 2*n+1
			if cosine {
				a, b = 2*n-1, 2*n
			}
			term.Mul(term, x2)
			term.Quo(term, new(big.Float).SetInt64(a*b))
			term.Neg(term)
			sum.Add(sum, term)
		}
		f, _ := sum.Float64()
		return f
	}
	for i := 0; i < 2000; i++ {
		x := (r.Float64()*2 - 1) * 3
		if got, want := sin(x), series(x, false); got != want {
			t.Fatalf("sin(%v) = %v, want %v", x, got, want)
		}
		if got, want := cos(x), series(x, true); got != want {
			t.Fatalf("cos(%v) = %v, want %v", x, got, want)
		}
		// asin(y) is within an ulp: sin of its neighbours brackets y.
		y := r.Float64()
		a := asin(y)
		lo, hi := math.Nextafter(a, 0), math.Nextafter(a, 2)
		if !(sin(lo) <= y && y <= sin(hi)) {
			t.Fatalf("asin(%v) = %v: sin of its neighbours %v %v", y, a, sin(lo), sin(hi))
		}
	}
}
