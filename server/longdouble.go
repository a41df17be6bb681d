package server

import (
	"math/big"
	"strings"
)

// Redis computes INCRBYFLOAT and HINCRBYFLOAT in x87 long double (64-bit
// mantissa) and prints the result with "%.17Lf" minus trailing zeros. A
// big.Float with 64 bits of precision reproduces both exactly.

const longDoubleMaxExp = 16384

func parseLongDouble(b []byte) (*big.Float, bool) {
	s := string(b)
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "_") {
		return nil, false
	}
	ls := strings.ToLower(s)
	if strings.Contains(ls, "nan") {
		return nil, false
	}
	s, ok := cFloat(s)
	if !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 0, 64, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if !f.IsInf() && f.MantExp(nil) > longDoubleMaxExp {
		return nil, false
	}
	return f, true
}

// addLongDouble returns cur+incr formatted like Redis, ok=false if the
// result is infinite.
func addLongDouble(cur, incr *big.Float) (string, bool) {
	z := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven)
	if cur.IsInf() || incr.IsInf() {
		return "", false
	}
	z.Add(cur, incr)
	if z.IsInf() || z.MantExp(nil) > longDoubleMaxExp {
		return "", false
	}
	s := z.Text('f', 17)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s, true
}
