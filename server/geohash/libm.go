package geohash

import (
	"math"
	"math/big"
	"sync"
)

// sin, cos and asin as glibc computes them, which is correctly rounded in
// all but the rarest cases: Go's math.Sin, Cos and Asin differ from glibc
// in the last bit for a quarter of the inputs a distance computation
// gives them (measured on 100,000 each: sin 6.6%, cos 26%, asin 33%), and
// GEORADIUS STOREDIST stores distances with all their bits. Each function
// evaluates in double-double arithmetic (about 106 bits) and rounds once.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s = quickTwoSum(s.hi, s.lo+t.hi)
	return quickTwoSum(s.hi, s.lo+t.lo)
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) sub(y dd) dd { return x.add(y.neg()) }

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	return quickTwoSum(p.hi, p.lo+(x.hi*y.lo+x.lo*y.hi))
}

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.sub(y.mul(dd{q1, 0}))
	q2 := r.hi / y.hi
	r = r.sub(y.mul(dd{q2, 0}))
	q3 := r.hi / y.hi
	return quickTwoSum(q1, q2).add(dd{q3, 0})
}

// round is the double nearest to x.
func (x dd) round() float64 { return x.hi + x.lo }

func bigToDD(f *big.Float) dd {
	hi, _ := f.Float64()
	rest := new(big.Float).SetPrec(f.Prec()).Sub(f, new(big.Float).SetFloat64(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

// Constants of the evaluation, computed once in big.Float: π to 1400 bits
// (enough to reduce any double exactly), π/2 as four doubles (212 bits) for small
// arguments, and the Taylor coefficients 1/n! for n <= 30.
var libmConst = sync.OnceValue(func() (k struct {
	pi         *big.Float
	pio2       dd
	pio2Parts  [4]float64
	invFact    [31]dd
	twoOverPi  float64
	reduceBits uint
}) {
	const prec = 1400
	k.reduceBits = prec
	k.pi = bigPi(prec)
	half := new(big.Float).SetPrec(prec).Quo(k.pi, big.NewFloat(2))
	k.pio2 = bigToDD(half)
	rest := new(big.Float).SetPrec(prec).Set(half)
	for i := range k.pio2Parts {
		p, _ := rest.Float64()
		k.pio2Parts[i] = p
		rest.Sub(rest, new(big.Float).SetFloat64(p))
	}
	k.twoOverPi, _ = new(big.Float).Quo(big.NewFloat(2), k.pi).Float64()
	fact := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := range k.invFact {
		if n > 0 {
			fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
		}
		k.invFact[n] = bigToDD(new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), fact))
	}
	return k
})

// bigPi is π to prec bits by Machin's formula, π = 16 atan(1/5) - 4 atan(1/239).
func bigPi(prec uint) *big.Float {
	p := prec + 32
	atanInv := func(n int64) *big.Float {
		x := new(big.Float).SetPrec(p).Quo(big.NewFloat(1).SetPrec(p), new(big.Float).SetPrec(p).SetInt64(n))
		x2 := new(big.Float).SetPrec(p).Mul(x, x)
		sum := new(big.Float).SetPrec(p).Set(x)
		term := new(big.Float).SetPrec(p).Set(x)
		eps := new(big.Float).SetMantExp(big.NewFloat(1), -int(p))
		for i := int64(1); ; i++ {
			term.Mul(term, x2)
			t := new(big.Float).SetPrec(p).Quo(term, new(big.Float).SetPrec(p).SetInt64(2*i+1))
			if t.Cmp(eps) < 0 {
				break
			}
			if i%2 == 1 {
				sum.Sub(sum, t)
			} else {
				sum.Add(sum, t)
			}
		}
		return sum
	}
	a := new(big.Float).SetPrec(p).Mul(big.NewFloat(16), atanInv(5))
	b := new(big.Float).SetPrec(p).Mul(big.NewFloat(4), atanInv(239))
	return new(big.Float).SetPrec(prec).Sub(a, b)
}

// reduce returns r and q with x = q*π/2 + r, |r| <= about π/4.
func reduce(x float64) (dd, int) {
	k := libmConst()
	if math.Abs(x) <= math.Pi/4 {
		return dd{x, 0}, 0
	}
	q := math.RoundToEven(x * k.twoOverPi)
	if math.Abs(q) < 1<<20 {
		r := dd{x, 0}
		for _, p := range k.pio2Parts {
			r = r.sub(twoProd(q, p))
		}
		return r, int(int64(q) & 3)
	}
	// Huge arguments (a search radius of 1e300 meters): reduce exactly.
	bx := new(big.Float).SetPrec(k.reduceBits).SetFloat64(x)
	half := new(big.Float).SetPrec(k.reduceBits).Quo(k.pi, big.NewFloat(2))
	quo := new(big.Float).SetPrec(k.reduceBits).Quo(bx, half)
	n, _ := quo.Int(nil)
	nf := new(big.Float).SetPrec(k.reduceBits).SetInt(n)
	if diff := new(big.Float).Sub(quo, nf); diff.Cmp(big.NewFloat(0.5)) > 0 {
		nf.Add(nf, big.NewFloat(1))
	} else if diff.Cmp(big.NewFloat(-0.5)) < 0 {
		nf.Sub(nf, big.NewFloat(1))
	}
	rb := new(big.Float).SetPrec(k.reduceBits).Sub(bx, new(big.Float).SetPrec(k.reduceBits).Mul(nf, half))
	ni, _ := nf.Int(nil)
	return bigToDD(rb), int(new(big.Int).And(ni, big.NewInt(3)).Int64())
}

// sinReduced and cosReduced evaluate sin(r) and cos(r) for |r| <= about
// π/4 by their Taylor series to r^29 and r^28.
func sinReduced(r, r2 dd) dd {
	k := libmConst()
	s := k.invFact[29]
	for n := 27; n >= 1; n -= 2 {
		t := k.invFact[n]
		if (n/2)%2 == 1 {
			t = t.neg()
		}
		s = s.mul(r2).add(t)
	}
	return s.mul(r)
}

func cosReduced(r2 dd) dd {
	k := libmConst()
	c := k.invFact[28]
	for n := 26; n >= 0; n -= 2 {
		t := k.invFact[n]
		if (n/2)%2 == 1 {
			t = t.neg()
		}
		c = c.mul(r2).add(t)
	}
	return c
}

// sinDD and cosDD are sin(x) and cos(x) before the final rounding.
func sinDD(x float64) dd {
	r, q := reduce(x)
	r2 := r.mul(r)
	switch q {
	case 1:
		return cosReduced(r2)
	case 2:
		return sinReduced(r, r2).neg()
	case 3:
		return cosReduced(r2).neg()
	}
	return sinReduced(r, r2)
}

func cosDD(x float64) dd {
	r, q := reduce(x)
	r2 := r.mul(r)
	switch q {
	case 1:
		return sinReduced(r, r2).neg()
	case 2:
		return cosReduced(r2).neg()
	case 3:
		return sinReduced(r, r2)
	}
	return cosReduced(r2)
}

func sin(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return math.Sin(x)
	}
	return sinDD(x).round()
}

func cos(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.Cos(x)
	}
	return cosDD(x).round()
}

// asinDD is asin(x) for |x| <= 1/2 by one Newton step on sin from Go's
// estimate (its error of a few ulps squares away).
func asinDD(x dd) dd {
	y0 := math.Asin(x.hi)
	return dd{y0, 0}.add(x.sub(sinDD(y0)).div(cosDD(y0)))
}

func asin(x float64) float64 {
	if math.IsNaN(x) || math.Abs(x) > 1 || x == 0 {
		return math.Asin(x)
	}
	ax := math.Abs(x)
	var y dd
	if ax < 0.5 {
		y = asinDD(dd{ax, 0})
	} else {
		// asin(x) = π/2 - 2 asin(sqrt((1-x)/2)), well conditioned near 1.
		t := (1 - ax) / 2 // exact for x in [1/2, 1]
		s0 := math.Sqrt(t)
		s := dd{s0, 0}
		if s0 != 0 {
			sq := twoProd(s0, s0)
			s = quickTwoSum(s0, (t-sq.hi-sq.lo)/(2*s0))
		}
		a := asinDD(s)
		y = libmConst().pio2.sub(a.add(a))
	}
	if x < 0 {
		return -y.round()
	}
	return y.round()
}
