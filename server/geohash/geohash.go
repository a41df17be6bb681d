// Package geohash is the geometry behind the reference server's GEO
// commands, computed as Redis 7.0 computes it (geohash.c and
// geohash_helper.c), so that scores, positions, distances and the boxes a
// search visits come out bit for bit the same: a position is stored as a
// 52-bit score, 26 bits of latitude interleaved with 26 bits of longitude
// over Web Mercator's range (latitudes beyond ±85.05112878 cannot be
// stored); a radius or box search visits the cell holding its centre and
// the 8 around it, at the finest step whose cells still cover the search.
//
// Every operation keeps C's order of evaluation and its integer widths
// (a latitude cell index is a uint32 whose +1 may wrap, as in Redis), and
// the products are written so that no multiply-add is fused.
package geohash

// StepMax is the precision of a stored position: 26 steps of 2 bits.
const StepMax = 26

// The coordinate limits of a stored position (EPSG:900913).
const (
	LatMin  = -85.05112878
	LatMax  = 85.05112878
	LongMin = -180.0
	LongMax = 180.0
)

// Bits is a geohash of Step steps: 2*Step bits, latitude in the even bits
// and longitude in the odd ones. The zero value is Redis's "no cell".
type Bits struct {
	Bits uint64
	Step uint8
}

// IsZero is Redis's HASHISZERO.
func (h Bits) IsZero() bool { return h.Bits == 0 && h.Step == 0 }

// Range is an interval of one coordinate.
type Range struct{ Min, Max float64 }

func (r Range) isZero() bool { return r.Max == 0 && r.Min == 0 }

// Area is the cell of a hash: its longitude and latitude intervals.
type Area struct {
	Hash      Bits
	Longitude Range
	Latitude  Range
}

// WGS84 ranges of a stored position.
var (
	longRange = Range{LongMin, LongMax}
	latRange  = Range{LatMin, LatMax}
)

// StandardRanges are the ranges of a standard geohash string (GEOHASH
// re-encodes a position over them).
var StandardRanges = [2]Range{{-180, 180}, {-90, 90}}

func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF,
		0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | x<<s[i]) & b[i]
		y = (y | y<<s[i]) & b[i]
	}
	return x | y<<1
}

func deinterleave64(interleaved uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF,
		0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x, y := interleaved, interleaved>>1
	for i := 0; i < 6; i++ {
		x = (x | x>>s[i]) & b[i]
		y = (y | y>>s[i]) & b[i]
	}
	return x | y<<32
}

// Encode is geohashEncode: the cell of step steps holding (longitude,
// latitude) over the given ranges; false outside them (or outside the
// WGS84 limits, which every encoding checks first).
func Encode(longR, latR Range, longitude, latitude float64, step uint8) (Bits, bool) {
	if step > 32 || step == 0 || latR.isZero() || longR.isZero() {
		return Bits{}, false
	}
	if longitude > LongMax || longitude < LongMin || latitude > LatMax || latitude < LatMin {
		return Bits{}, false
	}
	if latitude < latR.Min || latitude > latR.Max || longitude < longR.Min || longitude > longR.Max {
		return Bits{Step: step}, false
	}
	latOffset := (latitude - latR.Min) / (latR.Max - latR.Min)
	longOffset := (longitude - longR.Min) / (longR.Max - longR.Min)
	scale := float64(uint64(1) << step)
	latOffset *= scale
	longOffset *= scale
	return Bits{Bits: interleave64(uint32(latOffset), uint32(longOffset)), Step: step}, true
}

// EncodeWGS84 encodes over the stored ranges.
func EncodeWGS84(longitude, latitude float64, step uint8) (Bits, bool) {
	return Encode(longRange, latRange, longitude, latitude, step)
}

// Decode is geohashDecode: the cell of h.
func Decode(longR, latR Range, h Bits) (Area, bool) {
	if h.IsZero() || latR.isZero() || longR.isZero() {
		return Area{}, false
	}
	sep := deinterleave64(h.Bits)
	latScale := latR.Max - latR.Min
	longScale := longR.Max - longR.Min
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	div := float64(uint64(1) << h.Step)
	a := Area{Hash: h}
	a.Latitude.Min = latR.Min + float64(float64(ilato)/div*latScale)
	a.Latitude.Max = latR.Min + float64(float64(ilato+1)/div*latScale)
	a.Longitude.Min = longR.Min + float64(float64(ilono)/div*longScale)
	a.Longitude.Max = longR.Min + float64(float64(ilono+1)/div*longScale)
	return a, true
}

// DecodeWGS84 decodes over the stored ranges.
func DecodeWGS84(h Bits) (Area, bool) { return Decode(longRange, latRange, h) }

// Center is geohashDecodeAreaToLongLat: the middle of the cell, clamped to
// the stored limits.
func (a Area) Center() (longitude, latitude float64) {
	longitude = (a.Longitude.Min + a.Longitude.Max) / 2
	if longitude > LongMax {
		longitude = LongMax
	}
	if longitude < LongMin {
		longitude = LongMin
	}
	latitude = (a.Latitude.Min + a.Latitude.Max) / 2
	if latitude > LatMax {
		latitude = LatMax
	}
	if latitude < LatMin {
		latitude = LatMin
	}
	return longitude, latitude
}

// DecodeScore is Redis's decodeGeohash: the position a sorted-set score
// stands for. Any score decodes: it is converted to uint64 as x86-64 code
// compiled by GCC converts it (out-of-range values become 1<<63 or 0),
// and the bits above the 52nd land in the clamped edges.
func DecodeScore(score float64) (longitude, latitude float64) {
	a, _ := DecodeWGS84(Bits{Bits: scoreBits(score), Step: StepMax})
	return a.Center()
}

// scoreBits is C's (uint64_t)score on x86-64: cvttsd2si below 2^63, else
// cvttsd2si(score-2^63) with the top bit flipped; cvttsd2si of a value out
// of int64's range (or NaN) gives 1<<63.
func scoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	cvt := func(f float64) uint64 {
		if f != f || f >= two63 || f < -two63 {
			return 1 << 63
		}
		return uint64(int64(f))
	}
	if score < two63 {
		return cvt(score)
	}
	return cvt(score-two63) ^ 1<<63
}

// Align52 is geohashAlign52Bits: the hash shifted to 52 bits, a score.
func Align52(h Bits) uint64 { return h.Bits << (52 - uint(h.Step)*2) }

func moveX(h *Bits, d int) {
	if d == 0 {
		return
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	if d > 0 {
		x = x + (zz + 1)
	} else {
		x = x | zz
		x = x - (zz + 1)
	}
	x &= uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	h.Bits = x | y
}

func moveY(h *Bits, d int) {
	if d == 0 {
		return
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	if d > 0 {
		y = y + (zz + 1)
	} else {
		y = y | zz
		y = y - (zz + 1)
	}
	y &= uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	h.Bits = x | y
}

// Neighbors are the 8 cells around one, as geohashNeighbors names them.
type Neighbors struct {
	North, East, West, South, NorthEast, SouthEast, NorthWest, SouthWest Bits
}

func neighbors(h Bits) Neighbors {
	move := func(dx, dy int) Bits {
		b := h
		moveX(&b, dx)
		moveY(&b, dy)
		return b
	}
	return Neighbors{
		East: move(1, 0), West: move(-1, 0), South: move(0, -1), North: move(0, 1),
		NorthWest: move(-1, 1), NorthEast: move(1, 1), SouthEast: move(1, -1), SouthWest: move(-1, -1),
	}
}
